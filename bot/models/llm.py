"""LLM provider configuration and token usage."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from bot.models.base import Model

PROVIDER_URLS: dict[str, str] = {
    "anthropic": "https://api.anthropic.com",
    "openai": "https://api.openai.com/v1",
    "perplexity": "https://api.perplexity.ai",
    "deepseek": "https://api.deepseek.com/v1",
    "iflow": "https://apis.iflow.cn/v1",
}


class LLMProviderConfig(Model):
    """How to reach one LLM provider (seed 003 1.1, plus Anthropic)."""

    provider: Literal["anthropic", "openai", "perplexity", "deepseek", "iflow", "custom"]
    model: str
    api_key: str = Field(default="", repr=False)
    base_url: str | None = None
    temperature: float = Field(default=0.1, ge=0.0, le=2.0)
    timeout: int = Field(default=120, gt=0)
    max_retries: int = Field(default=4, ge=0)
    """Retries of 429/529/5xx/connection errors before the job fails."""
    connect_retry_seconds: float = Field(default=20.0, gt=0)
    """How long an unreachable host (refused, DNS, TLS) is retried, in all."""

    @model_validator(mode="before")
    @classmethod
    def _default_base_url(cls, data: Any) -> Any:
        # Filled in before validation: assigning in an after-validator re-runs validation
        # (validate_assignment) and, with no URL to assign, recursed forever.
        if isinstance(data, dict) and not data.get("base_url"):
            provider = data.get("provider")
            if provider == "custom":
                raise ValueError("provider 'custom' needs an explicit base_url")
            if isinstance(provider, str) and provider in PROVIDER_URLS:
                data = {**data, "base_url": PROVIDER_URLS[provider]}
        return data


class Usage(Model):
    """Token counts of one call or summed over a job."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_creation_input_tokens=self.cache_creation_input_tokens
            + other.cache_creation_input_tokens,
            cache_read_input_tokens=self.cache_read_input_tokens + other.cache_read_input_tokens,
        )

    @property
    def total_tokens(self) -> int:
        """All tokens, cached or not."""
        return (
            self.input_tokens
            + self.output_tokens
            + self.cache_creation_input_tokens
            + self.cache_read_input_tokens
        )
