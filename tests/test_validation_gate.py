"""The gate judges the change: baselines, scoped fixes, the tree guard, flat layouts, pre-commit.

Real git repositories, the real pipeline and real tools (ruff, mypy, pytest, pre-commit)
installed offline from the wheelhouse `tests/test_validation.py` builds.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bot.config import ValidationConfig
from bot.models import ValidationReport
from bot.report import validation_table
from bot.validation import run_validation
from tests import test_validation as tv
from tests.test_validation import BACKEND, CODE, TESTS, commit, gate, git, write

# The offline wheelhouse, the shared data dir and their environment (session fixtures).
wheelhouse, base_env, session_dir, data_dir = (
    tv.wheelhouse,
    tv.base_env,
    tv.session_dir,
    tv.data_dir,
)

PYPROJECT = """\
[build-system]
requires = []
build-backend = "backend"
backend-path = ["_build"]

[project]
name = "demo"
version = "0.1.0"

[project.optional-dependencies]
test = ["pytest"]

[tool.mypy]
strict = true
files = ["src"]

[tool.ruff]
extend-exclude = ["_build"]
"""
# Pre-existing problems the repo lives with: an unused import and a type error.
OLD = '''\
"""Old code."""

import sys


def count() -> int:
    """Count."""
    return "many"
'''


def make_repo(root: Path, name: str, files: dict[str, str]) -> tuple[Path, str]:
    path = root / name
    if path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True)
    git(path, "init", "-q")
    write(path, files)
    return path, commit(path, "base")


def check(repo: Path, data: Path, env: dict[str, str], base: str, **kw: object) -> ValidationReport:
    config = kw.pop("config", ValidationConfig())
    assert isinstance(config, ValidationConfig)
    return run_validation(repo, config, data_dir=data, env=env, base_sha=base, **kw)  # type: ignore[arg-type]


def status(repo: Path) -> list[str]:
    """The paths git sees as changed or new (not ignored)."""
    out = git(repo, "status", "--porcelain", "--untracked-files=all")
    return sorted(line.split()[-1] for line in out.splitlines())


@pytest.fixture
def legacy(session_dir: Path) -> tuple[Path, str]:
    """A repo with pre-existing ruff findings and mypy errors at its base commit."""
    return make_repo(
        session_dir / "ws",
        "legacy",
        {
            "pyproject.toml": PYPROJECT,
            "_build/backend.py": BACKEND,
            "src/demo/__init__.py": CODE,
            "src/demo/old.py": OLD,
            "tests/test_demo.py": TESTS,
        },
    )


def test_only_the_problem_a_change_adds_blocks_over_preexisting_ruff_and_mypy_findings(
    legacy: tuple[Path, str], data_dir: Path, base_env: dict[str, str]
) -> None:
    repo, base = legacy
    # A clean change, with lines added above the old findings (they move, they stay old).
    write(repo, {"src/demo/old.py": '"""Old code."""\n\n# moved down\n' + OLD.split('"""\n', 1)[1]})
    write(
        repo,
        {
            "src/demo/__init__.py": CODE + "\n\ndef sub(a: int, b: int) -> int:\n"
            '    """Subtract."""\n    return a - b\n'
        },
    )
    clean = check(repo, data_dir, base_env, base)
    assert clean.passed, clean.problems()
    assert gate(clean, "lint").status == "passed" and gate(clean, "lint").preexisting_count == 1
    assert gate(clean, "typecheck").status == "passed"
    assert gate(clean, "typecheck").preexisting_count == 1
    assert gate(clean, "lint").source == "default"
    assert gate(clean, "lint").command.endswith(
        "--force-exclude src/demo/__init__.py src/demo/old.py"
    )
    # The same change plus an unused import: exactly that one finding fails it.
    text = (repo / "src/demo/__init__.py").read_text()
    write(
        repo,
        {
            "src/demo/__init__.py": text.replace(
                '"""Demo package."""\n', '"""Demo package."""\n\nimport os\n'
            )
        },
    )
    before = status(repo)
    bad = check(repo, data_dir, base_env, base)
    assert not bad.passed
    lint = gate(bad, "lint")
    assert lint.status == "failed"
    assert lint.new_issues == ["src/demo/__init__.py:3: F401 `os` imported but unused"]
    assert lint.preexisting_count == 1
    assert gate(bad, "typecheck").status == "passed" and gate(bad, "test").status == "passed"
    assert bad.problems().splitlines()[1:] == [
        "  src/demo/__init__.py:3: F401 `os` imported but unused"
    ]
    assert status(repo) == before  # validation changed nothing in the checkout
    table = validation_table(bad)
    assert (
        "| lint | ❌ failed |" in table and "default" in table and "1 new · 1 pre-existing" in table
    )


