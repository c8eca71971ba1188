"""The fake's REST endpoints: one function per GitHub operation, on the Store."""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any
from urllib.parse import urlencode

from tests.fakes.github import payloads as P
from tests.fakes.github.state import CheckRunState, CommentState, Dispatch, PullInfo, iso
from tests.fakes.github.store import IssuedToken, Store

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


def _repo_name(req: Req) -> str:
    return f"{req.params['owner']}/{req.params['repo']}"


def _page(req: Req, items: list[Any]) -> Resp:
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


def _issue_json(store: Store, req: Req, repo: str, number: int) -> dict[str, Any]:
    r = store.repos[repo]
    return P.issue(
        r.issues[number], r, store.users, req.urls, comments=len(store.comments_on(repo, number))
    )


def _pull_json(store: Store, req: Req, repo: str, number: int, *, full: bool) -> dict[str, Any]:
    r = store.repos[repo]
    issue = r.issues[number]
    assert issue.pull is not None
    head_repo = store.repos.get(issue.pull.head_repo) if issue.pull.head_repo else None
    comments = len(store.comments_on(repo, number))
    return P.pull(issue, r, head_repo, store.users, req.urls, full=full, comments=comments)


# --- repositories ------------------------------------------------------------------------


@route("GET", "/repos/{owner}/{repo}")
def get_repo(store: Store, req: Req) -> Resp:
    """repos/get."""
    r = store.repos[_repo_name(req)]
    return Resp(200, P.repo(r, store.users[r.owner], req.urls))


@route("GET", "/repos/{owner}/{repo}/contents/{path*}")
def get_content(store: Store, req: Req) -> Resp:
    """repos/get-content (files and directories; `Accept: ...raw` returns the bytes)."""
    r = store.repos[_repo_name(req)]
    path = req.params["path"].strip("/")
    ref = req.query.get("ref") or r.default_branch
    found = r.read(path, ref)
    if found is None:
        return not_found(f"{DOCS}/repos/contents#get-repository-content")
    if "raw" in req.headers.get("accept", "") and isinstance(found, str):
        return Resp(200, found, {"content-type": "application/vnd.github.raw; charset=utf-8"})
    return Resp(200, P.contents(r, path, ref, found, req.urls))


@route("GET", "/repos/{owner}/{repo}/collaborators/{username}/permission")
def get_permission(store: Store, req: Req) -> Resp:
    """repos/get-collaborator-permission-level."""
    login = req.params["username"]
    if login not in store.users:
        return not_found(f"{DOCS}/collaborators/collaborators")
    role = store.role(_repo_name(req), login)
    legacy = {"maintain": "write", "triage": "read"}.get(role, role)
    rank = ("none", "read", "triage", "write", "maintain", "admin").index(role)
    user = P.user(store.users[login], req.urls)
    user["permissions"] = {
        "pull": rank >= 1,
        "triage": rank >= 2,
        "push": rank >= 3,
        "maintain": rank >= 4,
        "admin": rank >= 5,
    }
    user["role_name"] = role
    return Resp(200, {"permission": legacy, "role_name": role, "user": user})


# --- issues and comments -----------------------------------------------------------------


@route("GET", "/repos/{owner}/{repo}/issues")
def list_issues(store: Store, req: Req) -> Resp:
    """issues/list-for-repo: newest first, pull requests included (as on GitHub)."""
    repo = _repo_name(req)
    r = store.repos[repo]
    state = req.query.get("state", "open")
    wanted = [name for name in req.query.get("labels", "").split(",") if name]
    issues = [
        i
        for i in sorted(r.issues.values(), key=lambda i: i.number, reverse=True)
        if (state == "all" or i.state == state) and all(w in i.labels for w in wanted)
    ]
    return _page(req, [_issue_json(store, req, repo, i.number) for i in issues])


@route("GET", "/repos/{owner}/{repo}/issues/{number}")
def get_issue(store: Store, req: Req) -> Resp:
    """issues/get."""
    repo = _repo_name(req)
    if int(req.params["number"]) not in store.repos[repo].issues:
        return not_found(f"{DOCS}/issues/issues#get-an-issue")
    return Resp(200, _issue_json(store, req, repo, int(req.params["number"])))


@route("GET", "/repos/{owner}/{repo}/issues/{number}/comments")
def list_comments(store: Store, req: Req) -> Resp:
    """issues/list-comments: oldest first."""
    repo, number = _repo_name(req), int(req.params["number"])
    if number not in store.repos[repo].issues:
        return not_found()
    comments = store.comments_on(repo, number)
    return _page(req, [P.comment(c, store.users, req.urls) for c in comments])


