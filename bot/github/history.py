"""A pull request's history as the backfill of outcomes reads it: its reviews and commits."""

from __future__ import annotations

from bot.github.core import RestCore
from bot.models.github import PullCommit, PullReview


class PullHistoryAPI(RestCore):
    """Reviews and commits of a pull request (`agentbot stats --backfill`)."""

    def list_pull_reviews(self, repo: str, number: int) -> list[PullReview]:
        """Every submitted review of a pull request, oldest first."""
        endpoint = self._shared.kit.rest.pulls.list_reviews
        return [PullReview.from_api(r) for r in self._pages_on(repo, endpoint, number)]

    def list_pull_commits(self, repo: str, number: int) -> list[PullCommit]:
        """The pull request's commits, oldest first (GitHub lists at most 250)."""
        endpoint = self._shared.kit.rest.pulls.list_commits
        return [PullCommit.from_api(c) for c in self._pages_on(repo, endpoint, number)]
