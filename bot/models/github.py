"""The few GitHub objects agentbot reads, parsed once from REST payloads (vocabulary: no I/O)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Required, TypedDict

from pydantic import BaseModel, ConfigDict


class _Model(BaseModel):
    """Immutable; built from API payloads by `from_api`, or directly in tests."""

    model_config = ConfigDict(frozen=True, extra="forbid")


def _when(value: Any) -> datetime | None:
    """An API timestamp (`2026-01-01T00:00:00Z`), or None when absent or unreadable."""
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def _login(user: Any) -> str:
    """`user.login`, or "" for a deleted account (GitHub sends `null`)."""
    return str(user["login"]) if isinstance(user, dict) and user.get("login") else ""


class Issue(_Model):
    """An issue (or a pull request seen through the issues API)."""

    number: int
    title: str
    body: str = ""
    state: str = "open"
    locked: bool = False
    labels: list[str] = []
    user: str = ""
    assignees: list[str] = []
    html_url: str = ""
    is_pull_request: bool = False
    comments: int = 0
    """How many comments it has (lets a workflow skip listing none)."""

    @classmethod
    def from_api(cls, data: dict[str, Any]) -> Issue:
        """Parse an `issue` payload (REST response or webhook)."""
        return cls(
            number=data["number"],
            title=data.get("title") or "",
            body=data.get("body") or "",
            state=data.get("state") or "open",
            locked=bool(data.get("locked")),
            # Labels come as objects from the API, as plain strings in some webhook shapes.
            labels=[
                lb["name"] if isinstance(lb, dict) else str(lb) for lb in data.get("labels") or []
            ],
            user=_login(data.get("user")),
            assignees=[_login(a) for a in data.get("assignees") or [] if _login(a)],
            html_url=data.get("html_url") or "",
            is_pull_request="pull_request" in data and data["pull_request"] is not None,
            comments=int(data.get("comments") or 0),
        )


class Comment(_Model):
    """An issue or pull request comment."""

    id: int
    body: str = ""
    user: str = ""
    html_url: str = ""
    author_association: str = ""
    """The author's relation to the repository: OWNER, MEMBER, COLLABORATOR, CONTRIBUTOR, NONE..."""
    minimized: bool = False
    """Hidden by a maintainer (spam, off-topic, outdated): never shown to an agent."""

    @classmethod
    def from_api(cls, data: dict[str, Any]) -> Comment:
        """Parse an `issue-comment` payload (REST, or GraphQL's `isMinimized`)."""
        return cls(
            id=data["id"],
            body=data.get("body") or "",
            user=_login(data.get("user")),
            html_url=data.get("html_url") or "",
            author_association=str(data.get("author_association") or ""),
            minimized=bool(data.get("minimized") or data.get("isMinimized")),
        )


class PullRequest(_Model):
    """A pull request."""

    number: int
    html_url: str = ""
    title: str = ""
    body: str = ""
    state: str = "open"
    draft: bool = False
    head_ref: str = ""
    head_sha: str = ""
    head_repo: str = ""
    """`owner/name` of the head repository; "" when the fork was deleted."""
    base_ref: str = ""
    user: str = ""
    merged: bool = False
    maintainer_can_modify: bool = False
    """The author lets maintainers push to the head branch (a fork's pull request)."""
    created_at: datetime | None = None
    closed_at: datetime | None = None
    merged_at: datetime | None = None

    def from_fork(self, repo: str) -> bool:
        """True when the head branch lives in another repository than `repo` (or was deleted)."""
        return self.head_repo != repo

    @classmethod
    def from_api(cls, data: dict[str, Any]) -> PullRequest:
        """Parse a `pull-request` or `pull-request-simple` payload."""
        head = data.get("head") or {}
        head_repo = head.get("repo") or {}
        return cls(
            number=data["number"],
            html_url=data.get("html_url") or "",
            title=data.get("title") or "",
            body=data.get("body") or "",
            state=data.get("state") or "open",
            draft=bool(data.get("draft")),
            head_ref=head.get("ref") or "",
            head_sha=head.get("sha") or "",
            head_repo=head_repo.get("full_name") or "",
            base_ref=(data.get("base") or {}).get("ref") or "",
            user=_login(data.get("user")),
            merged=bool(data.get("merged") or data.get("merged_at")),
            maintainer_can_modify=bool(data.get("maintainer_can_modify")),
            created_at=_when(data.get("created_at")),
            closed_at=_when(data.get("closed_at")),
            merged_at=_when(data.get("merged_at")),
        )


