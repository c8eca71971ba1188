"""A repository with no tests at all: said plainly, ready, unless `require_tests` (issue #25).

No test file and a runner that finds none: the pull request says "no tests in this
repository", carries no ✅, and opens ready; with `validation.require_tests: true` the
same job is unverified: a draft labelled `agent-unverified`, its check run neutral.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.config import RepoConfig
from bot.models import JobStatus
from bot.workflows.fix.story import fix_issue
from bot.workflows.steps.check_run import CONCLUSIONS
from tests.e2e import BUGGY_FILES, FIX_EDIT, REPO, fast_validation_yaml, world
from tests.fakes.anthropic import Step, finish, reply, tool_use, usage
from tests.test_fix_issue import job, seed_issue

pytestmark = pytest.mark.slow

NO_TESTS_FILES = {p: text for p, text in BUGGY_FILES.items() if not p.startswith("tests/")}


def untested_fix_script() -> list[Step]:
    """Fix calc.py; asked for a test, say there is nowhere to put one and finish again."""
    done = finish(summary="add() now adds", root_cause="add() subtracted its arguments.")
    notes = finish(
        summary="add() now adds",
        root_cause="add() subtracted its arguments.",
        artifacts={"notes": ["the repository has no tests to extend"]},
    )
    return [
        reply(tool_use("str_replace_based_edit_tool", FIX_EDIT), usage=usage(1000, 50)),
        reply(done, usage=usage(1100, 50)),
        reply(notes, usage=usage(1200, 50)),
    ]


def test_a_repo_without_tests_opens_ready_and_says_so_plainly(tmp_path: Path) -> None:
    with world(tmp_path, untested_fix_script(), files=NO_TESTS_FILES) as w:
        seed_issue(w)
        result = fix_issue(job(), w.env())
        assert result.status == JobStatus.SUCCESS, result.error
        (create,) = w.gh.calls_to("POST", rf"/repos/{REPO}/pulls$")
        body = str(create.json["body"])
        assert create.json["draft"] is False
        assert body.index("No tests in this repository") < body.index("Fixes #7")
        (test_row,) = [ln for ln in body.splitlines() if ln.startswith("| test |")]
        assert "✅" not in test_row
        assert "agent-unverified" not in w.gh.labels_on(REPO, result.pr_number or 0)


def test_require_tests_makes_a_repo_without_tests_unverified(tmp_path: Path) -> None:
    yaml = fast_validation_yaml("  require_tests: true\n")
    with world(tmp_path, untested_fix_script(), files=NO_TESTS_FILES) as w:
        seed_issue(w)
        result = fix_issue(job(), w.env(RepoConfig.from_text(yaml)))
        assert result.status == JobStatus.UNVERIFIED, result.error
        (create,) = w.gh.calls_to("POST", rf"/repos/{REPO}/pulls$")
        body = str(create.json["body"])
        assert create.json["draft"] is True
        assert "no tests in this repository" in body and "require_tests" in body
        assert "✅" not in body
        assert "agent-unverified" in w.gh.labels_on(REPO, result.pr_number or 0)
        assert CONCLUSIONS[result.status] == "neutral"
