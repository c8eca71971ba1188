"""A scripted OpenAI chat-completions API on 127.0.0.1 that the real `openai` SDK talks to.

It takes the same script as `tests.fakes.anthropic.FakeAnthropic` (the builders are
re-exported here), so one script can drive either adapter:

    from bot.llm import OpenAICompatLLM
    from tests.fakes.openai_chat import FakeOpenAIChat, error, finish, reply, text, tool_use

    with FakeOpenAIChat([reply(tool_use("bash", {"command": "ls"})), reply(finish())]) as fake:
        llm = OpenAICompatLLM(model="deepseek-chat", api_key="test", base_url=fake.base_url,
                              provider="deepseek", clock=FakeClock())
        ...
        fake.requests[1].json["messages"]     # includes {"role": "tool", "tool_call_id": ...}

`fake.base_url` ends in `/v1`; the server answers POST /v1/chat/completions. Translation of
a scripted reply: text blocks -> `message.content`; tool_use blocks -> `message.tool_calls`
(same ids, arguments as JSON; a string `input` is sent verbatim, e.g. invalid JSON);
stop_reason end_turn/tool_use/max_tokens/refusal -> finish_reason
stop/tool_calls/length/content_filter; usage -> prompt_tokens = input + cache_write +
cache_read, completion_tokens = output, prompt_tokens_details.cached_tokens = cache_read.
Errors use OpenAI's shape `{"error": {"message", "type", "param", "code"}}`.
A request with `"stream": true` gets chat.completion.chunk events and `data: [DONE]`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from tests.fakes.anthropic import (
    RecordedRequest,
    ScriptedError,
    ScriptedReply,
    ScriptedServer,
    error,
    finish,
    reply,
    sse,
    text,
    tool_use,
    usage,
)

__all__ = [
    "FakeOpenAIChat",
    "RecordedRequest",
    "error",
    "finish",
    "reply",
    "text",
    "tool_use",
    "usage",
]

FINISH_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "refusal": "content_filter",
}

CREATED = 1_767_225_600  # 2026-01-01: fixed, so replies are reproducible


def _arguments(value: Any) -> str:
    # A string input is sent verbatim, so tests can serve arguments that are not JSON.
    return value if isinstance(value, str) else json.dumps(value)


class FakeOpenAIChat(ScriptedServer):
    """POST /v1/chat/completions from a script; see the module docstring."""

    route = "/v1/chat/completions"
    name = "FakeOpenAIChat"

    def __enter__(self) -> FakeOpenAIChat:
        super().__enter__()
        self.base_url += "/v1"
        return self

    def _message(self, step: ScriptedReply) -> dict[str, Any]:
        texts = [b["text"] for b in step.content if b["type"] == "text"]
        message: dict[str, Any] = {"role": "assistant", "content": "\n\n".join(texts) or None}
        calls = [
            {
                "id": b["id"],
                "type": "function",
                "function": {"name": b["name"], "arguments": _arguments(b["input"])},
            }
            for b in step.content
            if b["type"] == "tool_use"
        ]
        if calls:
            message["tool_calls"] = calls
        return message

    def _usage(self, step: ScriptedReply) -> dict[str, Any]:
        u = step.usage
        # Chat completions bill no cache writes: written tokens are plain prompt tokens.
        prompt = u.input_tokens + u.cache_creation_input_tokens + u.cache_read_input_tokens
        return {
            "prompt_tokens": prompt,
            "completion_tokens": u.output_tokens,
            "total_tokens": prompt + u.output_tokens,
            "prompt_tokens_details": {"cached_tokens": u.cache_read_input_tokens},
        }

    def _head(self, step: ScriptedReply, request: RecordedRequest, kind: str) -> dict[str, Any]:
        return {
            "id": f"chatcmpl-fake-{self.served:04d}",
            "object": kind,
            "created": CREATED,
            "model": step.model or (request.json or {}).get("model", "gpt-fake"),
        }

    def render_reply(self, step: ScriptedReply, request: RecordedRequest) -> dict[str, Any]:
        """A chat.completion object."""
        choice = {
            "index": 0,
            "message": self._message(step),
            "finish_reason": FINISH_REASONS.get(step.stop_reason, step.stop_reason),
            "logprobs": None,
        }
        return {
            **self._head(step, request, "chat.completion"),
            "choices": [choice],
            "usage": self._usage(step),
        }

    def render_stream(self, step: ScriptedReply, request: RecordedRequest) -> Iterator[bytes]:
        """Role, content and tool-call chunks, a finish chunk, a usage chunk if asked, [DONE]."""
        head = self._head(step, request, "chat.completion.chunk")
        message = self._message(step)

        def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> bytes:
            choice = {"index": 0, "delta": delta, "finish_reason": finish_reason}
            return sse(None, {**head, "choices": [choice]})

        yield chunk({"role": "assistant", "content": ""})
        if message["content"]:
            yield chunk({"content": message["content"]})
        for index, call in enumerate(message.get("tool_calls", [])):
            yield chunk({"tool_calls": [{"index": index, **call}]})
        yield chunk({}, FINISH_REASONS.get(step.stop_reason, step.stop_reason))
        options = (request.json or {}).get("stream_options") or {}
        if options.get("include_usage"):
            yield sse(None, {**head, "choices": [], "usage": self._usage(step)})
        yield sse(None, "[DONE]")

    def render_error(self, step: ScriptedError) -> dict[str, Any]:
        """OpenAI's error shape."""
        return {"error": {"message": step.message, "type": step.type, "param": None, "code": None}}