@route("POST", "/repos/{owner}/{repo}/issues/{number}/comments")
def create_comment(store: Store, req: Req) -> Resp:
    """issues/create-comment."""
    repo, number = _repo_name(req), int(req.params["number"])
    body = (req.json or {}).get("body")
    if number not in store.repos[repo].issues:
        return not_found()
    if not isinstance(body, str) or not body:
        return invalid('Invalid request.\n\n"body" wasn\'t supplied.')
    comment = store.add_comment(repo, number, body, user=req.actor)
    location = comment_url(req, comment)
    return Resp(201, P.comment(comment, store.users, req.urls), {"location": location})


def comment_url(req: Req, comment: CommentState) -> str:
    """The API URL of a comment."""
    return f"{req.urls.api}/repos/{comment.repo}/issues/comments/{comment.id}"


@route("GET", "/repos/{owner}/{repo}/issues/comments/{comment_id}")
def get_comment(store: Store, req: Req) -> Resp:
    """issues/get-comment."""
    comment = store.comments.get(int(req.params["comment_id"]))
    if comment is None or comment.repo != _repo_name(req):
        return not_found()
    return Resp(200, P.comment(comment, store.users, req.urls))


@route("PATCH", "/repos/{owner}/{repo}/issues/comments/{comment_id}")
def update_comment(store: Store, req: Req) -> Resp:
    """issues/update-comment."""
    comment = store.comments.get(int(req.params["comment_id"]))
    if comment is None or comment.repo != _repo_name(req):
        return not_found()
    body = (req.json or {}).get("body")
    if not isinstance(body, str):
        return invalid('Invalid request.\n\n"body" wasn\'t supplied.')
    comment.body = body
    comment.updated_at = iso(store.now())
    return Resp(200, P.comment(comment, store.users, req.urls))


@route("POST", "/repos/{owner}/{repo}/issues/{number}/labels")
def add_labels(store: Store, req: Req) -> Resp:
    """issues/add-labels: creates unknown labels; returns all labels of the issue."""
    repo, number = _repo_name(req), int(req.params["number"])
    r = store.repos[repo]
    if number not in r.issues:
        return not_found()
    body = req.json
    names = body.get("labels") if isinstance(body, dict) else body
    if not isinstance(names, list):
        return invalid('Invalid request.\n\n"labels" wasn\'t supplied.')
    issue = r.issues[number]
    for name in names:
        name = name["name"] if isinstance(name, dict) else str(name)
        store.add_label(repo, name)
        if name not in issue.labels:
            issue.labels.append(name)
    issue.updated_at = iso(store.now())
    return Resp(200, [P.label(r.labels[n], repo, req.urls) for n in issue.labels])


@route("DELETE", "/repos/{owner}/{repo}/issues/{number}/labels/{name}")
def remove_label(store: Store, req: Req) -> Resp:
    """issues/remove-label: 404 "Label does not exist" when it is not on the issue."""
    repo, number = _repo_name(req), int(req.params["number"])
    r = store.repos[repo]
    name = req.params["name"]
    if number not in r.issues or name not in r.issues[number].labels:
        return Resp(404, P.error("Label does not exist", f"{DOCS}/issues/labels", status="404"))
    r.issues[number].labels.remove(name)
    return Resp(200, [P.label(r.labels[n], repo, req.urls) for n in r.issues[number].labels])


# --- pull requests -----------------------------------------------------------------------


@route("GET", "/repos/{owner}/{repo}/pulls")
def list_pulls(store: Store, req: Req) -> Resp:
    """pulls/list: `head=owner:branch`, `base`, `state` filters; newest first."""
    repo = _repo_name(req)
    state = req.query.get("state", "open")
    head = req.query.get("head")
    base = req.query.get("base")
    chosen = []
    for issue in reversed(store.pulls(repo)):
        p = issue.pull
        assert p is not None
        head_owner = p.head_repo.split("/")[0] if p.head_repo else ""
        if state != "all" and issue.state != state:
            continue
        if head and head != f"{head_owner}:{p.head_ref}":
            continue
        if base and base != p.base_ref:
            continue
        chosen.append(_pull_json(store, req, repo, issue.number, full=False))
    return _page(req, chosen)


