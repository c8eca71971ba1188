"""Routing of plans and assignment (issue #28), on every vendored example of their events."""

from __future__ import annotations

import copy
import functools
from typing import Any

import pytest

from bot.config import PlanConfig, RepoConfig
from bot.events import Ignore
from bot.events import decide as decide_with
from bot.events.assignments import assigns, unassignment_of
from bot.models import Job, JobKind
from tests.test_events import VENDORED, comment, example, ignored, job, labeled

decide = functools.partial(decide_with, kinds=frozenset(JobKind), bot_login="agentbot[bot]")
DEFAULT = RepoConfig()
REQUIRED = RepoConfig(plan=PlanConfig(required=True))

ASSIGNMENTS = [
    pytest.param(copy.deepcopy(ex["payload"]), id=f"issues-{i}-{ex['action']}")
    for i, ex in enumerate(VENDORED["issues"])
    if ex["action"] in ("assigned", "unassigned")
]
COMMENTS = [
    pytest.param(copy.deepcopy(ex["payload"]), id=f"issue_comment-{i}-{ex['action']}")
    for i, ex in enumerate(VENDORED["issue_comment"])
]


def _to(payload: dict[str, Any], login: str) -> dict[str, Any]:
    payload["assignee"] = {**payload["assignee"], "login": login, "type": "Bot"}
    return payload


def assigned(login: str = "agentbot[bot]", action: str = "assigned") -> dict[str, Any]:
    return _to(example("issues", action), login)


# --- the decision table over every vendored example ----------------------------------------


@pytest.mark.parametrize("payload", ASSIGNMENTS)
def test_every_vendored_assignment_to_agentbot(payload: dict[str, Any]) -> None:
    action, number, sender = payload["action"], payload["issue"]["number"], payload["sender"]
    # As recorded (assigned to a person): nothing, and the reason names who was assigned.
    ignored(decide("issues", payload, DEFAULT), payload["assignee"]["login"], "not agentbot's")
    for config, kind in ((DEFAULT, JobKind.FIX_ISSUE), (REQUIRED, JobKind.PLAN)):
        got = decide("issues", _to(copy.deepcopy(payload), "agentbot[bot]"), config)
        if action == "unassigned":
            ignored(got, "unassigned", "cancelled")
            continue
        started = job(got)
        assert (started.kind, started.number, started.actor) == (kind, number, sender["login"])
        assert started.params == {"trigger": "assigned", "assignee": "agentbot[bot]"}
    # The configured login (the Action's `assignee`) counts like the App's own account.
    mine = RepoConfig(assignee="Codertocat")
    got = decide("issues", copy.deepcopy(payload), mine)
    assert isinstance(got, Job) == (action == "assigned")


@pytest.mark.parametrize("payload", COMMENTS)
@pytest.mark.parametrize(
    ("body", "trigger"),
    [("/plan", "plan_command"), ("/plan keep it small", "plan_command"), ("/approve", "approve")],
)
def test_every_vendored_comment_with_the_new_commands(
    payload: dict[str, Any], body: str, trigger: str
) -> None:
    payload["comment"]["body"] = body
    got = decide("issue_comment", payload, DEFAULT)
    if payload["action"] != "created":
        ignored(got, "only new comments are read")
        return
    started = job(got)
    assert started.kind is JobKind.PLAN and started.params["trigger"] == trigger
    assert started.params["comment_id"] == payload["comment"]["id"]
    if trigger == "plan_command":
        assert started.params["notes"] == body.removeprefix("/plan").strip()


# --- the rules one by one ------------------------------------------------------------------


def test_plan_label_and_required_plans() -> None:
    assert job(decide("issues", labeled("agent-plan"), DEFAULT)).kind is JobKind.PLAN
    assert job(decide("issues", labeled("agent-fix"), DEFAULT)).kind is JobKind.FIX_ISSUE
    assert job(decide("issues", labeled("agent-fix"), REQUIRED)).kind is JobKind.PLAN
    assert job(decide("issue_comment", comment("/fix"), REQUIRED)).kind is JobKind.PLAN
    # Required plans but no planner built: the fix label still fixes.
    unbuilt = decide_with(
        "issues", labeled("agent-fix"), REQUIRED, kinds=frozenset(JobKind) - {JobKind.PLAN}
    )
    assert job(unbuilt).kind is JobKind.FIX_ISSUE


@pytest.mark.parametrize("body", ["/plan", "/approve"])
def test_plan_commands_on_a_pull_request_say_where_they_work(body: str) -> None:
    got = ignored(decide("issue_comment", comment(body, on_pr=True), DEFAULT), body)
    assert got.reply == f"`{body}` works on issues."


def test_plan_notes_take_the_following_lines() -> None:
    got = job(decide("issue_comment", comment("/plan no new deps\nand keep the API"), DEFAULT))
    assert got.params["notes"] == "no new deps\nand keep the API"


def test_assignment_guards_match_the_labels() -> None:
    closed = assigned()
    closed["issue"]["state"] = "closed"
    ignored(decide("issues", closed, DEFAULT), "#1 is closed")
    locked = assigned()
    locked["issue"]["locked"] = True
    ignored(decide("issues", locked, DEFAULT), "#1 is locked")
    by_bot = assigned()
    by_bot["sender"] = {**by_bot["sender"], "login": "renovate[bot]", "type": "Bot"}
    ignored(decide("issues", by_bot, DEFAULT), "not in allowed_bots")
    allowed = RepoConfig(allowed_bots=["renovate"])
    assert job(decide("issues", copy.deepcopy(by_bot), allowed)).actor == "renovate[bot]"
    by_itself = assigned()
    by_itself["sender"] = {**by_itself["sender"], "login": "agentbot[bot]", "type": "Bot"}
    ignored(decide("issues", by_itself, DEFAULT), "agentbot itself")
    no_one = assigned()
    del no_one["assignee"]
    ignored(decide("issues", no_one, DEFAULT), "without a sender or an assignee")
    on_pr = assigned()
    on_pr["issue"]["pull_request"] = {"url": "https://api.github.com/repos/o/r/pulls/1"}
    ignored(decide("issues", on_pr, DEFAULT), "pull request")


def test_no_agentbot_account_known_means_no_assignment_trigger() -> None:
    got = decide_with("issues", assigned("someone"), DEFAULT, kinds=frozenset(JobKind))
    ignored(got, "set `assignee`")


def test_an_unassignment_names_the_assignment_it_undoes() -> None:
    gone = assigned(action="unassigned")
    assert unassignment_of("issues", gone) == (1, "agentbot")
    assert unassignment_of("issues", assigned()) is None
    assert unassignment_of("issue_comment", gone) is None
    assert assigns("issues", assigned("AgentBot[bot]"), 1, "agentbot[bot]")
    assert not assigns("issues", assigned(), 2, "agentbot[bot]")
    assert not assigns("issues", assigned("other"), 1, "agentbot[bot]")
    assert not assigns("issues", gone, 1, "agentbot[bot]")
    broken = assigned()
    broken["issue"]["number"] = "1"
    assert not assigns("issues", broken, 1, "agentbot[bot]")
    assert isinstance(decide("issues", broken, DEFAULT), Ignore)
