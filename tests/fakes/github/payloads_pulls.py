"""JSON shapes of pull requests, contents, check runs and Apps (GitHub's OpenAPI)."""

from __future__ import annotations

import base64
import hashlib
from typing import Any

from tests.fakes.github.payloads import Urls, issue, repo, user
from tests.fakes.github.state import CheckRunState, IssueState, RepoState, User


def pull(
    i: IssueState,
    r: RepoState,
    head_repo: RepoState | None,
    users: dict[str, User],
    urls: Urls,
    *,
    full: bool,
    comments: int = 0,
) -> dict[str, Any]:
    """`pull-request` (full) or `pull-request-simple` (lists)."""
    assert i.pull is not None
    p = i.pull
    api = f"{urls.api}/repos/{r.full_name}/pulls/{i.number}"
    issue_api = f"{urls.api}/repos/{r.full_name}/issues/{i.number}"
    web = f"{urls.web}/{r.full_name}/pull/{i.number}"
    owner = users[r.owner]

    def side(ref: str, sha: str, side_repo: RepoState | None) -> dict[str, Any]:
        side_owner = users[side_repo.owner] if side_repo is not None else owner
        return {
            "label": f"{side_owner.login}:{ref}",
            "ref": ref,
            "sha": sha,
            "user": user(side_owner, urls),
            "repo": repo(side_repo, side_owner, urls) if side_repo is not None else None,
        }

    issue_payload = issue(i, r, users, urls, comments=comments)
    data: dict[str, Any] = {
        "url": api,
        "id": p.id,
        "node_id": f"PR_kwDO{p.id}",
        "html_url": web,
        "diff_url": f"{web}.diff",
        "patch_url": f"{web}.patch",
        "issue_url": issue_api,
        "commits_url": f"{api}/commits",
        "review_comments_url": f"{api}/comments",
        "review_comment_url": f"{urls.api}/repos/{r.full_name}/pulls/comments{{/number}}",
        "comments_url": f"{issue_api}/comments",
        "statuses_url": f"{urls.api}/repos/{r.full_name}/statuses/{p.head_sha}",
        "number": i.number,
        "state": i.state,
        "locked": i.locked,
        "title": i.title,
        "user": user(users[i.user], urls),
        "body": i.body,
        "labels": issue_payload["labels"],
        "milestone": None,
        "active_lock_reason": None,
        "created_at": i.created_at,
        "updated_at": i.updated_at,
        "closed_at": i.closed_at,
        "merged_at": i.updated_at if p.merged else None,
        "merge_commit_sha": None,
        "assignee": issue_payload["assignee"],
        "assignees": issue_payload["assignees"],
        "requested_reviewers": [user(users[u], urls) for u in p.requested_reviewers],
        "requested_teams": [],
        "head": side(p.head_ref, p.head_sha, head_repo),
        "base": side(p.base_ref, p.base_sha, r),
        "_links": {
            name: {"href": href}
            for name, href in {
                "self": api,
                "html": web,
                "issue": issue_api,
                "comments": f"{issue_api}/comments",
                "review_comments": f"{api}/comments",
                "review_comment": f"{urls.api}/repos/{r.full_name}/pulls/comments{{/number}}",
                "commits": f"{api}/commits",
                "statuses": f"{urls.api}/repos/{r.full_name}/statuses/{p.head_sha}",
            }.items()
        },
        "author_association": "NONE",
        "auto_merge": None,
        "draft": p.draft,
    }
    if full:
        data.update(
            merged=p.merged,
            mergeable=None,
            rebaseable=None,
            mergeable_state="unknown",
            merged_by=None,
            comments=issue_payload["comments"],
            review_comments=0,
            maintainer_can_modify=p.maintainer_can_modify,
            commits=1,
            additions=0,
            deletions=0,
            changed_files=0,
        )
    return data


