"""`agentbot serve`, `worker` and `jobs` as real subprocesses: out-of-the-box start, and
durability through kill -9 (every acknowledged delivery queued once and processed, jobs of
a killed worker claimed again after their lease)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import sqlite3
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from bot.cli import load_app
from bot.errors import ConfigError
from bot.queue import JobState
from bot.queue.sqlite import SqliteQueue
from tests.fakes.github import FakeGitHub
from webhooks.app import signature

ROOT = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-c", "from bot.cli import main; main()"]
SECRET = "durability-secret"
REPO = "octo/app"

# `agentbot serve` with a slow test-only handler for fix_issue that journals its runs,
# handed in through the seam the command itself uses (`run_server(handlers=...)`).
WRAPPER = r"""
import os, sys, time
from bot.cli.serve import run_server
from bot.models import JobKind, JobResult, JobStatus

journal = os.environ["TEST_JOURNAL"]

def slow_fix(job, env):
    with open(journal, "a") as f:
        f.write(f"start {job.delivery_id} {os.getpid()} {time.time()}\n")
    env.log.info("test handler on %s", job.key)
    time.sleep(float(os.environ.get("TEST_JOB_SECONDS", "0.5")))
    with open(journal, "a") as f:
        f.write(f"end {job.delivery_id} {os.getpid()} {time.time()}\n")
    return JobResult(job=job, status=JobStatus.SUCCESS, summary="slow fix")

