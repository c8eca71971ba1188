"""The fake GitHub's data and its seed/inspect helpers (no HTTP here)."""

from __future__ import annotations

import hashlib
import itertools
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from bot.clock import Clock
from tests.fakes.github.state import (
    ROLES,
    CheckRunState,
    CommentState,
    Dispatch,
    IssueState,
    Label,
    PullInfo,
    RepoState,
    User,
    iso,
)


@dataclass
class AppState:
    """A registered GitHub App: the fake verifies its JWTs with `public_key_pem`."""

    id: int
    slug: str
    public_key_pem: str
    owner: str


@dataclass
class InstallationState:
    """An installation of an App on an account; `repos` None means all of them."""

    id: int
    app_id: int
    account: str
    repos: list[str] | None = None


@dataclass
class IssuedToken:
    """An installation access token the fake handed out."""

    token: str
    installation_id: int
    expires_at: datetime


@dataclass
class _Ids:
    """Id sequences per kind, in GitHub-like ranges."""

    users: itertools.count[int] = field(default_factory=lambda: itertools.count(1001))
    repos: itertools.count[int] = field(default_factory=lambda: itertools.count(500_001))
    issues: itertools.count[int] = field(default_factory=lambda: itertools.count(2_000_001))
    pulls: itertools.count[int] = field(default_factory=lambda: itertools.count(1_800_001))
    comments: itertools.count[int] = field(default_factory=lambda: itertools.count(3_000_001))
    labels: itertools.count[int] = field(default_factory=lambda: itertools.count(6_000_001))
    checks: itertools.count[int] = field(default_factory=lambda: itertools.count(9_000_001))


