"""GitHub failures as errors a person can act on."""

from __future__ import annotations

import pydantic
from tenacity import RetryCallState

from bot.errors import GitHubError
from bot.github.retry import classify, request_host, request_of, request_path


class AppTokenError(GitHubError):
    """The App could not get an installation token (not installed, wrong key, suspended)."""


def is_missing(exc: GitHubError, *statuses: int) -> bool:
    """The call's own resource is absent (not the token request in front of it)."""
    return exc.status in statuses and not isinstance(exc, AppTokenError)


def to_error(exc: BaseException, method: str, *, retry_after: float | None = None) -> GitHubError:
    """The GitHubError a person reads for a failed request: what, where, and what to do."""
    failure = classify(exc, method)
    request = request_of(exc)
    url = str(request.url) if request is not None else ""
    if failure.kind == "unreachable":
        return GitHubError(
            f"cannot reach {request_host(exc)}: {failure.message} (GitHub {method}"
            f" {request_path(exc)}); check the network, proxy and GITHUB_API_URL",
            method=method,
            url=url,
            retry_after=retry_after,
        )
    if retry_after is not None:
        waited = f" (gave up retrying; try again in {retry_after:.0f} s)"
    else:
        waited = ""
    what = f"{failure.status} {failure.message}" if failure.status else failure.message
    return GitHubError(
        f"GitHub {method} {request_path(exc)}: {what}{waited}",
        status=failure.status,
        method=method,
        url=url,
        retry_after=retry_after,
    )


def invalid_request(exc: pydantic.ValidationError, method: str) -> GitHubError:
    """githubkit checked a request body against the schema and refused it before sending."""
    # Union bodies report one error per branch; skip "should be <UNSET>" noise.
    first = next((e for e in exc.errors() if "UNSET" not in e["msg"]), exc.errors()[0])
    where = ".".join(str(part) for part in first["loc"][1:]) or "body"
    return GitHubError(f"GitHub {method}: request not sent, {where}: {first['msg']}", method=method)


def exception_of(state: RetryCallState) -> BaseException:
    """The exception of a failed attempt (tenacity retries only on exceptions here)."""
    outcome = state.outcome
    exc = outcome.exception() if outcome is not None else None
    if exc is None:  # pragma: no cover - tenacity only retries on exceptions here
        raise AssertionError("retry without an exception")
    return exc
