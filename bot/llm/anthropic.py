"""The LLM port on Anthropic's Messages API (the `anthropic` SDK), with prompt caching."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from bot.clock import Clock
from bot.config import CONNECT_RETRY_SECONDS
from bot.llm.adapter import SDKAdapter, connect_timeout
from bot.llm.port import ContentBlock, Reply, StopReason, TextBlock, ToolUseBlock
from bot.models import Usage

if TYPE_CHECKING:
    from anthropic.types import Message

DEFAULT_BASE_URL = "https://api.anthropic.com"
EPHEMERAL: dict[str, str] = {"type": "ephemeral"}
MAX_BREAKPOINTS = 4
"""The API refuses more than four `cache_control` blocks per request."""

_STOP_REASONS: dict[str, StopReason] = {
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "refusal": "refusal",
}


class AnthropicLLM(SDKAdapter["Message"]):
    """`LLM` on the Messages API; the SDK's own retries are off, tenacity owns them."""

    provider = "anthropic"

    def __init__(
        self,
        *,
        model: str,
        api_key: str,
        base_url: str | None = None,
        clock: Clock | None = None,
        max_retries: int = 4,
        timeout: float = 600.0,
        cache: bool = True,
        temperature: float | None = None,
        connect_retry_seconds: float = CONNECT_RETRY_SECONDS,
    ) -> None:
        # The SDK is imported here, not at module level: it reads the environment on import.
        import anthropic
        from anthropic.types import Message

        super().__init__(
            model=model,
            clock=clock,
            max_retries=max_retries,
            temperature=temperature,
            status_error=anthropic.APIStatusError,
            connection_error=anthropic.APIConnectionError,
            base_url=base_url or DEFAULT_BASE_URL,
            connect_retry_seconds=connect_retry_seconds,
        )
        self.cache = cache
        self._message_type = Message
        # An explicit base URL and key keep the SDK from reading ANTHROPIC_* itself.
        self._client = anthropic.Anthropic(
            api_key=api_key,
            base_url=base_url or DEFAULT_BASE_URL,
            max_retries=0,
            timeout=connect_timeout(anthropic.Timeout, timeout),
        )

    def request_body(
        self,
        *,
        system: str,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        max_tokens: int = 8192,
    ) -> dict[str, Any]:
        """The JSON body for /v1/messages, keys in cache-prefix order: tools, system, messages."""
        body: dict[str, Any] = {"model": self.model, "max_tokens": max_tokens}
        if self.temperature is not None:
            body["temperature"] = self.temperature
        tools_out, system_out, messages_out = with_cache_breakpoints(
            system=system, messages=messages, tools=tools, enabled=self.cache
        )
        if tools_out:
            body["tools"] = tools_out
        if system_out:
            body["system"] = system_out
        body["messages"] = messages_out
        return body

    def _prepare(
        self, system: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]], limit: int
    ) -> Callable[[], Message]:
        body = self.request_body(system=system, messages=messages, tools=tools, max_tokens=limit)
        # `post` (the SDK's documented raw-endpoint call) keeps our key order on the wire:
        # tools, system, messages, the order the API builds its cache prefix in.
        return lambda: self._client.post("/v1/messages", cast_to=self._message_type, body=body)

    def _reply(self, response: Message) -> Reply:
        return reply_from_message(response)


def with_cache_breakpoints(
    *,
    system: str,
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]],
    enabled: bool = True,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """Copies of tools, system blocks and messages carrying the prompt-cache breakpoints.

    Breakpoints (at most four): the last tool, the system block, the first user message
    (the task) and one moving breakpoint on the last block of the last message. String
    contents become one text block so a message has the same bytes whether or not it
    carries the moving breakpoint; breakpoints set by the caller are dropped. The caller's
    lists and dicts are never changed.
    """
    tools_out = [_strip(t) for t in tools]
    system_out = [{"type": "text", "text": system}] if system else []
    messages_out = [
        {**m, "content": [_strip_block(b) for b in _blocks(m.get("content", []))]} for m in messages
    ]
    if not enabled:
        return tools_out, system_out, messages_out
    marks: list[dict[str, Any]] = []
    if tools_out:
        marks.append(tools_out[-1])
    if system_out:
        marks.append(system_out[-1])
    first_user = next((m for m in messages_out if m.get("role") == "user" and m["content"]), None)
    if first_user is not None:
        marks.append(first_user["content"][-1])
    last = next((m for m in reversed(messages_out) if m["content"]), None)
    if last is not None and last is not first_user:
        marks.append(last["content"][-1])
    for block in marks[-MAX_BREAKPOINTS:]:
        block["cache_control"] = dict(EPHEMERAL)
    return tools_out, system_out, messages_out


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return list(content)


def _strip(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if k != "cache_control"}


def _strip_block(block: dict[str, Any]) -> dict[str, Any]:
    out = _strip(block)
    if out.get("type") == "tool_result" and isinstance(out.get("content"), list):
        out["content"] = [_strip(b) if isinstance(b, dict) else b for b in out["content"]]
    return out


def reply_from_message(message: Message) -> Reply:
    """The port's Reply from an SDK Message (text and tool_use blocks; others are dropped)."""
    content: list[ContentBlock] = []
    for block in message.content:
        if block.type == "text":
            content.append(TextBlock(text=block.text))
        elif block.type == "tool_use":
            data = block.input if isinstance(block.input, dict) else {}
            content.append(ToolUseBlock(id=block.id, name=block.name, input=dict(data)))
    u = message.usage
    usage = Usage(
        input_tokens=u.input_tokens,
        output_tokens=u.output_tokens,
        cache_creation_input_tokens=u.cache_creation_input_tokens or 0,
        cache_read_input_tokens=u.cache_read_input_tokens or 0,
    )
    stop = _STOP_REASONS.get(message.stop_reason or "", "other")
    return Reply(content=content, stop_reason=stop, usage=usage, model=message.model)
