"""Dry runs: a GitHub client and a push that record what they would send, and send nothing.

A dry run is not a branch in every workflow: the entry point dresses the job's ports in
these recorders (`dry_run(env)`), and the workflow runs exactly as it would for real.
Reads still reach GitHub (a dry run needs the real issue); every write is echoed as
`[dry-run] would …` with the text it would have posted, and kept in `writes`.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Unpack

from bot.models.github import CheckRunStart, CheckRunUpdate, Comment, PullRequest, ReviewComment
from bot.ports.github import GitHubPort, GitHubProxy

if TYPE_CHECKING:
    from bot.git import Workspace
    from bot.ports import JobEnv

DRY_RUN_USER = "agentbot[dry-run]"


class RecordingGitHub(GitHubProxy):
    """`inner` for reads; writes are echoed and recorded, never sent."""

    def __init__(self, inner: GitHubPort, echo: Callable[[str], None]) -> None:
        super().__init__(inner)
        self.echo = echo
        self.writes: list[str] = []
        self._ids = itertools.count(1)

    def _record(self, what: str, text: str = "") -> None:
        line = f"[dry-run] would {what}"
        self.writes.append(line + (f"\n{text}" if text else ""))
        self.echo(line + (f"\n{text}" if text else ""))

    def create_comment(self, repo: str, number: int, body: str) -> Comment:
        """Recorded; returns the comment as it would be."""
        self._record(f"comment on {repo}#{number}", body)
        return Comment(id=next(self._ids), body=body, user=DRY_RUN_USER)

    def update_comment(self, repo: str, comment_id: int, body: str) -> Comment:
        """Recorded; returns the comment as it would be."""
        self._record(f"edit comment {comment_id} on {repo}", body)
        return Comment(id=comment_id, body=body, user=DRY_RUN_USER)

    def add_labels(self, repo: str, number: int, labels: list[str]) -> None:
        """Recorded."""
        self._record(f"label {repo}#{number} {', '.join(repr(name) for name in labels)}")

    def remove_label(self, repo: str, number: int, label: str) -> None:
        """Recorded."""
        self._record(f"remove the label {label!r} from {repo}#{number}")

    def create_pull(
        self, repo: str, *, title: str, head: str, base: str, body: str, draft: bool = False
    ) -> PullRequest:
        """Recorded; returns a pull request without a number or URL."""
        kind = "draft PR" if draft else "PR"
        self._record(f"open {kind} {head} -> {base}: {title}", body)
        return PullRequest(
            number=0, title=title, body=body, draft=draft, head_ref=head, base_ref=base
        )

    def update_pull(
        self, repo: str, number: int, *, title: str | None = None, body: str | None = None
    ) -> PullRequest:
        """Recorded; returns the pull request as it is now (a read)."""
        self._record(f"update PR {repo}#{number}" + (f": {title}" if title else ""), body or "")
        return self.inner.get_pull(repo, number)

    def request_reviewers(self, repo: str, number: int, reviewers: list[str]) -> None:
        """Recorded."""
        names = ", ".join("@" + r for r in reviewers)
        self._record(f"request a review of {repo}#{number} from {names}")

    def dispatch_workflow(
        self, repo: str, workflow: str, *, ref: str, inputs: dict[str, str]
    ) -> None:
        """Recorded."""
        self._record(f"dispatch {workflow} on {repo}@{ref} with {inputs}")

    def reply_to_review_comment(
        self, repo: str, number: int, comment_id: int, body: str
    ) -> ReviewComment:
        """Recorded; returns the reply as it would be."""
        self._record(f"reply in review thread {comment_id} of {repo}#{number}", body)
        return ReviewComment(id=0, body=body, in_reply_to=comment_id)

    def resolve_review_thread(self, repo: str, thread_id: str) -> bool:
        """Recorded."""
        self._record(f"resolve review thread {thread_id} of {repo}")
        return True

    def create_review(
        self, repo: str, number: int, *, commit_id: str, body: str, comments: list[dict[str, Any]]
    ) -> str:
        """Recorded, with every suggestion."""
        shown = "\n\n".join(f"{c['path']}:{c['line']}\n{c['body']}" for c in comments)
        self._record(f"review {repo}#{number} at {commit_id[:12]}", f"{body}\n\n{shown}")
        return ""

    def mark_ready(self, repo: str, number: int) -> bool:
        """Recorded."""
        self._record(f"mark {repo}#{number} ready for review")
        return True

    def mark_draft(self, repo: str, number: int) -> bool:
        """Recorded."""
        self._record(f"turn {repo}#{number} back into a draft")
        return True

    def create_check_run(self, repo: str, **run: Unpack[CheckRunStart]) -> int:
        """Recorded; returns a made-up id."""
        status, sha = run.get("status", "in_progress"), run["head_sha"][:12]
        self._record(f"create check run {run['name']!r} ({status}) on {repo}@{sha}")
        return next(self._ids)

    def update_check_run(
        self, repo: str, check_run_id: int, **update: Unpack[CheckRunUpdate]
    ) -> None:
        """Recorded."""
        status, conclusion = update["status"], update.get("conclusion")
        outcome = f"{status}/{conclusion}" if conclusion else status
        self._record(
            f"set check run {check_run_id} on {repo} to {outcome}", update.get("summary", "")
        )


class RecordingPush:
    """A push that is echoed, never sent."""

    def __init__(self, echo: Callable[[str], None]) -> None:
        self.echo = echo
        self.branches: list[str] = []

    def __call__(self, ws: Workspace, branch: str) -> None:
        """Record the push of `branch` (its commits stay in the workspace)."""
        self.branches.append(branch)
        self.echo(f"[dry-run] would push branch {branch} ({ws.head_sha()[:12]})")


def dry_run(env: JobEnv) -> JobEnv:
    """`env` with its GitHub writes and pushes recorded instead of sent."""
    return replace(env, github=RecordingGitHub(env.github, env.echo), push=RecordingPush(env.echo))
