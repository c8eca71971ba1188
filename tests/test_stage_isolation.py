"""Stages do not change what the tests see (issue #25, item 9): no bytecode redirection, no
colour variables CI does not set, and cargo's check/lint builds kept apart from the test build.
Real git, the real pipeline, real Python."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bot.config import ValidationConfig
from bot.validation import run_validation

pytestmark = pytest.mark.slow

PYC_TEST = """import importlib.util
import os
import sys

import calc


def test_bytecode_lands_beside_the_source() -> None:
    assert sys.pycache_prefix is None
    assert os.path.exists(importlib.util.cache_from_source(calc.__file__))


def test_no_colour_variables_ci_does_not_set() -> None:
    assert "NO_COLOR" not in os.environ and "FORCE_COLOR" not in os.environ
"""


PROJECT = '[project]\nname = "calc"\nversion = "0"\n'


def checkout(tmp: Path, files: dict[str, str]) -> Path:
    repo = tmp / "repo"
    repo.mkdir()
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base"],
        cwd=repo, check=True,
    )  # fmt: skip
    return repo


def test_the_tests_see_no_bytecode_prefix_nor_colour_variables(tmp_path: Path) -> None:
    calc = "def add(a, b):\n    return a + b\n"
    files = {"calc.py": calc, "tests/test_env.py": PYC_TEST, "pyproject.toml": PROJECT}
    repo = checkout(tmp_path, files)
    cfg = ValidationConfig(
        setup=None, format=None, lint=None, typecheck=None,
        test=f"{sys.executable} -m pytest -q -p no:cacheprovider",
    )  # fmt: skip
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE",)}
    report = run_validation(repo, cfg, data_dir=tmp_path / "data", env=env)
    gate = next(g for g in report.gates if g.gate_name == "test")
    assert report.passed, gate.command_result.output if gate.command_result else gate
    # The same-size change within the second still runs the new text (bytecode dropped).
    stamp = int(time.time())
    (repo / "calc.py").write_text(calc.replace("a + b", "a - b"))
    os.utime(repo / "calc.py", (stamp, stamp))
    (repo / "tests" / "test_add.py").write_text(
        "from calc import add\n\n\ndef test_add() -> None:\n    assert add(2, 3) == 5\n"
    )
    assert not run_validation(repo, cfg, data_dir=tmp_path / "data", env=env).passed
    (repo / "calc.py").write_text(calc)
    os.utime(repo / "calc.py", (stamp, stamp))
    assert run_validation(repo, cfg, data_dir=tmp_path / "data", env=env).passed


def test_cargo_check_and_lint_build_apart_from_the_tests(tmp_path: Path) -> None:
    files = {
        "Cargo.toml": '[package]\nname = "demo"\nversion = "0.1.0"\nedition = "2021"\n',
        "src/lib.rs": "pub fn add(a: i32, b: i32) -> i32 { a + b }\n",
    }
    repo = checkout(tmp_path, files)
    show = "echo target=${CARGO_TARGET_DIR:-default}"
    cfg = ValidationConfig(setup=None, format=None, lint=show, typecheck=show, test=show)
    report = run_validation(repo, cfg, data_dir=tmp_path / "data")
    seen = {
        g.gate_name: (g.command_result.output.strip() if g.command_result else "")
        for g in report.gates
    }
    assert seen["test"] == "target=default", seen
    assert seen["lint"] != seen["typecheck"] and "default" not in seen["lint"] + seen["typecheck"]


POISONED = """import os


def test_no_leftovers() -> None:
    assert not os.path.exists("build/poison")
"""


def test_a_failure_left_by_an_earlier_stage_is_confirmed_on_a_clean_head(tmp_path: Path) -> None:
    files = {
        "calc.py": "def add(a, b):\n    return a + b\n",
        "tests/test_left.py": POISONED,
        "pyproject.toml": PROJECT,
        ".gitignore": "build/\n",
    }
    repo = checkout(tmp_path, files)
    base = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.strip()
    (repo / "calc.py").write_text("def add(a, b):\n    return b + a\n")
    # An earlier stage leaves an ignored artefact behind (a shared build folder).
    cfg = ValidationConfig(
        setup=None, format=None, typecheck=None, lint="mkdir -p build && touch build/poison",
        test=f"{sys.executable} -m pytest -q -p no:cacheprovider",
    )  # fmt: skip
    report = run_validation(repo, cfg, data_dir=tmp_path / "data", base_sha=base)
    gate = next(g for g in report.gates if g.gate_name == "test")
    assert report.passed, gate
    assert "clean checkout" in gate.warning, gate.warning
