"""POST /webhook as bare ASGI: read the body under a cap, verify, parse, store in groups.

FastAPI's per-request machinery cost about as much CPU as the rest of the receiver put
together, so this path skips it (`ReceiverApp` in webhooks.app routes /webhook here).
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
import re
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import parse_qs

import anyio.to_thread
from pydantic_core import SchemaValidator, ValidationError
from pydantic_core import core_schema as cs
from starlette.types import Receive, Scope, Send

from bot.events import repo_full_name
from bot.queue import Delivery, JobQueue, check_delivery_id
from bot.worker import Intake, Metrics

log = logging.getLogger("agentbot.webhooks")

MAX_BODY = 25 * 1024 * 1024
"""GitHub caps webhook payloads at 25 MB; anything larger is not from GitHub."""
INLINE_PARSE = 256 * 1024
"""Bodies up to this size are parsed on the event loop; larger ones in a thread."""

_EVENT = re.compile(r"^[a-z][a-z0-9_]{0,63}$")


def signature(secret: str, body: bytes) -> str:
    """The `X-Hub-Signature-256` value GitHub sends for `body`."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def verify_signature(secret: str, body: bytes, header: str | None) -> bool:
    """Constant-time check of an `X-Hub-Signature-256` header against `body`."""
    # https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries
    if not header or not header.isascii() or not header.startswith("sha256="):
        return False
    return hmac.compare_digest(signature(secret, body).encode(), header.encode())


class GroupCommit:
    """Store deliveries with one durable transaction per batch, never blocking the loop.

    A commit (an fsync) costs about as much for one row as for a hundred. While one batch
    is being committed in a thread, new deliveries wait in `pending`; when it is done, they
    all go in the next transaction. A lone delivery is committed at once (no timer), a
    burst in a few fsyncs, with one thread hop per batch instead of one per request.
    """

    def __init__(self, queue: JobQueue, intake: Intake | None = None) -> None:
        self.queue = queue
        self.intake = intake
        self.pending: list[tuple[Delivery, asyncio.Future[bool]]] = []
        self.running: asyncio.Task[None] | None = None
        self.batches = 0
        # One writer thread of its own: cheaper per hop than a shared pool, and it keeps
        # one connection for all the receiver's commits.
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="group-commit")

    def store(self, delivery: Delivery) -> asyncio.Future[bool]:
        """A future that is True once `delivery` is committed, False if it was known."""
        loop = asyncio.get_running_loop()
        done: asyncio.Future[bool] = loop.create_future()
        self.pending.append((delivery, done))
        if self.running is None:
            self.running = loop.create_task(self._drain())
        return done

    async def _drain(self) -> None:
        try:
            while self.pending:
                batch, self.pending = self.pending, []
                try:
                    fresh = await asyncio.get_running_loop().run_in_executor(
                        self._writer, self.queue.enqueue_many, [d for d, _ in batch]
                    )
                except Exception as exc:  # each caller answers 503 (GitHub can redeliver)
                    for _, done in batch:
                        if not done.done():
                            done.set_exception(exc)
                    continue
                self.batches += 1
                if self.intake is not None and any(fresh):
                    self.intake.stored()
                for (_, done), is_new in zip(batch, fresh, strict=True):
                    if not done.done():
                        done.set_result(is_new)
        finally:
            self.running = None

    async def close(self) -> None:
        """Wait until everything pending is committed."""
        while self.running is not None:
            await asyncio.shield(self.running)
        self._writer.shutdown(wait=False)


_Reply = tuple[int, dict[str, Any], tuple[tuple[bytes, bytes], ...]]
_CLOSE = ((b"connection", b"close"),)
_RETRY = ((b"retry-after", b"30"),)


# What the receiver reads of a payload: `repository.full_name`, for the jobs page. The
# whole body is still checked to be JSON (jiter, pydantic-core's parser, checks every
# value it skips), but only those two levels become Python objects: about 3x cheaper than
# json.loads on a 12 KB delivery. Stricter than json.loads: lone surrogates, a BOM and
# nesting deeper than jiter's limit are refused.
_SHAPE = SchemaValidator(
    cs.typed_dict_schema(
        {
            "repository": cs.typed_dict_field(
                cs.union_schema(
                    [
                        cs.typed_dict_schema(
                            {"full_name": cs.typed_dict_field(cs.any_schema(), required=False)},
                            extra_behavior="ignore",
                            total=False,
                        ),
                        cs.any_schema(),
                    ]
                ),
                required=False,
            )
        },
        extra_behavior="ignore",
        total=False,
    )
)


