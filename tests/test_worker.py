"""Workers against the fake GitHub: config from the default branch, guards, local and
Actions execution, unbuilt kinds, failures and retries, heartbeats, job logs."""

from __future__ import annotations

import dataclasses
import json
import logging
import threading
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from bot.clock import FakeClock
from bot.errors import ConfigError, GitHubError, QueueError
from bot.events import Ignore
from bot.logs import job_id_var
from bot.models import Job, JobKind, JobResult, JobStatus, Usage
from bot.ports import JobEnv
from bot.queue import JobState, QueuedJob
from bot.queue.sqlite import SqliteQueue
from bot.worker import (
    NO_CREDENTIALS,
    JobFailure,
    JobLogHandler,
    Metrics,
    Worker,
    WorkerDeps,
    WorkerPool,
    process_delivery,
    retry_delay,
)
from bot.workflows.handlers import HANDLERS
from tests.fakes.github import FakeGitHub

REPO = "octo/app"
DATA = Path(__file__).parent / "data" / "webhooks"


def _example(event: str, action: str) -> dict[str, Any]:
    for item in json.loads((DATA / f"{event}.json").read_text()):
        if item.get("action") == action:
            return dict(item["payload"])
    raise LookupError(event)


def labeled(number: int, *, actor: str = "alice", label: str = "agent-fix") -> dict[str, Any]:
    """A real issues.labeled payload, moved to REPO."""
    p = _example("issues", "labeled")
    p["repository"] = {**p["repository"], "full_name": REPO, "default_branch": "main"}
    p["issue"] = {**p["issue"], "number": number, "state": "open", "locked": False}
    p["issue"].pop("pull_request", None)
    p["label"] = {**p["label"], "name": label}
    p["sender"] = {**p["sender"], "login": actor, "type": "User"}
    return p


def commented(number: int, body: str, *, actor: str = "alice") -> dict[str, Any]:
    """A real issue_comment.created payload, moved to REPO."""
    p = _example("issue_comment", "created")
    p["repository"] = {**p["repository"], "full_name": REPO, "default_branch": "main"}
    p["issue"] = {**p["issue"], "number": number, "state": "open", "locked": False}
    p["issue"].pop("pull_request", None)
    user = {**p["sender"], "login": actor, "type": "User"}
    p["comment"] = {**p["comment"], "body": body, "user": user}
    p["sender"] = user
    return p


@pytest.fixture
def gh() -> Iterator[FakeGitHub]:
    with FakeGitHub() as fake:
        fake.add_repo(REPO)
        for number in range(1, 6):
            fake.add_issue(REPO, number=number, title=f"Bug {number}")
        fake.set_permission(REPO, "alice", "write")
        yield fake


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def queue(tmp_path: Path, clock: FakeClock) -> Iterator[SqliteQueue]:
    q = SqliteQueue(tmp_path / "q.db", clock=clock, max_attempts=3)
    yield q
    q.close()


@pytest.fixture
def deps(
    queue: SqliteQueue, gh: FakeGitHub, clock: FakeClock, tmp_path: Path, handler: Recorder
) -> WorkerDeps:
    client = gh.client()
    return WorkerDeps(
        queue=queue,
        github_for=lambda inst, repo: client,
        handlers=dict.fromkeys(HANDLERS, handler),  # the built kinds, each run by the recorder
        data_dir=tmp_path,
        clock=clock,
    )


class Recorder:
    """A test handler: records the jobs and config it was given, logs a line."""

    def __init__(self, fail: BaseException | None = None) -> None:
        self.calls: list[tuple[Job, JobEnv]] = []
        self.fail = fail

    def __call__(self, job: Job, env: JobEnv) -> JobResult:
        self.calls.append((job, env))
        env.log.info("handler working on %s", job.key)
        if self.fail is not None:
            raise self.fail
        usage = Usage(input_tokens=100, output_tokens=20)
        return JobResult(
            job=job, status=JobStatus.SUCCESS, summary="fixed", usage=usage, cost_usd=0.5
        )


@pytest.fixture
def handler() -> Recorder:
    return Recorder()


@pytest.fixture
def log_to_jobs(queue: SqliteQueue) -> Iterator[JobLogHandler]:
    root = logging.getLogger()
    old = root.level
    root.setLevel(logging.INFO)
    pool = WorkerPool(queue, lambda job: None, size=0)
    pool.start()  # installs the job-log handler, no threads
    yield pool.log_handler
    pool.stop()
    root.setLevel(old)


