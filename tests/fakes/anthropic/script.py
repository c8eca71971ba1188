"""Script steps for the fake LLM servers: recorded requests, replies, errors, builders."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from bot.models import Usage

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
