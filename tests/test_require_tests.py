"""`validation.require_tests`: a repository with no tests at all, said plainly or unverified."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from bot.config import ValidationConfig
from bot.models import NO_TESTS, ValidationReport
from bot.validation import run_validation


def untested_repo(path: Path) -> Path:
    """A repository with no test command and no test file (a plain script)."""
    path.mkdir()
    (path / "tool.sh").write_text("echo hi\n")
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "init"]):
        subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=path, check=True
        )
    return path


def validate(repo: Path, tmp: Path, *, require_tests: bool) -> ValidationReport:
    config = ValidationConfig(setup=None, require_tests=require_tests)
    return run_validation(repo, config, data_dir=tmp / "data", env=dict(os.environ))


@pytest.mark.parametrize("require_tests", [False, True])
def test_no_test_command_and_no_test_file_is_said_plainly(
    tmp_path: Path, require_tests: bool
) -> None:
    report = validate(untested_repo(tmp_path / "repo"), tmp_path, require_tests=require_tests)
    test = next(g for g in report.gates if g.gate_name == "test")
    assert test.warning.startswith(NO_TESTS)
    assert test.status == ("unverified" if require_tests else "skipped")
    assert bool(report.unverified) is require_tests
