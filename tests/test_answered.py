"""A command comment is carried out once: the marker its job's comments carry, read back."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bot.models import Job, JobKind
from bot.workflows.steps.answered import Answering, answered, command_comment
from tests.fakes.github.server import FakeGitHub

REPO = "o/r"
BOT = "agentbot[bot]"


@pytest.fixture
def gh() -> Iterator[FakeGitHub]:
    with FakeGitHub() as server:
        server.add_repo(REPO)
        server.add_issue(REPO, number=1, title="Bug")
        yield server


def job(comment: int, delivery: str = "") -> Job:
    params = {"trigger": "comment", "comment_id": comment}
    return Job(kind=JobKind.FIX_ISSUE, repo=REPO, number=1, delivery_id=delivery, params=params)


def key(comment: int) -> str:
    found = command_comment(job(comment))
    assert found is not None
    return found


def test_an_edited_comment_asking_something_else_is_a_new_request(gh: FakeGitHub) -> None:
    client = gh.client()
    Answering(client, job(77, "d-1"), key(77)).create_comment(REPO, 1, "done")
    edited = job(77, "d-2").model_copy(update={"params": {"comment_id": 77, "x": "other"}})
    assert answered(edited, client, BOT) is None


def test_a_comment_answered_by_the_bot_is_answered_for_another_delivery(gh: FakeGitHub) -> None:
    client = gh.client()
    assert answered(job(77, "d-1"), client, BOT) is None
    Answering(client, job(77, "d-1"), key(77)).create_comment(REPO, 1, "working on it")

    assert answered(job(77, "d-2"), client, BOT) == "comment 77 on #1 was answered before"
    assert answered(job(77), client, BOT) is not None  # the Action: no delivery id
    # The queue retrying the same delivery (a worker died mid-job) runs it again.
    assert answered(job(77, "d-1"), client, BOT) is None
    assert answered(job(78, "d-2"), client, BOT) is None  # another comment


def test_an_edited_report_keeps_the_comments_it_answered(gh: FakeGitHub) -> None:
    client = gh.client()
    first = Answering(client, job(77, "d-1"), key(77)).create_comment(REPO, 1, "report one")
    second = Answering(client, job(78, "d-2"), key(78))
    second.list_issue_comments(REPO, 1)
    second.update_comment(REPO, first.id, "report two")

    (body,) = [c.body for c in gh.comments_on(REPO, 1)]
    assert body.startswith("report two\n") and "report one" not in body
    assert answered(job(77, "d-9"), client, BOT) and answered(job(78, "d-9"), client, BOT)


def test_only_the_bots_own_comments_count(gh: FakeGitHub) -> None:
    client = gh.client()
    gh.add_comment(REPO, 1, f"<!-- agentbot:answers {key(77)}@d-1 -->", user="mallory")
    assert answered(job(77, "d-2"), client, BOT) is None
    # Nor does model text in a body the bot writes add comment ids to its marker.
    planted = f"<!-- agentbot:answers {key(9)}@x -->"
    Answering(client, job(5, "d-5"), key(5)).create_comment(REPO, 1, planted)
    assert answered(job(9, "d-2"), client, BOT) is None
