"""A change whose tests cannot run is a labelled draft, never a green (issue #25, item 3).

The repository's test modules all fail to import (on the base and on the change) or its
runner is not installed: the IssueFixer opens a draft labelled `agent-unverified` whose
body says which stage and why, with no ✅ anywhere; the job ends `unverified` (the
Action's `status` output), its check run `neutral`.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from bot.config import RepoConfig
from bot.models import JobStatus
from bot.report import step_summary
from bot.workflows.fix.story import fix_issue
from bot.workflows.steps.check_run import CONCLUSIONS
from tests.e2e import BUGGY_FILES, REPO, fast_validation_yaml, world
from tests.fakes.gitrepo import clone_branch
from tests.test_cli_run import AGENTBOT, actions_env, labeled_payload
from tests.test_fix_issue import fix_script, job, seed_issue

pytestmark = pytest.mark.slow

# Every test module fails to import, on the base and with the fix: no test can run.
UNIMPORTABLE = {
    **BUGGY_FILES,
    "tests/test_calc.py": (
        "import no_such_dependency  # noqa: F401\nfrom calc import add\n\n\n"
        "def test_add() -> None:\n    assert add(2, 3) == 5\n"
    ),
}


def test_all_modules_failing_to_import_opens_an_unverified_labelled_draft(tmp_path: Path) -> None:
    with world(tmp_path, fix_script(), files=UNIMPORTABLE) as w:
        seed_issue(w)
        result = fix_issue(job(), w.env())
        assert result.status == JobStatus.UNVERIFIED, result.error
        (create,) = w.gh.calls_to("POST", rf"/repos/{REPO}/pulls$")
        body = str(create.json["body"])
        assert create.json["draft"] is True
        assert "agent-unverified" in w.gh.labels_on(REPO, result.pr_number or 0)
        assert body.index("Unverified") < body.index("Fixes #7")  # said at its top
        assert "**test**" in body and "nothing was verified" in body
        assert "validation: {setup:" in body  # the one line that would let it run
        assert "✅" not in body
        summary = step_summary(result)
        assert "✅" not in summary and "unverified" in summary
        assert CONCLUSIONS[result.status] == "neutral"


def test_a_missing_runner_opens_an_unverified_draft(tmp_path: Path) -> None:
    yaml = fast_validation_yaml().replace(
        next(ln for ln in fast_validation_yaml().splitlines() if "test:" in ln),
        "  test: no-such-test-runner -q",
    )
    with world(tmp_path, fix_script()) as w:
        seed_issue(w)
        result = fix_issue(job(), w.env(RepoConfig.from_text(yaml)))
        assert result.status == JobStatus.UNVERIFIED, result.error
        (create,) = w.gh.calls_to("POST", rf"/repos/{REPO}/pulls$")
        assert create.json["draft"] is True and "✅" not in str(create.json["body"])
        assert "`no-such-test-runner` is not installed" in str(create.json["body"])
        assert "agent-unverified" in w.gh.labels_on(REPO, result.pr_number or 0)


def test_agentbot_run_writes_status_unverified(tmp_path: Path) -> None:
    with world(tmp_path, fix_script(), files=UNIMPORTABLE, repo_yaml=fast_validation_yaml()) as w:
        w.gh.set_permission(REPO, "alice", "write")
        w.gh.add_issue(
            REPO, number=7, title="add() is wrong", body="add(2,3) is -1", labels=["agent-fix"]
        )
        checkout = clone_branch(w.remote, "main", tmp_path / "checkout")
        env = actions_env(tmp_path, w.gh.url, w.llm.base_url, "issues", labeled_payload())
        proc = subprocess.run(
            [AGENTBOT, "run"], cwd=checkout, env=env, capture_output=True, text=True, timeout=300
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        outputs = dict(
            line.split("=", 1) for line in (tmp_path / "output.txt").read_text().splitlines()
        )
        assert outputs["status"] == "unverified"
        summary = (tmp_path / "summary.md").read_text()
        assert "✅" not in summary and "⚠️ unverified" in summary
        (pull,) = w.gh.pulls(REPO)
        assert "✅" not in str(pull.body) and "agent-unverified" in w.gh.labels_on(
            REPO, pull.number
        )
