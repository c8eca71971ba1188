"""Pull requests."""

from __future__ import annotations

from githubkit.utils import UNSET

from bot.errors import GitHubError
from bot.github.core import RestCore
from bot.github.failures import is_missing
from bot.github.names import list_state
from bot.models.github import PullRequest


class PullsAPI(RestCore):
    """Pull request calls."""

    # --- pull requests ---------------------------------------------------------------------

    def list_pulls(
        self, repo: str, *, head: str | None = None, state: str = "open"
    ) -> list[PullRequest]:
        """Pull requests, optionally only those from `head` ("owner:branch"), every page."""
        items = self._pages_on(
            repo,
            self._shared.kit.rest.pulls.list,
            state=list_state(state),
            head=head if head else UNSET,
        )
        return [PullRequest.from_api(p) for p in items]

    def get_pull(self, repo: str, number: int) -> PullRequest:
        """One pull request."""
        try:
            resp = self._on_repo("GET", repo, self._shared.kit.rest.pulls.get, number)
        except GitHubError as exc:
            if is_missing(exc, 404):
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
        resp = self._on_repo(
            "POST",
            repo,
            self._shared.kit.rest.pulls.create,
            title=title,
            head=head,
            base=base,
            body=body,
            draft=draft,
        )
        return PullRequest.from_api(resp.json())

    def update_pull(
        self, repo: str, number: int, *, title: str | None = None, body: str | None = None
    ) -> PullRequest:
        """Change a pull request's title and/or body."""
        resp = self._on_repo(
            "PATCH",
            repo,
            self._shared.kit.rest.pulls.update,
            number,
            title=title if title is not None else UNSET,
            body=body if body is not None else UNSET,
        )
        return PullRequest.from_api(resp.json())

    def request_reviewers(self, repo: str, number: int, reviewers: list[str]) -> None:
        """Ask users to review a pull request."""
        if reviewers:
            endpoint = self._shared.kit.rest.pulls.request_reviewers
            self._on_repo("POST", repo, endpoint, number, reviewers=list(reviewers))
