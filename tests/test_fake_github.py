"""The fake GitHub keeps state, pages lists, records calls, injects faults, checks auth."""

from __future__ import annotations

import base64
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from bot.clock import FakeClock
from bot.github import AppAuth
from tests.fakes.github import DEFAULT_TOKEN, FakeGitHub, app_key, fake_github

REPO = "octo/app"


@pytest.fixture(scope="module")
def server() -> Iterator[FakeGitHub]:
    yield from fake_github()


@pytest.fixture
def gh(server: FakeGitHub) -> FakeGitHub:
    return server.reset(clock=FakeClock())


@pytest.fixture
def http(gh: FakeGitHub) -> Iterator[httpx.Client]:
    headers = {"Authorization": f"Bearer {DEFAULT_TOKEN}", "Accept": "application/vnd.github+json"}
    with httpx.Client(base_url=gh.url, headers=headers) as client:
        yield client


def seeded(gh: FakeGitHub) -> dict[str, int]:
    """A repository with an issue, a comment, a pull request, a check run and an App."""
    gh.add_repo(REPO, files={"README.md": "# app\n", "src/app.py": "print('hi')\n"})
    issue = gh.add_issue(REPO, title="Crash", labels=["bug"], assignees=["octocat"]).number
    comment = gh.add_comment(REPO, issue, "It crashes").id
    pull = gh.add_pull(REPO, head="feature", title="Feature", user="hubot").number
    gh.set_permission(REPO, "maintainer", "maintain")
    gh.install_app("octo", app_id=11, installation_id=22)
    return {"issue": issue, "comment": comment, "pull": pull}


def app_jwt(gh: FakeGitHub) -> dict[str, str]:
    assert gh.clock is not None
    token = AppAuth("11", app_key("agentbot").private_pem).jwt(gh.clock.now())
    return {"Authorization": f"Bearer {token}"}


def test_issue_lists_filter_by_labels_and_state_and_paginate(
    gh: FakeGitHub, http: httpx.Client
) -> None:
    for n in range(5):
        gh.add_issue(REPO, title=f"t{n}", labels=["agent-fix"] if n % 2 == 0 else ["other"])
    gh.add_issue(REPO, title="closed", labels=["agent-fix"], state="closed")
    first = http.get(f"/repos/{REPO}/issues", params={"labels": "agent-fix", "per_page": 2})
    assert [i["title"] for i in first.json()] == ["t4", "t2"]
    assert 'rel="next"' in first.headers["link"]
    second = http.get(
        f"/repos/{REPO}/issues", params={"labels": "agent-fix", "per_page": "2", "page": "2"}
    )
    assert [i["title"] for i in second.json()] == ["t0"]
    assert 'rel="next"' not in second.headers.get("link", "")
    every = http.get(f"/repos/{REPO}/issues", params={"labels": "agent-fix", "state": "all"})
    assert len(every.json()) == 4


def test_pulls_appear_in_the_issues_list_and_filter_by_head(
    gh: FakeGitHub, http: httpx.Client
) -> None:
    gh.add_issue(REPO, title="issue")
    gh.add_pull(REPO, head="agentbot/fix-issue-1", title="pr")
    gh.add_pull(REPO, head="other", title="other pr")
    issues = http.get(f"/repos/{REPO}/issues").json()
    assert [("pull_request" in i) for i in issues] == [True, True, False]
    mine = http.get(f"/repos/{REPO}/pulls", params={"head": "octo:agentbot/fix-issue-1"}).json()
    assert [p["title"] for p in mine] == ["pr"]
    assert http.get(f"/repos/{REPO}/pulls", params={"state": "closed"}).json() == []


def test_create_pull_refuses_a_second_open_pull_for_the_same_head(
    gh: FakeGitHub, http: httpx.Client
) -> None:
    gh.add_repo(REPO)
    body = {"title": "t", "head": "fix", "base": "main"}
    assert http.post(f"/repos/{REPO}/pulls", json=body).status_code == 201
    again = http.post(f"/repos/{REPO}/pulls", json=body)
    assert again.status_code == 422
    assert "already exists for octo:fix" in again.json()["errors"][0]["message"]