def test_a_type_error_the_change_adds_is_named_alone(
    legacy: tuple[Path, str], data_dir: Path, base_env: dict[str, str]
) -> None:
    repo, base = legacy
    write(repo, {"src/demo/__init__.py": CODE + '\n\nNAME: int = "demo"\n'})
    report = check(repo, data_dir, base_env, base)
    typecheck = gate(report, "typecheck")
    assert typecheck.status == "failed" and typecheck.preexisting_count == 1
    assert typecheck.new_issues == [
        "src/demo/__init__.py:9: assignment Incompatible types in assignment (expression has type"
        ' "str", variable has type "int")'
    ]


def test_auto_fix_runs_on_the_change_only_and_is_undone_when_it_breaks_a_test(
    legacy: tuple[Path, str], data_dir: Path, base_env: dict[str, str]
) -> None:
    repo, base = legacy
    # `path` looks unused to ruff (F401, a safe fix) but a test imports it from the package.
    api = '"""API."""\n\nfrom os import path\n\nNAME = "api"\n'
    uses = "from demo.api import path\n\n\ndef test_path():\n    assert path.sep\n"
    write(repo, {"src/demo/api.py": api, "tests/test_reexport.py": uses})
    report = check(repo, data_dir, base_env, base, fix=True)
    # The fixed module no longer gives what the test imports: the test file fails to load.
    assert "auto-fix undone: it broke tests/test_reexport.py" in report.warnings
    assert (repo / "src/demo/api.py").read_text() == api
    assert gate(report, "lint").status == "failed" and not report.passed
    # Old findings in a file the change did not touch are never fixed.
    assert "import sys" in (repo / "src/demo/old.py").read_text()
    # Without the test relying on it, the same fix stays.
    (repo / "tests/test_reexport.py").unlink()
    fixed = check(repo, data_dir, base_env, base, fix=True)
    assert fixed.passed and gate(fixed, "lint").auto_fixed
    assert (repo / "src/demo/api.py").read_text() == '"""API."""\n\n\nNAME = "api"\n'
    assert "import sys" in (repo / "src/demo/old.py").read_text()


def test_what_a_stage_changes_outside_the_change_is_put_back(
    legacy: tuple[Path, str], data_dir: Path, base_env: dict[str, str]
) -> None:
    repo, base = legacy
    write(repo, {"src/demo/__init__.py": CODE + "\n# a change\n"})
    cfg = ValidationConfig(
        setup="echo '# setup was here' >> README.md 2>/dev/null; echo x >> src/demo/old.py",
        format=None,
        lint=None,
        typecheck=None,
        test="echo y >> tests/test_demo.py && echo z >> src/demo/__init__.py && mkdir -p build"
        " && touch build/out.txt leftover.txt demo.egg-info && true",
    )
    report = check(repo, data_dir, base_env, base, config=cfg)
    setup, test = gate(report, "setup"), gate(report, "test")
    assert setup.restored_files == ["src/demo/old.py"]
    assert "setup modified tracked files, restored: src/demo/old.py" in setup.warning
    assert test.restored_files == ["tests/test_demo.py"]
    # The change's own file gets its content back; the stage's litter is gone.
    assert status(repo) == ["src/demo/__init__.py"]
    assert (repo / "src/demo/__init__.py").read_text() == CODE + "\n# a change\n"
    assert not (repo / "build").exists() and not (repo / "leftover.txt").exists()


