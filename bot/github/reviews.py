"""Review threads: inline comments and replies (REST), and resolving a thread (GraphQL).

Resolving a review thread exists only in GitHub's GraphQL API (`resolveReviewThread`), and
REST names no thread, so this is the one place agentbot speaks GraphQL: one query lists a
pull request's threads (node id, resolved) and the mutation resolves one, through the same
client (auth, retries, pacing) as every REST call. A server without GraphQL (an older
GitHub Enterprise Server) makes both answer "unavailable" (None, False); the caller says so.
"""

from __future__ import annotations

from typing import Any

from bot.errors import GitHubError
from bot.github.core import RestCore
from bot.github.names import split_repo
from bot.models.github import ReviewComment, ReviewThread

THREADS_QUERY = """
query($owner: String!, $name: String!, $number: Int!, $after: String) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {
      reviewThreads(first: 100, after: $after) {
        nodes { id isResolved comments(first: 100) { nodes { databaseId isMinimized } } }
        pageInfo { hasNextPage endCursor }
      }
    }
  }
}
"""

RESOLVE_MUTATION = """
mutation($thread: ID!) {
  resolveReviewThread(input: {threadId: $thread}) { thread { id isResolved } }
}
"""


PULL_ID_QUERY = """
query($owner: String!, $name: String!, $number: Int!) {
  repository(owner: $owner, name: $name) { pullRequest(number: $number) { id isDraft } }
}
"""

READY_MUTATION = """
mutation($pull: ID!) {
  markPullRequestReadyForReview(input: {pullRequestId: $pull}) { pullRequest { isDraft } }
}
"""

DRAFT_MUTATION = """
mutation($pull: ID!) {
  convertPullRequestToDraft(input: {pullRequestId: $pull}) { pullRequest { isDraft } }
}
"""


class ReviewsAPI(RestCore):
    """Review comment calls, and the GraphQL call that resolves a thread."""

    def list_review_comments(self, repo: str, number: int) -> list[ReviewComment]:
        """Every inline review comment of a pull request, oldest first."""
        endpoint = self._shared.kit.rest.pulls.list_review_comments
        return [ReviewComment.from_api(c) for c in self._pages_on(repo, endpoint, number)]

    def reply_to_review_comment(
        self, repo: str, number: int, comment_id: int, body: str
    ) -> ReviewComment:
        """Reply in the thread of review comment `comment_id`."""
        endpoint = self._shared.kit.rest.pulls.create_reply_for_review_comment
        resp = self._on_repo("POST", repo, endpoint, number, comment_id, body=body)
        return ReviewComment.from_api(resp.json())

    def create_review(
        self, repo: str, number: int, *, commit_id: str, body: str, comments: list[dict[str, Any]]
    ) -> str:
        """Submit a COMMENT review on `commit_id` with inline `comments` (suggestions)."""
        endpoint = self._shared.kit.rest.pulls.create_review
        resp = self._on_repo(
            "POST",
            repo,
            endpoint,
            number,
            commit_id=commit_id,
            body=body,
            event="COMMENT",
            comments=comments,
        )
        return str(resp.json().get("html_url") or "")

    def review_threads(self, repo: str, number: int) -> dict[int, ReviewThread] | None:
        """Each review thread by its first comment's id (and which of its comments are
        hidden), every page; None without GraphQL."""
        owner, name = split_repo(repo)
        found: dict[int, ReviewThread] = {}
        after: str | None = None
        try:
            while True:
                data = self._graphql(
                    THREADS_QUERY, {"owner": owner, "name": name, "number": number, "after": after}
                )
                threads = data["repository"]["pullRequest"]["reviewThreads"]
                for node in threads["nodes"]:
                    first = node["comments"]["nodes"]
                    if first and isinstance(first[0].get("databaseId"), int):
                        hidden = frozenset(c["databaseId"] for c in first if c.get("isMinimized"))
                        found[first[0]["databaseId"]] = ReviewThread(
                            id=node["id"], resolved=bool(node["isResolved"]), minimized=hidden
                        )
                if not threads["pageInfo"]["hasNextPage"]:
                    return found
                after = threads["pageInfo"]["endCursor"]
        except GitHubError as exc:
            if exc.status in (404, 410):
                return None
            raise

    def resolve_review_thread(self, repo: str, thread_id: str) -> bool:
        """Resolve review thread `thread_id` (a node id from `review_threads`); False where
        the server has no GraphQL."""
        try:
            self._graphql(RESOLVE_MUTATION, {"thread": thread_id}, write=True)
        except GitHubError as exc:
            if exc.status in (404, 410):
                return False
            raise
        return True

    def mark_ready(self, repo: str, number: int) -> bool:
        """Mark draft pull request `number` ready for review (GraphQL only: REST cannot);
        True when it is ready now, False where the server has no GraphQL."""
        return self._set_draft(repo, number, draft=False)

    def mark_draft(self, repo: str, number: int) -> bool:
        """Turn pull request `number` back into a draft (GraphQL only); False without GraphQL."""
        return self._set_draft(repo, number, draft=True)

    def _set_draft(self, repo: str, number: int, *, draft: bool) -> bool:
        owner, name = split_repo(repo)
        try:
            data = self._graphql(PULL_ID_QUERY, {"owner": owner, "name": name, "number": number})
            pull = data["repository"]["pullRequest"]
            if bool(pull["isDraft"]) != draft:
                mutation = DRAFT_MUTATION if draft else READY_MUTATION
                self._graphql(mutation, {"pull": pull["id"]}, write=True)
        except GitHubError as exc:
            if exc.status in (404, 410):
                return False
            raise
        return True

    def _graphql(
        self, query: str, variables: dict[str, Any], *, write: bool = False
    ) -> dict[str, Any]:
        """One GraphQL request; GitHubError for HTTP errors and for GraphQL `errors`.

        Every GraphQL request is an HTTP POST; a query is retried and paced as the read it
        is (`GET` to the retry table and the write pacer), a mutation as a write.
        """
        base = str(self._shared.kit.config.base_url).rstrip("/")
        # GitHub Enterprise Server serves REST at /api/v3 and GraphQL at /api/graphql.
        url = base[: -len("/v3")] + "/graphql" if base.endswith("/api/v3") else base + "/graphql"
        payload = {"query": query, "variables": variables}
        resp = self._call(
            "POST" if write else "GET",
            lambda h: self._shared.kit.request("POST", url, json=payload, headers=h),
            checked=True,  # ids only: no text of ours leaves in a GraphQL request
        )
        body = resp.json()
        if body.get("errors"):
            raise GitHubError(f"GitHub GraphQL: {body['errors'][0].get('message', body['errors'])}")
        return dict(body["data"])
