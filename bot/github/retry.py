"""What is retryable and how long to wait: the one table of GitHub retry rules."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

import httpx
from githubkit.exception import RequestError, RequestFailed

# https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api#handle-rate-limit-errors-appropriately
SECONDARY_BASE = 60.0
"""First wait after a secondary rate limit without headers; doubles on each repeat."""
SERVER_BASE = 1.0
"""First wait after a 5xx or a connection error; doubles on each repeat."""
SERVER_CAP = 60.0
"""Longest single wait after a 5xx or a connection error."""
RATE_LIMIT_FLOOR = 1.0
"""Shortest wait on a rate limit, so a stale `x-ratelimit-reset` cannot spin."""

# Errors raised before any byte reached GitHub: safe to retry even for a POST.
_NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)
# No connection at all (refused, DNS, TLS handshake, connect timeout): retried briefly only.
_UNREACHABLE = (httpx.ConnectError, httpx.ConnectTimeout)
CONNECT_TIMEOUT = 5.0
"""Seconds to open a connection to GitHub (TLS included)."""


@dataclass(frozen=True)
class Failure:
    """One failed attempt, classified."""

    kind: str
    """`retry_after`, `primary`, `secondary`, `server`, `network`, `unreachable` or `fatal`."""
    status: int | None
    message: str


def github_message(response: httpx.Response) -> str:
    """GitHub's error message plus the details of a 422, or the raw body."""
    try:
        data: Any = response.json()
    except ValueError:
        return response.text.strip()[:500] or response.reason_phrase
    if not isinstance(data, dict):
        return str(data)[:500]
    message = str(data.get("message") or response.reason_phrase)
    details = [
        str(e.get("message") or f"{e.get('field', '')} {e.get('code', '')}".strip())
        for e in data.get("errors") or []
        if isinstance(e, dict)
    ]
    return f"{message} ({'; '.join(details)})" if details else message


def classify(exc: BaseException, method: str) -> Failure:
    """Sort a failed attempt into a row of the retry table."""
    if isinstance(exc, RequestFailed):
        response = exc.response.raw_response
        status = response.status_code
        message = github_message(response)
        headers = response.headers
        if status in (403, 429):
            if "retry-after" in headers:
                return Failure("retry_after", status, message)
            if headers.get("x-ratelimit-remaining") == "0" and "x-ratelimit-reset" in headers:
                return Failure("primary", status, message)
            if "secondary rate limit" in message.lower() or status == 429:
                return Failure("secondary", status, message)
        if status >= 500:
            return Failure("server", status, message)
        return Failure("fatal", status, message)
    if isinstance(exc, RequestError):
        cause = exc.exc
        if isinstance(cause, _UNREACHABLE):
            return Failure("unreachable", None, f"{type(cause).__name__}: {cause}")
        # A POST that may have reached GitHub is not repeated: it could create a duplicate.
        if method != "POST" or isinstance(cause, _NOT_SENT):
            return Failure("network", None, f"{type(cause).__name__}: {cause}")
        return Failure("fatal", None, f"{type(cause).__name__}: {cause}")
    return Failure("fatal", None, str(exc))


class Backoff:
    """Wait times for one logical call; counts repeats per kind for exponential backoff."""

    def __init__(self) -> None:
        self._repeats: dict[str, int] = {}

    def delay(self, exc: BaseException, failure: Failure, now: datetime) -> float:
        """Seconds to wait before the next attempt."""
        n = self._repeats.get(failure.kind, 0)
        self._repeats[failure.kind] = n + 1
        headers = exc.response.headers if isinstance(exc, RequestFailed) else httpx.Headers()
        if failure.kind == "retry_after":
            try:
                return max(float(headers["retry-after"]), 0.0)
            except ValueError:
                return SECONDARY_BASE
        if failure.kind == "primary":
            reset = float(headers["x-ratelimit-reset"])
            return max(reset - now.timestamp(), RATE_LIMIT_FLOOR)
        if failure.kind == "secondary":
            return SECONDARY_BASE * 2.0**n
        return min(SERVER_BASE * 2.0**n, SERVER_CAP)


def request_of(exc: BaseException) -> httpx.Request | None:
    """The request of a failed attempt, when httpx recorded one."""
    for candidate in (exc, getattr(exc, "exc", None)):
        try:
            request = getattr(candidate, "request", None)
        except RuntimeError:  # httpx raises when an error carries no request
            request = None
        if isinstance(request, httpx.Request):
            return request
    return None


def request_host(exc: BaseException) -> str:
    """The host (and port, when not the default) a failed attempt was sent to."""
    request = request_of(exc)
    if request is None:
        return "?"
    url = request.url
    return f"{url.host}:{url.port}" if url.port else url.host


def request_path(exc: BaseException) -> str:
    """The request path of a failed attempt, for messages (tokens live in headers, not here)."""
    request = request_of(exc)
    return urlsplit(str(request.url)).path if request is not None else "?"
