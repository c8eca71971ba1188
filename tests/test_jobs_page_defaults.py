"""The jobs page and logs tell the operator what happened: refusals, ignores, targets, leases."""

from __future__ import annotations

import logging
import re
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from bot.clock import FakeClock
from bot.logs import OncePerSecond
from bot.queue import JobState, QueuedJob
from bot.queue.sqlite import SqliteQueue
from bot.worker import WorkerDeps, WorkerPool, process_delivery
from bot.worker.loop import Worker
from tests.test_cli_run import AGENTBOT
from tests.test_defaults import clean_env
from tests.test_webhooks import SECRET, headers
from tests.test_worker import REPO, commented, labeled
from webhooks.app import create_app


@pytest.fixture
def queue(tmp_path: Path) -> Iterator[SqliteQueue]:
    q = SqliteQueue(tmp_path / "q.db")
    yield q
    q.close()


def test_refused_deliveries_are_logged_and_counted_on_the_page(
    queue: SqliteQueue, caplog: pytest.LogCaptureFixture
) -> None:
    client = TestClient(create_app(queue=queue, secret=SECRET), raise_server_exceptions=False)
    body = b'{"zen": "x"}'
    with caplog.at_level(logging.WARNING, logger="agentbot.webhooks"):
        for _ in range(3):
            assert (
                client.post(
                    "/webhook", content=body, headers=headers(body, secret="no")
                ).status_code
                == 401
            )
        assert (
            client.post("/webhook", content=b"{nope", headers=headers(b"{nope")).status_code == 400
        )
    lines = [r.getMessage() for r in caplog.records if r.name == "agentbot.webhooks"]
    assert lines.count("refused a delivery: HTTP 401 bad_signature (bad X-Hub-Signature-256)") == 3
    assert any(line.startswith("refused a delivery: HTTP 400 bad_json") for line in lines)
    page = client.get("/").text
    assert "Refused since start: 4 deliveries (bad json: 1, bad signature: 3)." in page


def test_refusal_lines_are_throttled() -> None:
    now = [100.0]
    once = OncePerSecond(clock=lambda: now[0])
    record = logging.LogRecord(
        "agentbot.webhooks",
        logging.WARNING,
        "",
        0,
        "refused a delivery: HTTP %d %s (%s)",
        (401, "bad_signature", "x"),
        None,
    )
    assert [once.filter(record) for _ in range(50)].count(True) == 1
    now[0] += 1.5
    assert once.filter(record) and "(49 more like it" in str(record.msg)


def test_rows_name_the_issue_from_the_payload_and_ignores_are_grey(queue: SqliteQueue) -> None:
    """No credentials: the /fix is dead (an operator error), the plain comment only ignored."""
    clock = FakeClock()
    deps = WorkerDeps(queue=queue, github_for=None, handlers={}, clock=clock)
    queue.enqueue("d-1", "issue_comment", commented(3, "thanks, looks good"))
    queue.enqueue("d-2", "issues", labeled(4))
    worker = Worker(queue, process=lambda job: process_delivery(job, deps), clock=clock)
    for _ in range(2):
        worker.run_once()
    plain, labelled = queue.get("d-1"), queue.get("d-2")
    assert plain is not None and labelled is not None
    assert (plain.state, plain.repo, plain.number) == (JobState.IGNORED, REPO, 3)
    assert (labelled.state, labelled.repo, labelled.number) == (JobState.DEAD, REPO, 4)
    page = TestClient(create_app(queue=queue, secret=SECRET)).get("/").text
    assert f"{REPO}#3</a>" in page and f"{REPO}#4</a>" in page
    assert '<tr class="job s-ignored" data-job-id="d-1">' in page


def test_a_clean_stop_releases_the_running_jobs_lease_at_once(queue: SqliteQueue) -> None:
    started, release = threading.Event(), threading.Event()

    def stuck(job: QueuedJob) -> None:
        started.set()
        release.wait(30)

    queue.enqueue("d-1", "ping", {"zen": "x"})
    pool = WorkerPool(queue, stuck, size=1, lease_seconds=300, poll_seconds=0.05)
    pool.start()
    try:
        assert started.wait(10)
        t0 = time.monotonic()
        pool.stop(timeout=0.2)
        assert time.monotonic() - t0 < 5
        other = queue.claim("w-other", 300)  # taken over now, not 300 s later
        assert other is not None and other.id == "d-1"
    finally:
        release.set()


def test_agentbot_jobs_prints_brackets_as_written(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    q = SqliteQueue(data / "agentbot.db")
    q.enqueue("d-1", "issues", labeled(3))
    claimed = q.claim("w", 300)
    assert claimed is not None
    q.fail("d-1", "refused: dependabot[bot] is not allowed", None, worker_id="w")
    q.close()
    proc = subprocess.run(
        [AGENTBOT, "jobs"],
        env=clean_env(tmp_path, AGENTBOT_DATA_DIR=str(data)),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert "dependabot[bot]" in proc.stdout


def test_the_image_keeps_everything_on_data_and_can_sandbox() -> None:
    dockerfile = (Path(__file__).parents[1] / "Dockerfile").read_text()
    assert "ENV AGENTBOT_DATA_DIR=/data" in dockerfile
    assert "ENV AGENTBOT_QUEUE" not in dockerfile  # the queue follows the data dir
    assert re.search(r"apt-get install[^\n]*\bbubblewrap\b", dockerfile)
