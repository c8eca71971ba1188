"""Follow-up triggers (reviews, review comments, `/fix` on a PR, failed CI), table-driven over
the vendored octokit payloads, with `decide()` still pure and total."""

from __future__ import annotations

import copy
import functools
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.config import RepoConfig
from bot.events import Ignore
from bot.events import decide as decide_with
from bot.models import Job, JobKind
from tests.test_events import (
    VENDORED,
    _mutate,
    _paths,
    check_total,
    comment,
    configs,
    json_values,
)

decide = functools.partial(decide_with, kinds=frozenset(JobKind), bot_login="agentbot[bot]")
REPO = "Codertocat/Hello-World"
OURS = "agentbot/fix-issue-7"
SHA = "ec26c3e57ca3a959ca5aad62de7213c562f8c821"


def example(event: str, action: str, **where: Any) -> dict[str, Any]:
    """The first vendored `event.action` payload, with our branch as the head."""
    for ex in VENDORED[event]:
        if ex["action"] == action:
            payload: dict[str, Any] = copy.deepcopy(ex["payload"])
            break
    else:
        raise LookupError(event)
    if "pull_request" in payload:
        payload["pull_request"]["head"]["ref"] = where.get("branch", OURS)
        payload["pull_request"]["state"] = "open"
    return payload


def review(state: str = "changes_requested", **where: Any) -> dict[str, Any]:
    payload = example("pull_request_review", "submitted", **where)
    payload["review"]["state"] = state
    return payload


def review_comment(**where: Any) -> dict[str, Any]:
    return example("pull_request_review_comment", "created", **where)


def ci(event: str, conclusion: str = "failure", branch: str = OURS) -> dict[str, Any]:
    payload: dict[str, Any] = copy.deepcopy(
        next(
            ex["payload"]
            for ex in VENDORED[event]
            if ex["action"] == "completed" and ex["payload"][event]["pull_requests"]
        )
    )
    run = payload[event]
    run["conclusion"], run["head_branch"], run["head_sha"] = conclusion, branch, SHA
    for pr in run["pull_requests"]:
        pr["head"]["ref"] = branch
    return payload


def as_sender(payload: dict[str, Any], login: str, type_: str = "User") -> dict[str, Any]:
    payload["sender"] = {**payload["sender"], "login": login, "type": type_}
    for key in ("review", "comment"):
        if key in payload:
            payload[key]["user"] = {**payload[key]["user"], "login": login, "type": type_}
    return payload


CASES = [
    # (id, event, payload, kind or None, reason fragment or params subset)
    ("changes-requested", "pull_request_review", review(), "follow_up", {"trigger": "review"}),
    ("approved", "pull_request_review", review("approved"), None, "not changes requested"),
    ("commented-review", "pull_request_review", review("commented"), None, "not changes"),
    ("not-our-branch", "pull_request_review", review(branch="feature"), None, "not one of"),
    (
        "inline-comment",
        "pull_request_review_comment",
        review_comment(),
        "follow_up",
        {"trigger": "review_comment"},
    ),
    (
        "inline-not-ours",
        "pull_request_review_comment",
        review_comment(branch="x"),
        None,
        "not one of",
    ),
    (
        "our-own-reply",
        "pull_request_review_comment",
        as_sender(review_comment(), "agentbot[bot]", "Bot"),
        None,
        "agentbot itself",
    ),
    (
        "other-bot-review",
        "pull_request_review",
        as_sender(review(), "ci[bot]", "Bot"),
        None,
        "allowed_bots",
    ),
    (
        "check-suite-failed",
        "check_suite",
        ci("check_suite"),
        "follow_up",
        {"trigger": "ci", "sha": SHA, "ci_event": "check_suite"},
    ),
    ("check-suite-passed", "check_suite", ci("check_suite", "success"), None, "not a failure"),
    ("check-suite-cancelled", "check_suite", ci("check_suite", "cancelled"), None, "not a fail"),
    (
        "check-suite-not-ours",
        "check_suite",
        ci("check_suite", branch="changes"),
        None,
        "not one of",
    ),
    (
        "workflow-run-failed",
        "workflow_run",
        ci("workflow_run"),
        "follow_up",
        {"trigger": "ci", "sha": SHA, "ci_event": "workflow_run"},
    ),
    (
        "workflow-run-timed-out",
        "workflow_run",
        ci("workflow_run", "timed_out"),
        "follow_up",
        {"trigger": "ci"},
    ),
    (
        "workflow-run-not-ours",
        "workflow_run",
        ci("workflow_run", branch="main"),
        None,
        "not one of",
    ),
    (
        "fix-on-pr",
        "issue_comment",
        comment("/fix use a dict\nand test it", on_pr=True),
        "follow_up",
        {"trigger": "fix_command", "instructions": "use a dict\nand test it"},
    ),
]


