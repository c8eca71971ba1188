"""The GitHub port as workflows see it: a protocol, and a forwarding base for wrappers.

`bot.github.GitHub` (githubkit) implements `GitHubPort`; so do the wrappers a job's
client is dressed in: `FactCache` (each fact asked once), `RecordingGitHub` (dry runs
record writes instead of sending them), and any later one (an outbound scanner) that
subclasses `GitHubProxy` and overrides only the calls it cares about.
"""

from __future__ import annotations

from typing import Any, Protocol, Unpack

from bot.models.github import (
    CheckRunStart,
    CheckRunUpdate,
    Comment,
    Issue,
    PullRequest,
    Repo,
    ReviewComment,
    ReviewThread,
)


class GitHubReads(Protocol):
    """The GitHub reads a job makes."""

    def token(self) -> str:
        """A token for git over HTTPS."""
        ...

    def get_repo(self, repo: str) -> Repo:
        """Repository metadata."""
        ...

    def default_branch(self, repo: str) -> str:
        """The repository's default branch."""
        ...

    def get_file(self, repo: str, path: str, ref: str | None = None) -> str | None:
        """A file's text at `ref`; None when absent."""
        ...

    def permission(self, repo: str, username: str) -> str:
        """The user's role on the repository (none, read, triage, write, maintain, admin)."""
        ...

    def get_issue(self, repo: str, number: int) -> Issue:
        """An issue or pull request as it is now."""
        ...

    def list_issue_comments(self, repo: str, number: int) -> list[Comment]:
        """All comments of an issue or pull request, oldest first."""
        ...

    def list_issues(
        self, repo: str, *, labels: list[str] | None = None, state: str = "open"
    ) -> list[Issue]:
        """Issues (not pull requests) having all `labels`."""
        ...

    def get_pull(self, repo: str, number: int) -> PullRequest:
        """One pull request."""
        ...

    def list_pulls(
        self, repo: str, *, head: str | None = None, state: str = "open"
    ) -> list[PullRequest]:
        """Pull requests, optionally only those from `head` ("owner:branch")."""
        ...

    def list_review_comments(self, repo: str, number: int) -> list[ReviewComment]:
        """Every inline review comment of a pull request, oldest first."""
        ...

    def review_threads(self, repo: str, number: int) -> dict[int, ReviewThread] | None:
        """Review threads by their first comment's id; None where GraphQL is unavailable."""
        ...


class GitHubWrites(Protocol):
    """Every GitHub write a job makes: what a dry run records and an outbound check sees."""

    def create_comment(self, repo: str, number: int, body: str) -> Comment:
        """Post a comment on an issue or pull request."""
        ...

    def update_comment(self, repo: str, comment_id: int, body: str) -> Comment:
        """Replace a comment's body."""
        ...

    def add_labels(self, repo: str, number: int, labels: list[str]) -> None:
        """Add labels to an issue or pull request."""
        ...

    def remove_label(self, repo: str, number: int, label: str) -> None:
        """Remove a label (absent is fine)."""
        ...

    def create_pull(
        self, repo: str, *, title: str, head: str, base: str, body: str, draft: bool = False
    ) -> PullRequest:
        """Open a pull request."""
        ...

    def update_pull(
        self, repo: str, number: int, *, title: str | None = None, body: str | None = None
    ) -> PullRequest:
        """Change a pull request's title and/or body."""
        ...

    def request_reviewers(self, repo: str, number: int, reviewers: list[str]) -> None:
        """Ask users to review a pull request."""
        ...

    def dispatch_workflow(
        self, repo: str, workflow: str, *, ref: str, inputs: dict[str, str]
    ) -> None:
        """Start a `workflow_dispatch` run."""
        ...

    def reply_to_review_comment(
        self, repo: str, number: int, comment_id: int, body: str
    ) -> ReviewComment:
        """Reply in a review comment's thread."""
        ...

    def resolve_review_thread(self, repo: str, thread_id: str) -> bool:
        """Resolve a review thread (its node id); False where GraphQL is unavailable."""
        ...

    def create_review(
        self, repo: str, number: int, *, commit_id: str, body: str, comments: list[dict[str, Any]]
    ) -> str:
        """Submit a review (a comment, not an approval) on `commit_id`; returns its URL."""
        ...

    def mark_ready(self, repo: str, number: int) -> bool:
        """Mark a draft pull request ready for review; False where GraphQL is unavailable."""
        ...

    def mark_draft(self, repo: str, number: int) -> bool:
        """Turn a pull request back into a draft; False where GraphQL is unavailable."""
        ...

    def create_check_run(self, repo: str, **run: Unpack[CheckRunStart]) -> int:
        """Create a check run on a commit; returns its id."""
        ...

    def update_check_run(
        self, repo: str, check_run_id: int, **update: Unpack[CheckRunUpdate]
    ) -> None:
        """Move a check run on."""
        ...


class GitHubPort(GitHubReads, GitHubWrites, Protocol):
    """The whole GitHub surface a job may use."""


