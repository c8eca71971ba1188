"""A fork's pull request cannot choose the gate's commands (issue #27): with `commands_from`
the repository's own commands are read from the base's default branch, not the fork's tree."""

from __future__ import annotations

import sys
from pathlib import Path

from bot.config import ValidationConfig
from bot.validation import run_validation
from tests.fakes.gitrepo import git, write_files

CALC = "def add(a: int, b: int) -> int:\n    return a - b\n"
PROJECT = '[project]\nname = "calc"\nversion = "0.1.0"\n'
TEST = "from calc import add\n\n\ndef test_add() -> None:\n    assert add(2, 3) == 5\n"
HIDE = "test:\n\ttrue\n"
"""The fork's Makefile: a `test` target that passes whatever the tests say."""


def tree(root: Path, files: dict[str, str]) -> Path:
    root.mkdir()
    git(root, "init", "--quiet")
    write_files(root, files)
    git(root, "add", "-A")
    git(root, "commit", "--quiet", "-m", "tree")
    return root


def test_the_forks_makefile_does_not_choose_the_test_command(tmp_path: Path) -> None:
    base = tree(
        tmp_path / "base", {"calc.py": CALC, "tests/test_calc.py": TEST, "pyproject.toml": PROJECT}
    )
    fork = tree(
        tmp_path / "fork",
        {"calc.py": CALC, "tests/test_calc.py": TEST, "pyproject.toml": PROJECT, "Makefile": HIDE},
    )
    config = ValidationConfig(setup=None, format=None, lint=None, typecheck=None, test="default")
    env = {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "HOME": str(tmp_path)}

    def test_gate(commands_from: Path | None) -> tuple[str, str, bool]:
        report = run_validation(
            fork, config, data_dir=tmp_path / "data", env=env, commands_from=commands_from
        )
        (gate,) = [g for g in report.gates if g.gate_name == "test"]
        return gate.source, gate.command, gate.passed

    source, command, _ = test_gate(None)
    assert (source, command) == ("Makefile", "make test")  # what the fork's tree would choose
    source, command, passed = test_gate(base)
    assert source != "Makefile" and "pytest" in command and not passed
