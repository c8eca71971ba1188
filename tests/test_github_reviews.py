"""Review threads through the real client against the fake: REST comments, GraphQL resolve."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bot.errors import GitHubError
from tests.fakes.github import FakeGitHub
from tests.fakes.github.routes_reviews import add_review_comment, thread_of

REPO = "octo/calc"


@pytest.fixture
def gh() -> Iterator[FakeGitHub]:
    with FakeGitHub() as server:
        server.add_repo(REPO)
        server.add_pull(REPO, head="agentbot/fix-issue-7")
        yield server


def test_list_reply_and_resolve_a_thread(gh: FakeGitHub) -> None:
    client = gh.client()
    first = add_review_comment(gh, REPO, 1, "rename x", user="rev", path="calc.py", line=3)
    add_review_comment(gh, REPO, 1, "and y", user="rev", path="calc.py", in_reply_to=first.id)

    comments = client.list_review_comments(REPO, 1)
    assert [(c.body, c.user, c.path, c.in_reply_to) for c in comments] == [
        ("rename x", "rev", "calc.py", None),
        ("and y", "rev", "calc.py", first.id),
    ]
    reply = client.reply_to_review_comment(REPO, 1, first.id, "Done in abc1234")
    assert reply.in_reply_to == first.id and len(thread_of(gh, first.id)) == 3

    threads = client.review_threads(REPO, 1)
    assert threads is not None and set(threads) == {first.id}
    assert threads[first.id].resolved is False
    assert client.resolve_review_thread(REPO, threads[first.id].id) is True
    assert gh.resolved_threads == {first.id}
    assert len(gh.calls_to("POST", "/graphql")) == 2  # one query, one mutation
    assert "resolveReviewThread" in gh.graphql_calls[1]["query"]


def test_resolved_threads_are_named_by_their_first_comment(gh: FakeGitHub) -> None:
    first = add_review_comment(gh, REPO, 1, "x", user="rev", path="a.py")
    second = add_review_comment(gh, REPO, 1, "y", user="rev", path="a.py")
    gh.resolved_threads.add(second.id)
    threads = gh.client().review_threads(REPO, 1)
    assert threads is not None
    assert {root for root, t in threads.items() if t.resolved} == {second.id}
    assert first.id not in gh.resolved_threads


def test_without_graphql_resolving_says_false(gh: FakeGitHub) -> None:
    first = add_review_comment(gh, REPO, 1, "x", user="rev", path="a.py")
    gh.graphql_enabled = False
    assert gh.client().review_threads(REPO, 1) is None
    assert gh.client().resolve_review_thread(REPO, f"PRRT_{first.id}") is False
    assert gh.resolved_threads == set()


def test_an_unknown_thread_is_an_error(gh: FakeGitHub) -> None:
    with pytest.raises(GitHubError, match="Could not resolve"):
        gh.client().resolve_review_thread(REPO, "PRRT_12345")


def test_graphql_errors_raise(gh: FakeGitHub) -> None:
    client = gh.client()
    with pytest.raises(GitHubError, match="GraphQL"):
        client._graphql("query { viewer { login } }", {})


def test_graphql_queries_are_not_paced_and_the_mutation_is() -> None:
    from bot.clock import FakeClock

    clock = FakeClock()
    with FakeGitHub(clock=clock) as server:
        server.add_repo(REPO)
        server.add_pull(REPO, head="agentbot/fix-issue-7")
        first = add_review_comment(server, REPO, 1, "x", user="rev", path="a.py")
        client = server.client()
        client.create_comment(REPO, 1, "a write")
        threads = client.review_threads(REPO, 1)  # a read: no wait
        assert threads is not None and clock.sleeps == []
        client.resolve_review_thread(REPO, threads[first.id].id)  # a paced write
        assert clock.sleeps == [1.0]


def test_a_draft_is_marked_ready_through_graphql(gh: FakeGitHub) -> None:
    draft = gh.add_pull(REPO, head="agentbot/tdd-issue-3", draft=True)
    client = gh.client()
    assert client.get_pull(REPO, draft.number).draft
    assert client.mark_ready(REPO, draft.number) is True
    assert not client.get_pull(REPO, draft.number).draft
    assert client.mark_ready(REPO, draft.number) is True  # already ready: one query, no mutation
    mutations = [c for c in gh.graphql_calls if "markPullRequestReady" in c["query"]]
    assert len(mutations) == 1
    gh.graphql_enabled = False
    assert client.mark_ready(REPO, draft.number) is False


def test_a_ready_pull_request_is_turned_back_into_a_draft_through_graphql(gh: FakeGitHub) -> None:
    ready = gh.add_pull(REPO, head="agentbot/fix-issue-3")
    client = gh.client()
    assert client.mark_draft(REPO, ready.number) is True
    assert client.get_pull(REPO, ready.number).draft
    assert client.mark_draft(REPO, ready.number) is True  # already a draft: no mutation
    mutations = [c for c in gh.graphql_calls if "convertPullRequestToDraft" in c["query"]]
    assert len(mutations) == 1
    gh.graphql_enabled = False
    assert client.mark_draft(REPO, ready.number) is False
