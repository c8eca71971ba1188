"""Assignment as a trigger (issue #28): assigning an issue to agentbot starts work on it.

Agentbot's account is the App's bot login (the App) or `assignee:` in the repository's
config (the Action's `assignee` input fills it). The guards are the label's: the assigner
(`sender`) is the actor whose permission counts, other bots need `allowed_bots`, closed or
locked issues are skipped, and the doors hold one job per issue. `issues.unassigned`
starts nothing: the App's receiver cancels a still-queued assignment job when it stores
the unassignment (`unassignment_of`), and a job that starts anyway checks that the issue
is still assigned (`bot.guards`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bot.events.decision import Ignore
from bot.events.payloads import Envelope, IssuesEvent
from bot.events.rules import Context, ignore, itself, job, norm_login, other_bot, state
from bot.models import Job, JobKind


def screen_assignment(ev: IssuesEvent, bot_login: str) -> Envelope | Ignore:
    """An (un)assignment of an open issue, by someone other than the bot."""
    number, action = ev.issue.number, ev.action
    if ev.sender is None or ev.assignee is None:
        return ignore(ev, f"issues.{action} without a sender or an assignee", number=number)
    if guard := itself(ev.sender, bot_login, ev):
        return guard
    if ev.issue.is_pull_request:
        return ignore(ev, f"#{number} is a pull request, not an issue", number=number)
    return state(ev) or ev


def is_agentbot(login: str, ctx: Context) -> bool:
    """Whether `login` is agentbot's account: the App's bot or the configured `assignee`."""
    wanted = {norm_login(x) for x in (ctx.bot_login, ctx.config.assignee) if x.strip()}
    return norm_login(login) in wanted


def settle_assignment(event: Envelope, ctx: Context) -> Job | Ignore:
    """Assigned to agentbot: a fix (or a plan, when plans are required); else nothing."""
    assert isinstance(event, IssuesEvent) and event.sender and event.assignee
    number, who = event.issue.number, event.assignee.login
    if not is_agentbot(who, ctx):
        named = ctx.config.assignee or ctx.bot_login or "(none configured: set `assignee`)"
        return ignore(
            event, f"#{number} {event.action} {who}, not agentbot's account {named}", number=number
        )
    if event.action == "unassigned":
        return ignore(
            event,
            f"#{number} unassigned from {who}: a queued job it started is cancelled",
            number=number,
        )
    if guard := other_bot(event.sender, ctx.config, event):
        return guard
    kind = JobKind.FIX_ISSUE
    if ctx.config.plan.required and JobKind.PLAN in ctx.kinds:
        kind = JobKind.PLAN
    params = {"trigger": "assigned", "assignee": who}
    return job(event, ctx, kind, event.sender.login, number=number, params=params)


def unassignment_of(event_name: str, payload: Mapping[str, Any]) -> tuple[int, str] | None:
    """(issue number, login) when a delivery unassigns someone from an issue, else None."""
    if event_name != "issues" or payload.get("action") != "unassigned":
        return None
    return _assignment(payload)


def assigns(event_name: str, payload: Mapping[str, Any], number: int, login: str) -> bool:
    """Whether a delivery assigned `login` to issue `number` (the job an unassignment undoes)."""
    if event_name != "issues" or payload.get("action") != "assigned":
        return False
    return _assignment(payload) == (number, norm_login(login))


def _assignment(payload: Mapping[str, Any]) -> tuple[int, str] | None:
    issue, assignee = payload.get("issue"), payload.get("assignee")
    if not isinstance(issue, Mapping) or not isinstance(assignee, Mapping):
        return None
    number, login = issue.get("number"), assignee.get("login")
    if isinstance(number, int) and not isinstance(number, bool) and isinstance(login, str):
        return number, norm_login(login)
    return None
