"""The rules of each routed event, as a pair: what the payload settles, what needs the config.

Every `screen_*` reads only the payload (and the bot's own login); every `settle_*` gets
the event its screen parsed plus the repository's config and the kinds that have a
handler. To add a trigger, add its rules here and its kind to the handler map
(`bot.workflows.handlers`): a kind without a handler is never routed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bot.config import COMMAND_SIGILS
from bot.events.decision import Ignore
from bot.events.followups import FOLLOWUP_ROUTES
from bot.events.issues import fix_kind, screen_issues, settle_issues
from bot.events.payloads import (
    Envelope,
    IssueCommentEvent,
    PushEvent,
    ScheduleEvent,
    WorkflowDispatchEvent,
)
from bot.events.rules import (
    Context,
    Route,
    early,
    event_label,
    ignore,
    itself,
    job,
    other_bot,
    parse_event,
    state,
)
from bot.events.triggers import (
    changed_tasks_md,
    cover_args,
    dispatch_params,
    dispatched_job,
    implement_args,
    match_command,
)
from bot.models import Job, JobKind

BRANCH_PREFIX = "refs/heads/"

MAX_INSTRUCTIONS = 4000
"""Characters of `/fix <instructions>` carried in the job (they travel in dispatch inputs)."""

COMMAND_KINDS = {
    "fix": JobKind.FIX_ISSUE,
    "implement": JobKind.IMPLEMENT,
    "cover": JobKind.COVER,
    "plan": JobKind.PLAN,
    "approve": JobKind.PLAN,
}
"""Which job each comment command starts (`/approve` runs the approved plan)."""

ISSUE_COMMANDS = ("fix", "plan", "approve")
"""Commands that work on issues only."""


# --- issue_comment.created ----------------------------------------------------------------------


def screen_comment(action: str, payload: Mapping[str, Any], bot_login: str) -> Envelope | Ignore:
    """A new comment by a person, on an open issue or PR, that starts like a command."""
    if action != "created":
        return early(
            payload,
            f"{event_label('issue_comment', action)} does not trigger agentbot"
            " (only new comments are read)",
        )
    ev = parse_event(IssueCommentEvent, "issue_comment", payload)
    if isinstance(ev, Ignore):
        return ev
    number = ev.issue.number
    for user in (ev.sender, ev.comment.user):
        if guard := itself(user, bot_login, ev):
            return guard
    if ev.sender is None and ev.comment.user is None:
        return ignore(ev, "issue_comment.created without a sender", number=number)
    # Every command starts with a sigil (bot.config.COMMAND_SIGILS): prose needs no config.
    if not (ev.comment.body or "").lstrip().startswith(COMMAND_SIGILS):
        return ignore(ev, f"comment on #{number} is not an agentbot command", number=number)
    return state(ev) or ev


def settle_comment(event: Envelope, ctx: Context) -> Job | Ignore:
    """The comment must start with a command of a built kind, used on the right kind of thread."""
    assert isinstance(event, IssueCommentEvent)
    issue, comment = event.issue, event.comment
    number = issue.number
    for user in (event.sender, comment.user):
        if guard := other_bot(user, ctx.config, event):
            return guard
    author = event.sender or comment.user
    assert author is not None
    cmds = ctx.config.commands
    names = [name for name, kind in COMMAND_KINDS.items() if kind in ctx.kinds]
    if issue.is_pull_request and JobKind.FOLLOW_UP in ctx.kinds and "fix" not in names:
        names.append("fix")  # `/fix` on a pull request is a follow-up
    matched = match_command(comment.body or "", cmds, names)
    if matched is None:
        return ignore(event, f"comment on #{number} is not an agentbot command", number=number)
    name, rest = matched
    command = getattr(cmds, name)
    on_pr = issue.is_pull_request
    if name == "fix" and on_pr and JobKind.FOLLOW_UP in ctx.kinds and ctx.config.followup.reviews:
        # On agentbot's own pull request (the doors check the branch): a follow-up.
        asked: dict[str, Any] = {
            "trigger": "fix_command",
            "instructions": _instructions(rest, comment.body or ""),
        }
        if comment.id is not None:
            asked["comment_id"] = comment.id
        return job(event, ctx, JobKind.FOLLOW_UP, author.login, number=number, params=asked)
    if name == "fix" and on_pr:
        uses = [f"`{cmds.implement} [tasks.md]` to implement a task list"]
        if "cover" in names:
            uses.append(f"`{cmds.cover}` to add tests")
        reply = f"`{command}` works on issues. On a pull request, use {' or '.join(uses)}."
        return ignore(event, f"{command} on pull request #{number}", number=number, reply=reply)
    if name in ISSUE_COMMANDS and on_pr:
        reply = f"`{command}` works on issues."
        return ignore(event, f"{command} on pull request #{number}", number=number, reply=reply)
    if name in ("implement", "cover") and not on_pr:
        reply = f"`{command}` works on pull requests. On an issue, use `{cmds.fix}`."
        return ignore(event, f"{command} on issue #{number}", number=number, reply=reply)
    params: dict[str, Any] = {"trigger": "comment"}
    if comment.id is not None:
        params["comment_id"] = comment.id
    if name == "implement":
        path, chosen, problem = implement_args(rest)
        if problem:
            reply = f"`{command}`: {problem}. Name a tasks.md path relative to the repository root."
            return ignore(event, f"{command} on #{number}: {problem}", number=number, reply=reply)
        params["tasks_path"] = path
        if chosen:
            params["selection"] = chosen  # read by the job, which can see the tasks.md
    if name == "cover":
        params.update(cover_args(rest))
    kind = COMMAND_KINDS[name]
    if name == "fix":
        kind = fix_kind(ctx)
    elif name == "plan":
        params = {
            **params,
            "trigger": "plan_command",
            "notes": _instructions(rest, comment.body or ""),
        }
    elif name == "approve":
        params = {**params, "trigger": "approve"}
    return job(event, ctx, kind, author.login, number=number, params=params)


def _instructions(rest: str, body: str) -> str:
    """What follows the command: the rest of its line and every line after it."""
    more = body.lstrip().partition("\n")[2]
    return f"{rest}\n{more}".strip()[:MAX_INSTRUCTIONS]


# --- push -------------------------------------------------------------------------------------


def screen_push(action: str, payload: Mapping[str, Any], bot_login: str) -> Envelope | Ignore:
    """A push of a branch other than the default one that changed a tasks.md."""
    if action:
        return early(payload, f"{event_label('push', action)} does not trigger agentbot")
    ev = parse_event(PushEvent, "push", payload)
    if isinstance(ev, Ignore):
        return ev
    if guard := itself(ev.sender, bot_login, ev):
        return guard
    if not ev.ref.startswith(BRANCH_PREFIX):
        return ignore(ev, f"push of {ev.ref} is not a branch push (tags never trigger)")
    branch = ev.ref.removeprefix(BRANCH_PREFIX)
    if ev.deleted:
        return ignore(ev, f"branch {branch} was deleted")
    if branch == ev.repository.default_branch:
        return _default_branch_push(ev, branch)
    if not changed_tasks_md(ev.commits, ev.head_commit):
        return ignore(ev, f"push to {branch} changed no tasks.md")
    return ev


def _default_branch_push(ev: Envelope, branch: str) -> Ignore:
    return ignore(ev, f"push to the default branch {branch} (tasks.md runs only on other branches)")


def settle_push(event: Envelope, ctx: Context) -> Job | Ignore:
    """Implement the first tasks.md the push changed, on the pushed branch."""
    assert isinstance(event, PushEvent)
    if guard := other_bot(event.sender, ctx.config, event):
        return guard
    branch = event.ref.removeprefix(BRANCH_PREFIX)
    default = event.repository.default_branch or ctx.default_branch
    if not default:
        return ignore(event, f"push to {branch}: the default branch is unknown, so it may be it")
    if branch == default:
        return _default_branch_push(event, branch)
    paths = changed_tasks_md(event.commits, event.head_commit)
    params: dict[str, Any] = {"trigger": "push", "tasks_path": paths[0]}
    if len(paths) > 1:
        params["tasks_paths"] = paths
    if event.after:
        params["sha"] = event.after
    pusher = event.pusher.name if event.pusher else None
    actor = event.sender.login if event.sender else (pusher or "")
    return job(event, ctx, JobKind.IMPLEMENT, actor, ref=branch, params=params)


# --- schedule and workflow_dispatch ---------------------------------------------------------------


def screen_schedule(action: str, payload: Mapping[str, Any], bot_login: str) -> Envelope | Ignore:
    """A timer, not a person: no sender guard (whatever Actions puts in `sender` is no loop)."""
    return parse_event(ScheduleEvent, "schedule", payload)


def settle_schedule(event: Envelope, ctx: Context) -> Job | Ignore:
    """A scheduled refuel."""
    assert isinstance(event, ScheduleEvent)
    params: dict[str, Any] = {"trigger": "schedule"}
    if event.schedule:
        params["schedule"] = event.schedule
    actor = event.sender.login if event.sender else ""
    return job(event, ctx, JobKind.REFUEL, actor, params=params)


def screen_dispatch(action: str, payload: Mapping[str, Any], bot_login: str) -> Envelope | Ignore:
    """An explicit run by someone GitHub let dispatch workflows (write access), or by the App's
    own worker handing a job to Actions: no sender guard."""
    return parse_event(WorkflowDispatchEvent, "workflow_dispatch", payload)


def settle_dispatch(event: Envelope, ctx: Context) -> Job | Ignore:
    """The job the App handed over (`inputs.kind`), else a refuel with the run's inputs."""
    assert isinstance(event, WorkflowDispatchEvent)
    inputs = event.inputs or {}
    if inputs.get("kind"):
        fields, problem = dispatched_job(inputs)
        if problem:
            return ignore(event, f"workflow_dispatch: {problem}")
        kind, actor = fields.pop("kind"), fields.pop("actor")
        return job(event, ctx, kind, actor, **fields)
    params, problem = dispatch_params(inputs)
    if problem:
        return ignore(event, f"workflow_dispatch: {problem}")
    params = {"trigger": "workflow_dispatch", **params}
    actor = event.sender.login if event.sender else ""
    return job(event, ctx, JobKind.REFUEL, actor, params=params)


ROUTES: dict[str, Route] = {
    "issues": Route(screen_issues, settle_issues),
    "issue_comment": Route(screen_comment, settle_comment),
    "push": Route(screen_push, settle_push),
    "schedule": Route(screen_schedule, settle_schedule),
    "workflow_dispatch": Route(screen_dispatch, settle_dispatch),
    **FOLLOWUP_ROUTES,
}
