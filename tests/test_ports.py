"""The job's GitHub wrappers on the fake GitHub: FactCache asks each fact once, dry runs
record every write and send none, and the real client fits the port."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bot.config import RepoConfig
from bot.ports import FactCache, GitHubPort
from bot.ports.recording import RecordingGitHub
from tests.fakes.github import FakeGitHub

REPO = "octo/app"


@pytest.fixture
def gh() -> Iterator[FakeGitHub]:
    with FakeGitHub() as fake:
        fake.add_repo(REPO, default_branch="trunk")
        fake.add_issue(REPO, number=1, title="one")
        fake.add_issue(REPO, number=2, title="two")
        fake.add_comment(REPO, 2, "hello", user="bob")
        fake.set_permission(REPO, "alice", "write")
        fake.set_file(REPO, ".github/agentbot.yml", "model: from-trunk\n", ref="trunk")
        yield fake


def test_the_real_client_is_a_github_port(gh: FakeGitHub) -> None:
    port: GitHubPort = gh.client()  # mypy checks the fit; the call proves it is usable
    assert port.default_branch(REPO) == "trunk"


def test_each_fact_is_fetched_once(gh: FakeGitHub) -> None:
    facts = FactCache(gh.client())
    for _ in range(3):
        assert facts.default_branch(REPO) == "trunk"
        assert facts.config(REPO).model == "from-trunk"
        assert facts.permission(REPO, "alice") == "write"
        assert facts.permission(REPO, "Alice") == "write"  # logins are case-insensitive
        assert facts.get_issue(REPO, 2).title == "two"
        assert [c.body for c in facts.list_issue_comments(REPO, 2)] == ["hello"]
    assert len(gh.calls_to("GET", rf"/repos/{REPO}$")) == 1
    assert len(gh.calls_to("GET", rf"/repos/{REPO}/contents/.*")) == 1
    assert len(gh.calls_to("GET", rf"/repos/{REPO}/collaborators/.*")) == 1
    assert len(gh.calls_to("GET", rf"/repos/{REPO}/issues/2$")) == 1
    assert len(gh.calls_to("GET", rf"/repos/{REPO}/issues/2/comments")) == 1


def test_the_delivery_names_the_default_branch(gh: FakeGitHub) -> None:
    facts = FactCache(gh.client(), default_branches={REPO: "trunk"})
    assert facts.config(REPO) == RepoConfig(model="from-trunk")
    assert gh.calls_to("GET", rf"/repos/{REPO}$") == []


def test_an_issue_without_comments_is_not_asked_for_them(gh: FakeGitHub) -> None:
    facts = FactCache(gh.client())
    assert facts.get_issue(REPO, 1).comments == 0
    assert facts.list_issue_comments(REPO, 1) == []
    assert gh.calls_to("GET", rf"/repos/{REPO}/issues/1/comments") == []
    facts.create_comment(REPO, 1, "ours")  # the count is stale now: ask
    assert [c.body for c in facts.list_issue_comments(REPO, 1)] == ["ours"]
    assert len(gh.calls_to("GET", rf"/repos/{REPO}/issues/1/comments")) == 1


def test_a_write_forgets_what_it_changed(gh: FakeGitHub) -> None:
    facts = FactCache(gh.client())
    assert facts.get_issue(REPO, 1).labels == []
    facts.add_labels(REPO, 1, ["agent-failed"])
    assert facts.get_issue(REPO, 1).labels == ["agent-failed"]
    assert len(gh.calls_to("GET", rf"/repos/{REPO}/issues/1$")) == 2


def test_a_dry_run_records_writes_and_sends_none(gh: FakeGitHub) -> None:
    echoed: list[str] = []
    dry = RecordingGitHub(FactCache(gh.client()), echoed.append)
    assert dry.get_issue(REPO, 1).title == "one"  # reads are real
    comment = dry.create_comment(REPO, 1, "progress")
    dry.update_comment(REPO, comment.id, "progress, done")
    dry.add_labels(REPO, 1, ["agent-failed"])
    pr = dry.create_pull(REPO, title="fix: x", head="agentbot/x", base="trunk", body="Fixes #1")
    dry.request_reviewers(REPO, pr.number, ["alice"])
    dry.dispatch_workflow(REPO, "agentbot.yml", ref="trunk", inputs={"kind": "fix_issue"})
    assert gh.writes() == []
    assert (pr.number, pr.html_url, pr.draft) == (0, "", False)
    assert [w.split("\n")[0] for w in dry.writes] == [
        f"[dry-run] would comment on {REPO}#1",
        f"[dry-run] would edit comment {comment.id} on {REPO}",
        f"[dry-run] would label {REPO}#1 'agent-failed'",
        "[dry-run] would open PR agentbot/x -> trunk: fix: x",
        f"[dry-run] would request a review of {REPO}#0 from @alice",
        f"[dry-run] would dispatch agentbot.yml on {REPO}@trunk with {{'kind': 'fix_issue'}}",
    ]
    assert echoed == dry.writes
    assert "Fixes #1" in dry.writes[3]


def test_a_pull_request_it_opened_or_edited_is_not_asked_for_again(gh: FakeGitHub) -> None:
    """GitHub answers a create or an edit with the whole pull request: that answer is the fact."""
    sha = gh.set_branch(REPO, "agentbot/fix-issue-1")
    facts = FactCache(gh.client())
    pull = facts.create_pull(REPO, title="fix", head="agentbot/fix-issue-1", base="trunk", body="")
    assert facts.get_pull(REPO, pull.number).head_sha == sha
    facts.update_pull(REPO, pull.number, body="edited")
    assert facts.get_pull(REPO, pull.number).body == "edited"
    assert gh.calls_to("GET", rf"/repos/{REPO}/pulls/{pull.number}$") == []