@route("GET", "/repos/{owner}/{repo}/pulls/{number}")
def get_pull(store: Store, req: Req) -> Resp:
    """pulls/get."""
    repo, number = _repo_name(req), int(req.params["number"])
    issue = store.repos[repo].issues.get(number)
    if issue is None or issue.pull is None:
        return not_found(f"{DOCS}/pulls/pulls#get-a-pull-request")
    return Resp(200, _pull_json(store, req, repo, number, full=True))


@route("POST", "/repos/{owner}/{repo}/pulls")
def create_pull(store: Store, req: Req) -> Resp:
    """pulls/create: 422 when the head branch is unknown or already has an open pull."""
    repo = _repo_name(req)
    r = store.repos[repo]
    body = req.json if isinstance(req.json, dict) else {}
    title, head, base = body.get("title"), body.get("head"), body.get("base")
    if not title or not head or not base:
        missing = [k for k in ("title", "head", "base") if not body.get(k)]
        return invalid(
            "Validation Failed",
            *({"resource": "PullRequest", "field": k, "code": "missing_field"} for k in missing),
        )
    head_owner, _, head_ref = head.rpartition(":")
    head_repo = repo if not head_owner or head_owner == r.owner else f"{head_owner}/{r.name}"
    source = store.repos.get(head_repo)
    head_sha = source.branch_sha(head_ref) if source is not None else None
    base_sha = r.branch_sha(base)
    if head_sha is None:
        return invalid(
            "Validation Failed", {"resource": "PullRequest", "field": "head", "code": "invalid"}
        )
    if base_sha is None:
        return invalid(
            "Validation Failed", {"resource": "PullRequest", "field": "base", "code": "invalid"}
        )
    for other in store.pulls(repo):
        p = other.pull
        assert p is not None
        if (
            other.state == "open"
            and p.head_repo == head_repo
            and p.head_ref == head_ref
            and p.base_ref == base
        ):
            label = f"{head_repo.split('/')[0]}:{head_ref}"
            return invalid(
                "Validation Failed",
                {
                    "resource": "PullRequest",
                    "code": "custom",
                    "message": f"A pull request already exists for {label}.",
                },
            )
    issue = store.add_issue(repo, title=title, body=body.get("body") or "", user=req.actor)
    issue.pull = PullInfo(
        head_ref=head_ref,
        head_sha=head_sha,
        head_repo=head_repo,
        base_ref=base,
        base_sha=base_sha,
        id=store.next_id("pulls"),
        draft=bool(body.get("draft")),
    )
    data = _pull_json(store, req, repo, issue.number, full=True)
    return Resp(201, data, {"location": data["url"]})


@route("PATCH", "/repos/{owner}/{repo}/pulls/{number}")
def update_pull(store: Store, req: Req) -> Resp:
    """pulls/update: title, body, state, base."""
    repo, number = _repo_name(req), int(req.params["number"])
    issue = store.repos[repo].issues.get(number)
    if issue is None or issue.pull is None:
        return not_found()
    body = req.json if isinstance(req.json, dict) else {}
    if "title" in body:
        issue.title = body["title"]
    if "body" in body:
        issue.body = body["body"] or ""
    if body.get("state") in ("open", "closed"):
        issue.state = body["state"]
        issue.closed_at = iso(store.now()) if issue.state == "closed" else None
    if "base" in body:
        issue.pull.base_ref = body["base"]
    issue.updated_at = iso(store.now())
    return Resp(200, _pull_json(store, req, repo, number, full=True))


@route("POST", "/repos/{owner}/{repo}/pulls/{number}/requested_reviewers")
def request_reviewers(store: Store, req: Req) -> Resp:
    """pulls/request-reviewers: the author cannot review their own pull request."""
    repo, number = _repo_name(req), int(req.params["number"])
    issue = store.repos[repo].issues.get(number)
    if issue is None or issue.pull is None:
        return not_found()
    reviewers = list((req.json or {}).get("reviewers") or [])
    if issue.user in reviewers:
        return invalid("Review cannot be requested from pull request author.")
    for login in reviewers:
        store.add_user(login)
        if login not in issue.pull.requested_reviewers:
            issue.pull.requested_reviewers.append(login)
    return Resp(201, _pull_json(store, req, repo, number, full=False))


# --- actions and checks ------------------------------------------------------------------


@route("POST", "/repos/{owner}/{repo}/actions/workflows/{workflow}/dispatches")
def dispatch(store: Store, req: Req) -> Resp:
    """actions/create-workflow-dispatch: recorded in `dispatches`, 204."""
    body = req.json if isinstance(req.json, dict) else {}
    if not body.get("ref"):
        return invalid('Invalid request.\n\n"ref" wasn\'t supplied.')
    inputs = body.get("inputs") or {}
    if len(inputs) > 25:
        return invalid("you may only define up to 25 `inputs` for a `workflow_dispatch` event")
    record = Dispatch(
        _repo_name(req), req.params["workflow"], body["ref"], inputs, store.timestamp()
    )
    store.dispatches.append(record)
    return Resp(204)


