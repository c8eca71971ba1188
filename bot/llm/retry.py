"""The one retry owner for LLM calls: tenacity, waits through the injected Clock.

Retryable: HTTP 429, 529, any 5xx, and connection errors (timeouts included). Every other
provider error (400, 401, 403, 404, 413…) fails at once. The wait is the server's
`retry-after-ms` (preferred) or `retry-after` header, else exponential backoff
(1 s, 2 s, 4 s… capped at 60 s, no jitter: few workers, and tests stay exact).
A host that cannot be reached at all (refused, DNS, TLS) is retried only for
`connect_retry_seconds` in all, then fails with "cannot reach <host>: <cause>".
"""

from __future__ import annotations

import email.utils
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import urlsplit

from tenacity import RetryCallState, Retrying, retry_if_exception

from bot.clock import Clock
from bot.config import CONNECT_RETRY_SECONDS
from bot.errors import LLMError

T = TypeVar("T")

log = logging.getLogger("agentbot.llm")

BACKOFF_FIRST = 1.0
BACKOFF_MAX = 60.0
RETRY_AFTER_MAX = 300.0
"""A server asking for a longer wait is obeyed only this long (seconds), so a job can't hang."""


@dataclass(frozen=True)
class ProviderFailure:
    """What a provider error means for the retry policy."""

    status: int | None
    """HTTP status, None for connection errors."""
    message: str
    """The provider's error, e.g. `HTTP 529 overloaded_error: Overloaded`."""
    retryable: bool
    retry_after: float | None = None
    """Seconds the server asked us to wait, if it said."""
    unreachable: bool = False
    """No connection was made (refused, DNS, TLS, connect timeout): the short bound applies."""
    cause: str = ""
    """For an unreachable host, the low-level reason (`ConnectError: …`)."""


_UNREACHABLE = ("ConnectError", "ConnectTimeout")
"""httpx's (or the SDK's vendored httpx2's) errors for a connection never made."""

Classifier = Callable[[BaseException], ProviderFailure | None]
"""Maps an exception to a ProviderFailure, or None when it is not a provider error."""


def is_retryable_status(status: int) -> bool:
    """429 (rate limit), 529 (overloaded) and other 5xx are worth another try."""
    return status == 429 or status >= 500


def parse_retry_after(headers: Mapping[str, str], clock: Clock) -> float | None:
    """Seconds to wait from `retry-after-ms`, or `retry-after` (seconds or an HTTP date)."""
    lowered = {k.lower(): v for k, v in headers.items()}
    ms = lowered.get("retry-after-ms")
    if ms is not None:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, (when - clock.now()).total_seconds())


def describe_body(body: object, fallback: str) -> str:
    """`type: message` from an Anthropic or OpenAI error body, else the fallback."""
    if isinstance(body, dict):
        err: Any = body.get("error", body)
        if isinstance(err, dict):
            kind = err.get("type") or err.get("code")
            message = err.get("message")
            if message:
                return f"{kind}: {message}" if kind else str(message)
    return fallback


def sdk_classifier(
    *, status_error: type[Exception], connection_error: type[Exception], clock: Clock
) -> Classifier:
    """A Classifier for a Stainless-generated SDK (anthropic, openai): both share these shapes."""

    def classify(exc: BaseException) -> ProviderFailure | None:
        if isinstance(exc, status_error):
            status = int(getattr(exc, "status_code", 0))
            response = getattr(exc, "response", None)
            headers: Mapping[str, str] = getattr(response, "headers", None) or {}
            detail = describe_body(getattr(exc, "body", None), str(exc))
            return ProviderFailure(
                status=status,
                message=f"HTTP {status} {detail}",
                retryable=is_retryable_status(status),
                retry_after=parse_retry_after(headers, clock),
            )
        if isinstance(exc, connection_error):
            cause = exc.__cause__ or exc.__context__
            reason = f"{exc} ({type(cause).__name__}: {cause})" if cause else str(exc)
            return ProviderFailure(
                status=None,
                message=f"connection error: {reason}",
                retryable=True,
                unreachable=type(cause).__name__ in _UNREACHABLE,
                cause=f"{type(cause).__name__}: {cause}" if cause else str(exc),
            )
        return None

    return classify


def call_with_retries(
    call: Callable[[], T],
    *,
    provider: str,
    model: str,
    clock: Clock,
    max_retries: int,
    classify: Classifier,
    host: str = "",
    connect_retry_seconds: float = CONNECT_RETRY_SECONDS,
) -> T:
    """Run `call`, retrying retryable provider failures; raise LLMError when they run out."""
    started = clock.monotonic()

    def failure_of(state: RetryCallState) -> ProviderFailure | None:
        exc = state.outcome.exception() if state.outcome else None
        return classify(exc) if exc is not None else None

    def wait(state: RetryCallState) -> float:
        failure = failure_of(state)
        if failure is not None and failure.retry_after is not None:
            return min(failure.retry_after, RETRY_AFTER_MAX)
        return min(BACKOFF_FIRST * 2.0 ** (state.attempt_number - 1), BACKOFF_MAX)

    def before_sleep(state: RetryCallState) -> None:
        failure = failure_of(state)
        seconds = float(state.next_action.sleep) if state.next_action else 0.0
        log.warning(
            "%s %s: %s; retry %d of %d in %.1fs",
            provider,
            model,
            failure.message if failure else "error",
            state.attempt_number,
            max_retries,
            seconds,
        )

    def retryable(exc: BaseException) -> bool:
        failure = classify(exc)
        return failure is not None and failure.retryable

    def unreachable_too_long(state: RetryCallState) -> bool:
        failure = failure_of(state)
        if failure is None or not failure.unreachable:
            return False
        upcoming = min(BACKOFF_FIRST * 2.0 ** (state.attempt_number - 1), BACKOFF_MAX)
        return clock.monotonic() - started + upcoming > connect_retry_seconds

    retrying = Retrying(
        stop=lambda state: state.attempt_number > max_retries or unreachable_too_long(state),
        wait=wait,
        retry=retry_if_exception(retryable),
        sleep=clock.sleep,
        before_sleep=before_sleep,
        reraise=True,
    )
    try:
        return retrying(call)
    except Exception as exc:
        failure = classify(exc)
        if failure is None:
            raise
        attempts = int(retrying.statistics.get("attempt_number", 1))
        if failure.unreachable:
            raise LLMError(
                f"cannot reach {host or provider}: {failure.cause} "
                f"({provider}, {attempts} attempts); check the network, proxy and base URL",
                provider=provider,
                status=None,
            ) from exc
        if failure.retryable:
            what = f"failed after {attempts} attempts"
            advice = "the provider is unavailable; retry the job later"
        else:
            what = "rejected the request"
            advice = _advice(failure.status)
        raise LLMError(
            f"{provider} ({model}) {what}: {failure.message}; {advice}",
            provider=provider,
            status=failure.status,
        ) from exc


def host_of(base_url: str) -> str:
    """The host a base URL names (`api.anthropic.com`), for messages."""
    return urlsplit(base_url).hostname or base_url


def _advice(status: int | None) -> str:
    if status in (401, 403):
        return "check the API key and its permissions"
    if status == 404:
        return "check the model name and the base URL"
    if status == 413:
        return "the request is too large; shorten the prompt or the history"
    return "this is not retryable; fix the request or the configuration"