class PullReview(_Model):
    """A submitted review of a pull request."""

    user: str
    state: str

    @classmethod
    def from_api(cls, data: dict[str, Any]) -> PullReview:
        """Parse a `pull-request-review` payload."""
        return cls(user=_login(data.get("user")), state=str(data.get("state") or ""))


class PullCommit(_Model):
    """A commit of a pull request, by its author's login ("" when GitHub knows none)."""

    sha: str
    author: str

    @classmethod
    def from_api(cls, data: dict[str, Any]) -> PullCommit:
        """Parse a `commit` payload of pulls/list-commits."""
        return cls(sha=str(data.get("sha") or ""), author=_login(data.get("author")))


class Repo(_Model):
    """A repository."""

    full_name: str
    default_branch: str = "main"
    clone_url: str = ""
    private: bool = False
    fork: bool = False

    @classmethod
    def from_api(cls, data: dict[str, Any]) -> Repo:
        """Parse a `full-repository` or `repository` payload."""
        return cls(
            full_name=data["full_name"],
            default_branch=data.get("default_branch") or "main",
            clone_url=data.get("clone_url") or "",
            private=bool(data.get("private")),
            fork=bool(data.get("fork")),
        )


class ReviewComment(_Model):
    """An inline review comment on a pull request's diff (a thread starts at one without
    `in_reply_to`)."""

    id: int
    body: str = ""
    user: str = ""
    path: str = ""
    line: int | None = None
    diff_hunk: str = ""
    in_reply_to: int | None = None
    review_id: int | None = None
    """The review it was submitted with: that review's body then only introduces it."""
    html_url: str = ""
    author_association: str = ""
    """The author's relation to the repository (OWNER, MEMBER, CONTRIBUTOR, NONE...); which
    comments are hidden, REST does not say (`ReviewThread.minimized`)."""

    @classmethod
    def from_api(cls, data: dict[str, Any]) -> ReviewComment:
        """Parse a `pull-request-review-comment` payload."""
        line = data.get("line") or data.get("original_line")
        return cls(
            id=data["id"],
            body=data.get("body") or "",
            user=_login(data.get("user")),
            path=data.get("path") or "",
            line=int(line) if isinstance(line, int) else None,
            diff_hunk=data.get("diff_hunk") or "",
            in_reply_to=data.get("in_reply_to_id"),
            review_id=data.get("pull_request_review_id"),
            html_url=data.get("html_url") or "",
            author_association=str(data.get("author_association") or ""),
        )


class ReviewThread(_Model):
    """A review thread as GraphQL knows it: its node id (to resolve it) and whether it is."""

    id: str
    resolved: bool = False
    minimized: frozenset[int] = frozenset()
    """The ids of the thread's comments a maintainer hid (of its first 100)."""


class CheckRunStart(TypedDict, total=False):
    """A new check run: its name and commit, a status (concluded at once when `completed`)."""

    name: Required[str]
    head_sha: Required[str]
    status: str
    details_url: str
    conclusion: str | None
    title: str
    summary: str


class CheckRunUpdate(TypedDict, total=False):
    """A check run's next state; a conclusion with `completed`, and the output shown."""

    status: Required[str]
    conclusion: str | None
    title: str
    summary: str
