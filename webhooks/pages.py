"""The jobs page (`GET /`) and one job as JSON (`GET /jobs/{id}`, the id URL-encoded),
behind a password.

`serve` always sets one (AGENTBOT_JOBS_PASSWORD, or a file in the data dir): the page shows
every installation's jobs and logs, and repository code run with the network (the setup
stage) shares the host's loopback. HTTP Basic, any user name, so a browser asks for it.
"""

from __future__ import annotations

import base64
import binascii
import hmac
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from html import escape
from urllib.parse import quote

import anyio.to_thread
from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response

from bot.errors import QueueError
from bot.queue import JobQueue, JobRecord, JobState


def allowed(request: Request, password: str | None) -> bool:
    """Whether the request carries `password` by HTTP Basic (always, without one)."""
    if password is None:
        return True
    scheme, _, encoded = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "basic":
        return False
    try:
        given = base64.b64decode(encoded, validate=True).decode("utf-8").partition(":")[2]
    except (binascii.Error, UnicodeDecodeError):
        return False
    return hmac.compare_digest(given.encode(), password.encode())


def ask_password() -> Response:
    return Response(
        "the jobs page needs its password (AGENTBOT_JOBS_PASSWORD or jobs-password in the"
        " data dir)\n",
        status_code=401,
        headers={"WWW-Authenticate": 'Basic realm="agentbot jobs"'},
    )


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def add_pages(
    app: FastAPI,
    queue: JobQueue,
    server_url: str,
    rejected: Callable[[], Mapping[str, int]] = dict,
    password: str | None = None,
) -> None:
    """Route `GET /jobs/{job_id}` and the jobs page `GET /` on `app`; `rejected` counts the
    deliveries refused since start (bad signature…), which never become jobs. With
    `password`, both answer 401 unless HTTP Basic carries it."""

    # `path`: an id may hold `/` (the page links it as %2F, which arrives decoded).
    @app.get("/jobs/{job_id:path}")
    async def job_json(job_id: str, request: Request) -> Response:
        """One job, with its log, as JSON."""
        if not allowed(request, password):
            return ask_password()
        try:
            record = await anyio.to_thread.run_sync(queue.get, job_id)
        except QueueError as exc:
            return _error(503, str(exc))
        if record is None:
            return _error(404, "no such job")
        return JSONResponse(record.model_dump(mode="json"))

    @app.get("/")
    async def jobs_page(request: Request, state: str = "", limit: int = 100) -> Response:
        """The jobs page: newest first, optionally one state."""
        if not allowed(request, password):
            return ask_password()
        try:
            wanted = JobState(state) if state else None
        except ValueError:
            return HTMLResponse(_page("<p>Unknown state.</p>", {}), status_code=400)
        limit = max(1, min(limit, 500))
        try:
            jobs = await anyio.to_thread.run_sync(lambda: queue.list(limit, wanted))
            counts = await anyio.to_thread.run_sync(queue.counts)
        except QueueError as exc:
            return HTMLResponse(_page(f"<p>Queue unavailable: {escape(str(exc))}</p>", {}), 503)
        now = datetime.now(UTC)
        return HTMLResponse(_page(_rejected(rejected()) + _table(jobs, now, server_url), counts))


STYLE = """
body{font:14px system-ui,sans-serif;margin:1.5rem;color:#1f2328}
table{border-collapse:collapse;width:100%}
th,td{padding:.35rem .6rem;border-bottom:1px solid #d0d7de;text-align:left;vertical-align:top}
th{background:#f6f8fa}code{font-size:12px}
.s-done{color:#1a7f37}.s-failed,.s-dead{color:#cf222e}.s-running{color:#9a6700}
.s-ignored,.s-queued{color:#656d76}nav a{margin-right:.8rem}
"""


def _age(then: datetime, now: datetime) -> str:
    seconds = max(0, int((now - then).total_seconds()))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def _row(job: JobRecord, now: datetime, server_url: str) -> str:
    link = f"/jobs/{quote(job.id, safe='')}"
    target = ""
    if job.repo and job.number is not None:
        url = f"{server_url}/{quote(job.repo, safe='/')}/issues/{job.number}"
        target = f'<a href="{escape(url)}">{escape(job.repo)}#{job.number}</a>'
    outcome = job.error or job.decision
    if job.result is not None:
        outcome = f"{job.result.status.value}: {job.result.summary or job.result.error}"
    cells = [
        f'<a href="{escape(link)}"><code>{escape(job.id[:13])}</code></a>',
        f'<span class="s-{escape(job.state.value)}">{escape(job.state.value)}</span>',
        escape(job.event_name),
        escape(job.repo),
        target,
        escape(job.kind),
        f"${job.cost_usd:.2f}",
        str(job.attempts),
        escape(_age(job.received_at, now)),
        escape(outcome),
    ]
    cls = f"job s-{escape(job.state.value)}"
    return (
        f'<tr class="{cls}" data-job-id="{escape(job.id)}">'
        + "".join(f"<td>{c}</td>" for c in cells)
        + "</tr>"
    )


def _rejected(counts: Mapping[str, int]) -> str:
    """One line naming the refused deliveries, if any: they leave no row."""
    if not counts:
        return ""
    parts = ", ".join(f"{escape(k.replace('_', ' '))}: {n}" for k, n in sorted(counts.items()))
    total = sum(counts.values())
    return f'<p id="rejected">Refused since start: {total} deliveries ({parts}).</p>'


def _table(jobs: list[JobRecord], now: datetime, server_url: str) -> str:
    if not jobs:
        return "<p>No jobs yet.</p>"
    head = "".join(
        f"<th>{h}</th>"
        for h in (
            "Job",
            "State",
            "Event",
            "Repo",
            "Issue/PR",
            "Kind",
            "Cost",
            "Tries",
            "Age",
            "Outcome",
        )
    )
    rows = "".join(_row(j, now, server_url) for j in jobs)
    return f'<table id="jobs"><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>'


def _page(content: str, counts: dict[JobState, int]) -> str:
    nav = " ".join(
        f'<a href="/?state={s.value}">{s.value} ({counts.get(s, 0)})</a>' for s in JobState
    )
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta http-equiv="refresh" content="15"><title>agentbot jobs</title>'
        f"<style>{STYLE}</style></head><body><h1>agentbot jobs</h1>"
        f'<nav><a href="/">all</a> {nav} <a href="/dashboard" id="dashboard-link">dashboard</a>'
        f"</nav>{content}</body></html>"
    )
