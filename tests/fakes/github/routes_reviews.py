"""Fake endpoints: inline review comments and replies (REST), review threads (GraphQL).

Threads are kept the way GitHub shows them: a thread is its first comment (no
`in_reply_to_id`) and the replies to it; its GraphQL id is `PRRT_<first comment id>`.
The GraphQL endpoint answers the two operations agentbot sends (list a pull request's
review threads, `resolveReviewThread`), recognised by their text; `graphql_enabled =
False` makes it 404, as an older GitHub Enterprise Server without GraphQL would.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tests.fakes.github import payloads as P
from tests.fakes.github import state as S
from tests.fakes.github.routing import Req, Resp, invalid, not_found, page, repo_name, route
from tests.fakes.github.state import User, iso
from tests.fakes.github.store import Store


@dataclass
class ReviewCommentState:
    """An inline review comment."""

    id: int
    repo: str
    number: int
    body: str
    user: str
    path: str
    line: int
    created_at: str
    in_reply_to: int | None = None
    review_id: int | None = None
    """The review it was submitted with (GitHub's `pull_request_review_id`)."""

    @property
    def thread(self) -> int:
        """The id of the thread's first comment."""
        return self.in_reply_to or self.id


def add_review_comment(
    store: Store,
    repo: str,
    number: int,
    body: str,
    *,
    user: str,
    path: str,
    line: int = 1,
    in_reply_to: int | None = None,
    review_id: int | None = None,
) -> ReviewCommentState:
    """Seed an inline comment (a reviewer's); returns it (`.id` starts a thread)."""
    with store.lock:
        store.issue(repo, number)
        store.add_user(user)
        c = ReviewCommentState(
            id=store.next_id("comments"),
            repo=repo,
            number=number,
            body=body,
            user=user,
            path=path,
            line=line,
            created_at=iso(store.now()),
            in_reply_to=in_reply_to,
            review_id=review_id,
        )
        store.review_comments[c.id] = c
        return c


def thread_of(store: Store, root: int) -> list[ReviewCommentState]:
    """A thread's comments, oldest first."""
    return [c for c in store.review_comments.values() if c.thread == root]


def _json(c: ReviewCommentState, users: dict[str, User], req: Req) -> dict[str, Any]:
    api, web = req.urls.api, req.urls.web
    return {
        "id": c.id,
        "node_id": f"PRRC_{c.id}",
        "url": f"{api}/repos/{c.repo}/pulls/comments/{c.id}",
        "html_url": f"{web}/{c.repo}/pull/{c.number}#discussion_r{c.id}",
        "pull_request_url": f"{api}/repos/{c.repo}/pulls/{c.number}",
        "pull_request_review_id": c.review_id or c.thread,
        "diff_hunk": f"@@ -{c.line},1 +{c.line},1 @@",
        "path": c.path,
        "line": c.line,
        "original_line": c.line,
        "side": "RIGHT",
        "commit_id": "0" * 40,
        "original_commit_id": "0" * 40,
        "body": c.body,
        "user": P.user(users[c.user], req.urls),
        "created_at": c.created_at,
        "updated_at": c.created_at,
        "author_association": "NONE",
        **({"in_reply_to_id": c.in_reply_to} if c.in_reply_to else {}),
        "_links": {
            "self": {"href": f"{api}/repos/{c.repo}/pulls/comments/{c.id}"},
            "html": {"href": f"{web}/{c.repo}/pull/{c.number}#discussion_r{c.id}"},
            "pull_request": {"href": f"{api}/repos/{c.repo}/pulls/{c.number}"},
        },
    }


@route("GET", "/repos/{owner}/{repo}/pulls/{number}/comments")
def list_review_comments(store: Store, req: Req) -> Resp:
    """pulls/list-review-comments, oldest first."""
    repo, number = repo_name(req), int(req.params["number"])
    found = [c for c in store.review_comments.values() if c.repo == repo and c.number == number]
    return page(req, [_json(c, store.users, req) for c in found])


@route("POST", "/repos/{owner}/{repo}/pulls/{number}/comments/{comment_id}/replies")
def reply(store: Store, req: Req) -> Resp:
    """pulls/create-reply-for-review-comment: replies join the first comment's thread."""
    repo, number = repo_name(req), int(req.params["number"])
    parent = store.review_comments.get(int(req.params["comment_id"]))
    if parent is None or parent.repo != repo or parent.number != number:
        return not_found()
    body = req.json.get("body") if isinstance(req.json, dict) else None
    if not isinstance(body, str) or not body:
        return invalid('Invalid request.\n\n"body" wasn\'t supplied.')
    c = add_review_comment(
        store,
        repo,
        number,
        body,
        user=req.actor,
        path=parent.path,
        line=parent.line,
        in_reply_to=parent.thread,
    )
    return Resp(201, _json(c, store.users, req))


@dataclass
class ReviewState:
    """A submitted review: its body, event and inline comments (suggestions) as sent."""

    id: int
    repo: str
    number: int
    user: str
    commit_id: str
    body: str
    event: str
    comments: list[dict[str, Any]]
    submitted_at: str


def _head_lines(store: Store, repo: str, number: int, path: str, commit: str) -> int | None:
    """Lines of `path` at the pull request's head commit, from the head repository's git."""
    pull = store.issue(repo, number).pull
    assert pull is not None
    head = store.repos.get(pull.head_repo) if pull.head_repo else None
    if head is None or head.git_dir() is None:
        return 10**6  # no real git behind it: every line exists
    text = S._git(head.git_dir() or "", "show", f"{commit}:{path}")
    return None if text is None else len(text.splitlines())


@route("POST", "/repos/{owner}/{repo}/pulls/{number}/reviews")
def create_review(store: Store, req: Req) -> Resp:
    """pulls/create-review: a submitted review; comments must name a head line of a file."""
    repo, number = repo_name(req), int(req.params["number"])
    issue = store.repos[repo].issues.get(number)
    if issue is None or issue.pull is None:
        return not_found()
    data = req.json if isinstance(req.json, dict) else {}
    commit = str(data.get("commit_id") or issue.pull.head_sha)
    comments = list(data.get("comments") or [])
    for c in comments:
        line, start = c.get("line"), c.get("start_line", c.get("line"))
        if not isinstance(line, int) or not isinstance(start, int) or start > line:
            return invalid("Unprocessable Entity: a comment needs line (>= start_line)")
        if c.get("side", "RIGHT") != "RIGHT" or not isinstance(c.get("body"), str):
            return invalid("Unprocessable Entity: comments[].side/body")
        count = _head_lines(store, repo, number, str(c.get("path")), commit)
        if count is None or line > count or start < 1:
            return invalid("Pull request review thread line must be part of the diff")
    review = ReviewState(
        id=store.next_id("comments"),
        repo=repo,
        number=number,
        user=req.actor,
        commit_id=commit,
        body=str(data.get("body") or ""),
        event=str(data.get("event") or "PENDING"),
        comments=comments,
        submitted_at=iso(store.now()),
    )
    store.add_user(req.actor)
    store.reviews.append(review)
    api, web = req.urls.api, req.urls.web
    html = f"{web}/{repo}/pull/{number}#pullrequestreview-{review.id}"
    pull_api = f"{api}/repos/{repo}/pulls/{number}"
    return Resp(
        200,
        {
            "id": review.id,
            "node_id": f"PRR_{review.id}",
            "user": P.user(store.users[req.actor], req.urls),
            "body": review.body,
            "state": "COMMENTED" if review.event == "COMMENT" else review.event,
            "html_url": html,
            "pull_request_url": pull_api,
            "_links": {"html": {"href": html}, "pull_request": {"href": pull_api}},
            "submitted_at": review.submitted_at,
            "commit_id": commit,
            "author_association": "NONE",
        },
    )


@route("POST", "/graphql")
def graphql(store: Store, req: Req) -> Resp:
    """The GraphQL operations agentbot sends; anything else is a GraphQL error."""
    if not store.graphql_enabled:
        return not_found()
    body = req.json if isinstance(req.json, dict) else {}
    query, variables = str(body.get("query") or ""), body.get("variables") or {}
    store.graphql_calls.append({"query": query, "variables": variables})
    if "isDraft" in query:
        return _pull_ready(store, query, variables)
    if "resolveReviewThread" in query:
        root = int(str(variables.get("thread", "")).removeprefix("PRRT_") or 0)
        if root not in store.review_comments:
            return Resp(200, {"data": None, "errors": [{"message": "Could not resolve"}]})
        store.resolved_threads.add(root)
        node = {"id": f"PRRT_{root}", "isResolved": True}
        return Resp(200, {"data": {"resolveReviewThread": {"thread": node}}})
    if "reviewThreads" in query:
        repo = f"{variables.get('owner')}/{variables.get('name')}"
        number = variables.get("number")
        roots = [
            c.id
            for c in store.review_comments.values()
            if c.repo == repo and c.number == number and c.in_reply_to is None
        ]
        nodes = [
            {
                "id": f"PRRT_{root}",
                "isResolved": root in store.resolved_threads,
                "comments": {"nodes": _thread_nodes(store, root)},
            }
            for root in roots
        ]
        threads = {"nodes": nodes, "pageInfo": {"hasNextPage": False, "endCursor": None}}
        pr = {"reviewThreads": threads}
        return Resp(200, {"data": {"repository": {"pullRequest": pr}}})
    return Resp(200, {"data": None, "errors": [{"message": "unsupported by the fake"}]})


def _thread_nodes(store: Store, root: int) -> list[dict[str, Any]]:
    """A thread's comments as GraphQL lists them: database id and whether one is hidden."""
    return [
        {"databaseId": c.id, "isMinimized": c.id in store.minimized_comments}
        for c in sorted(thread_of(store, root), key=lambda c: c.id)
    ]


_DRAFT_MUTATIONS = {"markPullRequestReadyForReview": False, "convertPullRequestToDraft": True}


def _pull_ready(store: Store, query: str, variables: dict[str, Any]) -> Resp:
    """A pull request's node id and draft flag (`PR_<repo>#<number>`), or marking it ready."""
    mutation = next((m for m in _DRAFT_MUTATIONS if m in query), "")
    if mutation:
        repo, _, num = str(variables.get("pull", "")).removeprefix("PR_").rpartition("#")
    else:
        repo, num = (
            f"{variables.get('owner')}/{variables.get('name')}",
            str(variables.get("number")),
        )
    number = int(str(num or 0)) if str(num or 0).isdigit() else 0
    issue = store.repos[repo].issues.get(number) if repo in store.repos else None
    if issue is None or issue.pull is None:
        return Resp(200, {"data": None, "errors": [{"message": "Could not resolve"}]})
    if mutation:
        issue.pull.draft = _DRAFT_MUTATIONS[mutation]
        done = {"pullRequest": {"isDraft": issue.pull.draft}}
        return Resp(200, {"data": {mutation: done}})
    node = {"id": f"PR_{repo}#{number}", "isDraft": issue.pull.draft}
    return Resp(200, {"data": {"repository": {"pullRequest": node}}})
