"""A job whose agent does what a prompt injection asks (plant git config, hooks, filters,
replace objects, a global gitconfig, a detached process, a token poller): nothing of it runs
in the bot's git or in the next job, nothing outlives the job, no token is found.

Each test runs twice: in the bubblewrap sandbox, and without one (the fallback, where the
plants land but the bot's hardened git ignores them and the reaper ends what they start).
"""

from __future__ import annotations

import base64
import dataclasses
import secrets
import subprocess
from pathlib import Path

import pytest

from bot.config import RepoConfig
from bot.models import Job, JobKind, JobStatus
from bot.sandbox import Sandbox, SandboxPolicy, sandbox_status
from bot.workflows.fix.story import fix_issue
from tests.e2e import FIX_EDIT, REPO, TEST_EDIT, World, fast_validation_yaml, world
from tests.fakes.anthropic import Step, finish, reply, tool_use
from tests.fakes.github import DEFAULT_TOKEN
from tests.fakes.gitrepo import commits, read_tree

pytestmark = pytest.mark.slow

EDITOR = "str_replace_based_edit_tool"


@pytest.fixture(params=["bwrap", "none"])
def kind(request: pytest.FixtureRequest) -> str:
    if request.param == "bwrap" and not sandbox_status().ok:
        pytest.skip(f"bubblewrap not usable: {sandbox_status().reason}")
    return str(request.param)


@pytest.fixture
def bot_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The bot's own HOME, where an unsandboxed agent could plant a ~/.gitconfig."""
    home = tmp_path / "bot-home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    return home


@pytest.fixture
def policy(tmp_path: Path, kind: str, bot_home: Path) -> SandboxPolicy:
    data = tmp_path / "data"
    return SandboxPolicy(
        root=data / "sandbox",
        hidden=(data,),
        mode="auto" if kind == "bwrap" else "none",
        host_home=bot_home,
    )


def job(number: int) -> Job:
    return Job(kind=JobKind.FIX_ISSUE, repo=REPO, number=number, actor="alice")


def seed(w: World, *numbers: int) -> None:
    w.gh.set_permission(REPO, "alice", "write")
    for n in numbers:
        w.gh.add_issue(REPO, number=n, title=f"add() is wrong ({n})", labels=["agent-fix", "bug"])


def run_job(
    w: World, policy: SandboxPolicy, number: int, token: str = DEFAULT_TOKEN
) -> tuple[JobStatus, Sandbox]:
    env = w.env(RepoConfig.from_text(fast_validation_yaml()))
    env = dataclasses.replace(env, github=w.gh.client(token=token, clock=w.clock))
    with policy.open("setup") as sandbox:
        result = fix_issue(job(number), dataclasses.replace(env, sandbox=sandbox))
    assert result.status == JobStatus.SUCCESS, result.error
    return result.status, sandbox


def plants(marker: Path, bot_home: Path, sleeper: int) -> str:
    """What the injected agent runs: every plant the issue lists, then a detached sleeper."""
    evil = f'#!/bin/sh\\necho "$0 ran" >> {marker}\\ncat\\n'
    config = (
        "[core]\\n\\thooksPath = .git/hooks\\n\\tfsmonitor = .git/evil\\n"
        '[filter "evil"]\\n\\tclean = .git/evil\\n\\tsmudge = .git/evil\\n'
    )
    return "\n".join(
        [
            # A fake base: replace the base commit by one whose tree differs.
            "base=$(git rev-parse HEAD)",
            "fake=$(git commit-tree -m fake $(git hash-object -w /dev/null | xargs -I{} sh -c"
            " 'printf \"100644 blob {}\\tcalc.py\\n\" | git mktree'))",
            'git replace "$base" "$fake"',
            f"printf '{evil}' > .git/evil && chmod +x .git/evil",
            *(
                f"cp .git/evil .git/hooks/{hook}"
                for hook in ("pre-commit", "post-commit", "pre-push", "reference-transaction")
            ),
            "git config core.fsmonitor .git/evil",
            "git config filter.evil.clean .git/evil",
            "git config diff.evil.textconv .git/evil",
            "echo '* filter=evil diff=evil' >> .git/info/attributes",
            f"printf '{config}' > ~/.gitconfig",
            f"printf '{config}' > {bot_home}/.gitconfig",
            f"setsid sleep {sleeper} >/dev/null 2>&1 < /dev/null &",
            f"(nohup sleep {sleeper + 1} >/dev/null 2>&1 &)",
            "echo planted",
        ]
    )


def fix_steps(*first: Step) -> list[Step]:
    return [
        *first,
        reply(tool_use(EDITOR, FIX_EDIT), tool_use(EDITOR, TEST_EDIT)),
        reply(finish(summary="add() now adds", root_cause="it subtracted")),
    ]


