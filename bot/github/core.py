"""The request path of the GitHub port: auth, write pacing, tenacity retries, errors."""

from __future__ import annotations

import copy
import functools
import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, nullcontext
from datetime import datetime
from typing import Any, NoReturn, Self

import githubkit
import httpx
import pydantic
from githubkit.exception import GitHubException
from githubkit.response import Response
from tenacity import RetryCallState, Retrying, retry_if_exception

from bot.clock import Clock, SystemClock
from bot.config import CONNECT_RETRY_SECONDS
from bot.errors import GitHubError
from bot.github.auth import AppAuth, TokenAuth
from bot.github.failures import AppTokenError, exception_of, invalid_request, to_error
from bot.github.names import split_repo
from bot.github.pacing import WRITE_METHODS, WritePacer
from bot.github.retry import (
    CONNECT_TIMEOUT,
    Backoff,
    classify,
    request_path,
)
from bot.outbound.text import TextGuard

log = logging.getLogger("agentbot.github")

Send = Callable[[dict[str, str]], Response[Any]]
"""One request through githubkit, given the headers (Authorization) to send."""

PER_PAGE = 100


class _Shared:
    """What every client derived from one root shares: the githubkit client and the pacers."""

    def __init__(self, api_url: str, clock: Clock) -> None:
        # githubkit's own retries and HTTP cache are off: tenacity below is the one retry
        # owner, and a cache would hide requests from the fake server and the call counter.
        # githubkit opens an httpx client per request; one SSL context built here spares each
        # request loading the CA bundle again (~70 ms of CPU).
        self.kit = githubkit.GitHub(
            base_url=api_url,
            ssl_verify=httpx.create_ssl_context(),
            user_agent="agentbot",
            timeout=httpx.Timeout(30.0, connect=CONNECT_TIMEOUT),
            auto_retry=False,
            http_cache=False,
        )
        self.clock = clock
        self._pacers: dict[int | None, WritePacer] = {}
        self._lock = threading.Lock()

    def pacer(self, installation_id: int | None) -> WritePacer:
        """The write pacer of one installation (or of the token, keyed None)."""
        with self._lock:
            if installation_id not in self._pacers:
                self._pacers[installation_id] = WritePacer(self.clock)
            return self._pacers[installation_id]