SPEC_KIT = {
    "pyproject.toml": '[project]\nname = "calc"\nversion = "0.1.0"\n',
    "specs/001-calc/spec.md": "# Calc\n",
    "specs/001-calc/tasks.md": "## Phase 1\n- [ ] T001 add\n",
    "calc/__init__.py": '"""Calc."""\n\n\ndef add(a, b):\n    """Add."""\n    return a + b\n',
    "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
}


def test_a_flat_layout_spec_kit_repo_validates_with_a_warning_and_runs_its_tests(
    session_dir: Path, data_dir: Path, base_env: dict[str, str]
) -> None:
    repo, base = make_repo(session_dir / "ws", "speckit", SPEC_KIT)
    write(
        repo,
        {
            "tests/test_more.py": SPEC_KIT["tests/test_calc.py"].replace(
                "add(1, 2) == 3", "add(2, 2) == 4"
            )
        },
    )
    report = check(repo, data_dir, base_env, base)
    setup = gate(report, "setup")
    assert setup.status == "passed"
    assert "the project itself could not be installed" in setup.warning
    assert report.passed, report.problems()
    assert report.tests is not None and report.tests.passed_count == 2
    assert status(repo) == ["tests/test_more.py"]  # no egg-info, no build dir left behind


HOOKS = """\
repos:
- repo: local
  hooks:
  - id: ruff
    name: ruff
    entry: ruff check --no-fix
    language: system
    types: [python]
  - id: trailing-whitespace
    name: trailing whitespace
    entry: sed -i -e 's/[ \\t]*$//'
    language: system
    types: [python]
"""


def test_pre_commit_hooks_run_on_the_changed_files_and_check_mode_changes_nothing(
    session_dir: Path, data_dir: Path, base_env: dict[str, str]
) -> None:
    repo, base = make_repo(
        session_dir / "ws",
        "hooks",
        {
            "pyproject.toml": PYPROJECT.replace("[tool.mypy]", "[tool.mypy-off]"),
            "_build/backend.py": BACKEND,
            ".pre-commit-config.yaml": HOOKS,
            "src/demo/__init__.py": CODE,
            "src/demo/old.py": OLD + "x = 1   \n",  # old whitespace: not this change's problem
            "tests/test_demo.py": TESTS,
        },
    )
    changed = CODE + "\n\nimport os  \n"
    write(repo, {"src/demo/__init__.py": changed})
    report = check(repo, data_dir, base_env, base)
    lint = gate(report, "lint")
    assert lint.source == "pre-commit" and "--files src/demo/__init__.py" in lint.command
    assert sorted(lint.new_issues) == [
        "src/demo/__init__.py: pre-commit a hook would change this file",
        "src/demo/__init__.py:9: F401 `os` imported but unused",
        "src/demo/__init__.py:9: I001 Import block is un-sorted or un-formatted",
    ]
    assert gate(report, "format").warning == "covered by the pre-commit hooks (lint stage)"
    assert (repo / "src/demo/__init__.py").read_text() == changed  # checked, not rewritten
    # --fix lets the hooks fix the changed file (and only it); ruff's finding remains.
    fixed = check(repo, data_dir, base_env, base, fix=True)
    assert (repo / "src/demo/__init__.py").read_text() == CODE + "\n\nimport os\n"
    assert (repo / "src/demo/old.py").read_text().endswith("x = 1   \n")
    assert gate(fixed, "lint").new_issues == [
        "src/demo/__init__.py:9: F401 `os` imported but unused"
    ]
