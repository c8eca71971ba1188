"""The FastAPI edge of the GitHub App: verify a delivery, store it durably, answer 202.

Async only at the edge: the body is read in chunks (stopping past the cap), the signature
is checked, and deliveries arriving together are stored together (`GroupCommit`; `serve`
stores through a process of its own, webhooks.store_process). No routing and no GitHub
call happen here, so a routing bug or a GitHub outage never loses a delivery. Every
failure is a 4xx, or a 503 when the queue cannot store (GitHub can redeliver); never a
500. POST /webhook is a bare ASGI handler (webhooks.receiver); the jobs page lives in
webhooks.pages.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio.to_thread
from fastapi import FastAPI
from fastapi.responses import JSONResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST
from starlette.types import Message, Receive, Scope, Send

from bot.config import Settings
from bot.errors import QueueError
from bot.queue import JobQueue
from bot.worker import Intake, Metrics
from webhooks.dashboard import add_dashboard
from webhooks.group_commit import GroupCommit, Store
from webhooks.pages import add_pages
from webhooks.receiver import MAX_BODY, WebhookReceiver, signature, verify_signature
from webhooks.server import ServerLimits

__all__ = ["MAX_BODY", "ReceiverApp", "create_app", "signature", "verify_signature"]


class ReceiverApp(FastAPI):
    """The FastAPI app, with /webhook short-circuited to a `WebhookReceiver`."""

    receiver: WebhookReceiver | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Route /webhook to the receiver, everything else through FastAPI."""
        receiver = self.receiver
        if receiver is not None and scope["type"] == "http" and scope["path"] == "/webhook":
            await receiver(scope, receive, send)
            return
        if scope["type"] == "http" and _two_lengths(scope["headers"]):
            # As the receiver does (RFC 9112 6.1): answer, then read no more of it.
            await send({"type": "http.response.start", "status": 400, "headers": _CLOSE_400})
            await send({"type": "http.response.body", "body": b"Bad Request"})
            return

        async def guarded(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [*message.get("headers", []), *PAGE_HEADERS]
                message = {**message, "headers": headers}
            await send(message)

        await super().__call__(scope, receive, guarded)


PAGE_HEADERS = [
    # The pages hold jobs' logs: never framed (clickjacking), never sniffed into another
    # type, and nothing loaded or run but their own inline style (they have no script).
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (
        b"content-security-policy",
        b"default-src 'none'; style-src 'unsafe-inline'; img-src data:;"
        b" frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
    ),
]
"""Headers every answer but /webhook's carries."""


_CLOSE_400 = [(b"content-type", b"text/plain"), (b"connection", b"close")]


def _two_lengths(headers: list[tuple[bytes, bytes]]) -> bool:
    """True if a request has both Content-Length and Transfer-Encoding."""
    names = {name for name, _ in headers}
    return b"content-length" in names and b"transfer-encoding" in names


def create_app(
    *,
    queue: JobQueue,
    secret: str,
    metrics: Metrics | None = None,
    settings: Settings | None = None,
    max_body: int = MAX_BODY,
    intake: Intake | None = None,
    limits: ServerLimits | None = None,
    jobs_password: str | None = None,
    store: Store | None = None,
) -> ReceiverApp:
    """The receiver app on `queue`; `secret` is the App's webhook secret (never empty);
    with `jobs_password` the jobs page and job records need it (`serve` always sets one);
    deliveries are committed by `store` (default: a thread of this process)."""
    if not secret:
        raise ValueError("a webhook secret is required: unsigned deliveries are never accepted")
    metrics = metrics or Metrics(queue)
    commits = GroupCommit(queue, intake, store)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        yield
        await commits.close()  # store what is in flight before the process ends

    server_url = (settings.github_server_url if settings else "https://github.com").rstrip("/")
    app = ReceiverApp(
        title="agentbot", docs_url=None, redoc_url=None, openapi_url=None, lifespan=lifespan
    )
    app.state.queue = queue
    app.state.metrics = metrics
    app.state.commits = commits
    limits = limits or ServerLimits()
    app.receiver = WebhookReceiver(
        commits,
        secret,
        metrics,
        max_body,
        large_body=limits.large_body,
        max_large_bodies=limits.max_large_bodies,
        slot_timeout=limits.body_timeout,
    )

    @app.get("/healthz")
    async def healthz() -> Response:
        """200 while the queue answers."""
        try:
            await anyio.to_thread.run_sync(queue.ping)
        except QueueError as exc:
            return JSONResponse({"status": "unavailable", "error": str(exc)}, status_code=503)
        return JSONResponse({"status": "ok"})

    @app.get("/metrics")
    async def metrics_page() -> Response:
        """Prometheus text exposition of this app's registry."""
        body = await anyio.to_thread.run_sync(metrics.render)
        return Response(body, media_type=CONTENT_TYPE_LATEST)

    add_pages(
        app, queue, server_url, rejected=lambda: dict(metrics.rejected), password=jobs_password
    )
    day_cap = settings.max_usd_per_day if settings else None
    month_cap = settings.max_usd_per_month if settings else None
    add_dashboard(app, queue, password=jobs_password, day_cap=day_cap, month_cap=month_cap)
    metrics.watch_stats(queue, day_cap=day_cap, month_cap=month_cap)
    return app
