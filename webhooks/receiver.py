"""POST /webhook as bare ASGI: read the body under a cap, verify, store in groups.

FastAPI's per-request machinery cost about as much CPU as the rest of the receiver put
together, so this path skips it (`ReceiverApp` in webhooks.app routes /webhook here).

The signature is computed as the body streams in, so a badly signed body is refused
without ever being joined into one buffer; and at most `max_large_bodies` bodies over
`large_body` bytes are read at once (the others wait their turn, up to `slot_timeout`,
then get a 503 GitHub can redeliver), so concurrent 25 MB bodies cannot exhaust memory.
Bodies under `large_body` need no turn: the most serve buffers before any signature is
checked is about `max_connections` x `large_body` + `max_large_bodies` x 25 MB (1000 x 1 MB
+ 50 MB by default; an attacker without the secret reached ~1 GB), so a small container
sets `--max-connections` lower (docs/operations.md).
The store checks that a body is a JSON object (webhooks.payload_check), off this loop.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
import re
from typing import Any

import anyio.to_thread
from starlette.types import Receive, Scope, Send

from bot.events import repo_full_name
from bot.queue import Delivery, check_delivery_id
from bot.worker import Metrics
from bot.worker.cancel import cancel_unassigned
from webhooks.group_commit import GroupCommit
from webhooks.payload_check import Incoming, parse

log = logging.getLogger("agentbot.webhooks")

MAX_BODY = 25 * 1024 * 1024
"""GitHub caps webhook payloads at 25 MB; anything larger is not from GitHub."""

_EVENT = re.compile(r"^[a-z][a-z0-9_]{0,63}$")


def signature(secret: str, body: bytes) -> str:
    """The `X-Hub-Signature-256` value GitHub sends for `body`."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def verify_signature(secret: str, body: bytes, header: str | None) -> bool:
    """Constant-time check of an `X-Hub-Signature-256` header against `body`."""
    return signature_matches(hmac.new(secret.encode(), body, hashlib.sha256), header)


def signature_matches(mac: hmac.HMAC, header: str | None) -> bool:
    """Constant-time check of a header against a body's (streamed) HMAC-SHA256."""
    # https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries
    if not header or not header.isascii() or not header.startswith("sha256="):
        return False
    return hmac.compare_digest(("sha256=" + mac.hexdigest()).encode(), header.encode())


_Reply = tuple[int, dict[str, Any], tuple[tuple[bytes, bytes], ...]]
_CLOSE = ((b"connection", b"close"),)
_RETRY = ((b"retry-after", b"30"),)
_BUSY = (*_RETRY, *_CLOSE)