@pytest.mark.parametrize(
    ("event", "payload", "kind", "expect"), [pytest.param(*c[1:], id=c[0]) for c in CASES]
)
def test_follow_up_triggers(
    event: str, payload: dict[str, Any], kind: str | None, expect: Any
) -> None:
    before = copy.deepcopy(payload)
    decision = decide(event, payload, RepoConfig())
    assert payload == before
    if kind is None:
        assert isinstance(decision, Ignore) and expect in decision.reason, decision
        return
    assert isinstance(decision, Job), decision
    assert decision.kind == JobKind(kind) and decision.repo == payload["repository"]["full_name"]
    assert expect.items() <= decision.params.items()
    if event != "issue_comment":
        assert decision.ref == OURS


def test_ci_is_nobodys_request_and_names_the_pull_request() -> None:
    decision = decide("check_suite", ci("check_suite"), RepoConfig())
    assert isinstance(decision, Job) and decision.actor == "" and decision.number == 2


def test_a_failure_pushed_by_the_bot_still_counts_but_its_own_suite_does_not() -> None:
    payload = as_sender(ci("check_suite"), "agentbot[bot]", "Bot")
    assert isinstance(decide("check_suite", payload, RepoConfig()), Job)
    payload["check_suite"]["app"]["slug"] = "agentbot"
    assert "own check suite" in decide("check_suite", payload, RepoConfig()).reason  # type: ignore[union-attr]


def test_agentbots_own_workflow_failing_starts_nothing() -> None:
    payload = ci("workflow_run")
    payload["workflow"]["path"] = ".github/workflows/agentbot.yml"
    payload["workflow_run"].pop("path", None)
    decision = decide("workflow_run", payload, RepoConfig())
    assert isinstance(decision, Ignore) and "own workflow" in decision.reason


def test_follow_ups_switched_off_or_unbuilt() -> None:
    off = RepoConfig.model_validate({"followup": {"reviews": False}})
    assert isinstance(decide("pull_request_review", review(), off), Ignore)
    fix = decide("issue_comment", comment("/fix", on_pr=True), off)
    assert isinstance(fix, Ignore) and "/implement" in fix.reply
    unbuilt = decide_with("pull_request_review", review(), RepoConfig(), kinds={JobKind.FIX_ISSUE})
    assert isinstance(unbuilt, Ignore) and "cannot run follow_up" in unbuilt.reason


def test_a_custom_branch_prefix_is_ours() -> None:
    cfg = RepoConfig.model_validate({"pull_request": {"branch_prefix": "bot-"}})
    assert isinstance(decide("pull_request_review", review(branch="bot-x"), cfg), Job)
    assert isinstance(decide("pull_request_review", review(), cfg), Ignore)


@pytest.mark.parametrize(
    "event", ["pull_request_review", "pull_request_review_comment", "check_suite", "workflow_run"]
)
def test_every_vendored_example_gets_a_decision(event: str) -> None:
    for ex in VENDORED[event]:
        decision = decide(event, ex["payload"], RepoConfig())
        assert isinstance(decision, Ignore) and decision.reason  # none is on an agentbot branch
    for broken in ({}, {"action": "completed"}, {"action": "submitted", "repository": 1}):
        assert isinstance(decide(event, broken, RepoConfig()), Ignore)


def test_a_reviews_body_travels_with_the_job_capped() -> None:
    payload = review()
    payload["review"]["body"] = "  Rename it.  " + "x" * 5000
    decision = decide("pull_request_review", payload, RepoConfig())
    assert isinstance(decision, Job)
    body = decision.params["review_body"]
    assert body.startswith("Rename it.") and len(body) == 4000
    assert "review_body" not in decide("pull_request_review", review(), RepoConfig()).params  # type: ignore[union-attr]


def test_fix_instructions_are_capped() -> None:
    decision = decide("issue_comment", comment("/fix " + "y" * 9000, on_pr=True), RepoConfig())
    assert isinstance(decision, Job) and len(decision.params["instructions"]) == 4000


FOLLOWUP_EVENTS = [
    "pull_request_review",
    "pull_request_review_comment",
    "check_suite",
    "workflow_run",
]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), config=configs | st.just(RepoConfig()))
def test_decide_never_raises_on_mutated_follow_up_payloads(
    data: st.DataObject, config: RepoConfig
) -> None:
    """Triggering payloads of every follow-up event, mutated anywhere: still a decision."""
    bases = {
        "pull_request_review": [review()],
        "pull_request_review_comment": [review_comment()],
        "check_suite": [ci("check_suite")],
        "workflow_run": [ci("workflow_run")],
    }
    event = data.draw(st.sampled_from(FOLLOWUP_EVENTS), label="event")
    payload = copy.deepcopy(data.draw(st.sampled_from(bases[event]), label="base"))
    for _ in range(data.draw(st.integers(min_value=1, max_value=4), label="mutations")):
        paths = list(_paths(payload))
        path = data.draw(st.sampled_from(paths), label="path")
        op = data.draw(st.sampled_from(["delete", "replace"]), label="op")
        payload = _mutate(payload, path, op, data.draw(json_values, label="value"))
    as_event = data.draw(st.sampled_from([event, *FOLLOWUP_EVENTS]), label="as_event")
    check_total(as_event, payload, config, data.draw(st.sampled_from(["", "agentbot"])))