def contents(
    r: RepoState, path: str, ref: str, found: str | list[str], urls: Urls
) -> dict[str, Any] | list[dict[str, Any]]:
    """`content-file`, or the `content-directory` list."""

    def entry(entry_path: str, kind: str, size: int, sha: str) -> dict[str, Any]:
        api = f"{urls.api}/repos/{r.full_name}/contents/{entry_path}?ref={ref}"
        web = f"{urls.web}/{r.full_name}/{'blob' if kind == 'file' else 'tree'}/{ref}/{entry_path}"
        git = f"{urls.api}/repos/{r.full_name}/git/{'blobs' if kind == 'file' else 'trees'}/{sha}"
        return {
            "type": kind,
            "size": size,
            "name": entry_path.rsplit("/", 1)[-1],
            "path": entry_path,
            "sha": sha,
            "url": api,
            "git_url": git,
            "html_url": web,
            "download_url": (
                f"https://raw.githubusercontent.com/{r.full_name}/{ref}/{entry_path}"
                if kind == "file"
                else None
            ),
            "_links": {"self": api, "git": git, "html": web},
        }

    if isinstance(found, list):
        prefix = f"{path}/" if path else ""
        return [
            entry(prefix + name, "file", 0, hashlib.sha1(name.encode()).hexdigest())
            for name in found
        ]
    raw = found.encode()
    sha = hashlib.sha1(b"blob %d\0" % len(raw) + raw).hexdigest()
    encoded = base64.encodebytes(raw).decode()
    return {**entry(path, "file", len(raw), sha), "content": encoded, "encoding": "base64"}


def check_run(c: CheckRunState, app: dict[str, Any] | None, urls: Urls) -> dict[str, Any]:
    """`check-run`."""
    api = f"{urls.api}/repos/{c.repo}/check-runs/{c.id}"
    return {
        "id": c.id,
        "node_id": f"CR_kwDO{c.id}",
        "head_sha": c.head_sha,
        "external_id": "",
        "url": api,
        "html_url": f"{urls.web}/{c.repo}/runs/{c.id}",
        "details_url": f"{urls.web}/{c.repo}/runs/{c.id}",
        "status": c.status,
        "conclusion": c.conclusion,
        "started_at": c.started_at,
        "completed_at": c.completed_at,
        "output": {
            "title": c.title,
            "summary": c.summary,
            "text": None,
            "annotations_count": 0,
            "annotations_url": f"{api}/annotations",
        },
        "name": c.name,
        "check_suite": {"id": c.id + 1},
        "app": app,
        "pull_requests": [],
    }


def app(app_id: int, slug: str, owner: User, urls: Urls) -> dict[str, Any]:
    """`integration` (a GitHub App)."""
    return {
        "id": app_id,
        "slug": slug,
        "node_id": f"A_kwDO{app_id}",
        "client_id": f"Iv1.{app_id:016x}",
        "owner": user(owner, urls),
        "name": slug,
        "description": "",
        "external_url": f"{urls.web}/apps/{slug}",
        "html_url": f"{urls.web}/apps/{slug}",
        "created_at": "2025-01-01T00:00:00Z",
        "updated_at": "2025-01-01T00:00:00Z",
        "permissions": {"issues": "write", "pull_requests": "write", "contents": "write"},
        "events": ["issues", "issue_comment", "pull_request", "push"],
    }


def installation(
    installation_id: int, app_id: int, slug: str, account: User, selected: bool, urls: Urls
) -> dict[str, Any]:
    """`installation`."""
    return {
        "id": installation_id,
        "account": user(account, urls),
        "repository_selection": "selected" if selected else "all",
        "access_tokens_url": f"{urls.api}/app/installations/{installation_id}/access_tokens",
        "repositories_url": f"{urls.api}/installation/repositories",
        "html_url": f"{urls.web}/settings/installations/{installation_id}",
        "app_id": app_id,
        "app_slug": slug,
        "target_id": account.id,
        "target_type": account.type if account.type != "Bot" else "User",
        "permissions": {"issues": "write", "pull_requests": "write", "contents": "write"},
        "events": ["issues", "issue_comment", "pull_request", "push"],
        "created_at": "2025-01-01T00:00:00Z",
        "updated_at": "2025-01-01T00:00:00Z",
        "single_file_name": None,
        "suspended_by": None,
        "suspended_at": None,
    }