def worker(
    deps: WorkerDeps,
    clock: FakeClock,
    metrics: Metrics | None = None,
    logs: JobLogHandler | None = None,
) -> Worker:
    return Worker(
        deps.queue,
        process=lambda job: process_delivery(job, deps),
        worker_id="w1",
        clock=clock,
        metrics=metrics,
        logs=logs,
    )


def test_local_mode_runs_the_registered_handler_with_default_branch_config(
    deps: WorkerDeps,
    gh: FakeGitHub,
    queue: SqliteQueue,
    handler: Recorder,
    clock: FakeClock,
    log_to_jobs: JobLogHandler,
) -> None:
    gh.set_file(REPO, ".github/agentbot.yml", "model: from-main\n", ref="main")
    gh.set_file(REPO, ".github/agentbot.yml", "model: from-a-branch\n", ref="evil")
    queue.enqueue("d-1", "issues", labeled(3))
    metrics = Metrics(queue)
    assert worker(deps, clock, metrics, log_to_jobs).run_once() is True
    ((job, env),) = handler.calls
    assert (job.kind, job.repo, job.number, job.actor) == (JobKind.FIX_ISSUE, REPO, 3, "alice")
    assert job.delivery_id == "d-1"
    assert env.config.model == "from-main"
    fetched = gh.calls_to("GET", r"/repos/octo/app/contents/\.github/agentbot\.yml")
    assert fetched and all(c.query.get("ref") == "main" for c in fetched)
    rec = queue.get("d-1")
    assert rec is not None and rec.state is JobState.DONE
    assert rec.result is not None and rec.result.summary == "fixed"
    assert rec.decision == "ran fix_issue on octo/app#3 for alice (by label)"
    assert (rec.kind, rec.number, rec.repo) == ("fix_issue", 3, REPO)
    # every line logged while the job ran carries its id and is in its log
    assert any("handler working on octo/app#3" in line for line in rec.log)
    assert rec.log and all("[d-1]" in line for line in rec.log)
    text = metrics.render().decode()
    assert 'agentbot_jobs_processed_total{kind="fix_issue",outcome="done"} 1.0' in text
    assert 'agentbot_llm_tokens_total{type="input"} 100.0' in text
    assert "agentbot_llm_cost_usd_total 0.5" in text


def test_actions_mode_dispatches_the_workflow_and_runs_nothing_here(
    deps: WorkerDeps, gh: FakeGitHub, queue: SqliteQueue, handler: Recorder, clock: FakeClock
) -> None:
    gh.set_file(REPO, ".github/agentbot.yml", "execution: {mode: actions, workflow: bot.yml}\n")
    queue.enqueue("d-1", "issues", labeled(4))
    worker(deps, clock).run_once()
    assert handler.calls == []
    (sent,) = gh.dispatches
    assert (sent.repo, sent.workflow, sent.ref) == (REPO, "bot.yml", "main")
    assert sent.inputs["kind"] == "fix_issue" and sent.inputs["number"] == "4"
    assert sent.inputs["actor"] == "alice" and sent.inputs["delivery_id"] == "d-1"
    assert all(isinstance(v, str) for v in sent.inputs.values())
    rec = queue.get("d-1")
    assert rec is not None and rec.state is JobState.DONE
    assert rec.decision.startswith("dispatched fix_issue on octo/app#4")


def test_an_unbuilt_kind_is_not_routed(
    deps: WorkerDeps, gh: FakeGitHub, queue: SqliteQueue, clock: FakeClock, handler: Recorder
) -> None:
    # Every kind is built now: a map without TDD stands for a kind not built yet.
    deps = dataclasses.replace(
        deps, handlers={k: h for k, h in deps.handlers.items() if k is not JobKind.TDD}
    )
    queue.enqueue("d-1", "issues", labeled(2, label="agent-tdd"))
    worker(deps, clock).run_once()
    rec = queue.get("d-1")
    assert rec is not None and rec.state is JobState.IGNORED
    assert "'agent-tdd' is not an agentbot label" in rec.decision
    assert handler.calls == [] and gh.writes() == []