def parse(body: bytes, form: bool) -> tuple[bytes, dict[str, Any]] | str:
    """(raw JSON, the payload's `repository.full_name` part) or why the body is refused."""
    raw = body
    try:
        if form:  # "application/x-www-form-urlencoded" webhooks: payload=<json>
            raw = parse_qs(body.decode(), strict_parsing=True)["payload"][0].encode()
        shape: dict[str, Any] = _SHAPE.validate_json(raw)
    except ValidationError as exc:
        if exc.errors()[0]["type"] == "dict_type":
            return "the payload must be a JSON object"
        return "the body is not valid JSON"
    except (ValueError, KeyError, RecursionError):
        return "the body is not valid JSON"
    return raw, shape


class WebhookReceiver:
    """POST /webhook as a bare ASGI handler: the hot path skips FastAPI's routing,
    middleware stack and dependency solving (about a third of a request's CPU)."""

    def __init__(self, commits: GroupCommit, secret: str, metrics: Metrics, max_body: int) -> None:
        self.commits = commits
        self.secret = secret
        self.metrics = metrics
        self.max_body = max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer one delivery; an unexpected error is a 503 (redeliverable), never a 500."""
        intake = self.commits.intake
        if intake is not None:
            intake.arrived()
        try:
            try:
                reply = await self.handle(scope, receive)
            except Exception:
                log.exception("webhook handler failed")
                reply = (503, {"error": "the delivery could not be handled; redeliver it"}, _RETRY)
            if reply is None:
                return  # the client went away: nobody to answer
            status, content, extra = reply
            body = json.dumps(content, separators=(",", ":")).encode()
            head = [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *extra,
            ]
            await send({"type": "http.response.start", "status": status, "headers": head})
            await send({"type": "http.response.body", "body": body})
        finally:
            if intake is not None:
                intake.answered()

    def _refuse(self, status: int, event: str, outcome: str, message: str) -> _Reply:
        self.metrics.delivery(event, outcome)
        return status, {"error": message}, _CLOSE if status == 413 else ()

    async def handle(self, scope: Scope, receive: Receive) -> _Reply | None:
        """Verify, parse and store one delivery: (status, JSON body, extra headers)."""
        if scope["method"] != "POST":
            return 405, {"error": "Method Not Allowed"}, ((b"allow", b"POST"),)
        headers: dict[bytes, bytes] = {}
        for name, value in scope["headers"]:
            headers.setdefault(name, value)  # the first of repeated headers, as Starlette
        sig = headers.get(b"x-hub-signature-256", b"").decode("latin-1")
        if not sig:
            return self._refuse(401, "unknown", "bad_signature", "missing X-Hub-Signature-256")
        length = headers.get(b"content-length", b"")
        too_big = f"payload over {self.max_body} bytes"
        if length.isdigit() and int(length) > self.max_body:
            return self._refuse(413, "unknown", "too_large", too_big)
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return None
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body:
                # Connection: close, or the server would go on reading (and dropping) the rest
                return self._refuse(413, "unknown", "too_large", too_big)
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = chunks[0] if len(chunks) == 1 else b"".join(chunks)
        # Constant-time, and before anything is parsed.
        if not verify_signature(self.secret, body, sig):
            return self._refuse(401, "unknown", "bad_signature", "bad X-Hub-Signature-256")
        event = headers.get(b"x-github-event", b"").decode("latin-1")
        delivery = headers.get(b"x-github-delivery", b"").decode("latin-1")
        if not event or not delivery:
            why = "missing X-GitHub-Event or X-GitHub-Delivery"
            return self._refuse(400, "unknown", "bad_request", why)
        try:
            check_delivery_id(delivery)
        except ValueError as exc:
            return self._refuse(400, "unknown", "bad_request", f"X-GitHub-Delivery: {exc}")
        if not _EVENT.fullmatch(event):
            return self._refuse(
                400, "unknown", "bad_request", "X-GitHub-Event is not an event name"
            )
        # GitHub's form content type sends `payload=<json>`; anything else is taken as JSON
        # (curl -d labels JSON as a form too).
        form = body.startswith(b"payload=") and headers.get(b"content-type", b"").startswith(
            b"application/x-www-form-urlencoded"
        )
        # Small bodies parse faster than a thread hop; big ones must not stall the loop.
        if len(body) <= INLINE_PARSE:
            parsed = parse(body, form)
        else:
            parsed = await anyio.to_thread.run_sync(parse, body, form)
        if isinstance(parsed, str):
            return self._refuse(400, event, "bad_json", parsed)
        raw, payload = parsed
        item = Delivery(delivery, event, raw, repo_full_name(payload) or "")
        try:
            fresh = await self.commits.store(item)
        except Exception:
            # The store failed (disk, database down): not stored, so GitHub should redeliver.
            log.exception("could not store delivery %s", delivery)
            self.metrics.delivery(event, "store_error")
            return 503, {"error": "the delivery could not be stored; redeliver it"}, _RETRY
        self.metrics.delivery(event, "queued" if fresh else "duplicate")
        return 202, {"job_id": delivery, "duplicate": not fresh}, ()
