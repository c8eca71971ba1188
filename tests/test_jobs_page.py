"""The jobs page rendered by a real headless Chromium (Debian's), served by real uvicorn."""

from __future__ import annotations

import re
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from html import unescape
from pathlib import Path

import pytest
import uvicorn

from bot.models import Job, JobKind, JobResult, JobStatus
from bot.queue.sqlite import SqliteQueue
from webhooks.app import create_app

CHROMIUM = shutil.which("chromium") or (
    "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None
)

pytestmark = [
    pytest.mark.chromium,
    pytest.mark.skipif(
        CHROMIUM is None,
        reason="Debian's chromium is not installed (apt-get install -y chromium; .ci/run does)",
    ),
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def page_url(tmp_path: Path) -> Iterator[str]:
    queue = SqliteQueue(tmp_path / "q.db")
    queue.enqueue("fix-delivery-1", "issues", b"{}", repo="octo/app")
    queue.claim("w", 30)
    queue.annotate("fix-delivery-1", number=42, kind="fix_issue")
    job = Job(kind=JobKind.FIX_ISSUE, repo="octo/app", number=42)
    result = JobResult(job=job, status=JobStatus.SUCCESS, summary="opened PR #43", cost_usd=1.25)
    queue.complete("fix-delivery-1", result, "ran fix_issue on octo/app#42")
    queue.enqueue("evil-delivery", "issues", b"{}", repo="octo/app")
    queue.claim("w", 30)
    queue.complete("evil-delivery", None, "ignored: label '<img src=x onerror=alert(1)>'")
    queue.enqueue("waiting", "push", b"{}", repo="octo/app")
    port = _free_port()
    server = uvicorn.Server(
        uvicorn.Config(create_app(queue=queue, secret="s"), port=port, log_level="warning")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.02)
    yield f"http://127.0.0.1:{port}/"
    server.should_exit = True
    thread.join(10)
    queue.close()


def dump_dom(url: str, profile: Path) -> str:
    assert CHROMIUM is not None
    proc = subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",  # we run as root in CI containers
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={profile}",
            "--dump-dom",
            url,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def test_chromium_renders_the_job_rows(page_url: str, tmp_path: Path) -> None:
    dom = dump_dom(page_url, tmp_path / "profile")
    rows = re.findall(r'<tr class="job s-(\w+)" data-job-id="([^"]+)">(.*?)</tr>', dom, re.S)
    by_id = {job_id: (state, cells) for state, job_id, cells in rows}
    assert set(by_id) == {"fix-delivery-1", "evil-delivery", "waiting"}
    state, cells = by_id["fix-delivery-1"]
    assert state == "done"
    assert 'href="https://github.com/octo/app/issues/42"' in cells
    assert "fix_issue" in cells and "$1.25" in cells and "opened PR #43" in cells
    # the injected markup stayed text: the browser built no <img> element from it
    assert "<img" not in dom
    assert "<img src=x onerror=alert(1)>" in unescape(by_id["evil-delivery"][1])
    assert by_id["waiting"][0] == "queued"