def test_bad_config_comments_once_and_fails_without_retry(
    deps: WorkerDeps, gh: FakeGitHub, queue: SqliteQueue, handler: Recorder, clock: FakeClock
) -> None:
    gh.set_file(REPO, ".github/agentbot.yml", "budget:\n  max_usd_per_jobb: 2\n")
    queue.enqueue("d-1", "issues", labeled(1))
    queue.enqueue("d-2", "issue_comment", commented(1, "just a remark"))
    w = worker(deps, clock)
    w.run_once()
    w.run_once()
    rec = queue.get("d-1")
    assert rec is not None and rec.state is JobState.DEAD
    assert "budget.max_usd_per_jobb" in rec.error
    (comment,) = gh.comments_on(REPO, 1)
    assert "budget.max_usd_per_jobb" in comment.body and "agentbot.yml" in comment.body
    quiet = queue.get("d-2")
    assert quiet is not None and quiet.state is JobState.IGNORED  # not a trigger: no noise
    assert handler.calls == []
    assert queue.claim("w2", 30) is None


@pytest.mark.parametrize(
    ("role", "comments"), [("none", 0), ("read", 0), ("triage", 1), ("admin", -1)]
)
def test_permission_guard(
    deps: WorkerDeps,
    gh: FakeGitHub,
    queue: SqliteQueue,
    handler: Recorder,
    clock: FakeClock,
    role: str,
    comments: int,
) -> None:
    gh.set_permission(REPO, "bob", role)
    queue.enqueue("d-1", "issues", labeled(2, actor="bob"))
    worker(deps, clock).run_once()
    rec = queue.get("d-1")
    assert rec is not None
    assert gh.calls_to("GET", r"/repos/octo/app/collaborators/bob/permission")
    if comments < 0:  # admin passes
        assert rec.state is JobState.DONE and len(handler.calls) == 1
        return
    assert rec.state is JobState.IGNORED and handler.calls == []
    assert f"bob has {role} permission" in rec.decision
    posted = gh.comments_on(REPO, 2)
    assert len(posted) == comments
    if posted:
        assert "@bob" in posted[0].body and "`write`" in posted[0].body


def test_closed_issue_is_rechecked_through_the_api(
    deps: WorkerDeps, gh: FakeGitHub, queue: SqliteQueue, handler: Recorder, clock: FakeClock
) -> None:
    gh.issue(REPO, 5).state = "closed"  # the payload still says open
    gh.issue(REPO, 4).locked = True
    queue.enqueue("d-1", "issues", labeled(5))
    queue.enqueue("d-2", "issues", labeled(4))
    w = worker(deps, clock)
    w.run_once()
    w.run_once()
    closed, locked = queue.get("d-1"), queue.get("d-2")
    assert closed is not None and closed.decision == "ignored: issue #5 is closed"
    assert locked is not None and locked.decision == "ignored: issue #4 is locked"
    assert handler.calls == [] and gh.comments_on(REPO, 5) == []


def test_one_running_job_per_issue(
    deps: WorkerDeps, queue: SqliteQueue, handler: Recorder, clock: FakeClock
) -> None:
    queue.enqueue("d-0", "issues", labeled(3))
    queue.enqueue("d-1", "issues", labeled(3))
    first = queue.claim("other-worker", 300)
    assert first is not None and queue.acquire_key("octo/app#3", first.id)
    worker(deps, clock).run_once()
    rec = queue.get("d-1")
    assert rec is not None and rec.state is JobState.IGNORED
    assert rec.decision == "ignored: a job for octo/app#3 is already running"
    assert handler.calls == []


def test_routing_reply_is_posted_only_for_collaborators(
    deps: WorkerDeps, gh: FakeGitHub, queue: SqliteQueue, clock: FakeClock
) -> None:
    gh.set_permission(REPO, "mallory", "read")
    queue.enqueue("d-1", "issue_comment", commented(1, "/implement specs/tasks.md"))
    queue.enqueue("d-2", "issue_comment", commented(2, "/implement", actor="mallory"))
    w = worker(deps, clock)
    w.run_once()
    w.run_once()
    (reply,) = gh.comments_on(REPO, 1)
    assert "/implement" in reply.body and "pull requests" in reply.body
    assert gh.comments_on(REPO, 2) == []


def test_without_credentials_jobs_fail_saying_so_and_other_events_are_ignored(
    queue: SqliteQueue, clock: FakeClock
) -> None:
    deps = WorkerDeps(queue=queue, github_for=None, handlers={}, clock=clock)
    queue.enqueue("d-1", "issues", labeled(1))
    queue.enqueue("d-2", "star", {"action": "created", "repository": {"full_name": REPO}})
    queue.enqueue("d-3", "ping", {"zen": "Keep it logically awesome."})
    w = worker(deps, clock)
    for _ in range(3):
        w.run_once()
    rec = queue.get("d-1")
    assert rec is not None and rec.state is JobState.DEAD and rec.error == NO_CREDENTIALS
    for quiet in ("d-2", "d-3"):
        r = queue.get(quiet)
        assert r is not None and r.state is JobState.IGNORED
        assert "does not trigger agentbot" in r.decision


