"""/cover through `agentbot run` as the Action runs it: a fresh runner and data folder per job."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cover_script import team
from tests.e2e import REPO, World, fast_validation_yaml, world
from tests.fakes.gitrepo import clone_branch, commits
from tests.test_cli_run import AGENTBOT, actions_env, comment_payload
from tests.test_cover_python import BASE, BRANCH, FIRST, seed

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

REPORT_HEAD = "### agentbot /cover"


def run_cover(
    w: World, tmp: Path, body: str, number: int, job: str
) -> subprocess.CompletedProcess[str]:
    """One `agentbot run` on a `/cover` comment, in its own runner folder (fresh data dir)."""
    runner = tmp / job
    runner.mkdir()
    env = actions_env(runner, w.gh.url, w.llm.base_url, "issue_comment", {})
    payload = comment_payload(body, "alice", number=number)
    # Each run is a new comment (a comment delivered again is answered once).
    payload["comment"] = {**payload["comment"], "id": 9000 + len(list(tmp.iterdir()))}
    Path(env["GITHUB_EVENT_PATH"]).write_text(json.dumps(payload))
    checkout = clone_branch(w.remote, "main", runner / "checkout")
    return subprocess.run(
        [AGENTBOT, "run"], cwd=checkout, env=env, capture_output=True, text=True, timeout=600
    )


def reports(w: World, number: int) -> list[str]:
    """The bodies of the bot's /cover report comments on the PR."""
    return [c.body for c in w.gh.comments_on(REPO, number) if REPORT_HEAD in c.body]


def cover_yaml() -> str:
    """The repository's agentbot.yml: the fast config, pytest without this venv's plugins."""
    py = sys.executable
    return fast_validation_yaml().replace(
        f"  test: {py}", f"  test: PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 {py}"
    )


def test_a_second_cover_in_a_fresh_runner_asks_no_model_and_keeps_the_report(
    tmp_path: Path,
) -> None:
    _, script = team(FIRST)
    with world(tmp_path, script, files=BASE, repo_yaml=cover_yaml()) as w:
        w.gh.set_permission(REPO, "alice", "write")
        number = seed(w)
        first = run_cover(w, tmp_path, "/cover", number, "job1")
        assert first.returncode == 0, first.stdout + first.stderr
        asked = len(w.llm.requests)
        assert asked == 12
        [report] = reports(w, number)
        assert "| `clamp` (new) |" in report
        pushed = len(commits(w.remote, BRANCH, base="main"))

        second = run_cover(w, tmp_path, "/cover", number, "job2")
        assert second.returncode == 0, second.stdout + second.stderr
        assert len(w.llm.requests) == asked  # every method's stages came from the PR
        assert len(commits(w.remote, BRANCH, base="main")) == pushed
        [again] = reports(w, number)
        assert "| `clamp` (new) |" in again and "cached" in again
        assert "No test was committed" not in again
        assert "🔄" not in again

        # A typo'd /cover: the good report stays, the answer is one short reply of its own.
        before = len(w.gh.comments_on(REPO, number))
        typo = run_cover(w, tmp_path, "/cover no_such_function", number, "job3")
        assert typo.returncode == 78, typo.stdout + typo.stderr  # neutral: nothing to do
        assert reports(w, number) == [again]
        after = w.gh.comments_on(REPO, number)
        assert len(after) == before + 1
        assert "no_such_function" in after[-1].body and REPORT_HEAD not in after[-1].body
        assert len(after[-1].body) < 600
        assert len(w.llm.requests) == asked
