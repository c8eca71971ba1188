"""The base of the SDK adapters: `complete` runs the provider call under the one retry owner."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from bot.clock import Clock, SystemClock
from bot.llm.port import Reply
from bot.llm.retry import call_with_retries, host_of, sdk_classifier

R = TypeVar("R")
T = TypeVar("T")

CONNECT_TIMEOUT = 5.0
"""Seconds to open a connection (TLS included): an unreachable host fails fast."""


def connect_timeout(timeout_type: Callable[..., T], total: float) -> T:
    """The SDK's timeout (its own `Timeout` class): `total` for a reply, a short connect."""
    return timeout_type(total, connect=min(CONNECT_TIMEOUT, total))


class SDKAdapter(ABC, Generic[R]):
    """An `LLM` on a Stainless SDK: `complete` retries the adapter's call and maps its reply.

    Subclasses keep only the provider mapping: `_prepare` (the request, as a call to retry)
    and `_reply` (the SDK response as a `Reply`). The SDK's own retries must be off.
    """

    provider: str
    model: str

    def __init__(
        self,
        *,
        model: str,
        clock: Clock | None,
        max_retries: int,
        temperature: float | None,
        status_error: type[Exception],
        connection_error: type[Exception],
        base_url: str,
        connect_retry_seconds: float,
    ) -> None:
        self.model = model
        self.host = host_of(base_url)
        self.connect_retry_seconds = connect_retry_seconds
        self.temperature = temperature
        self.max_retries = max_retries
        self._clock = clock or SystemClock()
        self._classify = sdk_classifier(
            status_error=status_error, connection_error=connection_error, clock=self._clock
        )

    def complete(
        self,
        *,
        system: str,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        max_tokens: int = 8192,
    ) -> Reply:
        """Send one request and return the reply; retries live inside the adapter."""
        response = call_with_retries(
            self._prepare(system, messages, tools, max_tokens),
            provider=self.provider,
            model=self.model,
            clock=self._clock,
            max_retries=self.max_retries,
            classify=self._classify,
            host=self.host,
            connect_retry_seconds=self.connect_retry_seconds,
        )
        return self._reply(response)

    @abstractmethod
    def _prepare(
        self, system: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]], limit: int
    ) -> Callable[[], R]:
        """The provider request for these inputs, as a call `complete` may repeat."""

    @abstractmethod
    def _reply(self, response: R) -> Reply:
        """The port's Reply from the provider's response."""
