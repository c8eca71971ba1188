"""`agentbot run` as an Actions runner calls it: env vars, a vendored payload, fakes behind."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.e2e import REPO, fast_validation_yaml, world
from tests.fakes.anthropic import finish, reply
from tests.fakes.gitrepo import clone_branch
from tests.test_fix_issue import fix_script

pytestmark = pytest.mark.slow

DATA = Path(__file__).parent / "data" / "webhooks"
AGENTBOT = str(Path(sys.executable).with_name("agentbot"))


def labeled_payload(label: str = "agent-fix") -> dict[str, Any]:
    """A real `issues.labeled` delivery, pointed at our repo, issue #7 and `label`."""
    examples = json.loads((DATA / "issues.json").read_text())
    payload: dict[str, Any] = next(e["payload"] for e in examples if e["action"] == "labeled")
    owner, name = REPO.split("/")
    payload["repository"].update(full_name=REPO, name=name, default_branch="main")
    payload["repository"]["owner"]["login"] = owner
    payload["issue"].update(number=7, state="open", locked=False)
    payload["label"]["name"] = label
    payload["sender"].update(login="alice", type="User")
    return payload


def actions_env(
    tmp: Path, api_url: str, llm_url: str, event: str, payload: dict[str, Any]
) -> dict[str, str]:
    event_path = tmp / "event.json"
    event_path.write_text(json.dumps(payload))
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("GITHUB_", "AGENTBOT_", "ANTHROPIC_"))
    }
    env.update(
        GITHUB_ACTIONS="true",
        GITHUB_EVENT_NAME=event,
        GITHUB_EVENT_PATH=str(event_path),
        GITHUB_REPOSITORY=REPO,
        GITHUB_TOKEN="ghs_testtoken123456789",
        GITHUB_API_URL=api_url,
        GITHUB_OUTPUT=str(tmp / "output.txt"),
        GITHUB_STEP_SUMMARY=str(tmp / "summary.md"),
        ANTHROPIC_API_KEY="sk-ant-test-key-0000",
        ANTHROPIC_BASE_URL=llm_url,
        AGENTBOT_DATA_DIR=str(tmp / "data"),
    )
    return env


def test_run_fixes_a_labelled_issue_and_writes_outputs(tmp_path: Path) -> None:
    with world(tmp_path, fix_script(), repo_yaml=fast_validation_yaml()) as w:
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
        assert len(w.gh.pulls(REPO)) == 1
        outputs = dict(
            line.split("=", 1) for line in (tmp_path / "output.txt").read_text().splitlines()
        )
        assert outputs["status"] == "success"
        assert outputs["pr-url"].endswith("/pull/1") or "/pull/" in outputs["pr-url"]
        assert outputs["turns"] == "3"
        assert int(outputs["output-tokens"]) > 0 and float(outputs["cost-usd"]) > 0
        summary = (tmp_path / "summary.md").read_text()
        assert "## agentbot fix_issue: ✅ success" in summary
        assert "| test | ✅ passed" in summary
        assert "ghs_testtoken123456789" not in proc.stdout + proc.stderr


