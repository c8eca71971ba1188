"""The GitHub port: the REST calls agentbot makes, on githubkit, with retries and write pacing."""

from __future__ import annotations

import base64
import copy
import functools
import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, nullcontext
from datetime import datetime
from typing import Any, Literal, NoReturn, cast
from urllib.parse import quote, urlsplit

import githubkit
import httpx
from githubkit.exception import GitHubException
from githubkit.response import Response
from githubkit.utils import UNSET
from tenacity import RetryCallState, Retrying, retry_if_exception

from bot.clock import Clock, SystemClock
from bot.errors import GitHubError
from bot.github.auth import AppAuth, TokenAuth
from bot.github.models import Comment, Issue, PullRequest, Repo
from bot.github.pacing import WRITE_METHODS, WritePacer
from bot.github.retry import Backoff, classify

log = logging.getLogger("agentbot.github")

Send = Callable[[dict[str, str]], Response[Any]]
"""One request through githubkit, given the headers (Authorization) to send."""

_ROLES = ("none", "read", "triage", "write", "maintain", "admin")
_STATES = ("open", "closed", "all")
_PER_PAGE = 100


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
            timeout=30.0,
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


class AppTokenError(GitHubError):
    """The App could not get an installation token (not installed, wrong key, suspended)."""


def _missing(exc: GitHubError, *statuses: int) -> bool:
    """The call's own resource is absent (not the token request in front of it)."""
    return exc.status in statuses and not isinstance(exc, AppTokenError)


def _split(repo: str) -> tuple[str, str]:
    owner, _, name = repo.partition("/")
    if not owner or not name or "/" in name:
        raise GitHubError(f"not an owner/name repository: {repo!r}")
    return owner, name


def _state(state: str) -> Literal["open", "closed", "all"]:
    if state not in _STATES:
        raise GitHubError(f"state must be one of {', '.join(_STATES)}, not {state!r}")
    return cast(Literal["open", "closed", "all"], state)


