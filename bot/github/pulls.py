"""Pull requests."""

from __future__ import annotations

from githubkit.utils import UNSET

from bot.errors import GitHubError
from bot.github.core import PER_PAGE, RestCore, is_missing, list_state, split_repo
from bot.github.models import PullRequest


class PullsAPI(RestCore):
    """Pull request calls."""

    # --- pull requests ---------------------------------------------------------------------

    def list_pulls(
        self, repo: str, *, head: str | None = None, state: str = "open"
    ) -> list[PullRequest]:
        """Pull requests, optionally only those from `head` ("owner:branch"), every page."""
        owner, name = split_repo(repo)
        wanted = list_state(state)
        items = self._pages(
            lambda page, h: self._shared.kit.rest.pulls.list(
                owner,
                name,
                state=wanted,
                head=head if head else UNSET,
                per_page=PER_PAGE,
                page=page,
                headers=h,
            )
        )
        return [PullRequest.from_api(p) for p in items]

    def get_pull(self, repo: str, number: int) -> PullRequest:
        """One pull request."""
        owner, name = split_repo(repo)
        try:
            resp = self._call(
                "GET", lambda h: self._shared.kit.rest.pulls.get(owner, name, number, headers=h)
            )
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
        owner, name = split_repo(repo)
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
        owner, name = split_repo(repo)
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
        owner, name = split_repo(repo)
        self._call(
            "POST",
            lambda h: self._shared.kit.rest.pulls.request_reviewers(
                owner, name, number, reviewers=list(reviewers), headers=h
            ),
        )
