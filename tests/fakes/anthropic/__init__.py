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

`ScriptedServer` (`.server`, uvicorn in a thread) and the steps (`.script`) are shared with
`tests.fakes.openai_chat`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from tests.fakes.anthropic.script import (
    ERROR_TYPES,
    RecordedRequest,
    ScriptedError,
    ScriptedReply,
    Step,
    error,
    finish,
    reply,
    text,
    tool_use,
    usage,
)
from tests.fakes.anthropic.server import ScriptedServer, sse

__all__ = [
    "ERROR_TYPES",
    "FakeAnthropic",
    "RecordedRequest",
    "ScriptedError",
    "ScriptedReply",
    "ScriptedServer",
    "Step",
    "error",
    "finish",
    "reply",
    "sse",
    "text",
    "tool_use",
    "usage",
]


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