options = dict(zip(sys.argv[1::2], sys.argv[2::2]))
run_server(
    host="127.0.0.1",
    port=int(options["--port"]),
    workers=int(options["--workers"]),
    lease_seconds=float(options["--lease-seconds"]),
    poll_seconds=float(options["--poll-seconds"]),
    handlers={JobKind.FIX_ISSUE: slow_fix},
)
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_healthy(port: int, proc: subprocess.Popen[bytes], timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"serve exited with {proc.returncode}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise AssertionError("serve did not become healthy")


def _payload(number: int | None) -> dict[str, Any]:
    data = json.loads((ROOT / "tests/data/webhooks/issues.json").read_text())
    p = next(dict(i["payload"]) for i in data if i["action"] == "labeled")
    p["repository"] = {**p["repository"], "full_name": REPO, "default_branch": "main"}
    p["sender"] = {**p["sender"], "login": "alice", "type": "User"}
    if number is None:
        return {"action": "created", "repository": p["repository"], "sender": p["sender"]}
    p["issue"] = {**p["issue"], "number": number, "state": "open", "locked": False}
    p["label"] = {**p["label"], "name": "agent-fix"}
    return p


def _post(port: int, delivery: str, event: str, body: bytes) -> int | None:
    headers = {
        "X-GitHub-Event": event,
        "X-GitHub-Delivery": delivery,
        "X-Hub-Signature-256": signature(SECRET, body),
        "Content-Type": "application/json",
    }
    try:
        r = httpx.post(
            f"http://127.0.0.1:{port}/webhook", content=body, headers=headers, timeout=10
        )
    except httpx.HTTPError:
        return None
    return r.status_code


@pytest.fixture
def gh() -> Iterator[FakeGitHub]:
    with FakeGitHub() as fake:
        fake.add_repo(REPO)
        for n in range(1, 41):
            fake.add_issue(REPO, number=n, title=f"Bug {n}")
        fake.set_permission(REPO, "alice", "write")
        yield fake


def _wrapper_env(tmp_path: Path, db: Path, journal: Path, gh: FakeGitHub) -> dict[str, str]:
    """The environment of serve run through WRAPPER, against the fake GitHub."""
    return {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "AGENTBOT_QUEUE": f"sqlite:///{db}",
        "AGENTBOT_DATA_DIR": str(tmp_path / "data"),
        "GITHUB_WEBHOOK_SECRET": SECRET,
        "GITHUB_TOKEN": "ghp_" + "t" * 36,
        "GITHUB_API_URL": gh.url,
        "ANTHROPIC_API_KEY": "sk-ant-test-unused",  # checked before a job runs, never used
        "TEST_JOURNAL": str(journal),
    }


@pytest.mark.slow
def test_kill_9_loses_no_acknowledged_delivery_and_leases_lapse(
    tmp_path: Path, gh: FakeGitHub
) -> None:
    db = tmp_path / "queue.db"
    journal = tmp_path / "journal.txt"
    port = _free_port()
    # Short enough to see the killed worker's jobs lapse, long enough that a heartbeat
    # delayed by a loaded CI machine does not let a live job be claimed twice.
    lease = 4.0
    env = _wrapper_env(tmp_path, db, journal, gh)
    args = [sys.executable, "-c", WRAPPER, "--port", str(port), "--workers", "4"]
    args += ["--lease-seconds", str(lease), "--poll-seconds", "0.05"]

    def start() -> subprocess.Popen[bytes]:
        log = (tmp_path / f"serve-{time.monotonic_ns()}.log").open("wb")
        return subprocess.Popen(args, env=env, cwd=tmp_path, stdout=log, stderr=log)

    # 40 fix jobs (slow, they run when the kill comes) and 160 events that are ignored
    deliveries = [
        (f"fix-{n:03d}", "issues", json.dumps(_payload(n)).encode()) for n in range(1, 41)
    ]
    deliveries += [
        (f"star-{i:03d}", "star", json.dumps(_payload(None)).encode()) for i in range(160)
    ]
    proc = start()
    _wait_healthy(port, proc)
    answered: dict[str, int | None] = {}
    lock = threading.Lock()
    killed_at = 0.0

    def send(item: tuple[str, str, bytes]) -> None:
        nonlocal killed_at
        status = _post(port, *item)
        with lock:
            answered[item[0]] = status
            if len(answered) == 100 and not killed_at:
                os.kill(proc.pid, signal.SIGKILL)  # mid-stream
                killed_at = time.time()

    with ThreadPoolExecutor(16) as pool:
        list(pool.map(send, deliveries))
    proc.wait(10)
    assert killed_at and proc.returncode == -signal.SIGKILL
    acked = {d for d, s in answered.items() if s is not None and 200 <= s < 300}
    assert 90 <= len(acked) < 200, len(acked)  # the kill really cut the stream
    # the jobs the killed workers held
    before = SqliteQueue(db)
    held = {r.id: r for r in before.list(limit=1000, state=JobState.RUNNING)}
    before.close()
    assert held, "no job was running at the kill; the lease path was not exercised"

    # restart; GitHub's "redeliver" for whatever got no 2xx, plus a few repeats
    proc = start()
    try:
        _wait_healthy(port, proc)
        for d, event, body in deliveries:
            if d not in acked:
                assert _post(port, d, event, body) == 202
        repeats = sorted(acked)[:10]
        for d, event, body in deliveries:
            if d in repeats:
                assert _post(port, d, event, body) == 202
        queue = SqliteQueue(db)
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            counts = queue.counts()
            if counts[JobState.DONE] + counts[JobState.IGNORED] == 200:
                break
            time.sleep(0.2)
        records = queue.list(limit=1000)
        ids = [r.id for r in records]
        assert len(ids) == len(set(ids)) == 200  # each delivery queued exactly once
        assert acked <= set(ids)  # 0 lost
        by_id = {r.id: r for r in records}
        assert {r.state for r in records if r.id.startswith("fix")} == {JobState.DONE}
        assert {r.state for r in records if r.id.startswith("star")} == {JobState.IGNORED}
        runs = [line.split() for line in journal.read_text().splitlines()]
        ends = [r[1] for r in runs if r[0] == "end"]
        # Each finished; twice only a job whose worker was killed while it held the lease
        # (between its handler's end and its `done`): the queue is at-least-once.
        assert set(ends) == {f"fix-{n:03d}" for n in range(1, 41)}
        again = {d for d in ends if ends.count(d) > 1}
        assert again <= set(held) and all(ends.count(d) == 2 for d in again), (again, held)
        for d, was in held.items():
            now = by_id[d]
            assert now.attempts == 2, (d, now.attempts)  # claimed again, once
            assert was.started_at is not None and now.started_at is not None
            # ...and only after the lease lapsed
            assert (now.started_at - was.started_at).total_seconds() >= lease
        fix_held = sorted(d for d in held if d.startswith("fix"))
        assert fix_held, held
        record = queue.get(fix_held[0])
        assert record is not None and any("test handler on octo/app#" in ln for ln in record.log)
        queue.close()
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(20)


@pytest.mark.slow
def test_sigterm_stops_serve_cleanly_and_hands_over_a_running_job(
    tmp_path: Path, gh: FakeGitHub
) -> None:
    # systemd, Docker and Kubernetes stop a service with SIGTERM: the shutdown must run
    # (a running job's lease released, not left to lapse), and the exit is a clean 0.
    db = tmp_path / "queue.db"
    journal = tmp_path / "journal.txt"
    port = _free_port()
    env = {**_wrapper_env(tmp_path, db, journal, gh), "TEST_JOB_SECONDS": "60"}
    args = [sys.executable, "-c", WRAPPER, "--port", str(port), "--workers", "1"]
    args += ["--lease-seconds", "300", "--poll-seconds", "0.05"]
    log = tmp_path / "serve.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(args, env=env, cwd=tmp_path, stdout=out, stderr=out)
    try:
        _wait_healthy(port, proc)
        assert _post(port, "fix-001", "issues", json.dumps(_payload(1)).encode()) == 202
        deadline = time.monotonic() + 30
        while "start fix-001" not in (journal.read_text() if journal.exists() else ""):
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        proc.wait(40)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    text = log.read_text()
    assert proc.returncode == 0, text
    assert "released fix-001" in text
    with contextlib.closing(sqlite3.connect(db)) as conn:
        (expires,) = conn.execute(
            "SELECT lease_expires_at FROM jobs WHERE delivery_id = 'fix-001'"
        ).fetchone()
    assert expires is not None and expires <= time.time()  # another worker may take it now


def test_serve_runs_out_of_the_box_without_credentials(tmp_path: Path) -> None:
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "AGENTBOT_"))}
    env.update({"PYTHONPATH": str(ROOT), "AGENTBOT_DATA_DIR": str(tmp_path / "data")})
    proc = subprocess.Popen(
        [*CLI, "serve", "--port", str(port), "--poll-seconds", "0.05"],
        env=env,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        _wait_healthy(port, proc)
        secret_file = tmp_path / "data" / "webhook-secret"
        assert stat.S_IMODE(secret_file.stat().st_mode) == 0o600
        secret = secret_file.read_text().strip()
        assert len(secret) == 64
        body = json.dumps(_payload(3)).encode()
        headers = {
            "X-GitHub-Event": "issues",
            "X-GitHub-Delivery": "d-1",
            "X-Hub-Signature-256": signature(secret, body),
        }
        r = httpx.post(f"http://127.0.0.1:{port}/webhook", content=body, headers=headers)
        assert r.status_code == 202
        # The jobs page is never open: repository code with the network shares this loopback.
        password_file = tmp_path / "data" / "jobs-password"
        assert stat.S_IMODE(password_file.stat().st_mode) == 0o600
        password = password_file.read_text().strip()
        for path in ("/", "/jobs/d-1"):
            assert httpx.get(f"http://127.0.0.1:{port}{path}").status_code == 401
            wrong = httpx.get(f"http://127.0.0.1:{port}{path}", auth=("x", "guess"))
            assert wrong.status_code == 401
        auth = ("anyone", password)
        assert httpx.get(f"http://127.0.0.1:{port}/", auth=auth).status_code == 200
        deadline = time.monotonic() + 20
        job: dict[str, Any] = {}
        while time.monotonic() < deadline:
            job = httpx.get(f"http://127.0.0.1:{port}/jobs/d-1", auth=auth).json()
            if job.get("state") == "dead":  # a 404 until it moves from the spool to the queue
                break
            time.sleep(0.1)
        assert job["state"] == "dead"
        assert job["error"].startswith("no GitHub credentials configured")
        assert (tmp_path / "data" / "agentbot.db").exists()  # the default queue, in the data dir
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=20)
    text = err.decode()
    assert f"webhook secret in {tmp_path / 'data' / 'webhook-secret'}" in text
    assert secret not in text and password not in text  # neither is ever printed
    assert f"the password in {password_file}" in text
    logs = [json.loads(line) for line in text.splitlines() if line.startswith("{")]
    assert logs and all({"ts", "level", "job_id", "msg"} <= set(entry) for entry in logs)
    job_lines = [entry for entry in logs if entry["job_id"] == "d-1"]
    assert any("no GitHub credentials" in entry["msg"] for entry in job_lines)


