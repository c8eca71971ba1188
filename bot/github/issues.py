"""Issues, comments and labels."""

from __future__ import annotations

from urllib.parse import quote

from githubkit.utils import UNSET

from bot.errors import GitHubError
from bot.github.core import PER_PAGE, RestCore, is_missing, list_state, split_repo
from bot.github.models import Comment, Issue


class IssuesAPI(RestCore):
    """Issue, comment and label calls."""

    # --- issues and comments ---------------------------------------------------------------

    def get_issue(self, repo: str, number: int) -> Issue:
        """One issue (pull requests too); a missing one is `GitHubError("Issue #N not found")`."""
        owner, name = split_repo(repo)
        try:
            resp = self._call(
                "GET", lambda h: self._shared.kit.rest.issues.get(owner, name, number, headers=h)
            )
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
        owner, name = split_repo(repo)
        items = self._pages(
            lambda page, h: self._shared.kit.rest.issues.list_comments(
                owner, name, number, per_page=PER_PAGE, page=page, headers=h
            )
        )
        return [Comment.from_api(c) for c in items]

    def create_comment(self, repo: str, number: int, body: str) -> Comment:
        """Post a comment on an issue or pull request."""
        owner, name = split_repo(repo)
        resp = self._call(
            "POST",
            lambda h: self._shared.kit.rest.issues.create_comment(
                owner, name, number, body=body, headers=h
            ),
        )
        return Comment.from_api(resp.json())

    def update_comment(self, repo: str, comment_id: int, body: str) -> Comment:
        """Replace a comment's body (the progress comment)."""
        owner, name = split_repo(repo)
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
        owner, name = split_repo(repo)
        self._call(
            "POST",
            lambda h: self._shared.kit.rest.issues.add_labels(
                owner, name, number, labels=list(labels), headers=h
            ),
        )

    def remove_label(self, repo: str, number: int, label: str) -> None:
        """Remove a label; a label that is not on the issue is fine."""
        owner, name = split_repo(repo)
        try:
            self._call(
                "DELETE",
                lambda h: self._shared.kit.rest.issues.remove_label(
                    owner, name, number, quote(label, safe=""), headers=h
                ),
            )
        except GitHubError as exc:
            if not is_missing(exc, 404):
                raise

    def list_issues(
        self, repo: str, *, labels: list[str] | None = None, state: str = "open"
    ) -> list[Issue]:
        """Issues (not pull requests) having all `labels`, every page."""
        owner, name = split_repo(repo)
        wanted = list_state(state)
        items = self._pages(
            lambda page, h: self._shared.kit.rest.issues.list_for_repo(
                owner,
                name,
                state=wanted,
                labels=",".join(labels) if labels else UNSET,
                per_page=PER_PAGE,
                page=page,
                headers=h,
            )
        )
        issues = (Issue.from_api(i) for i in items)
        return [i for i in issues if not i.is_pull_request]
