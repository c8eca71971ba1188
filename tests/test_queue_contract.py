"""The JobQueue contract, run against both backends: SQLite (a tmp file) and PostgreSQL.

PostgreSQL tests use a schema unique to the test (dropped afterwards) on
$AGENTBOT_TEST_POSTGRES (default postgresql://postgres@127.0.0.1:5432/test) and skip,
saying why, when that server is unreachable.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.models import Job, JobKind, JobResult, JobStatus, Usage
from bot.queue import JobQueue, JobState, open_queue

ROOT = Path(__file__).resolve().parents[1]
PG_URL = os.environ.get("AGENTBOT_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")


def _pg_unreachable() -> str:
    try:
        import psycopg

        psycopg.connect(PG_URL, connect_timeout=3).close()
    except Exception as exc:
        return f"PostgreSQL at {PG_URL} is unreachable ({exc.__class__.__name__}: {exc})"
    return ""


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def queue_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh, empty queue URL of each backend."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path}/queue.db"
        return
    why = _pg_unreachable()
    if why:
        pytest.skip(why)
    import psycopg

    schema = f"agentbot_test_{uuid.uuid4().hex[:12]}"
    sep = "&" if "?" in PG_URL else "?"
    yield f"{PG_URL}{sep}schema={schema}"
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


@pytest.fixture
def q(queue_url: str) -> Iterator[JobQueue]:
    queue = open_queue(queue_url, max_attempts=3)
    yield queue
    queue.close()


def _result(cost: float = 0.25) -> JobResult:
    job = Job(kind=JobKind.FIX_ISSUE, repo="o/r", number=7)
    return JobResult(
        job=job, status=JobStatus.SUCCESS, summary="ok", cost_usd=cost, usage=Usage(input_tokens=3)
    )


def test_enqueue_dedupes_and_keeps_raw_bytes(q: JobQueue) -> None:
    raw = b'{"zeta": 1,  "alpha": "\\u00e9"}'
    assert q.enqueue("d-1", "issues", raw, repo="o/r") is True
    assert q.enqueue("d-1", "issues", b'{"other": 2}') is False
    jobs = q.list()
    assert [j.id for j in jobs] == ["d-1"]
    assert jobs[0].state is JobState.QUEUED and jobs[0].repo == "o/r"
    claimed = q.claim("w1", 30)
    assert claimed is not None
    assert claimed.payload == raw  # byte for byte, not re-serialized
    assert claimed.id == claimed.delivery_id == "d-1"
    assert claimed.event_name == "issues" and claimed.attempts == 1
    assert q.claim("w2", 30) is None


def test_dict_payload_is_stored_as_json(q: JobQueue) -> None:
    q.enqueue("d-1", "ping", {"zen": "hi"})
    claimed = q.claim("w", 30)
    assert claimed is not None and json.loads(claimed.payload) == {"zen": "hi"}


def test_bad_delivery_id_is_refused(q: JobQueue) -> None:
    for bad in ("", "x" * 201, "a\nb"):
        with pytest.raises(ValueError):
            q.enqueue(bad, "ping", b"{}")
    assert q.list() == []


def test_claims_oldest_first_and_complete_records_result(q: JobQueue) -> None:
    for i in range(3):
        q.enqueue(f"d-{i}", "issues", b"{}")
    first, second = q.claim("w", 30), q.claim("w", 30)
    assert first is not None and second is not None
    assert (first.id, second.id) == ("d-0", "d-1")
    assert q.complete("d-0", _result(), "ran fix_issue", worker_id="w") is True
    assert q.complete("d-1", None, "ignored: not a trigger", worker_id="w") is True
    done, ignored = q.get("d-0"), q.get("d-1")
    assert done is not None and ignored is not None
    assert done.state is JobState.DONE and done.result is not None
    assert done.result.summary == "ok" and done.cost_usd == 0.25
    assert done.finished_at is not None and done.decision == "ran fix_issue"
    assert ignored.state is JobState.IGNORED and ignored.result is None
    assert ignored.decision == "ignored: not a trigger"
    # finished jobs are never handed out again
    third = q.claim("w", 30)
    assert third is not None and third.id == "d-2"
    assert q.claim("w", 30) is None


def test_failed_job_waits_for_its_retry_time_then_dies_after_max_attempts(q: JobQueue) -> None:
    q.enqueue("d-1", "issues", b"{}")
    job = q.claim("w", 30)
    assert job is not None
    later = datetime.now(UTC) + timedelta(seconds=1.2)
    assert q.fail("d-1", "boom", later, worker_id="w")
    rec = q.get("d-1")
    assert rec is not None and rec.state is JobState.FAILED and rec.error == "boom"
    assert rec.next_attempt_at is not None
    assert q.claim("w", 30) is None  # not due yet
    time.sleep(1.4)
    again = q.claim("w", 30)
    assert again is not None and again.attempts == 2
    q.fail("d-1", "boom 2", datetime.now(UTC), worker_id="w")
    third = q.claim("w", 30)
    assert third is not None and third.attempts == 3
    # max_attempts=3: a retry time no longer helps
    q.fail("d-1", "boom 3", datetime.now(UTC), worker_id="w")
    rec = q.get("d-1")
    assert rec is not None and rec.state is JobState.DEAD and rec.error == "boom 3"
    assert q.claim("w", 30) is None


def test_fail_without_retry_is_dead_at_once(q: JobQueue) -> None:
    q.enqueue("d-1", "issues", b"{}")
    q.claim("w", 30)
    assert q.fail("d-1", "no handler for kind tdd", None, worker_id="w")
    rec = q.get("d-1")
    assert rec is not None and rec.state is JobState.DEAD and rec.attempts == 1
    assert q.claim("w", 30) is None


def test_lapsed_lease_is_claimed_again_and_old_owner_loses_it(q: JobQueue) -> None:
    q.enqueue("d-1", "issues", b"{}")
    assert q.claim("a", 1.0) is not None
    assert q.claim("b", 1.0) is None  # held
    time.sleep(0.6)
    assert q.heartbeat("d-1", "a", 1.0) is True  # extends the lease
    time.sleep(0.6)
    assert q.claim("b", 1.0) is None  # still held thanks to the heartbeat
    time.sleep(1.3)
    taken = q.claim("b", 30)
    assert taken is not None and taken.id == "d-1" and taken.attempts == 2
    assert q.heartbeat("d-1", "a", 1.0) is False
    assert q.complete("d-1", _result(), "late", worker_id="a", log=["a's last line"]) is False
    assert q.fail("d-1", "late", None, worker_id="a") is False
    assert q.complete("d-1", _result(), "ran", worker_id="b") is True
    rec = q.get("d-1")
    assert rec is not None and rec.state is JobState.DONE and rec.decision == "ran"
    assert rec.log == ["a's last line"]  # kept: it is about this job, whoever finished it


def test_lease_lapsing_on_every_attempt_buries_the_job(q: JobQueue) -> None:
    q.enqueue("d-1", "issues", b"{}")
    for attempt in (1, 2, 3):
        job = q.claim(f"w{attempt}", 0.3)
        assert job is not None and job.attempts == attempt
        time.sleep(0.5)
    assert q.claim("w4", 30) is None
    rec = q.get("d-1")
    assert rec is not None and rec.state is JobState.DEAD and "lease expired" in rec.error


def test_one_running_job_per_key(q: JobQueue) -> None:
    for i in range(3):
        q.enqueue(f"d-{i}", "issues", b"{}")
    for _ in range(3):
        q.claim("w", 30)
    assert q.acquire_key("o/r#1", "d-0") is True
    assert q.acquire_key("o/r#1", "d-0") is True  # re-entrant
    assert q.acquire_key("o/r#1", "d-1") is False
    assert q.acquire_key("o/r#2", "d-1") is True
    q.complete("d-0", None, "ignored", worker_id="w")  # releases o/r#1
    assert q.acquire_key("o/r#1", "d-2") is True
    q.release_key("o/r#1", "d-2")
    assert q.acquire_key("o/r#1", "d-1") is True
    # a holder that is no longer running (dead) does not block
    q.fail("d-1", "x", None)
    assert q.acquire_key("o/r#2", "d-2") is True


def test_log_annotate_counts_and_list(q: JobQueue) -> None:
    for i in range(4):
        q.enqueue(f"d-{i}", "issues", b"{}")
    q.claim("w", 30)
    q.append_log("d-0", "first line")
    q.append_log("d-0", "second line")
    q.annotate("d-0", repo="o/r", number=5, kind="fix_issue")
    q.annotate("d-0", kind="")  # empty values keep what is there
    rec = q.get("d-0")
    assert rec is not None
    assert rec.log == ["first line", "second line"]
    assert (rec.repo, rec.number, rec.kind) == ("o/r", 5, "fix_issue")
    assert q.get("nope") is None
    q.append_logs("d-0", ["third", "fourth"])
    q.complete("d-0", None, "ignored", worker_id="w", log=["fifth"])
    rec = q.get("d-0")
    assert rec is not None and rec.log[2:] == ["third", "fourth", "fifth"]
    counts = q.counts()
    assert counts[JobState.QUEUED] == 3 and counts[JobState.IGNORED] == 1
    assert counts[JobState.DEAD] == 0 and set(counts) == set(JobState)
    assert [j.id for j in q.list(limit=2)] == ["d-3", "d-2"]
    assert [j.id for j in q.list(state=JobState.IGNORED)] == ["d-0"]
    assert all(j.log == [] for j in q.list())
    q.ping()


def test_concurrent_claims_hand_each_job_out_once(q: JobQueue) -> None:
    n = 60
    for i in range(n):
        q.enqueue(f"d-{i}", "issues", b"{}")
    got: list[str] = []
    lock = threading.Lock()

    def work(name: str) -> None:
        while (job := q.claim(name, 60)) is not None:
            with lock:
                got.append(job.id)
            q.complete(job.id, None, "x", worker_id=name)

    threads = [threading.Thread(target=work, args=(f"t{i}",)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert sorted(got) == sorted(f"d-{i}" for i in range(n))


def test_reopening_keeps_everything(queue_url: str) -> None:
    first = open_queue(queue_url)
    first.enqueue("d-1", "issues", b"{}")
    first.close()
    second = open_queue(queue_url)
    try:
        assert second.enqueue("d-1", "issues", b"{}") is False
        assert [j.id for j in second.list()] == ["d-1"]
    finally:
        second.close()


# --- two worker processes on one queue -------------------------------------------------------

WORKER_PROC = r"""
import json, os, sys, time, threading
from bot.clock import SystemClock
from bot.queue import open_queue
from bot.worker import Worker

