"""The GitHub port: the REST calls agentbot makes, on githubkit, with retries and write pacing."""

from __future__ import annotations

from bot.github.checks import ChecksAPI
from bot.github.history import PullHistoryAPI
from bot.github.issues import IssuesAPI
from bot.github.pulls import PullsAPI
from bot.github.repos import ReposAPI
from bot.github.reviews import ReviewsAPI


class GitHub(IssuesAPI, ReposAPI, PullsAPI, ReviewsAPI, ChecksAPI, PullHistoryAPI):
    """Synchronous GitHub REST client: token or App auth, retries, paced writes.

    `GitHub(auth=TokenAuth(t) | AppAuth(id, pem), api_url=..., clock=..., installation_id=...,
    max_retry_seconds=600.0)`; see `RestCore` for the request path every call takes.
    """
