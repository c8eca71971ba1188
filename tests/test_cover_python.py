"""/cover end to end on a Python repository: fake GitHub, scripted model, real pytest and git."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from bot.config import RepoConfig
from bot.models import Job, JobKind, JobStatus
from bot.workflows.cover.story import cover
from tests.cover_script import Method, team
from tests.e2e import BUGGY_FILES, REPO, World, fast_validation_yaml, world
from tests.fakes.gitrepo import commits, push_files, read_file

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]  # many real test runs

BRANCH = "feature/more-math"
BASE = {**BUGGY_FILES, "calc.py": BUGGY_FILES["calc.py"].replace("a - b", "a + b")}
MORE = '''

def double(x: int) -> int:
    """Twice x, kept within -100..100."""
    return clamp(x + x, -100, 100)


def clamp(x: int, lo: int, hi: int) -> int:
    """x kept within lo..hi."""
    if x < lo:
        return lo
    if x > hi:
        return hi
    return x


def is_even(n: int) -> bool:
    """True for even numbers."""
    return n % 2 == 0
'''
# The PR brings one test of its own: clamp's in-range case, so clamp starts partly covered.
PR_TEST = (
    "from calc import clamp\n\n\ndef test_clamp_inside() -> None:\n    assert clamp(5, 0, 9) == 5\n"
)

TESTS = "tests/test_calc.py"


def _test(name: str, body: str) -> str:
    """A test function appended by the scripted writer (imports inside, as appended code)."""
    target = name.removeprefix("test_").split("_edges")[0].split("_runs")[0].split("_odd")[0]
    return f"\n\ndef {name}() -> None:\n    from calc import {target}\n\n{body}"


def _methods(is_even: str) -> dict[str, Method]:
    return {
        "double": Method(TESTS, _test("test_double", "    assert double(4) == 8\n")),
        "clamp": Method(
            TESTS,
            _test(
                "test_clamp_edges",
                "    assert clamp(-3, 0, 9) == 0\n    assert clamp(12, 0, 9) == 9\n"
                "    assert clamp(0, 0, 9) == 0\n    assert clamp(9, 0, 9) == 9\n",
            ),
        ),
        "is_even": Method(TESTS, is_even),
    }


FIRST = _methods(
    _test("test_is_even", "    assert is_even(2) and not is_even(3)\n")
    # A test that asserts nothing: it passes on every mutant, so it is dropped.
    + _test("test_is_even_runs", "    is_even(4)\n")
)


def config() -> RepoConfig:
    """The fast validation config, pytest without the plugins of agentbot's own venv."""
    py = sys.executable
    text = fast_validation_yaml().replace(
        f"  test: {py}", f"  test: PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 {py}"
    )
    return RepoConfig.from_text(text)


def seed(w: World) -> int:
    files = {"calc.py": BASE["calc.py"] + MORE, "tests/test_pr.py": PR_TEST}
    push_files(w.remote, BRANCH, files, start="main")
    return w.gh.add_pull(REPO, head=BRANCH, user="alice").number


def job(number: int, **params: object) -> Job:
    return Job(kind=JobKind.COVER, repo=REPO, number=number, actor="alice", params=dict(params))


def test_cover_pushes_tests_that_kill_mutants_then_reruns_only_what_changed(
    tmp_path: Path,
) -> None:
    t, script = team(FIRST)
    with world(tmp_path, script, files=BASE) as w:
        number = seed(w)
        result = cover(job(number), w.env(config()))
        assert result.status == JobStatus.SUCCESS, result.error

        new = commits(w.remote, BRANCH, base="main")
        assert len(new) == 2  # the PR's own commit, then ours
        assert new[0].subject == "test(calc): cover double, clamp, is_even"
        assert [p for p in new[0].body.split() if p.endswith(".py")] == []
        tests = read_file(w.remote, BRANCH, TESTS) or ""
        assert "def test_double" in tests and "def test_clamp_edges" in tests
        assert "def test_is_even(" in tests and "test_is_even_runs" not in tests

        items = {i["id"].split("::")[1]: i for i in result.items}
        assert (items["clamp"]["before"], items["clamp"]["after"]) == ("67%", "100%")
        assert (items["double"]["before"], items["double"]["after"]) == ("50%", "100%")
        assert all(items[n]["killed"] >= 1 for n in FIRST)
        assert items["is_even"]["dropped"] == [f"{TESTS}::test_is_even_runs"]

        comment = w.gh.comments_on(REPO, number)[-1].body
        # double calls clamp: clamp's wave comes first.
        assert "Wave 1: clamp, is_even" in comment and "Wave 2: double" in comment
        assert "| `clamp` (new) | 🟢 green | 1 | 67% → 100% (6/6 lines) |" in comment
        assert "`tests/test_calc.py::test_is_even_runs` (for `is_even`)" in comment
        assert len(w.llm.requests) == 12  # 3 methods x (analyzer, architect, writer x2)

        # A commit touching one method: a second /cover re-runs only that method's stages.
        changed = (read_file(w.remote, BRANCH, "calc.py") or "").replace(
            "    return n % 2 == 0", "    remainder = n % 2\n    return remainder == 0"
        )
        push_files(w.remote, BRANCH, {"calc.py": changed}, message="refactor is_even")
        t.methods = _methods(_test("test_is_even_odd", "    assert not is_even(7)\n"))
        second = cover(job(number), w.env(config()))
        assert second.status == JobStatus.SUCCESS, second.error
        assert len(w.llm.requests) == 16  # only is_even's 4 requests again
        assert (t.calls("double"), t.calls("clamp"), t.calls("is_even")) == (4, 4, 8)
        stages = {i["id"].split("::")[1]: i["stages"] for i in second.items}
        assert set(stages["double"].values()) == {"done", "cached"}
        assert stages["double"]["reviewer"] == "cached"
        assert stages["is_even"]["analyzer"] == stages["is_even"]["reviewer"] == "done"
        assert "test_is_even_odd" in (read_file(w.remote, BRANCH, TESTS) or "")
        assert len(commits(w.remote, BRANCH, base="main")) == 4