def test_a_crash_is_retried_with_backoff_then_buried(
    deps: WorkerDeps, queue: SqliteQueue, clock: FakeClock
) -> None:
    crashing = Recorder(fail=RuntimeError("segfault-ish"))
    deps.handlers = {JobKind.FIX_ISSUE: crashing}
    queue.enqueue("d-1", "issues", labeled(2))
    w = worker(deps, clock)
    w.run_once()
    rec = queue.get("d-1")
    assert rec is not None and rec.state is JobState.FAILED
    assert rec.error == "RuntimeError: segfault-ish"
    assert rec.next_attempt_at == clock.now() + timedelta(seconds=30)
    assert w.run_once() is False  # not due yet
    clock.advance(30)
    w.run_once()
    rec = queue.get("d-1")
    assert rec is not None and rec.state is JobState.FAILED and rec.attempts == 2
    assert rec.next_attempt_at == clock.now() + timedelta(seconds=60)  # doubled
    clock.advance(60)
    w.run_once()
    rec = queue.get("d-1")
    assert rec is not None and rec.state is JobState.DEAD and rec.attempts == 3
    assert len(crashing.calls) == 3


def test_github_errors_are_classified(
    deps: WorkerDeps, gh: FakeGitHub, queue: SqliteQueue, handler: Recorder, clock: FakeClock
) -> None:
    gh.fail_next("GET", r"/repos/octo/app/issues/3$", 404, times=1)
    queue.enqueue("d-1", "issues", labeled(3))
    worker(deps, clock).run_once()
    rec = queue.get("d-1")
    assert rec is not None and rec.state is JobState.DEAD and "Issue #3 not found" in rec.error


def test_retry_delay_table() -> None:
    assert retry_delay(RuntimeError(), 1, 30, 1800) == 30
    assert retry_delay(RuntimeError(), 3, 30, 1800) == 120
    assert retry_delay(RuntimeError(), 20, 30, 1800) == 1800
    assert retry_delay(JobFailure("x"), 1, 30, 1800) is None
    assert retry_delay(JobFailure("x", retry_after=5), 1, 30, 1800) == 5
    assert retry_delay(ConfigError("x"), 1, 30, 1800) is None
    assert retry_delay(GitHubError("x", status=502), 2, 30, 1800) == 60
    assert retry_delay(GitHubError("x", status=None), 1, 30, 1800) == 30
    assert retry_delay(GitHubError("x", status=403, retry_after=600), 1, 30, 1800) == 600
    assert retry_delay(GitHubError("x", status=422), 1, 30, 1800) is None


def test_heartbeat_keeps_a_long_job_from_being_claimed_twice(tmp_path: Path) -> None:
    q = SqliteQueue(tmp_path / "hb.db")
    q.enqueue("d-1", "x", b"{}")
    ran: list[str] = []

    def slow(job: QueuedJob) -> None:
        ran.append(job.id)
        time.sleep(1.2)  # four lease lengths

    w = Worker(q, process=slow, worker_id="a", lease_seconds=0.3)
    t = threading.Thread(target=w.run_once)
    t.start()
    time.sleep(0.1)
    stolen = []
    while t.is_alive():
        got = q.claim("b", 0.3)
        if got is not None:
            stolen.append(got.id)
        time.sleep(0.05)
    t.join()
    assert ran == ["d-1"] and stolen == []
    rec = q.get("d-1")
    assert rec is not None and rec.state is JobState.IGNORED and rec.attempts == 1
    q.close()


def test_job_id_is_set_only_while_a_job_runs(queue: SqliteQueue, clock: FakeClock) -> None:
    seen: list[str] = []
    queue.enqueue("d-9", "x", b"{}")
    w = Worker(queue, process=lambda job: seen.append(job_id_var.get()), clock=clock)
    w.run_once()
    assert seen == ["d-9"] and job_id_var.get() == ""