def test_a_bare_repository_makes_branches_and_files_real(
    gh: FakeGitHub, http: httpx.Client, tmp_path: Path
) -> None:
    bare, work = tmp_path / "app.git", tmp_path / "work"
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q", "--bare", "-b", "main", str(bare)], check=True)
    subprocess.run([*git, "clone", "-q", str(bare), str(work)], check=True)
    (work / "agentbot.yml").write_text("labels: [agent-fix]\n")
    subprocess.run([*git, "-C", str(work), "add", "."], check=True)
    subprocess.run([*git, "-C", str(work), "commit", "-qm", "init"], check=True)
    subprocess.run(
        [*git, "-C", str(work), "push", "-q", "origin", "main:main", "main:fix"], check=True
    )
    sha = subprocess.run(
        ["git", "-C", str(work), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    gh.add_repo(REPO, clone_url=f"file://{bare}")

    content = http.get(f"/repos/{REPO}/contents/agentbot.yml", params={"ref": "fix"}).json()
    assert content["type"] == "file"
    assert base64.b64decode(content["content"]).decode() == "labels: [agent-fix]\n"
    made = http.post(f"/repos/{REPO}/pulls", json={"title": "t", "head": "fix", "base": "main"})
    assert made.status_code == 201 and made.json()["head"]["sha"] == sha
    missing = http.post(f"/repos/{REPO}/pulls", json={"title": "t", "head": "nope", "base": "main"})
    assert missing.status_code == 422
    assert missing.json()["errors"][0]["field"] == "head"


def test_calls_are_recorded_with_status_body_and_clock_time(
    gh: FakeGitHub, http: httpx.Client
) -> None:
    assert isinstance(gh.clock, FakeClock)
    number = gh.add_issue(REPO).number
    gh.clock.advance(5)
    http.post(f"/repos/{REPO}/issues/{number}/comments", json={"body": "hello"})
    http.get(f"/repos/{REPO}/issues/{number}", params={"x": "1"})
    post, get = gh.calls
    assert (post.method, post.path, post.json, post.status, post.at) == (
        "POST",
        f"/repos/{REPO}/issues/{number}/comments",
        {"body": "hello"},
        201,
        5.0,
    )
    assert get.query == {"x": "1"} and get.json is None
    assert gh.writes() == [post]
    assert gh.calls_to("GET", rf"/repos/{REPO}/issues/\d+") == [get]
    assert gh.calls_to("*", r"/repos/.*") == [post, get]
    assert [c.body for c in gh.comments_on(REPO, number)] == ["hello"]
    gh.reset_calls()
    assert gh.calls == []


def test_fail_next_scripts_failures_then_recovers(gh: FakeGitHub, http: httpx.Client) -> None:
    number = gh.add_issue(REPO).number
    gh.fail_next("GET", rf"/repos/{REPO}/issues/\d+", 403, headers={"retry-after": "2"}, times=2)
    path = f"/repos/{REPO}/issues/{number}"
    first, second, third = (http.get(path) for _ in range(3))
    assert (first.status_code, first.headers["retry-after"]) == (403, "2")
    assert first.json()["message"] == "Forbidden"
    assert (second.status_code, third.status_code) == (403, 200)
    gh.fail_next("*", r".*", 502, body={"message": "Server Error"}, times=None)
    assert all(http.get(path).status_code == 502 for _ in range(3))
    gh.clear_faults()
    assert http.get(path).status_code == 200
    assert [c.status for c in gh.calls] == [403, 403, 200, 502, 502, 502, 200]


def test_requests_need_a_token_and_strict_mode_refuses_unknown_ones() -> None:
    with FakeGitHub(accept_any_token=False) as gh:
        gh.add_repo(REPO)
        gh.add_token("ghp_known", "alice")
        with httpx.Client(base_url=gh.url) as http:
            assert http.get(f"/repos/{REPO}").status_code == 401
            bad = http.get(f"/repos/{REPO}", headers={"Authorization": "token ghp_unknown"})
            assert bad.json()["message"] == "Bad credentials"
            ok = http.post(
                f"/repos/{REPO}/issues/{gh.add_issue(REPO).number}/comments",
                json={"body": "hi"},
                headers={"Authorization": "token ghp_known"},
            )
            assert ok.json()["user"]["login"] == "alice"
            checks = http.post(
                f"/repos/{REPO}/check-runs",
                json={"name": "n", "head_sha": "a" * 40},
                headers={"Authorization": "token ghp_known"},
            )
            assert checks.status_code == 403


def test_installation_tokens_expire_on_the_fake_clock(gh: FakeGitHub, http: httpx.Client) -> None:
    assert isinstance(gh.clock, FakeClock)
    seeded(gh)
    token = http.post("/app/installations/22/access_tokens", headers=app_jwt(gh)).json()["token"]
    auth = {"Authorization": f"token {token}"}
    made = http.post(f"/repos/{REPO}/issues/1/comments", json={"body": "hi"}, headers=auth)
    assert made.json()["user"]["login"] == "agentbot[bot]"
    assert made.json()["user"]["type"] == "Bot"
    gh.add_repo("elsewhere/repo")
    assert http.get("/repos/elsewhere/repo", headers=auth).status_code == 404
    gh.clock.advance(3600)
    assert http.get(f"/repos/{REPO}", headers=auth).status_code == 401


def test_jwts_are_verified_with_the_registered_public_key(
    gh: FakeGitHub, http: httpx.Client
) -> None:
    assert gh.clock is not None
    seeded(gh)
    forged = AppAuth("11", app_key("someone-else").private_pem).jwt(gh.clock.now())
    refused = http.post(
        "/app/installations/22/access_tokens", headers={"Authorization": f"Bearer {forged}"}
    )
    assert refused.status_code == 401
    assert "could not be decoded" in refused.json()["message"]
    assert gh.jwt_claims == []
    on_repo = http.get(f"/repos/{REPO}", headers=app_jwt(gh))
    assert on_repo.status_code == 403