class RestCore:
    """Auth, retries and pacing under every call; the endpoint methods live in mixins."""

    def __init__(
        self,
        *,
        auth: TokenAuth | AppAuth,
        api_url: str = "https://api.github.com",
        clock: Clock | None = None,
        installation_id: int | None = None,
        max_retry_seconds: float = 600.0,
        connect_retry_seconds: float = CONNECT_RETRY_SECONDS,
    ) -> None:
        self.auth = auth
        self.connect_retry_seconds = connect_retry_seconds
        """How long GitHub unreachable (refused, DNS, TLS) is retried in all, per call."""
        self.api_url = api_url.rstrip("/")
        self.clock: Clock = clock or SystemClock()
        self.installation_id = installation_id
        self.max_retry_seconds = max_retry_seconds
        self._shared = _Shared(self.api_url, self.clock)
        self.pacer = self._shared.pacer(installation_id)
        self.calls = 0
        """REST requests sent by this client (retries and token fetches included)."""
        self._calls_lock = threading.Lock()
        self.outbound = TextGuard()
        """Cleans every write (bot.outbound.text): secrets, mentions, remote images."""

    def for_installation(self, installation_id: int) -> Self:
        """A client for one App installation, sharing the token cache and that installation's
        write pacer; with token auth, a sibling client with the same token."""
        child = copy.copy(self)
        child.installation_id = installation_id if isinstance(self.auth, AppAuth) else None
        child.pacer = self._shared.pacer(child.installation_id)
        child.calls = 0
        child._calls_lock = threading.Lock()
        return child

    # --- auth ------------------------------------------------------------------------------

    def token(self) -> str:
        """A token for git over HTTPS: the PAT, or the (cached) installation token."""
        if isinstance(self.auth, TokenAuth):
            return self.auth.token
        if self.installation_id is None:
            raise GitHubError("App auth has no installation: call for_installation(id) first")
        return self._installation_token(self.auth, self.installation_id)

    def _installation_token(self, auth: AppAuth, installation_id: int) -> str:
        cached = auth.cached_token(installation_id, self.clock.now())
        if cached is not None:
            return cached
        with auth.lock:
            cached = auth.cached_token(installation_id, self.clock.now())
            if cached is not None:
                return cached
            try:
                resp = self._call(
                    "POST",
                    lambda h: self._shared.kit.rest.apps.create_installation_access_token(
                        installation_id, headers=h
                    ),
                    as_app=True,
                )
            except GitHubError as exc:
                if exc.status is None:
                    raise  # unreachable: the installation and key are not in question
                raise AppTokenError(
                    f"no access token for App installation {installation_id} "
                    f"(is the App installed there, with this key?): {exc}",
                    status=exc.status,
                    method=exc.method,
                    url=exc.url,
                    retry_after=exc.retry_after,
                ) from exc
            data = resp.json()
            expires_at = datetime.fromisoformat(data["expires_at"])
            auth.store_token(installation_id, data["token"], expires_at)
            log.info("installation %s token obtained, expires %s", installation_id, expires_at)
            return str(data["token"])

    def _authorization(self, as_app: bool) -> str:
        if isinstance(self.auth, TokenAuth):
            return f"Bearer {self.auth.token}"
        if as_app or self.installation_id is None:
            return f"Bearer {self.auth.jwt(self.clock.now())}"
        return f"token {self._installation_token(self.auth, self.installation_id)}"

    def installation_for_repo(self, repo: str) -> int:
        """The id of the App installation that covers `repo` (App auth only)."""
        owner, name = split_repo(repo)
        resp = self._call(
            "GET",
            lambda h: self._shared.kit.rest.apps.get_repo_installation(owner, name, headers=h),
            as_app=True,
        )
        return int(resp.json()["id"])

    def whoami(self) -> str:
        """Who this client acts as (token, or App by slug): one cheap request, checking access."""
        if isinstance(self.auth, AppAuth):
            resp = self._call(
                "GET",
                lambda h: self._shared.kit.rest.apps.get_authenticated(headers=h),
                as_app=True,
            )
            return f"GitHub App {resp.json().get('slug', '?')} (id {self.auth.app_id})"
        # GET /rate_limit answers any token and costs none of its quota.
        resp = self._call("GET", lambda h: self._shared.kit.rest.rate_limit.get(headers=h))
        rate = resp.json().get("rate") or {}
        left = f"{rate.get('remaining', '?')}/{rate.get('limit', '?')}"
        return f"token ({left} requests left this hour)"

    # --- the request path: auth -> pacing -> send, under tenacity ---------------------------

    def _send_once(self, method: str, send: Send, as_app: bool, checked: bool) -> Response[Any]:
        if method in WRITE_METHODS and not as_app and not checked:
            # Every write goes through _on_repo, which cleans its fields: none may skip it.
            raise GitHubError(f"GitHub {method}: not sent, it skipped the outbound check")
        # The token is fetched before the write slot: the fetch is itself a request.
        headers = {"Authorization": self._authorization(as_app)}
        paced = method in WRITE_METHODS and not as_app
        slot: AbstractContextManager[None] = self.pacer.slot() if paced else nullcontext()
        with slot:
            with self._calls_lock:
                self.calls += 1
            return send(headers)

    def _call(
        self, method: str, send: Send, *, as_app: bool = False, checked: bool = False
    ) -> Response[Any]:
        """Send one request, retrying 5xx, network errors and rate limits within the budget."""
        backoff = Backoff()
        started = self.clock.monotonic()

        def wait(state: RetryCallState) -> float:
            exc = exception_of(state)
            return backoff.delay(exc, classify(exc, method), self.clock.now())

        def stop(state: RetryCallState) -> bool:
            if classify(exception_of(state), method).kind == "unreachable":
                elapsed = self.clock.monotonic() - started
                bound = min(self.connect_retry_seconds, self.max_retry_seconds)
                return elapsed + state.upcoming_sleep > bound
            return state.idle_for + state.upcoming_sleep > self.max_retry_seconds

        def before_sleep(state: RetryCallState) -> None:
            exc = exception_of(state)
            failure = classify(exc, method)
            log.warning(
                "GitHub %s %s failed (%s %s): retry %d in %.0f s",
                method,
                request_path(exc),
                failure.status or failure.kind,
                failure.message,
                state.attempt_number,
                state.upcoming_sleep,
            )

        def give_up(state: RetryCallState) -> NoReturn:
            exc = exception_of(state)
            raise to_error(exc, method, retry_after=state.upcoming_sleep) from exc

        retrying = Retrying(
            sleep=self.clock.sleep,
            retry=retry_if_exception(lambda e: classify(e, method).kind != "fatal"),
            wait=wait,
            stop=stop,
            before_sleep=before_sleep,
            retry_error_callback=give_up,
        )
        try:
            for attempt in retrying:
                with attempt:
                    return self._send_once(method, send, as_app, checked)
        except GitHubException as exc:
            raise to_error(exc, method) from exc
        except pydantic.ValidationError as exc:
            raise invalid_request(exc, method) from exc
        raise AssertionError("tenacity returned without an outcome")  # pragma: no cover

    def _on_repo(
        self, method: str, repo: str, endpoint: Callable[..., Response[Any]], *args: Any, **kw: Any
    ) -> Response[Any]:
        """`endpoint(owner, name, *args, **kw)` through `_call`: one REST call on `repo`.

        A write's fields are cleaned first (`self.outbound`): the one door every write takes.
        """
        owner, name = split_repo(repo)
        write = method in WRITE_METHODS
        if write:
            kw = self.outbound.clean_fields(kw)
        return self._call(
            method, lambda h: endpoint(owner, name, *args, headers=h, **kw), checked=write
        )

    def _pages_on(
        self, repo: str, endpoint: Callable[..., Response[Any]], *args: Any, **kw: Any
    ) -> Iterator[Any]:
        """Every item of a paginated list endpoint on `repo`."""
        owner, name = split_repo(repo)
        return self._pages(
            lambda page, h: endpoint(
                owner, name, *args, per_page=PER_PAGE, page=page, headers=h, **kw
            )
        )

    def _pages(self, send: Callable[[int, dict[str, str]], Response[Any]]) -> Iterator[Any]:
        """Every item of a paginated list, following `Link: rel="next"`."""
        page = 1
        while True:
            resp = self._call("GET", functools.partial(send, page))
            yield from resp.json()
            if 'rel="next"' not in resp.headers.get("link", ""):
                return
            page += 1
