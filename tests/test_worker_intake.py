"""Embedded workers and the receiver beside them: give way while deliveries are in flight
(bounded), wake at once when one is stored, and the receiver keeps the count right."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from bot.clock import FakeClock
from bot.events import Ignore
from bot.queue import JobState, QueuedJob
from bot.queue.sqlite import SqliteQueue
from bot.worker import Intake, Worker, WorkerPool
from webhooks.app import create_app, signature

SECRET = "intake-secret"


def _set(event: threading.Event) -> None:
    event.set()


@pytest.fixture
def queue(tmp_path: Path) -> SqliteQueue:
    return SqliteQueue(tmp_path / "q.db")


def test_worker_gives_way_while_deliveries_are_in_flight(queue: SqliteQueue) -> None:
    queue.enqueue("d-1", "x", b"{}")
    clock = FakeClock()
    intake = Intake(max_defer_seconds=0.5, check_seconds=0.01)
    intake.arrived()
    seen: list[float] = []
    stop = threading.Event()

    def process(job: QueuedJob) -> Ignore:
        seen.append(clock.monotonic())
        stop.set()
        return Ignore(reason="test")

    Worker(queue, process=process, clock=clock, intake=intake).run(stop)
    # it waited out the whole deferral (the delivery never finished), then worked anyway
    assert seen and seen[0] == pytest.approx(0.5, abs=0.02)
    assert len(clock.sleeps) == pytest.approx(50, abs=2)


def test_worker_claims_at_once_when_nothing_is_in_flight(queue: SqliteQueue) -> None:
    queue.enqueue("d-1", "x", b"{}")
    clock = FakeClock()
    intake = Intake()
    intake.arrived()
    intake.answered()
    stop = threading.Event()
    Worker(queue, process=lambda job: _set(stop), clock=clock, intake=intake).run(stop)
    assert clock.sleeps == []
    assert queue.counts()[JobState.IGNORED] == 1


def test_a_stored_delivery_wakes_an_idle_worker_before_its_poll(queue: SqliteQueue) -> None:
    intake = Intake()
    done = threading.Event()
    pool = WorkerPool(queue, lambda job: _set(done), size=1, poll_seconds=30, intake=intake)
    pool.start()
    try:
        time.sleep(0.2)  # the worker found nothing and waits (30 s poll)
        queue.enqueue("d-1", "x", b"{}")
        started = time.monotonic()
        intake.stored()
        assert done.wait(5)
        assert time.monotonic() - started < 2
    finally:
        stopping = time.monotonic()
        pool.stop(timeout=10)
    assert time.monotonic() - stopping < 5  # stop wakes the idle worker too


def test_a_job_reaching_the_queue_just_after_the_wake_is_claimed_soon(
    queue: SqliteQueue,
) -> None:
    # serve's store process answers from its spool and commits to the queue a moment later.
    intake = Intake()
    done = threading.Event()
    pool = WorkerPool(queue, lambda job: _set(done), size=1, poll_seconds=30, intake=intake)
    pool.start()
    try:
        time.sleep(0.2)
        intake.stored()  # the worker wakes and finds nothing yet
        time.sleep(0.1)
        queue.enqueue("d-1", "x", b"{}")
        assert done.wait(5)  # not after the 30 s poll
    finally:
        pool.stop(timeout=10)


def _post(client: TestClient, body: bytes, delivery: str) -> Any:
    headers = {
        "X-GitHub-Event": "issues",
        "X-GitHub-Delivery": delivery,
        "X-Hub-Signature-256": signature(SECRET, body),
    }
    return client.post("/webhook", content=body, headers=headers)


def test_receiver_counts_in_flight_and_wakes_workers(queue: SqliteQueue) -> None:
    intake = Intake()
    client = TestClient(create_app(queue=queue, secret=SECRET, intake=intake))
    with client:
        assert _post(client, b'{"a": 1}', "d-1").status_code == 202
        assert intake._stored.is_set()
        intake._stored.clear()
        assert _post(client, b'{"a": 1}', "d-1").status_code == 202  # duplicate: no wake
        assert not intake._stored.is_set()
        assert _post(client, b"not json", "d-2").status_code == 400
        assert _post(client, b"{}", "").status_code == 400
    assert intake.in_flight == 0


def test_only_post_webhook_takes_the_short_path(queue: SqliteQueue) -> None:
    client = TestClient(create_app(queue=queue, secret=SECRET), raise_server_exceptions=False)
    r = client.get("/webhook")
    assert r.status_code == 405 and r.headers["allow"] == "POST"
    assert client.post("/webhook/", content=b"{}").status_code in (307, 404, 405)
    assert client.get("/healthz").json() == {"status": "ok"}


def test_an_unexpected_error_is_503_never_500(
    queue: SqliteQueue, monkeypatch: pytest.MonkeyPatch
) -> None:
    import webhooks.receiver

    def boom(delivery_id: object) -> None:
        raise TypeError("a bug")

    monkeypatch.setattr(webhooks.receiver, "check_delivery_id", boom)
    intake = Intake()
    client = TestClient(
        create_app(queue=queue, secret=SECRET, intake=intake), raise_server_exceptions=False
    )
    r = _post(client, json.dumps({"repository": {}}).encode(), "d-1")
    assert r.status_code == 503 and r.headers["retry-after"] == "30"
    assert queue.get("d-1") is None
    assert intake.in_flight == 0
