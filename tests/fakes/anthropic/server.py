"""ScriptedServer: a recording HTTP server on 127.0.0.1 (uvicorn in a thread) fed by a script."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Iterator
from types import TracebackType
from typing import Any, ClassVar

import uvicorn

from tests.fakes.anthropic.script import (
    RecordedRequest,
    ScriptedError,
    ScriptedReply,
    Step,
    reply,
)

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


class ScriptedServer:
    """A recording HTTP server on 127.0.0.1 that answers one route from a script of steps."""

    route: ClassVar[str] = "/"
    name: ClassVar[str] = "ScriptedServer"

    def __init__(self, script: Iterable[Step | dict[str, Any] | str] = ()) -> None:
        self._script: deque[Step] = deque()
        self._lock = threading.Lock()
        self.requests: list[RecordedRequest] = []
        self.served = 0
        """Steps served so far."""
        self.exhausted = 0
        """Requests that found the script empty."""
        self.base_url = ""
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._sock: socket.socket | None = None
        self.add(*script)

    def add(self, *steps: Step | dict[str, Any] | str) -> None:
        """Append steps; a bare block or string is a one-block reply."""
        with self._lock:
            for step in steps:
                self._script.append(reply(step) if isinstance(step, dict | str) else step)

    @property
    def remaining(self) -> int:
        """Steps not served yet."""
        return len(self._script)

    # --- subclass hooks -----------------------------------------------------------------

    def render_reply(self, step: ScriptedReply, request: RecordedRequest) -> dict[str, Any]:
        """The JSON body of a reply."""
        raise NotImplementedError

    def render_stream(self, step: ScriptedReply, request: RecordedRequest) -> Iterator[bytes]:
        """The SSE frames of a reply."""
        raise NotImplementedError

    def render_error(self, step: ScriptedError) -> dict[str, Any]:
        """The JSON body of an error."""
        raise NotImplementedError

    # --- serving ------------------------------------------------------------------------

    def _next(self, request: RecordedRequest) -> ScriptedReply | ScriptedError:
        with self._lock:
            if not self._script:
                self.exhausted += 1
                return ScriptedError(
                    500,
                    f"{self.name} script exhausted after {self.served} steps; "
                    f"request #{len(self.requests)} was not scripted",
                    "api_error",
                )
            step = self._script.popleft()
            self.served += 1
        return step(request) if callable(step) else step

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The ASGI app: record, then answer from the script."""
        if scope["type"] != "http":
            return
        chunks = []
        while True:
            message = await receive()
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        body = b"".join(chunks)
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        try:
            parsed = json.loads(body) if body else None
        except ValueError:
            parsed = None
        request = RecordedRequest(scope["method"], scope["path"], headers, body, parsed)
        self.requests.append(request)
        if scope["method"] != "POST" or scope["path"] != self.route:
            step: ScriptedReply | ScriptedError = ScriptedError(
                404, f"{self.name} serves only POST {self.route}", "not_found_error"
            )
        else:
            step = self._next(request)
        if isinstance(step, ScriptedError):
            await _send(send, step.status, self.render_error(step), step.headers)
        elif isinstance(parsed, dict) and parsed.get("stream"):
            frames = b"".join(self.render_stream(step, request))
            await _send_raw(send, 200, frames, {"content-type": "text/event-stream"})
        else:
            await _send(send, 200, self.render_reply(step, request), {})

    def __enter__(self) -> ScriptedServer:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        self._sock = sock
        self.base_url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        config = uvicorn.Config(
            self, lifespan="off", log_config=None, log_level="warning", access_log=False
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [sock]}, name=self.name, daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"{self.name} did not start")
            time.sleep(0.005)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
        if self._sock is not None:
            with contextlib.suppress(OSError):
                self._sock.close()


async def _send(send: Send, status: int, payload: Any, headers: dict[str, str]) -> None:
    data = json.dumps(payload).encode()
    await _send_raw(send, status, data, {"content-type": "application/json", **headers})


async def _send_raw(send: Send, status: int, data: bytes, headers: dict[str, str]) -> None:
    raw = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()]
    raw.append((b"content-length", str(len(data)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": data})
    await asyncio.sleep(0)


def sse(event: str | None, data: Any) -> bytes:
    """One server-sent event frame."""
    payload = data if isinstance(data, str) else json.dumps(data)
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {payload}\n\n".encode()
