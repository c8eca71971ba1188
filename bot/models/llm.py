"""LLM provider configuration and token usage."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from bot.models.base import Model

PROVIDER_URLS: dict[str, str] = {
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

    @model_validator(mode="after")
    def _default_base_url(self) -> LLMProviderConfig:
        if self.base_url is None:
            if self.provider == "custom":
                raise ValueError("provider 'custom' needs an explicit base_url")
            self.base_url = PROVIDER_URLS.get(self.provider)
        return self


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
