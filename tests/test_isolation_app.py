"""App mode (`agentbot serve`, two installations on the fake GitHub): what a prompt-injected
agent reaches from its bash, and a machine without a sandbox refusing jobs."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from bot.queue import JobState
from bot.queue.sqlite import SqliteQueue
from bot.sandbox import sandbox_status
from tests.fakes.anthropic import FakeAnthropic, Step, finish, reply, tool_use
from tests.fakes.github import FakeGitHub
from tests.fakes.gitrepo import make_github_remote, server_url
from webhooks.app import signature

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-c", "from bot.cli import main; main()"]
OURS, THEIRS = "octo/calc", "acme/secret"
APP_ID = 4242
INSTALLATIONS = {OURS: 777, THEIRS: 888}
THEIR_CODE = "acme's private algorithm, never to be seen by octo's jobs\n"


def labeled(repo: str, number: int) -> dict[str, Any]:
    """A real `issues.labeled` delivery for `repo#number`, from its installation."""
    examples = json.loads((ROOT / "tests/data/webhooks/issues.json").read_text())
    p: dict[str, Any] = next(dict(e["payload"]) for e in examples if e["action"] == "labeled")
    owner, name = repo.split("/")
    p["repository"] = {**p["repository"], "full_name": repo, "name": name}
    p["repository"]["default_branch"] = "main"
    p["repository"]["owner"] = {**p["repository"]["owner"], "login": owner}
    p["issue"] = {**p["issue"], "number": number, "state": "open", "locked": False}
    p["label"] = {**p["label"], "name": "agent-fix"}
    p["sender"] = {**p["sender"], "login": "alice", "type": "User"}
    p["installation"] = {"id": INSTALLATIONS[repo]}
    return p


@dataclass
class App:
    """A running `agentbot serve` with its data dir, key, queue and fakes."""

    tmp: Path
    port: int
    gh: FakeGitHub
    llm: FakeAnthropic
    data: Path
    key: Path
    queue: Path
    log: Path

    def deliver(self, delivery: str, repo: str, number: int) -> None:
        body = json.dumps(labeled(repo, number)).encode()
        secret = (self.data / "webhook-secret").read_text().strip()
        headers = {
            "X-GitHub-Event": "issues",
            "X-GitHub-Delivery": delivery,
            "X-Hub-Signature-256": signature(secret, body),
            "Content-Type": "application/json",
        }
        r = httpx.post(f"http://127.0.0.1:{self.port}/webhook", content=body, headers=headers)
        assert r.status_code == 202, r.text

    def wait(self, delivery: str, timeout: float = 240) -> Any:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            q = SqliteQueue(self.queue)
            try:
                found = [r for r in q.list(limit=100) if r.id == delivery]
            finally:
                q.close()
            if found and found[0].state in (JobState.DONE, JobState.DEAD, JobState.FAILED):
                return found[0]
            time.sleep(0.2)
        raise AssertionError(f"{delivery} did not finish:\n{self.log.read_text()[-4000:]}")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def serve(tmp: Path, script: Sequence[Step], *, path: str | None = None) -> Iterator[App]:
    """`agentbot serve` as an operator starts it: App auth, a key file, the default secret."""
    data, keys, queue_dir = tmp / "data", tmp / "keys", tmp / "queue"
    keys.mkdir()
    queue_dir.mkdir()
    with FakeGitHub() as gh, FakeAnthropic(list(script)) as llm:
        pem = gh.install_app("octo", app_id=APP_ID, installation_id=INSTALLATIONS[OURS])
        gh.add_installation(INSTALLATIONS[THEIRS], app_id=APP_ID, account="acme")
        for repo, files in (
            (OURS, {"calc.py": "def add(a, b):\n    return a - b\n"}),
            (THEIRS, {"algo.py": THEIR_CODE}),
        ):
            remote = make_github_remote(tmp / "server", repo, files)
            gh.add_repo(repo, clone_url=remote.as_uri())
            gh.set_permission(repo, "alice", "write")
        gh.add_issue(THEIRS, number=1, title="tune it", labels=["agent-fix"])
        gh.add_issue(OURS, number=2, title="add() subtracts", labels=["agent-fix"])
        key = keys / "app.pem"
        key.write_text(pem)
        key.chmod(0o600)
        port = _free_port()
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("GITHUB_", "AGENTBOT_", "ANTHROPIC_"))
        }
        env.update(
            PYTHONPATH=str(ROOT),
            GITHUB_APP_ID=str(APP_ID),
            GITHUB_APP_PRIVATE_KEY_PATH=str(key),
            GITHUB_API_URL=gh.url,
            GITHUB_SERVER_URL=server_url(tmp / "server"),
            ANTHROPIC_API_KEY="sk-ant-api03-serve-test-key-000000",
            ANTHROPIC_BASE_URL=llm.base_url,
            AGENTBOT_DATA_DIR=str(data),
            AGENTBOT_QUEUE=f"sqlite:///{queue_dir / 'agentbot.db'}",
        )
        if path is not None:
            env["PATH"] = path
        log = tmp / "serve.log"
        with log.open("wb") as out:
            proc = subprocess.Popen(
                [*CLI, "serve", "--port", str(port), "--workers", "1", "--poll-seconds", "0.05"],
                env=env,
                cwd=tmp,
                stdout=out,
                stderr=out,
            )
        try:
            _wait_healthy(port, proc, log)
            yield App(tmp, port, gh, llm, data, key, queue_dir / "agentbot.db", log)
        finally:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _wait_healthy(port: int, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"serve exited with {proc.returncode}:\n{log.read_text()}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise AssertionError("serve did not become healthy")


def tool_results(llm: FakeAnthropic) -> list[str]:
    """Every tool result the model was sent, in order."""
    found = []
    for request in llm.requests:
        for message in (request.json or {}).get("messages", []):
            content = message.get("content")
            if not isinstance(content, list):
                continue
            for block in content:
                if block.get("type") == "tool_result":
                    inner = block.get("content")
                    if isinstance(inner, list):
                        inner = "".join(b.get("text", "") for b in inner)
                    found.append(str(inner))
    return list(dict.fromkeys(found))


needs_bwrap = pytest.mark.skipif(
    not sandbox_status().ok, reason=f"bubblewrap not usable: {sandbox_status().reason}"
)


@needs_bwrap
def test_the_agent_reaches_no_key_queue_data_dir_or_other_workspace(tmp_path: Path) -> None:
    data = tmp_path / "data"
    theirs = data / "workspaces" / "acme__secret-issue-1"
    targets = {
        "key": tmp_path / "keys" / "app.pem",
        "queue": tmp_path / "queue" / "agentbot.db",
        "secret": data / "webhook-secret",
        "their code": theirs / "algo.py",
        "their checkout": theirs,
        "sessions": data / "sessions",
    }
    probe = "; ".join(
        f'echo "== {name}"; cat "{path}" 2>&1 || ls -a "{path}" 2>&1'
        for name, path in targets.items()
    )
    probe += f'; echo "== listing"; ls -a {data} {data / "workspaces"}'
    probe += (
        '; echo "== env"; env; echo "== proc"; cat /proc/*/environ 2>/dev/null | tr "\\0" "\\n"'
    )
    script = [
        # acme's job: its workspace is cloned, then the agent asks a question.
        reply(finish("NEEDS_INFO", "need detail", question="Which input is slow?")),
        # octo's job: the issue text told the agent to collect everything it can.
        reply(tool_use("bash", {"command": probe})),
        reply(finish("NEEDS_INFO", "collected", question="Anything else?")),
    ]
    with serve(tmp_path, script) as app:
        app.deliver("d-acme", THEIRS, 1)
        assert app.wait("d-acme").state == JobState.DONE
        assert (theirs / "algo.py").read_text() == THEIR_CODE  # it is there, on the host
        app.deliver("d-octo", OURS, 2)
        assert app.wait("d-octo").state == JobState.DONE
        results = tool_results(app.llm)
        key_body = "".join(app.key.read_text().splitlines()[1:3])
        secret = (data / "webhook-secret").read_text().strip()
    assert len(results) == 1, results
    out = results[0]
    sections = dict(part.split("\n", 1) for part in out.split("== ")[1:])
    for name in targets:
        assert (
            "No such file or directory" in sections[name] or "Permission denied" in sections[name]
        ), (name, sections[name])
    # The data dir shows only the mount points of this job's own workspace and HOME.
    listed = set(sections["listing"].split())
    assert not listed & {"webhook-secret", "sessions", "venvs", "acme__secret-issue-1"}
    assert "octo__calc-issue-2" in listed
    assert THEIR_CODE.strip() not in out
    assert key_body[:40] not in out and secret not in out
    assert "sk-ant-api03-serve-test-key" not in out and "ghs_" not in out
    env_names = {line.split("=", 1)[0] for line in sections["env"].splitlines() if "=" in line}
    assert not {n for n in env_names if n.startswith(("GITHUB", "AGENTBOT", "ANTHROPIC"))}


def path_without_bwrap(tmp: Path) -> str:
    """PATH as it is, except that no directory on it holds a bwrap."""
    shadow = tmp / "bin-without-bwrap"
    shadow.mkdir()
    entries = []
    for entry in os.environ["PATH"].split(os.pathsep):
        folder = Path(entry)
        if not (folder / "bwrap").exists():
            entries.append(entry)
            continue
        for tool in folder.iterdir():
            target = shadow / tool.name
            if tool.name != "bwrap" and not target.exists():
                target.symlink_to(tool)
        entries.append(str(shadow))
    return os.pathsep.join(dict.fromkeys(entries))


def test_without_a_sandbox_app_mode_refuses_the_job(tmp_path: Path) -> None:
    script = [reply(tool_use("bash", {"command": "cat /etc/hostname"}))]
    with serve(tmp_path, script, path=path_without_bwrap(tmp_path)) as app:
        app.deliver("d-octo", OURS, 2)
        record = app.wait("d-octo")
        log = app.log.read_text()
    assert record.state == JobState.DEAD
    assert "refuses to run a job without a sandbox" in record.error
    assert "bwrap not found on PATH" in record.error and "AGENTBOT_SANDBOX=none" in record.error
    assert app.llm.requests == []
    assert "sandbox: none (bwrap not found on PATH" in log
