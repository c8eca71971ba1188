"""The rules of `issues` events: an agentbot label put on an issue, or an assignment to
agentbot (`bot.events.assignments`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bot.events.assignments import screen_assignment, settle_assignment
from bot.events.decision import Ignore
from bot.events.payloads import Envelope, IssuesEvent
from bot.events.rules import (
    Context,
    early,
    event_label,
    ignore,
    itself,
    job,
    other_bot,
    parse_event,
    state,
)
from bot.models import Job, JobKind


def fix_kind(ctx: Context) -> JobKind:
    """A fix, or a plan first when the repository requires plans (`plan.required`)."""
    return (
        JobKind.PLAN
        if ctx.config.plan.required and JobKind.PLAN in ctx.kinds
        else JobKind.FIX_ISSUE
    )


# --- issues.labeled ---------------------------------------------------------------------------


def screen_issues(action: str, payload: Mapping[str, Any], bot_login: str) -> Envelope | Ignore:
    """A label put on, or an assignment of, an open issue by someone other than the bot."""
    if action not in ("labeled", "assigned", "unassigned"):
        return early(payload, f"{event_label('issues', action)} does not trigger agentbot")
    ev = parse_event(IssuesEvent, "issues", payload)
    if isinstance(ev, Ignore):
        return ev
    if action != "labeled":
        return screen_assignment(ev, bot_login)
    number = ev.issue.number
    if ev.sender is None:
        return ignore(ev, "issues.labeled without a sender", number=number)
    if ev.label is None:
        return ignore(ev, "issues.labeled without a label", number=number)
    if guard := itself(ev.sender, bot_login, ev):
        return guard
    if ev.issue.is_pull_request:
        return ignore(ev, f"#{number} is a pull request, not an issue", number=number)
    return state(ev) or ev


def settle_issues(event: Envelope, ctx: Context) -> Job | Ignore:
    """The label must be one of the repository's agentbot labels (of a built kind)."""
    assert isinstance(event, IssuesEvent) and event.sender
    if event.action != "labeled":
        return settle_assignment(event, ctx)
    assert event.label is not None
    if guard := other_bot(event.sender, ctx.config, event):
        return guard
    labels = ctx.config.labels
    offered = [
        (labels.fix, fix_kind(ctx), "fixes"),
        (labels.tdd, JobKind.TDD, "runs TDD"),
        (labels.plan, JobKind.PLAN, "plans"),
    ]
    offered = [(name, kind, does) for name, kind, does in offered if kind in ctx.kinds]
    name = event.label.name.casefold()
    # GitHub label names are case-insensitive; an empty configured label matches nothing.
    for label, kind, _ in offered:
        if label.strip() and name == label.casefold():
            params = {"trigger": "label", "label": event.label.name}
            return job(
                event, ctx, kind, event.sender.login, number=event.issue.number, params=params
            )
    which = ", ".join(f"{label!r} {does}" for label, _, does in offered)
    return ignore(
        event,
        f"label {event.label.name!r} is not an agentbot label ({which})",
        number=event.issue.number,
    )