def test_pool_runs_jobs_in_threads_and_stops(queue: SqliteQueue) -> None:
    for i in range(10):
        queue.enqueue(f"d-{i}", "x", b"{}")
    done = threading.Event()

    def process(job: QueuedJob) -> Ignore:
        if queue.counts()[JobState.QUEUED] == 0:
            done.set()
        return Ignore(reason="test")

    pool = WorkerPool(queue, process, size=3, poll_seconds=0.05)
    pool.start()
    assert done.wait(10)
    pool.stop(timeout=10)
    assert all(not t.is_alive() for t in pool._threads)
    time.sleep(0.1)
    counts = queue.counts()
    assert counts[JobState.IGNORED] == 10, counts


def test_job_log_lines_are_redacted_and_follow_a_long_job(tmp_path: Path) -> None:
    """Lines reach the job's log while it runs (heartbeat flush), secrets never."""
    from bot.secrets import register

    q = SqliteQueue(tmp_path / "logs.db")
    q.enqueue("d-1", "x", b"{}")
    handler = JobLogHandler(q, flush_seconds=60)  # only heartbeats and the end flush
    root = logging.getLogger()
    old = root.level
    root.setLevel(logging.INFO)
    root.addHandler(handler)
    register("hunter2-secret")
    seen_while_running: list[list[str]] = []

    def slow(job: QueuedJob) -> None:
        logging.getLogger("agentbot.test").info("token is hunter2-secret, ghp_%s", "a" * 36)
        time.sleep(0.6)  # several heartbeats (lease 0.3 s: every 0.1 s)
        rec = q.get(job.id)
        seen_while_running.append(rec.log if rec else [])

    try:
        Worker(q, process=slow, worker_id="w", lease_seconds=0.3, logs=handler).run_once()
    finally:
        root.removeHandler(handler)
        root.setLevel(old)
    (during,) = seen_while_running
    assert any("token is" in line for line in during)  # flushed before the job ended
    rec = q.get("d-1")
    assert rec is not None
    text = "\n".join(rec.log)
    assert "hunter2-secret" not in text and "ghp_aaaa" not in text and "[REDACTED]" in text
    assert "claimed x delivery" in text and "finished: ignored" in text  # the final line too
    assert all("[d-1]" in line for line in rec.log)
    assert len(rec.log) == len(set(rec.log))  # no line written twice
    q.close()


def test_job_log_lines_flush_by_age(queue: SqliteQueue) -> None:
    handler = JobLogHandler(queue, flush_seconds=0)
    queue.enqueue("d-1", "x", b"{}")
    token = job_id_var.set("d-1")
    try:
        record = logging.LogRecord("agentbot.t", logging.INFO, __file__, 1, "now", None, None)
        handler.emit(record)
    finally:
        job_id_var.reset(token)
    rec = queue.get("d-1")
    assert rec is not None and len(rec.log) == 1 and rec.log[0].endswith("[d-1] now")
    assert handler.take("d-1") == []


@pytest.mark.parametrize(
    ("error", "line"),
    [
        (RuntimeError("boom"), "worker w crashed outside a job: RuntimeError: boom"),
        (QueueError("the queue q.db is not writable"), "queue error in worker w: the queue q.db"),
    ],
)
def test_a_failure_outside_jobs_is_one_line_a_second_its_traceback_once(
    queue: SqliteQueue,
    clock: FakeClock,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
    error: Exception,
    line: str,
) -> None:
    stop = threading.Event()
    claims: list[str] = []

    def broken(worker_id: str, lease_seconds: float) -> QueuedJob | None:
        claims.append(worker_id)
        if len(claims) == 20:
            stop.set()
        raise error

    monkeypatch.setattr(queue, "claim", broken)
    worker = Worker(queue, process=lambda job: None, worker_id="w", clock=clock, poll_seconds=0.25)
    with caplog.at_level(logging.ERROR, logger="agentbot.worker"):
        worker.run(stop)
    said = [r for r in caplog.records if r.name == "agentbot.worker"]
    assert len(claims) == 20 and clock.monotonic() == 19 * 0.25  # none after the last
    assert len(said) == 5, [r.getMessage() for r in said]  # 20 failures in 5 s
    assert all(r.getMessage().startswith(line) for r in said), said[0].getMessage()
    assert (said[0].exc_info is not None) is isinstance(error, RuntimeError)
    assert all(r.exc_info is None and not r.exc_text for r in said[1:])
    assert [r.getMessage().rpartition(" (")[2] for r in said[1:]] == [
        "3 more like it in the last 1 s)"
    ] * 4
