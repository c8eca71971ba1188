"""A scripted Anthropic Messages API on 127.0.0.1 that the real `anthropic` SDK talks to.

    from bot.llm import AnthropicLLM
    from tests.fakes.anthropic import FakeAnthropic, error, finish, reply, text, tool_use

    script = [
        reply(tool_use("bash", {"command": "pytest -q"})),      # stop_reason "tool_use" (inferred)
        error(529, retry_after_ms=1500),                       # overloaded; the adapter waits 1.5 s
        reply(text("Fixed."), finish(summary="fixed the bug"), # `finish` is a tool_use block
              usage=usage(input_tokens=1200, output_tokens=80, cache_read=1000)),
    ]
    with FakeAnthropic(script) as fake:
        llm = AnthropicLLM(model="claude-sonnet-4-5", api_key="test", base_url=fake.base_url,
                           clock=FakeClock())
        ...
        fake.requests[0].json["messages"]      # what the model was sent (parsed)
        fake.requests[0].body                  # the raw bytes, as received
        fake.requests[0].headers["x-api-key"]
        assert fake.remaining == 0

A script is a list of steps, served in order, one per POST /v1/messages:
- `reply(*blocks, stop_reason=None, usage=None, model=None)`: a Message. Blocks come from
  `text()`, `tool_use()`, `finish()` (a plain string is a text block). `stop_reason` defaults
  to "tool_use" when a block is a tool_use, else "end_turn". Tool-use ids are generated
  (`toolu_fake_0001`…) unless given. Usage defaults to 10 input / 5 output tokens.
- `error(status, message=None, type=None, retry_after=None, retry_after_ms=None, headers=None)`:
  an error response in Anthropic's shape `{"type": "error", "error": {"type", "message"}}`.
- a callable `(RecordedRequest) -> step`, to answer from what was sent.
`fake.add(*steps)` appends steps while the server runs. When the script is exhausted the
server answers 500 `api_error` "FakeAnthropic script exhausted…" so the test fails loudly
(after the adapter's retries), and `fake.exhausted` counts those requests. A request with
`"stream": true` gets the same reply as server-sent events.

`ScriptedServer` (the uvicorn-in-a-thread base) is shared with `tests.fakes.openai_chat`.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import socket
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Iterator
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, ClassVar

import uvicorn

from bot.models import Usage

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

_ids = itertools.count(1)


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the server received it."""

    method: str
    path: str
    headers: dict[str, str]
    """Lower-cased names."""
    body: bytes
    """The raw bytes on the wire."""
    json: Any
    """The body parsed, or None when empty."""


@dataclass(frozen=True)
class ScriptedReply:
    """A model reply to serve (Anthropic-shaped blocks; the OpenAI fake translates them)."""

    content: list[dict[str, Any]]
    stop_reason: str
    usage: Usage
    model: str | None = None


@dataclass(frozen=True)
class ScriptedError:
    """An HTTP error to serve."""

    status: int
    message: str
    type: str
    headers: dict[str, str] = field(default_factory=dict)


Step = ScriptedReply | ScriptedError | Callable[[RecordedRequest], "ScriptedReply | ScriptedError"]

ERROR_TYPES: dict[int, str] = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


def text(value: str) -> dict[str, Any]:
    """A text block."""
    return {"type": "text", "text": value}


def tool_use(
    name: str, input: dict[str, Any] | None = None, *, id: str | None = None
) -> dict[str, Any]:
    """A tool_use block; the id is generated unless given."""
    return {
        "type": "tool_use",
        "id": id or f"toolu_fake_{next(_ids):04d}",
        "name": name,
        "input": dict(input or {}),
    }


def finish(status: str = "OK", summary: str = "done", **fields: Any) -> dict[str, Any]:
    """A call of the `finish` tool (seed 004 output contract: status, summary, artifacts…)."""
    return tool_use("finish", {"status": status, "summary": summary, **fields})


def usage(
    input_tokens: int = 10, output_tokens: int = 5, cache_write: int = 0, cache_read: int = 0
) -> Usage:
    """A Usage, with short names for the cache counts."""
    return Usage(
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        cache_creation_input_tokens=cache_write,
        cache_read_input_tokens=cache_read,
    )


def reply(
    *blocks: dict[str, Any] | str,
    stop_reason: str | None = None,
    usage: Usage | None = None,
    model: str | None = None,
) -> ScriptedReply:
    """A reply step; stop_reason defaults to tool_use if any block is a tool_use, else end_turn."""
    content = [text(b) if isinstance(b, str) else b for b in blocks]
    if stop_reason is None:
        stop_reason = "tool_use" if any(b["type"] == "tool_use" for b in content) else "end_turn"
    return ScriptedReply(
        content, stop_reason, usage or Usage(input_tokens=10, output_tokens=5), model
    )


def error(
    status: int,
    message: str | None = None,
    *,
    type: str | None = None,
    retry_after: float | None = None,
    retry_after_ms: float | None = None,
    headers: dict[str, str] | None = None,
) -> ScriptedError:
    """An error step with optional retry-after / retry-after-ms headers."""
    all_headers = dict(headers or {})
    if retry_after is not None:
        all_headers["retry-after"] = f"{retry_after:g}"
    if retry_after_ms is not None:
        all_headers["retry-after-ms"] = f"{retry_after_ms:g}"
    kind = type or ERROR_TYPES.get(status, "api_error")
    return ScriptedError(status, message or kind.replace("_", " ").capitalize(), kind, all_headers)


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


class FakeAnthropic(ScriptedServer):
    """POST /v1/messages from a script; see the module docstring."""

    route = "/v1/messages"
    name = "FakeAnthropic"

    def __enter__(self) -> FakeAnthropic:
        super().__enter__()
        return self

    def render_reply(self, step: ScriptedReply, request: RecordedRequest) -> dict[str, Any]:
        """A Message object."""
        model = step.model or (request.json or {}).get("model", "claude-fake")
        return {
            "id": f"msg_fake_{self.served:04d}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": step.content,
            "stop_reason": step.stop_reason,
            "stop_sequence": None,
            "usage": step.usage.model_dump(),
        }

    def render_stream(self, step: ScriptedReply, request: RecordedRequest) -> Iterator[bytes]:
        """message_start, per-block start/delta/stop, message_delta, message_stop."""
        message = self.render_reply(step, request)
        started = {**message, "content": [], "stop_reason": None}
        started["usage"] = {**message["usage"], "output_tokens": 0}
        yield sse("message_start", {"type": "message_start", "message": started})
        for index, block in enumerate(step.content):
            if block["type"] == "text":
                empty: dict[str, Any] = {"type": "text", "text": ""}
                delta: dict[str, Any] = {"type": "text_delta", "text": block["text"]}
            else:
                empty = {**block, "input": {}}
                delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
            head = {"index": index, "content_block": empty}
            yield sse("content_block_start", {"type": "content_block_start", **head})
            body = {"index": index, "delta": delta}
            yield sse("content_block_delta", {"type": "content_block_delta", **body})
            yield sse("content_block_stop", {"type": "content_block_stop", "index": index})
        stop = {"stop_reason": step.stop_reason, "stop_sequence": None}
        yield sse(
            "message_delta", {"type": "message_delta", "delta": stop, "usage": message["usage"]}
        )
        yield sse("message_stop", {"type": "message_stop"})

    def render_error(self, step: ScriptedError) -> dict[str, Any]:
        """Anthropic's error shape."""
        return {"type": "error", "error": {"type": step.type, "message": step.message}}
