"""Issues, comments and labels."""

from __future__ import annotations

from urllib.parse import quote

from githubkit.utils import UNSET

from bot.errors import GitHubError
from bot.github.core import RestCore
from bot.github.failures import is_missing
from bot.github.names import list_state, split_repo
from bot.models.github import Comment, Issue


class IssuesAPI(RestCore):
    """Issue, comment and label calls."""

    # --- issues and comments ---------------------------------------------------------------

    def get_issue(self, repo: str, number: int) -> Issue:
        """One issue (pull requests too); a missing one is `GitHubError("Issue #N not found")`."""
        split_repo(repo)  # a malformed name is refused here, not tagged as this issue's error
        try:
            resp = self._on_repo("GET", repo, self._shared.kit.rest.issues.get, number)
        except GitHubError as exc:
            if is_missing(exc, 404, 410):
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
        items = self._pages_on(repo, self._shared.kit.rest.issues.list_comments, number)
        return [Comment.from_api(c) for c in items]

    def create_comment(self, repo: str, number: int, body: str) -> Comment:
        """Post a comment on an issue or pull request."""
        endpoint = self._shared.kit.rest.issues.create_comment
        return Comment.from_api(self._on_repo("POST", repo, endpoint, number, body=body).json())

    def update_comment(self, repo: str, comment_id: int, body: str) -> Comment:
        """Replace a comment's body (the progress comment)."""
        endpoint = self._shared.kit.rest.issues.update_comment
        return Comment.from_api(
            self._on_repo("PATCH", repo, endpoint, comment_id, body=body).json()
        )

    def add_labels(self, repo: str, number: int, labels: list[str]) -> None:
        """Add labels (GitHub creates missing ones)."""
        if labels:
            endpoint = self._shared.kit.rest.issues.add_labels
            self._on_repo("POST", repo, endpoint, number, labels=list(labels))

    def remove_label(self, repo: str, number: int, label: str) -> None:
        """Remove a label; a label that is not on the issue is fine."""
        endpoint = self._shared.kit.rest.issues.remove_label
        try:
            self._on_repo("DELETE", repo, endpoint, number, quote(label, safe=""))
        except GitHubError as exc:
            if not is_missing(exc, 404):
                raise

    def list_issues(
        self, repo: str, *, labels: list[str] | None = None, state: str = "open"
    ) -> list[Issue]:
        """Issues (not pull requests) having all `labels`, every page."""
        items = self._pages_on(
            repo,
            self._shared.kit.rest.issues.list_for_repo,
            state=list_state(state),
            labels=",".join(labels) if labels else UNSET,
        )
        issues = (Issue.from_api(i) for i in items)
        return [i for i in issues if not i.is_pull_request]
