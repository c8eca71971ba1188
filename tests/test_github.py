"""The GitHub port's calls, against the fake GitHub server: requests sent and models parsed."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bot.clock import FakeClock
from bot.errors import GitHubError
from bot.github import Comment, GitHub, Issue, PullRequest, Repo
from tests.fakes.github import FakeGitHub, fake_github

REPO = "octo/app"


@pytest.fixture(scope="module")
def server() -> Iterator[FakeGitHub]:
    yield from fake_github()


@pytest.fixture
def gh(server: FakeGitHub) -> FakeGitHub:
    server.reset(clock=FakeClock())
    server.add_repo(REPO)
    return server


@pytest.fixture
def client(gh: FakeGitHub) -> GitHub:
    return gh.client()


def test_get_issue_parses_the_fields_we_use(gh: FakeGitHub, client: GitHub) -> None:
    n = gh.add_issue(
        REPO,
        title="Crash on start",
        body="Traceback...",
        user="alice",
        labels=["agent-fix", "bug"],
        assignees=["bob"],
        locked=True,
    ).number
    assert client.get_issue(REPO, n) == Issue(
        number=n,
        title="Crash on start",
        body="Traceback...",
        state="open",
        locked=True,
        labels=["agent-fix", "bug"],
        user="alice",
        assignees=["bob"],
        html_url=f"https://github.com/{REPO}/issues/{n}",
        is_pull_request=False,
    )
    pr = gh.add_pull(REPO, head="feature").number
    assert client.get_issue(REPO, pr).is_pull_request


def test_a_missing_issue_is_a_github_error_with_the_issue_number(
    gh: FakeGitHub, client: GitHub
) -> None:
    with pytest.raises(GitHubError, match=r"^Issue #42 not found$") as caught:
        client.get_issue(REPO, 42)
    assert (caught.value.status, caught.value.issue_number, caught.value.method) == (404, 42, "GET")
    assert caught.value.url.endswith(f"/repos/{REPO}/issues/42")
    assert len(gh.calls) == 1  # a 404 is never retried


def test_comments_are_listed_over_every_page_created_and_updated(
    gh: FakeGitHub, client: GitHub
) -> None:
    n = gh.add_issue(REPO).number
    for i in range(130):
        gh.add_comment(REPO, n, f"comment {i}", user="alice")
    comments = client.list_issue_comments(REPO, n)
    assert [c.body for c in comments] == [f"comment {i}" for i in range(130)]
    assert [c.query.get("page") for c in gh.calls] == ["1", "2"]
    made = client.create_comment(REPO, n, "Working on it")
    assert made == Comment(
        id=made.id,
        body="Working on it",
        user="github-actions[bot]",
        html_url=f"https://github.com/{REPO}/issues/{n}#issuecomment-{made.id}",
        author_association="NONE",
    )
    updated = client.update_comment(REPO, made.id, "Done")
    assert (updated.id, updated.body) == (made.id, "Done")
    assert gh.comments[made.id].body == "Done"


def test_labels_are_added_and_removed_even_with_spaces_and_slashes(
    gh: FakeGitHub, client: GitHub
) -> None:
    n = gh.add_issue(REPO, labels=["agent-fix"]).number
    client.add_labels(REPO, n, ["agent: working", "area/core"])
    assert gh.labels_on(REPO, n) == ["agent-fix", "agent: working", "area/core"]
    client.remove_label(REPO, n, "area/core")
    client.remove_label(REPO, n, "agent-fix")
    client.remove_label(REPO, n, "never-there")  # 404 is fine
    assert gh.labels_on(REPO, n) == ["agent: working"]
    calls_before = len(gh.calls)
    client.add_labels(REPO, n, [])
    assert len(gh.calls) == calls_before


@pytest.mark.parametrize(
    ("role", "expected"),
    [("admin", "admin"), ("maintain", "maintain"), ("write", "write"), ("triage", "triage")],
)
def test_permission_uses_role_name(
    gh: FakeGitHub, client: GitHub, role: str, expected: str
) -> None:
    gh.set_permission(REPO, "alice", role)
    assert client.permission(REPO, "alice") == expected


def test_permission_of_unknown_users_and_custom_roles(gh: FakeGitHub, client: GitHub) -> None:
    assert client.permission(REPO, "ghost-user-404") == "none"
    gh.add_user("reader")
    assert client.permission(REPO, "reader") == "read"  # public repository
    # A custom role's name is not one of ours: fall back to the legacy permission field.
    gh.fail_next(
        "GET",
        r".*/permission",
        200,
        body={"permission": "write", "role_name": "release-manager", "user": None},
    )
    assert client.permission(REPO, "reader") == "write"


def test_repository_and_default_branch(gh: FakeGitHub, client: GitHub) -> None:
    gh.add_repo(REPO, default_branch="trunk", clone_url="file:///tmp/x.git", private=True)
    assert client.get_repo(REPO) == Repo(
        full_name=REPO, default_branch="trunk", clone_url="file:///tmp/x.git", private=True
    )
    assert client.default_branch(REPO) == "trunk"


def test_get_file_reads_text_at_a_ref(gh: FakeGitHub, client: GitHub) -> None:
    gh.set_file(REPO, ".github/agentbot.yml", "labels:\n  fix: agent-fix\n")
    gh.set_file(REPO, "docs/a b#c.md", "ünïcode ✓\n", ref="feature")
    assert client.get_file(REPO, ".github/agentbot.yml") == "labels:\n  fix: agent-fix\n"
    assert client.get_file(REPO, "docs/a b#c.md", ref="feature") == "ünïcode ✓\n"
    assert client.get_file(REPO, "docs/a b#c.md") is None  # not on the default branch
    assert client.get_file(REPO, ".github") is None  # a directory
    assert gh.calls[0].query == {}
    assert gh.calls[1].query == {"ref": "feature"}


def test_get_file_falls_back_to_the_raw_media_type_for_big_files(
    gh: FakeGitHub, client: GitHub
) -> None:
    gh.set_file(REPO, "big.txt", "x" * 10)
    big = {"type": "file", "encoding": "none", "content": "", "name": "big.txt"}
    gh.fail_next("GET", r".*/contents/big.txt", 200, body=big)
    assert client.get_file(REPO, "big.txt") == "x" * 10
    assert "raw" in gh.calls[-1].headers["accept"]


def test_list_issues_excludes_pulls_filters_labels_and_follows_pages(
    gh: FakeGitHub, client: GitHub
) -> None:
    for i in range(120):
        gh.add_issue(REPO, title=f"issue {i}", labels=["agent-fix"])
    gh.add_issue(REPO, title="unlabelled")
    gh.add_issue(REPO, title="closed", labels=["agent-fix"], state="closed")
    gh.add_pull(REPO, head="x", labels=["agent-fix"])
    issues = client.list_issues(REPO, labels=["agent-fix"])
    assert len(issues) == 120
    assert not any(i.is_pull_request for i in issues)
    assert {c.query["labels"] for c in gh.calls} == {"agent-fix"}
    assert len(gh.calls) == 2
    closed = client.list_issues(REPO, labels=["agent-fix"], state="closed")
    assert [i.title for i in closed] == ["closed"]
    with pytest.raises(GitHubError, match="state must be"):
        client.list_issues(REPO, state="merged")


def test_pulls_are_created_listed_fetched_and_updated(gh: FakeGitHub, client: GitHub) -> None:
    made = client.create_pull(
        REPO, title="fix: crash (Fixes #1)", head="agentbot/fix-issue-1", base="main", body="Body"
    )
    assert made == PullRequest(
        number=made.number,
        html_url=f"https://github.com/{REPO}/pull/{made.number}",
        title="fix: crash (Fixes #1)",
        body="Body",
        state="open",
        draft=False,
        head_ref="agentbot/fix-issue-1",
        head_sha=made.head_sha,
        head_repo=REPO,
        base_ref="main",
        user="github-actions[bot]",
        created_at=made.created_at,
    )
    assert made.created_at is not None and made.merged_at is None
    assert len(made.head_sha) == 40
    assert gh.calls[-1].json == {
        "title": "fix: crash (Fixes #1)",
        "head": "agentbot/fix-issue-1",
        "base": "main",
        "body": "Body",
        "draft": False,
    }
    gh.add_pull(REPO, head="someone-else")
    mine = client.list_pulls(REPO, head="octo:agentbot/fix-issue-1")
    assert [p.number for p in mine] == [made.number]
    assert gh.calls[-1].query["head"] == "octo:agentbot/fix-issue-1"
    assert len(client.list_pulls(REPO)) == 2
    assert client.list_pulls(REPO, state="closed") == []
    updated = client.update_pull(REPO, made.number, body="New body")
    assert (updated.title, updated.body) == (made.title, "New body")
    assert gh.calls[-1].json == {"body": "New body"}
    assert client.get_pull(REPO, made.number) == updated


def test_pull_from_a_deleted_fork_has_an_empty_head_repo(gh: FakeGitHub, client: GitHub) -> None:
    n = gh.add_pull(REPO, head="patch-1", head_repo="").number
    assert client.get_pull(REPO, n).head_repo == ""


def test_pull_errors_carry_githubs_message(gh: FakeGitHub, client: GitHub) -> None:
    client.create_pull(REPO, title="t", head="b", base="main", body="")
    with pytest.raises(GitHubError) as caught:
        client.create_pull(REPO, title="t", head="b", base="main", body="")
    assert caught.value.status == 422
    assert "Validation Failed (A pull request already exists for octo:b.)" in str(caught.value)
    with pytest.raises(GitHubError, match=r"^Pull request #77 not found$"):
        client.get_pull(REPO, 77)


def test_reviewers_workflow_dispatch_and_check_runs(gh: FakeGitHub, client: GitHub) -> None:
    pr = client.create_pull(REPO, title="t", head="b", base="main", body="")
    client.request_reviewers(REPO, pr.number, ["alice"])
    assert gh.issue(REPO, pr.number).pull.requested_reviewers == ["alice"]  # type: ignore[union-attr]
    client.dispatch_workflow(REPO, "agentbot.yml", ref="main", inputs={"issue": "7"})
    (dispatch,) = gh.dispatches
    assert (dispatch.workflow, dispatch.ref, dispatch.inputs) == (
        "agentbot.yml",
        "main",
        {"issue": "7"},
    )
    run_id = client.create_check_run(REPO, name="agentbot", head_sha=pr.head_sha)
    assert gh.check_runs[run_id].status == "in_progress"
    client.update_check_run(
        REPO, run_id, status="completed", conclusion="success", title="Fixed", summary="All green"
    )
    run = gh.check_runs[run_id]
    assert (run.status, run.conclusion, run.title, run.summary) == (
        "completed",
        "success",
        "Fixed",
        "All green",
    )


def test_calls_counts_every_request_sent(gh: FakeGitHub, client: GitHub) -> None:
    n = gh.add_issue(REPO).number
    client.get_issue(REPO, n)
    client.create_comment(REPO, n, "x")
    gh.fail_next("GET", r".*", 502)
    client.get_repo(REPO)
    assert client.calls == len(gh.calls) == 4


def test_bad_repository_names_are_refused_before_any_request(
    gh: FakeGitHub, client: GitHub
) -> None:
    for bad in ("octo", "octo/app/x", "/app"):
        with pytest.raises(GitHubError, match="not an owner/name"):
            client.get_repo(bad)
    assert gh.calls == []


def test_a_body_githubkit_refuses_is_a_github_error_and_is_not_sent(
    gh: FakeGitHub, client: GitHub
) -> None:
    run_id = client.create_check_run(REPO, name="agentbot", head_sha="a" * 40)
    with pytest.raises(GitHubError, match="request not sent") as caught:
        client.update_check_run(REPO, run_id, status="completed", conclusion="great")
    assert caught.value.method == "PATCH" and caught.value.status is None
    assert [c.method for c in gh.calls] == ["POST"]