url, out, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
queue = open_queue(url)
lines = []

def process(job):
    start = time.time()
    time.sleep(0.01)
    lines.append(json.dumps({"id": job.id, "pid": os.getpid(), "start": start, "end": time.time()}))
    return None

workers = [Worker(queue, process=process, worker_id=f"{os.getpid()}-{i}", lease_seconds=30,
                  poll_seconds=0.05) for i in range(2)]
stop = threading.Event()
threads = [threading.Thread(target=w.run, args=(stop,)) for w in workers]
for t in threads:
    t.start()
deadline = time.time() + 60
while time.time() < deadline:
    c = queue.counts()
    if c["queued"] == 0 and c["running"] == 0 and sum(c.values()) >= n:
        break
    time.sleep(0.1)
stop.set()
for t in threads:
    t.join()
queue.close()
with open(out, "w") as f:
    f.write("\n".join(lines))
"""


@pytest.mark.slow
def test_two_worker_processes_never_run_one_job_twice(queue_url: str, tmp_path: Path) -> None:
    n = 80
    queue = open_queue(queue_url)
    for i in range(n):
        queue.enqueue(f"d-{i:03d}", "issues", b"{}")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    outs = [tmp_path / f"out{i}.jsonl" for i in range(2)]
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER_PROC, queue_url, str(out), str(n)],
            env=env,
            stderr=subprocess.PIPE,
            text=True,
        )
        for out in outs
    ]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    runs = [json.loads(line) for out in outs for line in out.read_text().splitlines() if line]
    ids = [r["id"] for r in runs]
    assert sorted(ids) == sorted(f"d-{i:03d}" for i in range(n))  # each exactly once
    assert len({r["pid"] for r in runs}) == 2  # both processes took work
    states = queue.counts()
    assert states[JobState.IGNORED] == n
    queue.close()


def test_a_queued_job_no_worker_claimed_can_be_cancelled(q: JobQueue) -> None:
    q.enqueue("a-1", "issues", b'{"n": 1}', repo="o/r")
    q.enqueue("a-2", "issues", b'{"n": 2}', repo="o/r")
    q.enqueue("a-3", "issue_comment", b"{}", repo="o/r")
    q.enqueue("a-4", "issues", b"{}", repo="o/other")
    waiting = q.queued("o/r", "issues")
    assert [(j.id, j.payload, j.state) for j in waiting] == [
        ("a-1", b'{"n": 1}', JobState.QUEUED),
        ("a-2", b'{"n": 2}', JobState.QUEUED),
    ]
    assert q.cancel("a-2", "unassigned by alice") is True
    assert q.cancel("a-2", "again") is False  # finished: nothing to cancel
    assert q.cancel("nope", "unknown") is False
    gone = q.get("a-2")
    assert gone is not None and gone.state is JobState.IGNORED
    assert gone.decision == "cancelled: unassigned by alice" and gone.finished_at is not None
    assert [j.id for j in q.queued("o/r", "issues")] == ["a-1"]
    # A claimed job is a worker's: too late to cancel; the cancelled one is never handed out.
    claimed = [q.claim("w", 30), q.claim("w", 30), q.claim("w", 30)]
    assert [j.id if j else None for j in claimed] == ["a-1", "a-3", "a-4"]
    assert q.claim("w", 30) is None
    assert q.cancel("a-1", "too late") is False
    assert q.queued("o/r", "issues") == []
    # Nor a job waiting for its retry: it was claimed once.
    assert q.fail("a-1", "boom", datetime.now(UTC) + timedelta(hours=1), worker_id="w")
    assert q.cancel("a-1", "retry pending") is False
    assert q.counts()[JobState.IGNORED] == 1


def test_a_batch_marks_known_and_repeated_deliveries_and_keeps_first_payloads(
    q: JobQueue,
) -> None:
    from bot.queue import Delivery

    q.enqueue("known", "issues", b'{"n": 0}')
    batch = [
        Delivery("a", "issues", b'{"n": 1}', "o/a"),
        Delivery("known", "issues", b'{"n": 2}'),
        Delivery("a", "issues", b'{"n": 3}'),
        *(Delivery(f"bulk-{i}", "ping", b"{}") for i in range(250)),  # over one statement's rows
    ]
    assert q.enqueue_many(batch) == [True, False, False, *[True] * 250]
    assert q.enqueue_many([Delivery("bulk-7", "ping", b"{}")]) == [False]
    jobs = {j.payload: j.delivery_id for j in (q.claim("w", 30) for _ in range(2)) if j}
    assert jobs == {b'{"n": 0}': "known", b'{"n": 1}': "a"}
    got = q.get("a")
    assert got is not None and got.repo == "o/a"
    assert len(q.list(limit=500)) == 252