class GitHub:
    """Synchronous GitHub REST client: token or App auth, retries, paced writes."""

    def __init__(
        self,
        *,
        auth: TokenAuth | AppAuth,
        api_url: str = "https://api.github.com",
        clock: Clock | None = None,
        installation_id: int | None = None,
        max_retry_seconds: float = 600.0,
    ) -> None:
        self.auth = auth
        self.api_url = api_url.rstrip("/")
        self.clock: Clock = clock or SystemClock()
        self.installation_id = installation_id
        self.max_retry_seconds = max_retry_seconds
        self._shared = _Shared(self.api_url, self.clock)
        self.pacer = self._shared.pacer(installation_id)
        self.calls = 0
        """REST requests sent by this client (retries and token fetches included)."""
        self._calls_lock = threading.Lock()

    def for_installation(self, installation_id: int) -> GitHub:
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
        owner, name = _split(repo)
        resp = self._call(
            "GET",
            lambda h: self._shared.kit.rest.apps.get_repo_installation(owner, name, headers=h),
            as_app=True,
        )
        return int(resp.json()["id"])

    # --- the request path: auth -> pacing -> send, under tenacity ---------------------------

    def _send_once(self, method: str, send: Send, as_app: bool) -> Response[Any]:
        # The token is fetched before the write slot: the fetch is itself a request.
        headers = {"Authorization": self._authorization(as_app)}
        paced = method in WRITE_METHODS and not as_app
        slot: AbstractContextManager[None] = self.pacer.slot() if paced else nullcontext()
        with slot:
            with self._calls_lock:
                self.calls += 1
            return send(headers)

    def _call(self, method: str, send: Send, *, as_app: bool = False) -> Response[Any]:
        """Send one request, retrying 5xx, network errors and rate limits within the budget."""
        backoff = Backoff()

        def wait(state: RetryCallState) -> float:
            exc = _exception(state)
            return backoff.delay(exc, classify(exc, method), self.clock.now())

        def stop(state: RetryCallState) -> bool:
            return state.idle_for + state.upcoming_sleep > self.max_retry_seconds

        def before_sleep(state: RetryCallState) -> None:
            exc = _exception(state)
            failure = classify(exc, method)
            log.warning(
                "GitHub %s %s failed (%s %s): retry %d in %.0f s",
                method,
                _path(exc),
                failure.status or failure.kind,
                failure.message,
                state.attempt_number,
                state.upcoming_sleep,
            )

        def give_up(state: RetryCallState) -> NoReturn:
            exc = _exception(state)
            raise self._error(exc, method, retry_after=state.upcoming_sleep) from exc

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
                    return self._send_once(method, send, as_app)
        except GitHubException as exc:
            raise self._error(exc, method) from exc
        raise AssertionError("tenacity returned without an outcome")  # pragma: no cover

    def _error(
        self, exc: BaseException, method: str, *, retry_after: float | None = None
    ) -> GitHubError:
        failure = classify(exc, method)
        request = _request_of(exc)
        url = str(request.url) if request is not None else ""
        if retry_after is not None:
            waited = f" (gave up retrying; try again in {retry_after:.0f} s)"
        else:
            waited = ""
        what = f"{failure.status} {failure.message}" if failure.status else failure.message
        return GitHubError(
            f"GitHub {method} {_path(exc)}: {what}{waited}",
            status=failure.status,
            method=method,
            url=url,
            retry_after=retry_after,
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

    # --- issues and comments ---------------------------------------------------------------

    def get_issue(self, repo: str, number: int) -> Issue:
        """One issue (pull requests too); a missing one is `GitHubError("Issue #N not found")`."""
        owner, name = _split(repo)
        try:
            resp = self._call(
                "GET", lambda h: self._shared.kit.rest.issues.get(owner, name, number, headers=h)
            )
        except GitHubError as exc:
            if _missing(exc, 404, 410):
                raise GitHubError(
                    f"Issue #{number} not found",
                    status=exc.status,
                    method=exc.method,
                    url=exc.url,
                    issue_number=number,
                ) from exc
            exc.issue_number = number
            raise
        return Issue.from_api(resp.json())

    def list_issue_comments(self, repo: str, number: int) -> list[Comment]:
        """All comments of an issue or pull request, oldest first."""
        owner, name = _split(repo)
        items = self._pages(
            lambda page, h: self._shared.kit.rest.issues.list_comments(
                owner, name, number, per_page=_PER_PAGE, page=page, headers=h
            )
        )
        return [Comment.from_api(c) for c in items]

    def create_comment(self, repo: str, number: int, body: str) -> Comment:
        """Post a comment on an issue or pull request."""
        owner, name = _split(repo)
        resp = self._call(
            "POST",
            lambda h: self._shared.kit.rest.issues.create_comment(
                owner, name, number, body=body, headers=h
            ),
        )
        return Comment.from_api(resp.json())

    def update_comment(self, repo: str, comment_id: int, body: str) -> Comment:
        """Replace a comment's body (the progress comment)."""
        owner, name = _split(repo)
        resp = self._call(
            "PATCH",
            lambda h: self._shared.kit.rest.issues.update_comment(
                owner, name, comment_id, body=body, headers=h
            ),
        )
        return Comment.from_api(resp.json())

    def add_labels(self, repo: str, number: int, labels: list[str]) -> None:
        """Add labels (GitHub creates missing ones)."""
        if not labels:
            return
        owner, name = _split(repo)
        self._call(
            "POST",
            lambda h: self._shared.kit.rest.issues.add_labels(
                owner, name, number, labels=list(labels), headers=h
            ),
        )

    def remove_label(self, repo: str, number: int, label: str) -> None:
        """Remove a label; a label that is not on the issue is fine."""
        owner, name = _split(repo)
        try:
            self._call(
                "DELETE",
                lambda h: self._shared.kit.rest.issues.remove_label(
                    owner, name, number, quote(label, safe=""), headers=h
                ),
            )
        except GitHubError as exc:
            if not _missing(exc, 404):
                raise

    def list_issues(
        self, repo: str, *, labels: list[str] | None = None, state: str = "open"
    ) -> list[Issue]:
        """Issues (not pull requests) having all `labels`, every page."""
        owner, name = _split(repo)
        wanted = _state(state)
        items = self._pages(
            lambda page, h: self._shared.kit.rest.issues.list_for_repo(
                owner,
                name,
                state=wanted,
                labels=",".join(labels) if labels else UNSET,
                per_page=_PER_PAGE,
                page=page,
                headers=h,
            )
        )
        issues = (Issue.from_api(i) for i in items)
        return [i for i in issues if not i.is_pull_request]

    # --- repositories ----------------------------------------------------------------------

    def permission(self, repo: str, username: str) -> str:
        """The user's role: none, read, triage, write, maintain or admin (unknown user: none)."""
        owner, name = _split(repo)
        try:
            resp = self._call(
                "GET",
                lambda h: self._shared.kit.rest.repos.get_collaborator_permission_level(
                    owner, name, username, headers=h
                ),
            )
        except GitHubError as exc:
            if _missing(exc, 404):
                return "none"
            raise
        data = resp.json()
        # role_name is finer (triage, maintain) but may be a custom role's name; the legacy
        # `permission` field is always one of admin/write/read/none.
        role = data.get("role_name")
        return str(role) if role in _ROLES else str(data.get("permission") or "none")

    def get_repo(self, repo: str) -> Repo:
        """Repository metadata."""
        owner, name = _split(repo)
        resp = self._call("GET", lambda h: self._shared.kit.rest.repos.get(owner, name, headers=h))
        return Repo.from_api(resp.json())

    def default_branch(self, repo: str) -> str:
        """The repository's default branch."""
        return self.get_repo(repo).default_branch

    def get_file(self, repo: str, path: str, ref: str | None = None) -> str | None:
        """A file's text at `ref` (default branch when None); None if absent or not a file."""
        owner, name = _split(repo)
        quoted = quote(path.lstrip("/"), safe="/")

        def fetch(h: dict[str, str]) -> Response[Any]:
            return self._shared.kit.rest.repos.get_content(
                owner, name, quoted, ref=ref if ref is not None else UNSET, headers=h
            )

        try:
            data = self._call("GET", fetch).json()
        except GitHubError as exc:
            if _missing(exc, 404):
                return None
            raise
        if not isinstance(data, dict) or data.get("type") != "file":
            return None
        if data.get("encoding") == "base64":
            return base64.b64decode(data.get("content") or "").decode("utf-8", "replace")
        # Files over 1 MB come without content; the raw media type returns them whole.
        raw = self._call("GET", lambda h: fetch({**h, "Accept": "application/vnd.github.raw+json"}))
        return raw.text

    # --- pull requests ---------------------------------------------------------------------

    def list_pulls(
        self, repo: str, *, head: str | None = None, state: str = "open"
    ) -> list[PullRequest]:
        """Pull requests, optionally only those from `head` ("owner:branch"), every page."""
        owner, name = _split(repo)
        wanted = _state(state)
        items = self._pages(
            lambda page, h: self._shared.kit.rest.pulls.list(
                owner,
                name,
                state=wanted,
                head=head if head else UNSET,
                per_page=_PER_PAGE,
                page=page,
                headers=h,
            )
        )
        return [PullRequest.from_api(p) for p in items]

    def get_pull(self, repo: str, number: int) -> PullRequest:
        """One pull request."""
        owner, name = _split(repo)
        try:
            resp = self._call(
                "GET", lambda h: self._shared.kit.rest.pulls.get(owner, name, number, headers=h)
            )
        except GitHubError as exc:
            if _missing(exc, 404):
                raise GitHubError(
                    f"Pull request #{number} not found",
                    status=404,
                    method=exc.method,
                    url=exc.url,
                    issue_number=number,
                ) from exc
            raise
        return PullRequest.from_api(resp.json())

    def create_pull(
        self, repo: str, *, title: str, head: str, base: str, body: str, draft: bool = False
    ) -> PullRequest:
        """Open a pull request from `head` (a branch, or "owner:branch" from a fork)."""
        owner, name = _split(repo)
        resp = self._call(
            "POST",
            lambda h: self._shared.kit.rest.pulls.create(
                owner, name, title=title, head=head, base=base, body=body, draft=draft, headers=h
            ),
        )
        return PullRequest.from_api(resp.json())

    def update_pull(
        self, repo: str, number: int, *, title: str | None = None, body: str | None = None
    ) -> PullRequest:
        """Change a pull request's title and/or body."""
        owner, name = _split(repo)
        resp = self._call(
            "PATCH",
            lambda h: self._shared.kit.rest.pulls.update(
                owner,
                name,
                number,
                title=title if title is not None else UNSET,
                body=body if body is not None else UNSET,
                headers=h,
            ),
        )
        return PullRequest.from_api(resp.json())

    def request_reviewers(self, repo: str, number: int, reviewers: list[str]) -> None:
        """Ask users to review a pull request."""
        if not reviewers:
            return
        owner, name = _split(repo)
        self._call(
            "POST",
            lambda h: self._shared.kit.rest.pulls.request_reviewers(
                owner, name, number, reviewers=list(reviewers), headers=h
            ),
        )

    # --- actions and checks ----------------------------------------------------------------

    def dispatch_workflow(
        self, repo: str, workflow: str, *, ref: str, inputs: dict[str, str]
    ) -> None:
        """Start a `workflow_dispatch` run of `workflow` (file name or id) on `ref`."""
        owner, name = _split(repo)
        self._call(
            "POST",
            lambda h: self._shared.kit.rest.actions.create_workflow_dispatch(
                owner, name, workflow, ref=ref, inputs=dict(inputs), headers=h
            ),
        )

    def create_check_run(
        self, repo: str, *, name: str, head_sha: str, status: str = "in_progress"
    ) -> int:
        """Create a check run on a commit; returns its id."""
        owner, repo_name = _split(repo)
        resp = self._call(
            "POST",
            lambda h: self._shared.kit.rest.checks.create(
                owner,
                repo_name,
                data=cast(Any, {"name": name, "head_sha": head_sha, "status": status}),
                headers=h,
            ),
        )
        return int(resp.json()["id"])

    def update_check_run(
        self,
        repo: str,
        check_run_id: int,
        *,
        status: str,
        conclusion: str | None = None,
        title: str = "",
        summary: str = "",
    ) -> None:
        """Move a check run on (and conclude it when `status` is completed)."""
        owner, name = _split(repo)
        body: dict[str, Any] = {"status": status}
        if conclusion is not None:
            body["conclusion"] = conclusion
        if title or summary:
            body["output"] = {"title": title or summary[:60], "summary": summary or title}
        self._call(
            "PATCH",
            lambda h: self._shared.kit.rest.checks.update(
                owner, name, check_run_id, data=cast(Any, body), headers=h
            ),
        )


def _exception(state: RetryCallState) -> BaseException:
    outcome = state.outcome
    exc = outcome.exception() if outcome is not None else None
    if exc is None:  # pragma: no cover - tenacity only retries on exceptions here
        raise AssertionError("retry without an exception")
    return exc


def _request_of(exc: BaseException) -> httpx.Request | None:
    """The request of a failed attempt, when httpx recorded one."""
    for candidate in (exc, getattr(exc, "exc", None)):
        try:
            request = getattr(candidate, "request", None)
        except RuntimeError:  # httpx raises when an error carries no request
            request = None
        if isinstance(request, httpx.Request):
            return request
    return None


def _path(exc: BaseException) -> str:
    """The request path of a failed attempt, for messages (tokens live in headers, not here)."""
    request = _request_of(exc)
    return urlsplit(str(request.url)).path if request is not None else "?"