class WebhookReceiver:
    """POST /webhook as a bare ASGI handler: the hot path skips FastAPI's routing,
    middleware stack and dependency solving (about a third of a request's CPU)."""

    def __init__(
        self,
        commits: GroupCommit,
        secret: str,
        metrics: Metrics,
        max_body: int,
        *,
        large_body: int = 1024 * 1024,
        max_large_bodies: int = 2,
        slot_timeout: float = 10.0,
    ) -> None:
        self.commits = commits
        self.secret = secret
        self.key = secret.encode()
        self.metrics = metrics
        self.max_body = max_body
        self.large_body = large_body
        self.slot_timeout = slot_timeout
        self.large_slots = asyncio.Semaphore(max_large_bodies)

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

    def _refuse(
        self, status: int, event: str, outcome: str, message: str, close: bool = False
    ) -> _Reply:
        self.metrics.delivery(event, outcome)
        # One line per refusal, at most one a second (`quiet_repeats` filters this logger).
        log.warning("refused a delivery: HTTP %d %s (%s)", status, outcome, message)
        return status, {"error": message}, _CLOSE if close else ()

    async def handle(self, scope: Scope, receive: Receive) -> _Reply | None:
        """Verify, parse and store one delivery: (status, JSON body, extra headers)."""
        if scope["method"] != "POST":
            return 405, {"error": "Method Not Allowed"}, ((b"allow", b"POST"),)
        headers: dict[bytes, bytes] = {}
        for name, value in scope["headers"]:
            headers.setdefault(name, value)  # the first of repeated headers, as Starlette
        if b"transfer-encoding" in headers and b"content-length" in headers:
            # RFC 9112 6.1: a proxy in front may have read the length the other way, so
            # nothing more is read from this connection (what follows may be smuggled).
            why = "both Content-Length and Transfer-Encoding: send one"
            return self._refuse(400, "unknown", "bad_request", why, close=True)
        sig = headers.get(b"x-hub-signature-256", b"").decode("latin-1")
        if not sig:
            return self._refuse(401, "unknown", "bad_signature", "missing X-Hub-Signature-256")
        length = headers.get(b"content-length", b"")
        too_big = f"payload over {self.max_body} bytes"
        if length.isdigit() and int(length) > self.max_body:
            return self._refuse(413, "unknown", "too_large", too_big, close=True)
        # A large body waits for a turn: at the start if declared, else once it grows large.
        large = length.isdigit() and int(length) > self.large_body
        if large and not await self._take_slot():
            return self._busy()
        try:
            mac = hmac.new(self.key, digestmod=hashlib.sha256)
            chunks: list[bytes] = []
            size = 0
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    return None
                chunk = message.get("body", b"")
                size += len(chunk)
                if size > self.max_body:
                    # Connection: close, or the server would go on reading (and dropping) it
                    return self._refuse(413, "unknown", "too_large", too_big, close=True)
                if size > self.large_body and not large:
                    large = await self._take_slot()
                    if not large:
                        return self._busy()
                mac.update(chunk)
                chunks.append(chunk)
                if not message.get("more_body", False):
                    break
            # Constant-time, and before anything is joined or parsed.
            if not signature_matches(mac, sig):
                return self._refuse(401, "unknown", "bad_signature", "bad X-Hub-Signature-256")
            body = chunks[0] if len(chunks) == 1 else b"".join(chunks)
            del chunks
            return await self._accept(headers, body)
        finally:
            if large:
                self.large_slots.release()

    async def _unassigned(self, raw: bytes) -> None:
        """Cancel the queued assignment an `issues.unassigned` delivery undoes (best effort)."""
        try:
            payload = json.loads(raw)
            if isinstance(payload, dict):
                queue = self.commits.queue
                await anyio.to_thread.run_sync(cancel_unassigned, queue, "issues", payload)
        except Exception:
            # Stored already: a worker's guard still finds the issue unassigned.
            log.exception("could not cancel the job of an unassignment")

    async def _take_slot(self) -> bool:
        """Wait for a turn to read a large body; False if none came free in time."""
        try:
            await asyncio.wait_for(self.large_slots.acquire(), self.slot_timeout)
        except TimeoutError:
            return False
        return True

    def _busy(self) -> _Reply:
        self.metrics.delivery("unknown", "busy")
        return 503, {"error": "too many large deliveries at once; redeliver it"}, _BUSY

    async def _accept(self, headers: dict[bytes, bytes], body: bytes) -> _Reply:
        """Check the headers and the JSON of a correctly signed body, then store it."""
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
        # GitHub's form content type sends `payload=<json>`, decoded here (rare); anything
        # else is taken as JSON (curl -d labels JSON as a form too) and checked by the store,
        # off this loop (webhooks.payload_check).
        form = body.startswith(b"payload=") and headers.get(b"content-type", b"").startswith(
            b"application/x-www-form-urlencoded"
        )
        if form:
            parsed = await anyio.to_thread.run_sync(parse, body, form)
            if isinstance(parsed, str):
                return self._refuse(400, event, "bad_json", parsed)
            raw, payload = parsed
            item = Incoming(Delivery(delivery, event, raw, repo_full_name(payload) or ""), True)
        else:
            raw, item = body, Incoming(Delivery(delivery, event, body))
        try:
            fresh = await self.commits.store(item)
        except Exception:
            # The store failed (disk, database down): not stored, so GitHub should redeliver.
            log.exception("could not store delivery %s", delivery)
            self.metrics.delivery(event, "store_error")
            return 503, {"error": "the delivery could not be stored; redeliver it"}, _RETRY
        if isinstance(fresh, str):
            return self._refuse(400, event, "bad_json", fresh)
        self.metrics.delivery(event, "queued" if fresh else "duplicate")
        if fresh and event == "issues" and b'"unassigned"' in raw:
            # Unassigning agentbot cancels the job its assignment queued, before a worker
            # claims it (rare: parsed in full only for these).
            await self._unassigned(raw)
        return 202, {"job_id": delivery, "duplicate": not fresh}, ()
