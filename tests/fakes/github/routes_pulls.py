"""Fake endpoints: pull requests, workflow dispatches, check runs, App installations."""

from __future__ import annotations

import secrets
from datetime import timedelta
from typing import Any

from tests.fakes.github import payloads as P
from tests.fakes.github import payloads_pulls as PP
from tests.fakes.github.routing import (
    DOCS,
    Req,
    Resp,
    invalid,
    not_found,
    page,
    pull_json,
    repo_name,
    route,
)
from tests.fakes.github.state import CheckRunState, Dispatch, PullInfo, iso
from tests.fakes.github.store import IssuedToken, Store

# --- pull requests -----------------------------------------------------------------------


@route("GET", "/repos/{owner}/{repo}/pulls")
def list_pulls(store: Store, req: Req) -> Resp:
    """pulls/list: `head=owner:branch`, `base`, `state` filters; newest first."""
    repo = repo_name(req)
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
        chosen.append(pull_json(store, req, repo, issue.number, full=False))
    return page(req, chosen)


def _pull_info(store: Store, req: Req) -> PullInfo | None:
    issue = store.repos[repo_name(req)].issues.get(int(req.params["number"]))
    return issue.pull if issue is not None else None


def _who(login: str) -> dict[str, Any]:
    return {"login": login, "type": "Bot" if login.endswith("[bot]") else "User"}


@route("GET", "/repos/{owner}/{repo}/pulls/{number}/reviews")
def list_pull_reviews(store: Store, req: Req) -> Resp:
    """pulls/list-reviews, oldest first (the fields agentbot reads)."""
    p = _pull_info(store, req)
    if p is None:
        return not_found(f"{DOCS}/pulls/reviews#list-reviews-for-a-pull-request")
    items = [
        {"id": i + 1, "user": _who(login), "state": state, "body": "", "commit_id": p.head_sha,
         "submitted_at": "2026-01-01T00:00:00Z"}
        for i, (login, state) in enumerate(p.reviews)
    ]  # fmt: skip
    return page(req, items)


@route("GET", "/repos/{owner}/{repo}/pulls/{number}/commits")
def list_pull_commits(store: Store, req: Req) -> Resp:
    """pulls/list-commits, oldest first (the fields agentbot reads)."""
    p = _pull_info(store, req)
    if p is None:
        return not_found(f"{DOCS}/pulls/pulls#list-commits-on-a-pull-request")
    items = [
        {"sha": sha, "author": _who(login), "committer": _who(login),
         "commit": {"message": "a commit", "author": {"name": login}}}
        for sha, login in p.commits
    ]  # fmt: skip
    return page(req, items)


@route("GET", "/repos/{owner}/{repo}/pulls/{number}")
def get_pull(store: Store, req: Req) -> Resp:
    """pulls/get."""
    repo, number = repo_name(req), int(req.params["number"])
    issue = store.repos[repo].issues.get(number)
    if issue is None or issue.pull is None:
        return not_found(f"{DOCS}/pulls/pulls#get-a-pull-request")
    return Resp(200, pull_json(store, req, repo, number, full=True))


@route("POST", "/repos/{owner}/{repo}/pulls")
def create_pull(store: Store, req: Req) -> Resp:
    """pulls/create: 422 when the head branch is unknown or already has an open pull."""
    repo = repo_name(req)
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
    data = pull_json(store, req, repo, issue.number, full=True)
    return Resp(201, data, {"location": data["url"]})


@route("PATCH", "/repos/{owner}/{repo}/pulls/{number}")
def update_pull(store: Store, req: Req) -> Resp:
    """pulls/update: title, body, state, base."""
    repo, number = repo_name(req), int(req.params["number"])
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
    return Resp(200, pull_json(store, req, repo, number, full=True))


@route("POST", "/repos/{owner}/{repo}/pulls/{number}/requested_reviewers")
def request_reviewers(store: Store, req: Req) -> Resp:
    """pulls/request-reviewers: the author cannot review their own pull request."""
    repo, number = repo_name(req), int(req.params["number"])
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
    return Resp(201, pull_json(store, req, repo, number, full=False))


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
        repo_name(req), req.params["workflow"], body["ref"], inputs, store.timestamp()
    )
    store.dispatches.append(record)
    return Resp(204)


def _check_json(store: Store, req: Req, run: CheckRunState) -> dict[str, Any]:
    app = store.apps.get(run.app_id) if run.app_id is not None else None
    app_json = PP.app(app.id, app.slug, store.users[app.owner], req.urls) if app else None
    return PP.check_run(run, app_json, req.urls)


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
        repo=repo_name(req),
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
    if run is None or run.repo != repo_name(req):
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
    repo = repo_name(req)
    for inst in store.installations.values():
        covers = inst.repos is None or repo in inst.repos
        if inst.app_id == req.app_id and inst.account == req.params["owner"] and covers:
            app = store.apps[inst.app_id]
            account = store.users[inst.account]
            selected = inst.repos is not None
            return Resp(
                200, PP.installation(inst.id, app.id, app.slug, account, selected, req.urls)
            )
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


@route("GET", "/app", app=True)
def get_app(store: Store, req: Req) -> Resp:
    """apps/get-authenticated (App JWT): the App itself."""
    app = store.apps.get(req.app_id or 0)
    if app is None:
        return not_found(f"{DOCS}/apps/apps#get-the-authenticated-app")
    return Resp(200, {"id": app.id, "slug": app.slug, "name": app.slug})


@route("GET", "/rate_limit")
def rate_limit(store: Store, req: Req) -> Resp:
    """rate-limit/get (any auth; costs no quota): the core quota."""
    reset = int(store.now().timestamp()) + 3600
    core = {"limit": 5000, "remaining": 4999, "reset": reset, "used": 1, "resource": "core"}
    return Resp(200, {"resources": {"core": core}, "rate": core})
