"""JSON shapes of the fake's responses, following GitHub's OpenAPI description."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tests.fakes.github.state import (
    CommentState,
    IssueState,
    Label,
    RepoState,
    User,
)


@dataclass(frozen=True)
class Urls:
    """Where the fake lives (`api`) and the web base its `html_url`s point at."""

    api: str
    web: str = "https://github.com"


def user(u: User, urls: Urls) -> dict[str, Any]:
    """`simple-user`."""
    api = f"{urls.api}/users/{u.login}"
    return {
        "login": u.login,
        "id": u.id,
        "node_id": f"MDQ6VXNlcn{u.id}",
        "avatar_url": f"https://avatars.githubusercontent.com/u/{u.id}?v=4",
        "gravatar_id": "",
        "url": api,
        "html_url": f"{urls.web}/{u.login}",
        "followers_url": f"{api}/followers",
        "following_url": f"{api}/following{{/other_user}}",
        "gists_url": f"{api}/gists{{/gist_id}}",
        "starred_url": f"{api}/starred{{/owner}}{{/repo}}",
        "subscriptions_url": f"{api}/subscriptions",
        "organizations_url": f"{api}/orgs",
        "repos_url": f"{api}/repos",
        "events_url": f"{api}/events{{/privacy}}",
        "received_events_url": f"{api}/received_events",
        "type": u.type,
        "site_admin": False,
        "user_view_type": "public",
    }


def repo(r: RepoState, owner: User, urls: Urls) -> dict[str, Any]:
    """`full-repository`, also valid as `repository` (pull request head/base)."""
    api = f"{urls.api}/repos/{r.full_name}"
    web = f"{urls.web}/{r.full_name}"
    templated = {
        "archive_url": "/{archive_format}{/ref}",
        "assignees_url": "/assignees{/user}",
        "blobs_url": "/git/blobs{/sha}",
        "branches_url": "/branches{/branch}",
        "collaborators_url": "/collaborators{/collaborator}",
        "comments_url": "/comments{/number}",
        "commits_url": "/commits{/sha}",
        "compare_url": "/compare/{base}...{head}",
        "contents_url": "/contents/{+path}",
        "contributors_url": "/contributors",
        "deployments_url": "/deployments",
        "downloads_url": "/downloads",
        "events_url": "/events",
        "forks_url": "/forks",
        "git_commits_url": "/git/commits{/sha}",
        "git_refs_url": "/git/refs{/sha}",
        "git_tags_url": "/git/tags{/sha}",
        "hooks_url": "/hooks",
        "issue_comment_url": "/issues/comments{/number}",
        "issue_events_url": "/issues/events{/number}",
        "issues_url": "/issues{/number}",
        "keys_url": "/keys{/key_id}",
        "labels_url": "/labels{/name}",
        "languages_url": "/languages",
        "merges_url": "/merges",
        "milestones_url": "/milestones{/number}",
        "notifications_url": "/notifications{?since,all,participating}",
        "pulls_url": "/pulls{/number}",
        "releases_url": "/releases{/id}",
        "stargazers_url": "/stargazers",
        "statuses_url": "/statuses/{sha}",
        "subscribers_url": "/subscribers",
        "subscription_url": "/subscription",
        "tags_url": "/tags",
        "teams_url": "/teams",
        "trees_url": "/git/trees{/sha}",
    }
    open_issues = sum(1 for i in r.issues.values() if i.state == "open")
    return {
        "id": r.id,
        "node_id": f"R_kgDO{r.id}",
        "name": r.name,
        "full_name": r.full_name,
        "owner": user(owner, urls),
        "private": r.private,
        "html_url": web,
        "description": r.description,
        "fork": r.fork,
        "url": api,
        **{key: api + suffix for key, suffix in templated.items()},
        "clone_url": r.clone_url or f"{web}.git",
        "git_url": f"git://github.com/{r.full_name}.git",
        "ssh_url": f"git@github.com:{r.full_name}.git",
        "svn_url": web,
        "mirror_url": None,
        "homepage": None,
        "language": "Python",
        "forks": 0,
        "forks_count": 0,
        "stargazers_count": 0,
        "watchers": 0,
        "watchers_count": 0,
        "size": 1,
        "default_branch": r.default_branch,
        "open_issues": open_issues,
        "open_issues_count": open_issues,
        "is_template": False,
        "topics": [],
        "has_issues": True,
        "has_projects": True,
        "has_wiki": True,
        "has_pages": False,
        "has_downloads": True,
        "has_discussions": False,
        "archived": False,
        "disabled": False,
        "visibility": "private" if r.private else "public",
        "pushed_at": r.created_at,
        "created_at": r.created_at,
        "updated_at": r.created_at,
        "license": None,
        "allow_forking": True,
        "web_commit_signoff_required": False,
        "network_count": 0,
        "subscribers_count": 0,
    }


def label(lb: Label, repo_name: str, urls: Urls) -> dict[str, Any]:
    """`label`."""
    return {
        "id": lb.id,
        "node_id": f"LA_kwDO{lb.id}",
        "url": f"{urls.api}/repos/{repo_name}/labels/{lb.name.replace(' ', '%20')}",
        "name": lb.name,
        "description": lb.description,
        "color": lb.color,
        "default": False,
    }


def issue(
    i: IssueState, r: RepoState, users: dict[str, User], urls: Urls, *, comments: int = 0
) -> dict[str, Any]:
    """`issue` (a pull request seen through the issues API carries `pull_request`)."""
    api = f"{urls.api}/repos/{r.full_name}/issues/{i.number}"
    kind = "pull" if i.pull is not None else "issues"
    assignees = [user(users[a], urls) for a in i.assignees]
    data: dict[str, Any] = {
        "id": i.id,
        "node_id": f"I_kwDO{i.id}",
        "url": api,
        "repository_url": f"{urls.api}/repos/{r.full_name}",
        "labels_url": f"{api}/labels{{/name}}",
        "comments_url": f"{api}/comments",
        "events_url": f"{api}/events",
        "html_url": f"{urls.web}/{r.full_name}/{kind}/{i.number}",
        "timeline_url": f"{api}/timeline",
        "number": i.number,
        "title": i.title,
        "body": i.body,
        "user": user(users[i.user], urls),
        "labels": [label(r.labels[name], r.full_name, urls) for name in i.labels],
        "state": i.state,
        "state_reason": "completed" if i.state == "closed" else None,
        "locked": i.locked,
        "active_lock_reason": "resolved" if i.locked else None,
        "assignee": assignees[0] if assignees else None,
        "assignees": assignees,
        "milestone": None,
        "comments": comments,
        "created_at": i.created_at,
        "updated_at": i.updated_at,
        "closed_at": i.closed_at,
        "closed_by": None,
        "author_association": "NONE",
        "reactions": _reactions(api),
    }
    if i.pull is not None:
        pulls = f"{urls.api}/repos/{r.full_name}/pulls/{i.number}"
        web = f"{urls.web}/{r.full_name}/pull/{i.number}"
        data["draft"] = i.pull.draft
        data["pull_request"] = {
            "url": pulls,
            "html_url": web,
            "diff_url": f"{web}.diff",
            "patch_url": f"{web}.patch",
            "merged_at": i.updated_at if i.pull.merged else None,
        }
    return data


def _reactions(api: str) -> dict[str, Any]:
    return {
        "url": f"{api}/reactions",
        "total_count": 0,
        **dict.fromkeys(("+1", "-1", "laugh", "confused", "heart", "hooray", "eyes", "rocket"), 0),
    }


def comment(c: CommentState, users: dict[str, User], urls: Urls) -> dict[str, Any]:
    """`issue-comment`."""
    return {
        "id": c.id,
        "node_id": f"IC_kwDO{c.id}",
        "url": f"{urls.api}/repos/{c.repo}/issues/comments/{c.id}",
        "html_url": f"{urls.web}/{c.repo}/issues/{c.issue_number}#issuecomment-{c.id}",
        "issue_url": f"{urls.api}/repos/{c.repo}/issues/{c.issue_number}",
        "body": c.body,
        "user": user(users[c.user], urls),
        "created_at": c.created_at,
        "updated_at": c.updated_at,
        "author_association": "NONE",
        "reactions": _reactions(f"{urls.api}/repos/{c.repo}/issues/comments/{c.id}"),
    }


def error(message: str, doc: str = "https://docs.github.com/rest", **extra: Any) -> dict[str, Any]:
    """`basic-error` / `validation-error`."""
    return {"message": message, "documentation_url": doc, **extra}
