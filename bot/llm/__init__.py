"""LLM port and adapters: provider-neutral types, `make_llm`, and the provider adapters.

The adapters import their SDK when one is built (the SDKs read the environment and take
seconds on import), so importing this package stays cheap and pure.
"""

from __future__ import annotations

from typing import TypedDict

from bot.clock import Clock
from bot.errors import ConfigError
from bot.llm.anthropic import AnthropicLLM
from bot.llm.openai_compat import OpenAICompatLLM
from bot.llm.port import LLM, ContentBlock, Reply, StopReason, TextBlock, ToolUseBlock
from bot.llm.schemas import BASH_TOOL, EDITOR_TOOL, function_tool_schemas, tool_spec
from bot.models import LLMProviderConfig

__all__ = [
    "BASH_TOOL",
    "EDITOR_TOOL",
    "LLM",
    "AnthropicLLM",
    "ContentBlock",
    "OpenAICompatLLM",
    "Reply",
    "StopReason",
    "TextBlock",
    "ToolUseBlock",
    "function_tool_schemas",
    "make_llm",
    "tool_spec",
]


def make_llm(cfg: LLMProviderConfig, *, clock: Clock | None = None) -> LLM:
    """The adapter for a provider config: Anthropic's API, or an OpenAI-compatible one."""
    common = _Common(
        model=cfg.model,
        api_key=cfg.api_key,
        clock=clock,
        max_retries=cfg.max_retries,
        timeout=float(cfg.timeout),
        temperature=cfg.temperature,
        connect_retry_seconds=cfg.connect_retry_seconds,
    )
    if cfg.provider == "anthropic":
        return AnthropicLLM(base_url=cfg.base_url, **common)
    if not cfg.base_url:
        raise ConfigError(f"provider {cfg.provider!r} needs a base_url", path="base_url")
    return OpenAICompatLLM(base_url=cfg.base_url, provider=cfg.provider, **common)


class _Common(TypedDict):
    """The adapter arguments every provider takes from its config."""

    model: str
    api_key: str
    clock: Clock | None
    max_retries: int
    timeout: float
    temperature: float | None
    connect_retry_seconds: float