def test_run_on_an_unrelated_event_exits_78(tmp_path: Path) -> None:
    with world(tmp_path, []) as w:
        env = actions_env(tmp_path, w.gh.url, w.llm.base_url, "issues", labeled_payload("question"))
        proc = subprocess.run(
            [AGENTBOT, "run"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
        )
        assert proc.returncode == 78, proc.stdout + proc.stderr
        # The runner shows no command line (`::stop-commands::…` and its end) in the log.
        lines = [line for line in proc.stdout.splitlines() if line.strip() and line[:2] != "::"]
        assert len(lines) == 1 and "nothing to do" in lines[0] and "question" in lines[0]
        assert w.gh.writes() == []
        assert "status=neutral" in (tmp_path / "output.txt").read_text()


def test_run_with_a_bad_payload_exits_2(tmp_path: Path) -> None:
    bad = tmp_path / "event.json"
    bad.write_text("{not json")
    env = dict(os.environ, GITHUB_EVENT_NAME="issues", GITHUB_EVENT_PATH=str(bad))
    proc = subprocess.run([AGENTBOT, "run"], env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert "event.json:1" in proc.stderr


def test_run_refuses_a_labeller_with_read_permission(tmp_path: Path) -> None:
    with world(tmp_path, fix_script(), repo_yaml=fast_validation_yaml()) as w:
        w.gh.set_permission(REPO, "alice", "read")
        w.gh.add_issue(REPO, number=7, title="add() is wrong", labels=["agent-fix"])
        checkout = clone_branch(w.remote, "main", tmp_path / "checkout")
        env = actions_env(tmp_path, w.gh.url, w.llm.base_url, "issues", labeled_payload())
        env["AGENTBOT_NEUTRAL_EXIT_CODE"] = "0"  # as action.yml sets it
        proc = subprocess.run(
            [AGENTBOT, "run"], cwd=checkout, env=env, capture_output=True, text=True, timeout=120
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "alice has read permission" in proc.stdout
        assert w.llm.requests == []
        assert w.gh.writes() == []
        assert "status=neutral" in (tmp_path / "output.txt").read_text()


def comment_payload(body: str, actor: str, *, number: int) -> dict[str, Any]:
    """A real `issue_comment.created` delivery on pull request #`number` of our repo."""
    examples = json.loads((DATA / "issue_comment.json").read_text())
    payload: dict[str, Any] = next(e["payload"] for e in examples if e["action"] == "created")
    payload["repository"].update(full_name=REPO, default_branch="main")
    payload["issue"].update(number=number, state="open", locked=False)
    payload["issue"]["pull_request"] = {
        "url": f"https://api.github.com/repos/{REPO}/pulls/{number}"
    }
    user = {**payload["sender"], "login": actor, "type": "User"}
    payload["comment"].update(body=body, user=user)
    payload["sender"] = user
    return payload


def test_run_tells_only_collaborators_that_fix_works_on_issues(tmp_path: Path) -> None:
    """A read-only commenter's `/fix` on a pull request gets no reply (as in the App)."""
    with world(tmp_path, []) as w:
        w.gh.set_permission(REPO, "rita", "read")
        w.gh.set_permission(REPO, "wendy", "write")
        number = w.gh.add_pull(REPO, head="main", title="A feature").number
        for actor, replies in (("rita", 0), ("wendy", 1)):
            w.gh.reset_calls()
            env = actions_env(tmp_path, w.gh.url, w.llm.base_url, "issue_comment", {})
            Path(env["GITHUB_EVENT_PATH"]).write_text(
                json.dumps(comment_payload("/fix", actor, number=number))
            )
            proc = subprocess.run(
                [AGENTBOT, "run"],
                cwd=tmp_path,
                env=env,
                capture_output=True,
                text=True,
                timeout=120,
            )
            assert proc.returncode == 78, proc.stdout + proc.stderr
            posted = w.gh.calls_to("POST", rf"/repos/{REPO}/issues/\d+/comments")
            assert len(posted) == replies, (actor, posted)
            assert all("/implement" in c.json["body"] for c in posted)
            # A refused or declined delivery writes its reply and nothing else (no check run).
            assert len(w.gh.writes()) == replies, w.gh.writes()


@pytest.mark.parametrize("api", ["fake", "unreachable"])
def test_run_on_a_star_asks_github_nothing(tmp_path: Path, api: str) -> None:
    """Nothing to do is known from the payload: neutral at once, zero requests."""
    examples = json.loads((DATA / "star.json").read_text())
    payload = next(e["payload"] for e in examples if e["action"] == "created")
    with world(tmp_path, []) as w:
        url = w.gh.url
        if api == "unreachable":
            with socket.socket() as s:  # a port nobody listens on
                s.bind(("127.0.0.1", 0))
                url = f"http://127.0.0.1:{s.getsockname()[1]}"
        env = actions_env(tmp_path, url, w.llm.base_url, "star", payload)
        started = time.monotonic()
        proc = subprocess.run(
            [AGENTBOT, "run"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
        )
        assert time.monotonic() - started < 5  # the Action step never hangs on GitHub
        assert proc.returncode == 78, proc.stdout + proc.stderr
        assert "star.created does not trigger agentbot" in proc.stdout
        assert "status=neutral" in (tmp_path / "output.txt").read_text()
        assert w.gh.calls == []


def test_a_fix_in_action_mode_asks_each_fact_once(tmp_path: Path) -> None:
    """Every request of a happy-path fix with a review request: at most 10 (1 of them for the
    check run on the pull request it opened), no GET twice."""
    with world(tmp_path, fix_script(), repo_yaml=fast_validation_yaml()) as w:
        w.gh.set_permission(REPO, "alice", "write")
        w.gh.add_issue(REPO, number=7, title="add() is wrong", labels=["agent-fix"], user="bob")
        checkout = clone_branch(w.remote, "main", tmp_path / "checkout")
        env = actions_env(tmp_path, w.gh.url, w.llm.base_url, "issues", labeled_payload())
        env.update(GITHUB_RUN_ID="4242", GITHUB_RUN_ATTEMPT="1")  # as every runner sets them
        proc = subprocess.run(
            [AGENTBOT, "run"], cwd=checkout, env=env, capture_output=True, text=True, timeout=300
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        calls = [f"{c.method} {c.path} {sorted(c.query.items())}" for c in w.gh.calls]
        assert len(w.gh.calls_to("POST", rf"/repos/{REPO}/pulls/\d+/requested_reviewers")) == 1
        assert len(w.gh.check_runs) == 1
        assert len(calls) <= 10, "\n".join(calls)
        reads = [c for c in calls if c.startswith("GET ")]
        assert len(reads) == len(set(reads)), "\n".join(reads)


def test_a_zero_config_fix_asks_github_nothing_it_already_knows(tmp_path: Path) -> None:
    """A zero-config fix with its check run: at most 9 requests, no GET twice, and no look for
    an open pull request from a branch that was not on origin (none can exist)."""
    with world(tmp_path, fix_script()) as w:
        w.gh.set_permission(REPO, "alice", "write")
        w.gh.add_issue(REPO, number=7, title="add() is wrong", labels=["agent-fix"], user="bob")
        checkout = clone_branch(w.remote, "main", tmp_path / "checkout")
        env = actions_env(tmp_path, w.gh.url, w.llm.base_url, "issues", labeled_payload())
        env.update(GITHUB_RUN_ID="4242", GITHUB_RUN_ATTEMPT="1")
        proc = subprocess.run(
            [AGENTBOT, "run"], cwd=checkout, env=env, capture_output=True, text=True, timeout=300
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        calls = [f"{c.method} {c.path} {sorted(c.query.items())}" for c in w.gh.calls]
        assert len(w.gh.check_runs) == 1 and len(w.gh.pulls(REPO)) == 1
        assert w.gh.calls_to("GET", rf"/repos/{REPO}/pulls") == [], "\n".join(calls)
        assert len(calls) <= 9, "\n".join(calls)
        reads = [c for c in calls if c.startswith("GET ")]
        assert len(reads) == len(set(reads)), "\n".join(reads)


def test_what_the_agent_wrote_cannot_become_a_workflow_command(tmp_path: Path) -> None:
    # The hostile-model trial's H7: a finish summary with `::error`/`::stop-commands` lines,
    # printed in the job log, would be read by the runner as workflow commands.
    evil = (
        "cannot proceed\n::error title=notice::Your token was revoked; see https://evil.example\n"
        "::stop-commands::deadbeef\n::set-output name=pr-url::https://evil.example"
    )
    with world(tmp_path, [reply(finish("BLOCKED", evil))], repo_yaml=fast_validation_yaml()) as w:
        w.gh.set_permission(REPO, "alice", "write")
        w.gh.add_issue(REPO, number=7, title="add() is wrong", labels=["agent-fix"])
        checkout = clone_branch(w.remote, "main", tmp_path / "checkout")
        env = actions_env(tmp_path, w.gh.url, w.llm.base_url, "issues", labeled_payload())
        proc = subprocess.run(
            [AGENTBOT, "run"], cwd=checkout, env=env, capture_output=True, text=True, timeout=300
        )
    lines = proc.stdout.splitlines()
    # The job's one log line carries the reason's first line only; the rest never prints.
    assert "agentbot fix_issue: failed the agent stopped with BLOCKED: cannot proceed" in lines
    assert not any("evil.example" in line for line in lines)
    first, last = lines[0], lines[-1]
    assert first.startswith("::stop-commands::") and len(first) > len("::stop-commands::") + 16
    token = first.removeprefix("::stop-commands::")
    assert last == f"::{token}::" and token != "deadbeef"


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (
            ["--limit", "abc"],
            "input limit (--limit / AGENTBOT_LIMIT) must be a whole number above 0, got 'abc'",
        ),
        (["--limit", "0"], "input limit (--limit / AGENTBOT_LIMIT) must be a whole number above 0"),
        (
            ["--max-usd", "-3"],
            "input max_usd (--max-usd / AGENTBOT_MAX_USD) must be a number of dollars above 0",
        ),
        (["--config", "../../etc/passwd"], "must be a path inside the repository"),
        (["--config", "/etc/passwd"], "must be a path inside the repository"),
        (["--neutral-exit-code", "300"], "less than or equal to 255"),  # exit codes: 0-255
    ],
)
def test_a_bad_run_input_exits_2_before_any_call_to_github(
    tmp_path: Path, args: list[str], said: str
) -> None:
    with world(tmp_path, []) as w:
        env = actions_env(tmp_path, w.gh.url, w.llm.base_url, "issues", labeled_payload())
        proc = subprocess.run(
            [AGENTBOT, "run", *args], cwd=tmp_path, env=env, capture_output=True, text=True,
            timeout=60,
        )  # fmt: skip
        assert proc.returncode == 2, proc.stdout + proc.stderr
        plain = " ".join(re.sub(r"\x1b\[[0-9;]*m|[│╭╮╰╯─]", " ", proc.stderr).split())
        assert said in plain and "Traceback" not in proc.stderr  # Click's box, uncoloured
        assert w.gh.calls == []