def _check_json(store: Store, req: Req, run: CheckRunState) -> dict[str, Any]:
    app = store.apps.get(run.app_id) if run.app_id is not None else None
    app_json = P.app(app.id, app.slug, store.users[app.owner], req.urls) if app else None
    return P.check_run(run, app_json, req.urls)


def _apps_only(req: Req) -> Resp | None:
    if req.token_kind == "token" and req.headers.get("authorization", "").split()[-1].startswith(
        ("ghp_", "github_pat_")
    ):
        return Resp(403, P.error("You must authenticate via a GitHub App.", f"{DOCS}/checks/runs"))
    return None


@route("POST", "/repos/{owner}/{repo}/check-runs")
def create_check_run(store: Store, req: Req) -> Resp:
    """checks/create (personal access tokens are refused, as on GitHub)."""
    refused = _apps_only(req)
    if refused:
        return refused
    body = req.json if isinstance(req.json, dict) else {}
    if not body.get("name") or not body.get("head_sha"):
        return invalid('Invalid request.\n\n"name", "head_sha" weren\'t supplied.')
    now = iso(store.now())
    status = body.get("status", "queued")
    output = body.get("output") or {}
    inst = store.installations.get(req.installation_id) if req.installation_id else None
    run = CheckRunState(
        id=store.next_id("checks"),
        repo=_repo_name(req),
        name=body["name"],
        head_sha=body["head_sha"],
        status=status,
        conclusion=body.get("conclusion"),
        started_at=now,
        completed_at=now if status == "completed" else None,
        title=output.get("title"),
        summary=output.get("summary"),
        app_id=inst.app_id if inst else None,
    )
    store.check_runs[run.id] = run
    return Resp(201, _check_json(store, req, run))


@route("PATCH", "/repos/{owner}/{repo}/check-runs/{check_run_id}")
def update_check_run(store: Store, req: Req) -> Resp:
    """checks/update."""
    run = store.check_runs.get(int(req.params["check_run_id"]))
    if run is None or run.repo != _repo_name(req):
        return not_found()
    body = req.json if isinstance(req.json, dict) else {}
    if "status" in body:
        run.status = body["status"]
    if "conclusion" in body:
        run.conclusion = body["conclusion"]
        run.status = "completed"
    if run.status == "completed" and run.completed_at is None:
        run.completed_at = iso(store.now())
    output = body.get("output") or {}
    run.title = output.get("title", run.title)
    run.summary = output.get("summary", run.summary)
    return Resp(200, _check_json(store, req, run))


# --- apps --------------------------------------------------------------------------------


@route("GET", "/repos/{owner}/{repo}/installation", app=True)
def get_repo_installation(store: Store, req: Req) -> Resp:
    """apps/get-repo-installation (App JWT)."""
    repo = _repo_name(req)
    for inst in store.installations.values():
        covers = inst.repos is None or repo in inst.repos
        if inst.app_id == req.app_id and inst.account == req.params["owner"] and covers:
            app = store.apps[inst.app_id]
            account = store.users[inst.account]
            selected = inst.repos is not None
            return Resp(200, P.installation(inst.id, app.id, app.slug, account, selected, req.urls))
    return not_found(f"{DOCS}/apps/apps#get-a-repository-installation-for-the-authenticated-app")


@route("POST", "/app/installations/{installation_id}/access_tokens", app=True)
def create_token(store: Store, req: Req) -> Resp:
    """apps/create-installation-access-token (App JWT): a 1-hour `ghs_` token."""
    inst = store.installations.get(int(req.params["installation_id"]))
    if inst is None or inst.app_id != req.app_id:
        return not_found(f"{DOCS}/apps/apps#create-an-installation-access-token-for-an-app")
    expires = store.now().replace(microsecond=0) + timedelta(hours=1)
    token = "ghs_" + secrets.token_hex(18)
    store.issued_tokens.append(IssuedToken(token, inst.id, expires))
    return Resp(
        201,
        {
            "token": token,
            "expires_at": iso(expires),
            "permissions": {"issues": "write", "pull_requests": "write", "contents": "write"},
            "repository_selection": "selected" if inst.repos is not None else "all",
        },
    )