def test_worker_command_processes_and_stops_on_sigterm(tmp_path: Path) -> None:
    db = tmp_path / "q.db"
    q = SqliteQueue(db)
    q.enqueue("p-1", "ping", {"zen": "hi"})
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "AGENTBOT_QUEUE": f"sqlite:///{db}",
        "AGENTBOT_DATA_DIR": str(tmp_path / "data"),
    }
    proc = subprocess.Popen(
        [*CLI, "worker", "--concurrency", "2", "--poll-seconds", "0.05"],
        env=env,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            rec = q.get("p-1")
            if rec is not None and rec.state is JobState.IGNORED:
                break
            time.sleep(0.1)
        rec = q.get("p-1")
        assert rec is not None and rec.state is JobState.IGNORED
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=20)
    assert proc.returncode == 0
    q.close()


def test_jobs_command_table_and_json(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "q.db"
    monkeypatch.setenv("AGENTBOT_QUEUE", f"sqlite:///{db}")
    runner = CliRunner()
    app = load_app()
    missing = runner.invoke(app, ["jobs"])
    assert isinstance(missing.exception, ConfigError) and f"no queue at {db}" in str(
        missing.exception
    )
    assert not db.exists()  # listing does not create the queue
    q = SqliteQueue(db)
    assert "no jobs" in runner.invoke(app, ["jobs"]).output
    q.enqueue("d-1", "issues", b"{}", repo="o/r")
    q.enqueue("d-2", "ping", b"{}")
    q.claim("w", 30)
    q.fail("d-1", "no handler for kind tdd", None)
    q.close()
    table = runner.invoke(app, ["jobs"])
    assert table.exit_code == 0
    assert "d-1" in table.output and "dead" in table.output and "no handler" in table.output
    as_json = runner.invoke(app, ["jobs", "--json", "--state", "dead"])
    assert as_json.exit_code == 0
    data = json.loads(as_json.output)
    assert [j["id"] for j in data] == ["d-1"] and data[0]["repo"] == "o/r"
    cut = runner.invoke(app, ["jobs", "--limit", "1"])
    assert cut.exit_code == 0 and "the newest 1 jobs; --limit N shows more" in cut.output
    assert "--limit N" not in table.output  # 2 jobs under the default 50: all shown
    bad = runner.invoke(app, ["jobs", "--state", "nope"])
    assert bad.exit_code == 2