def _ere(text: str) -> str:
    """An ERE matching `text` whose own spelling does not contain it (the poller's command
    line is among what it reads): every character bracketed."""
    return "".join(f"[{c}]" for c in text)


def alive(pattern: str) -> bool:
    found = subprocess.run(["pgrep", "-f", pattern], capture_output=True, text=True)
    return bool(found.stdout.strip())


def test_planted_git_config_hooks_filters_and_processes_never_run_and_never_outlive(
    tmp_path: Path, kind: str, policy: SandboxPolicy, bot_home: Path
) -> None:
    marker = tmp_path / "planted-code-ran"
    sleeper = 611 if kind == "bwrap" else 613  # one name per run: tests run in parallel
    pattern = f"sleep {sleeper}|sleep {sleeper + 1}"
    script = [
        *fix_steps(reply(tool_use("bash", {"command": plants(marker, bot_home, sleeper)}))),
        *fix_steps(),  # the next job, on the same machine
    ]
    with world(tmp_path, script, repo_yaml=fast_validation_yaml()) as w:
        seed(w, 7, 8)
        run_job(w, policy, 7)
        assert not alive(pattern), "a process of the job outlived it"
        planted_reply = w.llm_requests_text()
        run_job(w, policy, 8)
        for branch in ("agentbot/fix-issue-7", "agentbot/fix-issue-8"):
            pushed = commits(w.remote, branch, base="main")
            assert len(pushed) == 1 and pushed[0].author_email.startswith("agentbot")
            tree = read_tree(w.remote, branch)
            assert "return a + b" in tree["calc.py"]  # the real change, no filter output
            assert not any(path.startswith(".git") for path in tree)
    assert not marker.exists(), marker.read_text()
    if kind == "bwrap":
        # Inside the sandbox .git is read-only: the plants did not even land.
        assert planted_reply.count("Read-only file system") >= 4
    assert not alive(pattern)


def test_no_token_for_a_detached_poller_nor_in_the_session_after_a_trace2_plant(
    tmp_path: Path, kind: str, policy: SandboxPolicy, bot_home: Path
) -> None:
    data = tmp_path / "data"
    loot = f"stolen-{kind}.txt"  # one name per run: tests run in parallel
    # A token of this test's own, and the poller looks for it alone: without a sandbox it sees
    # every process on the machine, and other tests' tokens in its loot would be refused as
    # secrets at the push, failing this job for what is not its leak.
    token = "ghs_" + secrets.token_hex(18)
    basic = base64.b64encode(f"x-access-token:{token}".encode()).decode()
    poll = (
        "while :; do cat /proc/*/environ /proc/*/cmdline ~/.gitconfig ~/.git-credentials"
        " .git/config 2>/dev/null | tr '\\\\0' '\\\\n'"
        f" | grep -aE '{_ere(token)}|{_ere(basic)}' >> {loot}; sleep 0.005; done"
    )
    trace2 = (
        f"[trace2]\\n\\teventTarget = {data}/sessions/trace2.json\\n"
        "\\tenvVars = GIT_CONFIG_VALUE_0,GIT_CONFIG_VALUE_1,GIT_CONFIG_VALUE_2,"
        "GIT_CONFIG_VALUE_9,GIT_CONFIG_VALUE_10,GIT_CONFIG_VALUE_11\\n"
        f"\\tperfTarget = {data}/sessions/trace2.perf\\n\\tconfigParams = http.*\\n"
    )
    command = "\n".join(
        [
            f"touch {loot}",
            f"printf '{trace2}' > ~/.gitconfig",
            f"printf '{trace2}' > {bot_home}/.gitconfig",
            f"printf '{trace2}' >> .git/config",
            f'setsid sh -c "{poll}" >/dev/null 2>&1 < /dev/null &',
            "sleep 0.2; echo poller started",
        ]
    )
    with world(tmp_path, fix_steps(reply(tool_use("bash", {"command": command})))) as w:
        seed(w, 7)
        run_job(w, policy, 7, token)
        tree = read_tree(w.remote, "agentbot/fix-issue-7")
    assert not alive(f">> {loot}")
    everything = "\n".join(tree.values())
    for path in data.rglob("*"):
        if path.is_file():
            everything += path.read_bytes().decode("utf-8", "replace")
    assert token not in everything and basic not in everything
    # The test's own git helpers (HOME is the planted one) may trace; the bot's git never does.
    for trace in data.rglob("trace2.*"):
        text = trace.read_text(errors="replace")
        assert '"push"' not in text and "agentbot[bot]" not in text, text[-2000:]
