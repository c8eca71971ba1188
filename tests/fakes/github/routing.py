"""Routing for the fake: the request/response types, the route table, list paging."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from tests.fakes.github import payloads as P
from tests.fakes.github import payloads_pulls as PP
from tests.fakes.github.store import Store

DOCS = "https://docs.github.com/rest"


@dataclass
class Req:
    """A request as the handlers see it (auth already checked)."""

    method: str
    path: str
    params: dict[str, str]
    query: dict[str, str]
    json: Any
    headers: dict[str, str]
    actor: str
    token_kind: str
    """`app` (JWT), `installation`, or `token`."""
    app_id: int | None = None
    installation_id: int | None = None
    urls: P.Urls = field(default_factory=lambda: P.Urls("http://127.0.0.1"))


@dataclass
class Resp:
    """Status, JSON body (None: empty) and extra headers."""

    status: int
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)


def not_found(doc: str = DOCS) -> Resp:
    """GitHub's 404."""
    return Resp(404, P.error("Not Found", doc, status="404"))


def invalid(message: str, *errors: dict[str, Any]) -> Resp:
    """GitHub's 422."""
    return Resp(422, P.error(message, DOCS, errors=list(errors), status="422"))


Handler = Callable[[Store, Req], Resp]
ROUTES: list[tuple[str, re.Pattern[str], Handler, bool]] = []
"""(method, path pattern, handler, needs App JWT)."""

_SEG = r"[^/]+"


def route(method: str, pattern: str, *, app: bool = False) -> Callable[[Handler], Handler]:
    """Register a handler; `{name}` in the pattern is one path segment, `{path*}` the rest."""
    regex = re.sub(r"\{(\w+)\*\}", r"(?P<\1>.*)", pattern)
    regex = re.sub(r"\{(\w+)\}", rf"(?P<\1>{_SEG})", regex)

    def register(fn: Handler) -> Handler:
        ROUTES.append((method, re.compile(f"^{regex}$"), fn, app))
        return fn

    return register


def repo_name(req: Req) -> str:
    return f"{req.params['owner']}/{req.params['repo']}"


def page(req: Req, items: list[Any]) -> Resp:
    """One page of a list, with GitHub's `Link` header."""
    per_page = max(1, min(int(req.query.get("per_page", "30")), 100))
    page = max(1, int(req.query.get("page", "1")))
    last = max(1, -(-len(items) // per_page))
    chunk = items[(page - 1) * per_page : page * per_page]

    def link(n: int) -> str:
        return f"{req.urls.api}{req.path}?{urlencode({**req.query, 'page': str(n)})}"

    rels = []
    if page < last:
        rels += [f'<{link(page + 1)}>; rel="next"', f'<{link(last)}>; rel="last"']
    if page > 1:
        rels += [f'<{link(1)}>; rel="first"', f'<{link(page - 1)}>; rel="prev"']
    return Resp(200, chunk, {"link": ", ".join(rels)} if rels else {})


def issue_json(store: Store, req: Req, repo: str, number: int) -> dict[str, Any]:
    r = store.repos[repo]
    return P.issue(
        r.issues[number], r, store.users, req.urls, comments=len(store.comments_on(repo, number))
    )


def pull_json(store: Store, req: Req, repo: str, number: int, *, full: bool) -> dict[str, Any]:
    r = store.repos[repo]
    issue = r.issues[number]
    assert issue.pull is not None
    head_repo = store.repos.get(issue.pull.head_repo) if issue.pull.head_repo else None
    if head_repo is not None and head_repo.git_dir() and issue.state == "open":
        # An open pull request's head follows its branch, as on GitHub.
        live = head_repo.branch_sha(issue.pull.head_ref)
        issue.pull.head_sha = live or issue.pull.head_sha
    comments = len(store.comments_on(repo, number))
    return PP.pull(issue, r, head_repo, store.users, req.urls, full=full, comments=comments)
