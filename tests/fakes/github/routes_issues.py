"""Fake endpoints: repositories, contents, permissions, issues, comments, labels."""

from __future__ import annotations

from tests.fakes.github import payloads as P
from tests.fakes.github import payloads_pulls as PP
from tests.fakes.github.routing import (
    DOCS,
    Req,
    Resp,
    invalid,
    issue_json,
    not_found,
    page,
    repo_name,
    route,
)
from tests.fakes.github.state import CommentState, iso
from tests.fakes.github.store import Store

# --- repositories ------------------------------------------------------------------------


@route("GET", "/repos/{owner}/{repo}")
def get_repo(store: Store, req: Req) -> Resp:
    """repos/get."""
    r = store.repos[repo_name(req)]
    return Resp(200, P.repo(r, store.users[r.owner], req.urls))


@route("GET", "/repos/{owner}/{repo}/contents/{path*}")
def get_content(store: Store, req: Req) -> Resp:
    """repos/get-content (files and directories; `Accept: ...raw` returns the bytes)."""
    r = store.repos[repo_name(req)]
    path = req.params["path"].strip("/")
    ref = req.query.get("ref") or r.default_branch
    found = r.read(path, ref)
    if found is None:
        return not_found(f"{DOCS}/repos/contents#get-repository-content")
    if "raw" in req.headers.get("accept", "") and isinstance(found, str):
        return Resp(200, found, {"content-type": "application/vnd.github.raw; charset=utf-8"})
    return Resp(200, PP.contents(r, path, ref, found, req.urls))


@route("GET", "/repos/{owner}/{repo}/collaborators/{username}/permission")
def get_permission(store: Store, req: Req) -> Resp:
    """repos/get-collaborator-permission-level."""
    login = req.params["username"]
    if login not in store.users:
        return not_found(f"{DOCS}/collaborators/collaborators")
    role = store.role(repo_name(req), login)
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
    repo = repo_name(req)
    r = store.repos[repo]
    state = req.query.get("state", "open")
    wanted = [name for name in req.query.get("labels", "").split(",") if name]
    issues = [
        i
        for i in sorted(r.issues.values(), key=lambda i: i.number, reverse=True)
        if (state == "all" or i.state == state) and all(w in i.labels for w in wanted)
    ]
    return page(req, [issue_json(store, req, repo, i.number) for i in issues])


@route("GET", "/repos/{owner}/{repo}/issues/{number}")
def get_issue(store: Store, req: Req) -> Resp:
    """issues/get."""
    repo = repo_name(req)
    if int(req.params["number"]) not in store.repos[repo].issues:
        return not_found(f"{DOCS}/issues/issues#get-an-issue")
    return Resp(200, issue_json(store, req, repo, int(req.params["number"])))


@route("GET", "/repos/{owner}/{repo}/issues/{number}/comments")
def list_comments(store: Store, req: Req) -> Resp:
    """issues/list-comments: oldest first."""
    repo, number = repo_name(req), int(req.params["number"])
    if number not in store.repos[repo].issues:
        return not_found()
    comments = store.comments_on(repo, number)
    return page(req, [P.comment(c, store.users, req.urls) for c in comments])


@route("POST", "/repos/{owner}/{repo}/issues/{number}/comments")
def create_comment(store: Store, req: Req) -> Resp:
    """issues/create-comment."""
    repo, number = repo_name(req), int(req.params["number"])
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
    if comment is None or comment.repo != repo_name(req):
        return not_found()
    return Resp(200, P.comment(comment, store.users, req.urls))


@route("PATCH", "/repos/{owner}/{repo}/issues/comments/{comment_id}")
def update_comment(store: Store, req: Req) -> Resp:
    """issues/update-comment."""
    comment = store.comments.get(int(req.params["comment_id"]))
    if comment is None or comment.repo != repo_name(req):
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
    repo, number = repo_name(req), int(req.params["number"])
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
    repo, number = repo_name(req), int(req.params["number"])
    r = store.repos[repo]
    name = req.params["name"]
    if number not in r.issues or name not in r.issues[number].labels:
        return Resp(404, P.error("Label does not exist", f"{DOCS}/issues/labels", status="404"))
    r.issues[number].labels.remove(name)
    return Resp(200, [P.label(r.labels[n], repo, req.urls) for n in r.issues[number].labels])