class Store:
    """Repos, issues, pulls, comments, permissions, apps: seeded by tests, served over REST."""

    def __init__(
        self,
        *,
        clock: Clock | None = None,
        actor: str = "github-actions[bot]",
        accept_any_token: bool = True,
        web_url: str = "https://github.com",
    ) -> None:
        self.clock = clock
        self.actor = actor
        """Who a token not registered with `add_token` acts as."""
        self.accept_any_token = accept_any_token
        self.web_url = web_url
        self.lock = threading.RLock()
        self.users: dict[str, User] = {}
        self.repos: dict[str, RepoState] = {}
        self.comments: dict[int, CommentState] = {}
        self.check_runs: dict[int, CheckRunState] = {}
        self.review_comments: dict[int, Any] = {}
        """Inline review comments (`routes_reviews.ReviewCommentState`) by id."""
        self.reviews: list[Any] = []
        """Submitted reviews (`routes_reviews.ReviewState`), oldest first."""
        self.resolved_threads: set[int] = set()
        """Review threads resolved through GraphQL, by their first comment's id."""
        self.minimized_comments: set[int] = set()
        """Review comments a maintainer hid (GraphQL `isMinimized`), by id."""
        self.graphql_enabled = True
        """False: `/graphql` answers 404 (an older GitHub Enterprise Server)."""
        self.graphql_calls: list[dict[str, Any]] = []
        self.dispatches: list[Dispatch] = []
        self.apps: dict[int, AppState] = {}
        self.installations: dict[int, InstallationState] = {}
        self.issued_tokens: list[IssuedToken] = []
        self.token_logins: dict[str, str] = {}
        self.jwt_claims: list[dict[str, object]] = []
        """Claims of every App JWT the fake accepted, in order."""
        self._ids = _Ids()

    # --- time ------------------------------------------------------------------------------

    def now(self) -> datetime:
        """The injected clock's wall time, else the real one."""
        return self.clock.now() if self.clock is not None else datetime.now(UTC)

    def timestamp(self) -> float:
        """Monotonic seconds for call records."""
        return self.clock.monotonic() if self.clock is not None else time.monotonic()

    # --- seeding ---------------------------------------------------------------------------

    def add_user(self, login: str, *, type: str | None = None) -> User:
        """An account (created on first mention anyway; `[bot]` logins are Bots)."""
        with self.lock:
            if login not in self.users:
                kind = type or ("Bot" if login.endswith("[bot]") else "User")
                self.users[login] = User(login, next(self._ids.users), kind)
            elif type is not None:
                self.users[login].type = type
            return self.users[login]

    def add_repo(
        self,
        full_name: str,
        *,
        default_branch: str = "main",
        clone_url: str = "",
        private: bool = False,
        fork: bool = False,
        description: str | None = None,
        files: dict[str, str] | None = None,
    ) -> RepoState:
        """A repository; `clone_url="file:///path/bare.git"` makes branches and files real."""
        owner, _, name = full_name.partition("/")
        if not owner or not name:
            raise ValueError(f"not owner/name: {full_name!r}")
        with self.lock:
            self.add_user(owner)
            r = self.repos.get(full_name)
            if r is None:
                r = RepoState(owner, name, next(self._ids.repos), created_at=iso(self.now()))
                self.repos[full_name] = r
            r.default_branch, r.clone_url, r.private, r.fork = (
                default_branch,
                clone_url,
                private,
                fork,
            )
            r.description = description
            for path, text in (files or {}).items():
                r.files[(default_branch, path.strip("/"))] = text
            return r

    def repo(self, full_name: str) -> RepoState:
        """A seeded repository (created with defaults if new)."""
        with self.lock:
            return self.repos.get(full_name) or self.add_repo(full_name)

    def set_file(self, repo: str, path: str, text: str, *, ref: str | None = None) -> None:
        """Serve `text` for `path` at `ref` (default branch) from the contents API."""
        with self.lock:
            r = self.repo(repo)
            r.files[(ref or r.default_branch, path.strip("/"))] = text

    def set_branch(self, repo: str, branch: str, sha: str | None = None) -> str:
        """Make a branch exist at `sha` (a stable fake sha if omitted); returns the sha."""
        with self.lock:
            sha = sha or hashlib.sha1(f"{repo}:{branch}:{len(self.repos)}".encode()).hexdigest()
            self.repo(repo).branches[branch] = sha
            return sha

    def add_label(
        self, repo: str, name: str, *, color: str = "ededed", description: str | None = None
    ) -> Label:
        """A repository label (adding one to an issue creates it too, as GitHub does)."""
        with self.lock:
            r = self.repo(repo)
            if name not in r.labels:
                r.labels[name] = Label(name, next(self._ids.labels), color, description)
            return r.labels[name]

    def add_issue(
        self,
        repo: str,
        *,
        title: str = "Something is broken",
        body: str = "",
        user: str = "octocat",
        labels: Iterable[str] = (),
        state: str = "open",
        locked: bool = False,
        assignees: Iterable[str] = (),
        number: int | None = None,
    ) -> IssueState:
        """An issue (the repository and users are created if new); `.number` is its number."""
        with self.lock:
            r = self.repo(repo)
            self.add_user(user)
            for login in assignees:
                self.add_user(login)
            for name in labels:
                self.add_label(repo, name)
            stamp = iso(self.now())
            issue = IssueState(
                number=number if number is not None else r.next_number(),
                id=next(self._ids.issues),
                title=title,
                body=body,
                user=user,
                created_at=stamp,
                updated_at=stamp,
                state=state,
                locked=locked,
                labels=list(dict.fromkeys(labels)),
                assignees=list(assignees),
                closed_at=stamp if state == "closed" else None,
            )
            r.issues[issue.number] = issue
            return issue

    def add_comment(
        self, repo: str, number: int, body: str, *, user: str = "octocat"
    ) -> CommentState:
        """A comment on issue or pull request `number`; `.id` is its id."""
        with self.lock:
            self.issue(repo, number)
            self.add_user(user)
            stamp = iso(self.now())
            c = CommentState(next(self._ids.comments), repo, number, body, user, stamp, stamp)
            self.comments[c.id] = c
            return c

    def set_permission(self, repo: str, login: str, role: str) -> None:
        """The user's role on the repository: none, read, triage, write, maintain or admin."""
        if role not in ROLES:
            raise ValueError(f"role must be one of {ROLES}")
        with self.lock:
            self.add_user(login)
            self.repo(repo).permissions[login] = role

    def role(self, repo: str, login: str) -> str:
        """A user's role: seeded, else admin for the owner, read on public repos, else none."""
        r = self.repo(repo)
        if login in r.permissions:
            return r.permissions[login]
        if login == r.owner:
            return "admin"
        return "none" if r.private else "read"

    def add_pull(
        self,
        repo: str,
        *,
        head: str,
        base: str | None = None,
        title: str = "A change",
        body: str = "",
        user: str = "octocat",
        state: str = "open",
        draft: bool = False,
        head_sha: str | None = None,
        head_repo: str | None = None,
        labels: Iterable[str] = (),
        maintainer_can_modify: bool = False,
    ) -> IssueState:
        """A pull request from branch `head` (of `head_repo`, default this repo; "" = deleted
        fork) into `base` (default branch); `.number` is its number. A fork's pull request
        lets maintainers push to it with `maintainer_can_modify`."""
        with self.lock:
            r = self.repo(repo)
            issue = self.add_issue(repo, title=title, body=body, user=user, labels=labels)
            issue.state = state
            source = head_repo if head_repo is not None else repo
            sha = head_sha or (self.repo(source).branch_sha(head) if source else None)
            base_ref = base or r.default_branch
            issue.pull = PullInfo(
                head_ref=head,
                head_sha=sha or hashlib.sha1(f"{source}:{head}".encode()).hexdigest(),
                head_repo=source,
                base_ref=base_ref,
                base_sha=r.branch_sha(base_ref) or "0" * 40,
                id=next(self._ids.pulls),
                draft=draft,
                maintainer_can_modify=maintainer_can_modify,
            )
            return issue

    def add_app(
        self, app_id: int, public_key_pem: str, *, slug: str = "agentbot", owner: str = "agentbot"
    ) -> AppState:
        """Register a GitHub App; its JWTs are verified with this public key."""
        with self.lock:
            self.add_user(owner, type="Organization")
            self.add_user(f"{slug}[bot]", type="Bot")
            self.apps[app_id] = AppState(app_id, slug, public_key_pem, owner)
            return self.apps[app_id]

    def add_installation(
        self, installation_id: int, *, app_id: int, account: str, repos: list[str] | None = None
    ) -> InstallationState:
        """Install an App on `account` (all its repositories, or only `repos`)."""
        with self.lock:
            self.add_user(account)
            inst = InstallationState(installation_id, app_id, account, repos)
            self.installations[installation_id] = inst
            return inst

    def add_token(self, token: str, login: str) -> None:
        """Requests with this token act as `login`."""
        with self.lock:
            self.add_user(login)
            self.token_logins[token] = login

    # --- inspection ------------------------------------------------------------------------

    def issue(self, repo: str, number: int) -> IssueState:
        """An issue or pull request by number (KeyError if absent)."""
        with self.lock:
            return self.repos[repo].issues[number]

    def comments_on(self, repo: str, number: int) -> list[CommentState]:
        """Comments of one issue or pull request, oldest first."""
        with self.lock:
            return sorted(
                (c for c in self.comments.values() if c.repo == repo and c.issue_number == number),
                key=lambda c: c.id,
            )

    def pulls(self, repo: str) -> list[IssueState]:
        """Pull requests of a repository, by number."""
        with self.lock:
            r = self.repos[repo]
            return [i for _, i in sorted(r.issues.items()) if i.pull is not None]

    def labels_on(self, repo: str, number: int) -> list[str]:
        """Label names on an issue or pull request."""
        return list(self.issue(repo, number).labels)

    def next_id(self, kind: str) -> int:
        """The next id of a kind (comments, pulls, checks...)."""
        seq: itertools.count[int] = getattr(self._ids, kind)
        return next(seq)