class GitHubProxy:
    """A GitHubPort that forwards every call to `inner`; subclasses override a few."""

    def __init__(self, inner: GitHubPort) -> None:
        self.inner = inner

    # --- reads -------------------------------------------------------------------------------

    def token(self) -> str:
        """Forwarded."""
        return self.inner.token()

    def get_repo(self, repo: str) -> Repo:
        """Forwarded."""
        return self.inner.get_repo(repo)

    def default_branch(self, repo: str) -> str:
        """Forwarded."""
        return self.inner.default_branch(repo)

    def get_file(self, repo: str, path: str, ref: str | None = None) -> str | None:
        """Forwarded."""
        return self.inner.get_file(repo, path, ref)

    def permission(self, repo: str, username: str) -> str:
        """Forwarded."""
        return self.inner.permission(repo, username)

    def get_issue(self, repo: str, number: int) -> Issue:
        """Forwarded."""
        return self.inner.get_issue(repo, number)

    def list_issue_comments(self, repo: str, number: int) -> list[Comment]:
        """Forwarded."""
        return self.inner.list_issue_comments(repo, number)

    def list_issues(
        self, repo: str, *, labels: list[str] | None = None, state: str = "open"
    ) -> list[Issue]:
        """Forwarded."""
        return self.inner.list_issues(repo, labels=labels, state=state)

    def get_pull(self, repo: str, number: int) -> PullRequest:
        """Forwarded."""
        return self.inner.get_pull(repo, number)

    def list_pulls(
        self, repo: str, *, head: str | None = None, state: str = "open"
    ) -> list[PullRequest]:
        """Forwarded."""
        return self.inner.list_pulls(repo, head=head, state=state)

    def list_review_comments(self, repo: str, number: int) -> list[ReviewComment]:
        """Forwarded."""
        return self.inner.list_review_comments(repo, number)

    def review_threads(self, repo: str, number: int) -> dict[int, ReviewThread] | None:
        """Forwarded."""
        return self.inner.review_threads(repo, number)

    # --- writes ------------------------------------------------------------------------------

    def create_comment(self, repo: str, number: int, body: str) -> Comment:
        """Forwarded."""
        return self.inner.create_comment(repo, number, body)

    def update_comment(self, repo: str, comment_id: int, body: str) -> Comment:
        """Forwarded."""
        return self.inner.update_comment(repo, comment_id, body)

    def add_labels(self, repo: str, number: int, labels: list[str]) -> None:
        """Forwarded."""
        self.inner.add_labels(repo, number, labels)

    def remove_label(self, repo: str, number: int, label: str) -> None:
        """Forwarded."""
        self.inner.remove_label(repo, number, label)

    def create_pull(
        self, repo: str, *, title: str, head: str, base: str, body: str, draft: bool = False
    ) -> PullRequest:
        """Forwarded."""
        return self.inner.create_pull(
            repo, title=title, head=head, base=base, body=body, draft=draft
        )

    def update_pull(
        self, repo: str, number: int, *, title: str | None = None, body: str | None = None
    ) -> PullRequest:
        """Forwarded."""
        return self.inner.update_pull(repo, number, title=title, body=body)

    def request_reviewers(self, repo: str, number: int, reviewers: list[str]) -> None:
        """Forwarded."""
        self.inner.request_reviewers(repo, number, reviewers)

    def dispatch_workflow(
        self, repo: str, workflow: str, *, ref: str, inputs: dict[str, str]
    ) -> None:
        """Forwarded."""
        self.inner.dispatch_workflow(repo, workflow, ref=ref, inputs=inputs)

    def reply_to_review_comment(
        self, repo: str, number: int, comment_id: int, body: str
    ) -> ReviewComment:
        """Forwarded."""
        return self.inner.reply_to_review_comment(repo, number, comment_id, body)

    def resolve_review_thread(self, repo: str, thread_id: str) -> bool:
        """Forwarded."""
        return self.inner.resolve_review_thread(repo, thread_id)

    def create_review(
        self, repo: str, number: int, *, commit_id: str, body: str, comments: list[dict[str, Any]]
    ) -> str:
        """Forwarded."""
        return self.inner.create_review(
            repo, number, commit_id=commit_id, body=body, comments=comments
        )

    def mark_ready(self, repo: str, number: int) -> bool:
        """Forwarded."""
        return self.inner.mark_ready(repo, number)

    def mark_draft(self, repo: str, number: int) -> bool:
        """Forwarded."""
        return self.inner.mark_draft(repo, number)

    def create_check_run(self, repo: str, **run: Unpack[CheckRunStart]) -> int:
        """Forwarded."""
        return self.inner.create_check_run(repo, **run)

    def update_check_run(
        self, repo: str, check_run_id: int, **update: Unpack[CheckRunUpdate]
    ) -> None:
        """Forwarded."""
        self.inner.update_check_run(repo, check_run_id, **update)
