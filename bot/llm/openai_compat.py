"""The LLM port on OpenAI-compatible chat completions (the `openai` SDK, function tools).

Requests arrive in Anthropic's shape and are translated: typed tools become function tools
(`bot.llm.schemas`), assistant `tool_use` blocks become `tool_calls`, user `tool_result`
blocks become `role: tool` messages, and the reply comes back as the same `Reply`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from bot.clock import Clock
from bot.config import CONNECT_RETRY_SECONDS
from bot.errors import LLMError
from bot.llm.adapter import SDKAdapter, connect_timeout
from bot.llm.port import ContentBlock, Reply, StopReason, TextBlock, ToolUseBlock
from bot.llm.schemas import function_tool_schemas
from bot.models import Usage

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletion

_FINISH_REASONS: dict[str, StopReason] = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
}

INVALID_ARGUMENTS_KEY = "_invalid_arguments"
"""A tool call whose arguments are not a JSON object arrives as `{INVALID_ARGUMENTS_KEY: raw}`,
so the tool runner reports a schema error to the model instead of the job crashing."""


class OpenAICompatLLM(SDKAdapter["ChatCompletion"]):
    """`LLM` on `/chat/completions`; the SDK's own retries are off, tenacity owns them."""

    def __init__(
        self,
        *,
        model: str,
        api_key: str,
        base_url: str,
        clock: Clock | None = None,
        max_retries: int = 4,
        timeout: float = 600.0,
        provider: str = "openai",
        temperature: float | None = None,
        connect_retry_seconds: float = CONNECT_RETRY_SECONDS,
    ) -> None:
        # The SDK is imported here, not at module level: it reads the environment on import.
        import openai

        self.provider = provider
        super().__init__(
            model=model,
            clock=clock,
            max_retries=max_retries,
            temperature=temperature,
            status_error=openai.APIStatusError,
            connection_error=openai.APIConnectionError,
            base_url=base_url,
            connect_retry_seconds=connect_retry_seconds,
        )
        self._omit = openai.omit
        self._client = openai.OpenAI(
            api_key=api_key,
            base_url=base_url,
            max_retries=0,
            timeout=connect_timeout(openai.Timeout, timeout),
        )

    def _prepare(
        self, system: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]], limit: int
    ) -> Callable[[], ChatCompletion]:
        chat = chat_messages(system, messages)
        functions = function_tool_schemas(tools)
        # OpenAI's own API wants max_completion_tokens (reasoning models refuse max_tokens);
        # the compatible providers (DeepSeek, Perplexity…) know only max_tokens.
        own_api = self.provider == "openai"
        return lambda: self._client.chat.completions.create(
            model=self.model,
            messages=cast(Any, chat),
            tools=cast(Any, functions) if functions else self._omit,
            max_completion_tokens=limit if own_api else self._omit,
            max_tokens=self._omit if own_api else limit,
            temperature=self._omit if self.temperature is None else self.temperature,
        )

    def _reply(self, response: ChatCompletion) -> Reply:
        if not response.choices:
            raise LLMError(
                f"{self.provider} ({self.model}) returned no choices; "
                "check that the model serves chat completions",
                provider=self.provider,
            )
        return reply_from_completion(response)


def chat_messages(system: str, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Anthropic-shaped system + messages as chat-completions messages."""
    out: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    for message in messages:
        role = message["role"]
        content = message.get("content", "")
        if isinstance(content, str):
            out.append({"role": role, "content": content})
        elif role == "assistant":
            out.append(_assistant(content))
        else:
            # Tool results must directly follow the assistant's tool_calls; text goes after.
            texts: list[str] = []
            for block in content:
                if block.get("type") == "tool_result":
                    out.append(
                        {
                            "role": "tool",
                            "tool_call_id": block["tool_use_id"],
                            "content": _tool_result_text(block),
                        }
                    )
                else:
                    texts.append(_block_text(block))
            if texts:
                out.append({"role": role, "content": "\n\n".join(texts)})
    return out


def _assistant(content: list[dict[str, Any]]) -> dict[str, Any]:
    texts = [b["text"] for b in content if b.get("type") == "text" and b.get("text")]
    calls = [
        {
            "id": b["id"],
            "type": "function",
            "function": {"name": b["name"], "arguments": json.dumps(b.get("input", {}))},
        }
        for b in content
        if b.get("type") == "tool_use"
    ]
    out: dict[str, Any] = {"role": "assistant", "content": "\n\n".join(texts) or None}
    if calls:
        out["tool_calls"] = calls
    return out


def _block_text(block: dict[str, Any]) -> str:
    if block.get("type") == "text":
        return str(block.get("text", ""))
    return f"[{block.get('type', 'unknown')} block omitted: not supported by this provider]"


def _tool_result_text(block: dict[str, Any]) -> str:
    content = block.get("content", "")
    text = content if isinstance(content, str) else "\n".join(_block_text(b) for b in content)
    return f"Error: {text}" if block.get("is_error") else text


def reply_from_completion(completion: ChatCompletion) -> Reply:
    """The port's Reply from the first choice of a ChatCompletion."""
    choice = completion.choices[0]
    message = choice.message
    content: list[ContentBlock] = []
    if message.content:
        content.append(TextBlock(text=message.content))
    for call in message.tool_calls or []:
        if call.type != "function":
            continue
        try:
            data = json.loads(call.function.arguments or "{}")
        except ValueError:
            data = None
        if not isinstance(data, dict):
            data = {INVALID_ARGUMENTS_KEY: call.function.arguments}
        content.append(ToolUseBlock(id=call.id, name=call.function.name, input=data))
    stop = _FINISH_REASONS.get(choice.finish_reason or "", "other")
    if stop == "end_turn" and any(isinstance(b, ToolUseBlock) for b in content):
        stop = "tool_use"  # some compatible servers say "stop" next to tool calls
    return Reply(
        content=content, stop_reason=stop, usage=usage_of(completion), model=completion.model
    )


def usage_of(completion: ChatCompletion) -> Usage:
    """Usage with cached prompt tokens split out of the prompt count."""
    u = completion.usage
    if u is None:
        return Usage()
    cached = 0
    if u.prompt_tokens_details is not None and u.prompt_tokens_details.cached_tokens:
        cached = u.prompt_tokens_details.cached_tokens
    elif u.model_extra and isinstance(u.model_extra.get("prompt_cache_hit_tokens"), int):
        cached = u.model_extra["prompt_cache_hit_tokens"]  # DeepSeek's name for it
    return Usage(
        input_tokens=max(0, u.prompt_tokens - cached),
        output_tokens=u.completion_tokens,
        cache_read_input_tokens=cached,
    )
