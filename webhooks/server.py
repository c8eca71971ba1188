"""Serving the receiver under abuse: read timeouts, a connection cap, quiet error logs.

uvicorn reads request headers and bodies without a deadline, so idle or slow clients
(one byte a second) hold their connections, and their file descriptors, for ever; under
a descriptor limit that locks real deliveries out, and each refused accept is an error
line. Here, with uvicorn's own h11 protocol underneath:

- a connection must send its request line and headers within `header_timeout` seconds
  of opening (or of the first byte of its next request), and its body within
  `body_timeout` of the headers; past that it is closed;
- at most `max_connections` are open (never more than the descriptor limit allows, which
  is first raised to its hard limit): one more closes the connection that has waited
  longest for a request (an idle or slow client), so a real delivery still gets in; if
  every connection is busy with a request, the one whose body has been arriving longest
  (over `SLOW_BODY` seconds) is closed, else the newcomer is;
- repeated lines from uvicorn and asyncio (invalid requests, accept errors, timeouts) are
  logged at most once a second each, with how many were left out, and a traceback only
  the first time (`bot.logs.OncePerSecond`).

The receiver itself caps how many large bodies it buffers at once (webhooks.receiver).
"""

from __future__ import annotations

import asyncio
import logging
import resource
import time
from dataclasses import dataclass
from typing import Any, ClassVar

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from bot.logs import OncePerSecond
from webhooks.coalesced import CoalescedTransport

log = logging.getLogger("agentbot.webhooks")

RESERVED_DESCRIPTORS = 64
"""Descriptors kept free of connections: the queue, workers, git and log files."""
MIN_CONNECTIONS = 16
SLOW_BODY = 1.0
"""Seconds a body may take before its connection may make room for a new one (cap reached)."""


@dataclass(frozen=True)
class ServerLimits:
    """How much a client may hold of the receiver, and for how long."""

    header_timeout: float = 5.0
    """Seconds to send the request line and headers."""
    body_timeout: float = 10.0
    """Seconds to send the body once the headers are in (GitHub itself waits 10 s)."""
    max_connections: int = 1000
    """Open connections at most (lowered to what the descriptor limit allows)."""
    large_body: int = 1024 * 1024
    """Bodies over this many bytes count as large."""
    max_large_bodies: int = 2
    """Large bodies buffered at once; others wait for a turn (up to `body_timeout`)."""


def connection_cap(wanted: int) -> int:
    """`wanted`, lowered so connections leave RESERVED_DESCRIPTORS free; raises the soft
    descriptor limit to the hard one first (allowed without privileges)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or hard > soft:
        target = hard if hard != resource.RLIM_INFINITY else max(soft, 65536)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):
            pass
    return max(MIN_CONNECTIONS, min(wanted, soft - RESERVED_DESCRIPTORS))


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with read deadlines and a connection cap (see the module)."""

    limits: ClassVar[ServerLimits] = ServerLimits()
    cap: ClassVar[int] = ServerLimits().max_connections

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.phase = "headers"
        """headers | body | app (request read, being answered) | idle (keep-alive)."""
        self.since = 0.0
        self.deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        """Start the header deadline; make room if the cap is reached."""
        super().connection_made(CoalescedTransport(transport, self.loop))
        self._enter("headers", self.limits.header_timeout)
        if len(self.connections) > self.cap:
            self._make_room()

    def data_received(self, data: bytes) -> None:
        """Feed h11, then move the deadline to the phase the request has reached."""
        super().data_received(data)
        state = self.conn.their_state
        if state is h11.IDLE:  # part of a request line or headers: from its first byte
            if self.phase != "headers":
                self._enter("headers", self.limits.header_timeout)
        elif state is h11.SEND_BODY:
            if self.phase != "body":
                self._enter("body", self.limits.body_timeout)
        elif self.phase != "app":  # the whole request is in (most requests: at once)
            self._enter("app", None)

    def on_response_complete(self) -> None:
        """Between requests uvicorn's keep-alive timeout applies."""
        super().on_response_complete()
        if self.phase == "app":
            self._enter("idle", None)

    def connection_lost(self, exc: Exception | None) -> None:
        """Drop the deadline with the connection."""
        self._cancel()
        super().connection_lost(exc)

    def _enter(self, phase: str, timeout: float | None) -> None:
        self._cancel()
        self.phase, self.since = phase, time.monotonic()
        if timeout is not None:
            self.deadline = self.loop.call_later(timeout, self._expire)

    def _cancel(self) -> None:
        if self.deadline is not None:
            self.deadline.cancel()
            self.deadline = None

    def _expire(self) -> None:
        self.deadline = None
        if self.phase in ("headers", "body") and not self.transport.is_closing():
            log.info("closed a connection that sent no complete request %s in time", self.phase)
            self.transport.close()

    def _make_room(self) -> None:
        waiting = [
            c
            for c in self.connections
            if isinstance(c, GuardedH11Protocol)
            and c is not self
            and c.phase in ("headers", "idle")
            and not c.transport.is_closing()
        ]
        if waiting:
            oldest = min(waiting, key=lambda c: c.since)
            log.warning("%d connections open: closed the one waiting longest", self.cap)
            oldest.transport.close()
            return
        # Every one is busy. A body still arriving after SLOW_BODY seconds is not GitHub's
        # (it sends a delivery at once): the slowest goes, so trickled bodies cannot keep
        # real deliveries out; a connection whose request is being answered never does.
        now = time.monotonic()
        slow = [
            c
            for c in self.connections
            if isinstance(c, GuardedH11Protocol)
            and c is not self
            and c.phase == "body"
            and now - c.since > SLOW_BODY
            and not c.transport.is_closing()
        ]
        if slow:
            oldest = min(slow, key=lambda c: c.since)
            log.warning("%d connections open, all busy: closed the slowest body", self.cap)
            oldest.transport.close()
        else:
            log.warning("%d connections open, all busy: refused a new one", self.cap)
            self.transport.close()


def guarded_protocol(limits: ServerLimits) -> type[GuardedH11Protocol]:
    """The protocol class uvicorn builds connections from, bound to `limits`."""
    cap = connection_cap(limits.max_connections)
    return type("GuardedH11", (GuardedH11Protocol,), {"limits": limits, "cap": cap})


QUIET_LOGGERS = ("uvicorn.error", "asyncio", "agentbot.webhooks")


def quiet_repeats() -> None:
    """Rate-limit the receiver's noisy loggers (called by `serve` only)."""
    once = OncePerSecond()
    for name in QUIET_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, OncePerSecond) for f in logger.filters):
            logger.addFilter(once)
