"""RED and GREEN are judged from real pytest runs: the right reason to fail, or the test's fault."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bot.clock import SystemClock
from bot.tdd.suite import Suite
from bot.tdd.verdict import SuiteRun, judge_green, judge_red
from bot.validation import detect_profile, parse_test_counts
from bot.validation.environment import StageEnv

CODE = 'def to_roman(number: int) -> str:\n    return "I"\n'


def run(tmp: Path, test: str) -> SuiteRun:
    """Real pytest on a one-module project with `test` as its test file."""
    (tmp / "roman.py").write_text(CODE)
    (tmp / "tests").mkdir(exist_ok=True)
    (tmp / "tests" / "test_roman.py").write_text(test)
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    got = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(tmp)],
        cwd=tmp, env=env, capture_output=True, text=True,
    )  # fmt: skip
    out = got.stdout + got.stderr
    return SuiteRun(out, got.returncode, parse_test_counts("pytest", out))


@pytest.mark.parametrize(
    ("test", "ok", "reason"),
    [
        ("from roman import to_roman\n\n\ndef test_two():\n    assert to_roman(2) == 'II'\n",
         True, "assertion"),
        ("from roman import from_roman\n\n\ndef test_back():\n    assert from_roman('I') == 1\n",
         True, "missing name"),
        ("import roman\n\n\ndef test_back():\n    assert roman.from_roman('I') == 1\n",
         True, "missing name"),
        ("from roman.numbers import x\n\n\ndef test_x():\n    assert x\n", True, "missing name"),
        ("def test_two(:\n    pass\n", False, "syntax error in the test"),
        ("import romanhelpers\n\n\ndef test_two():\n    assert romanhelpers\n",
         False, "import error of the test file itself"),
        ("def test_two(numbers):\n    assert numbers\n", False, "fixture error"),
        ("from roman import to_roman\n\n\ndef test_one():\n    assert to_roman(1) == 'I'\n",
         False, "overshoot"),
        ("def helper():\n    pass\n", False, "no new test was collected"),
        ("def test_a():\n    assert 0\n\n\ndef test_b():\n    assert 0\n",
         False, "more than one test fails"),
    ],
)  # fmt: skip
def test_red_is_judged_by_the_runner(tmp_path: Path, test: str, ok: bool, reason: str) -> None:
    verdict = judge_red("python", run(tmp_path, test), 0, {"roman"})
    assert (verdict.ok, verdict.reason.split(":")[0]) == (ok, reason), verdict.detail
    assert reason in verdict.tell()


def test_green_needs_every_test_passing(tmp_path: Path) -> None:
    passing = "from roman import to_roman\n\n\ndef test_one():\n    assert to_roman(1) == 'I'\n"
    assert judge_green(run(tmp_path, passing)).ok
    failing = passing + "\n\ndef test_two():\n    assert to_roman(2) == 'II'\n"
    verdict = judge_green(run(tmp_path, failing))
    assert not verdict.ok and "tests/test_roman.py::test_two" in verdict.reason


def test_the_suite_never_runs_bytecode_of_an_older_text(tmp_path: Path) -> None:
    """A same-size edit within the second a cached .pyc was written must still be what runs."""
    repo = tmp_path / "repo"
    (repo / "tests").mkdir(parents=True)
    (repo / "mod.py").write_text('X = "A"\n')
    (repo / "tests" / "test_mod.py").write_text(
        "from mod import X\n\n\ndef test_x():\n    assert X == 'B'\n"
    )
    prefix = tmp_path / "pycache"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(PYTHONPYCACHEPREFIX=str(prefix), PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    command = f"{sys.executable} -m pytest -q -p no:cacheprovider --rootdir ."
    subprocess.run(command, shell=True, cwd=repo, env=env, capture_output=True, check=False)
    assert list(prefix.rglob("mod*.pyc")), "the first run cached no bytecode"
    stamp = (repo / "mod.py").stat().st_mtime
    (repo / "mod.py").write_text('X = "B"\n')  # same size, same mtime: the .pyc looks valid
    os.utime(repo / "mod.py", (stamp, stamp))
    senv = StageEnv(repo, detect_profile(repo), tmp_path / "data", env, None)
    run = Suite(senv, command, "pytest", 60, SystemClock()).run()
    assert run.green, run.output


def test_green_needs_the_runner_to_count_every_test_of_the_red_run(tmp_path: Path) -> None:
    passing = "from roman import to_roman\n\n\ndef test_one():\n    assert to_roman(1) == 'I'\n"
    green = run(tmp_path, passing)
    assert judge_green(green, 1).ok
    fewer = judge_green(green, 2)  # the RED run counted two: one no longer ran
    assert not fewer.ok and "only 1 test(s) ran, 2 expected" in fewer.reason
    # `--co` (collect only) exits 0 with no summary the parser reads: not green.
    unread = SuiteRun("tests/test_roman.py::test_one\n\n1 test collected in 0.01s\n", 0, None)
    assert not judge_green(unread, 1).ok
    assert "summary could not be read" in judge_green(unread).reason


def test_a_red_from_a_runner_that_cannot_start_is_an_environment_problem(tmp_path: Path) -> None:
    """Exit 127 from the shell used to read as "error in the code under test" (#25)."""
    got = subprocess.run(
        ["/bin/sh", "-c", "no-such-pytest -q"], cwd=tmp_path, capture_output=True, text=True
    )
    out = got.stdout + got.stderr
    run = SuiteRun(out, got.returncode, parse_test_counts("pytest", out))
    verdict = judge_red("python", run, 0, ["roman"])
    assert not verdict.ok and verdict.reason.startswith("environment problem")
    assert "could not start" in verdict.reason


def test_a_red_whose_summary_cannot_be_read_is_not_accepted() -> None:
    run = SuiteRun("Segmentation fault (core dumped)\n", 139, None)
    verdict = judge_red("python", run, 0, ["roman"])
    assert not verdict.ok and verdict.reason.startswith("environment problem")
