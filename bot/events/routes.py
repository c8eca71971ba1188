"""The rules of each routed event, as a pair: what the payload settles, what needs the config.

Every `screen_*` reads only the payload (and the bot's own login); every `settle_*` gets
the event its screen parsed plus the repository's config and the kinds that have a
handler. To add a trigger, add its rules here and its kind to the handler map
(`bot.workflows.handlers`): a kind without a handler is never routed.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any

from bot.config import COMMAND_SIGILS, RepoConfig
from bot.events.decision import Ignore
from bot.events.payloads import (
    Envelope,
    IssueCommentEvent,
    IssuesEvent,
    P,
    PushEvent,
    ScheduleEvent,
    User,
    WorkflowDispatchEvent,
    parse,
    repo_full_name,
)
from bot.events.triggers import (
    changed_tasks_md,
    dispatch_params,
    dispatched_job,
    implement_path,
    match_command,
)
from bot.models import Job, JobKind

BRANCH_PREFIX = "refs/heads/"

COMMAND_KINDS = {"fix": JobKind.FIX_ISSUE, "implement": JobKind.IMPLEMENT, "cover": JobKind.COVER}
"""Which job each comment command starts."""


@dataclass(frozen=True)
class Context:
    """What `settle` decides with besides the event."""

    config: RepoConfig
    kinds: Collection[JobKind]
    bot_login: str = ""
    default_branch: str | None = None


Screen = Callable[[str, Mapping[str, Any], str], "Envelope | Ignore"]
Settle = Callable[[Envelope, Context], "Job | Ignore"]


@dataclass(frozen=True)
class Route:
    """The two halves of one event's rules."""

    screen: Screen
    settle: Settle


def event_label(event_name: str, action: object) -> str:
    """`issues.labeled`, or the bare event name."""
    return f"{event_name}.{action}" if isinstance(action, str) and action else event_name


def early(payload: Mapping[str, Any], reason: str) -> Ignore:
    """An Ignore decided before parsing, with whatever context the raw payload gives safely."""
    sender = payload.get("sender")
    login = sender.get("login") if isinstance(sender, Mapping) else None
    return Ignore(
        reason=reason,
        repo=repo_full_name(payload),
        actor=login if isinstance(login, str) else "",
    )


def _parse(model: type[P], event_name: str, payload: Mapping[str, Any]) -> P | Ignore:
    parsed = parse(model, payload)
    if isinstance(parsed, str):
        return Ignore(reason=f"malformed {event_name} payload {parsed}")
    return parsed


def _norm_login(login: str) -> str:
    return login.strip().casefold().removesuffix("[bot]")


def _itself(user: User | None, bot_login: str, ev: Envelope) -> Ignore | None:
    """No loops: the bot itself never triggers work, whatever the config allows."""
    if user is not None and bot_login.strip() and _norm_login(user.login) == _norm_login(bot_login):
        return _ignore(ev, f"sent by agentbot itself ({user.login}); ignored to avoid loops")
    return None


def _other_bot(user: User | None, config: RepoConfig, ev: Envelope) -> Ignore | None:
    """Other bots only when the repository allows them."""
    allowed = {_norm_login(b) for b in config.allowed_bots}
    if user is not None and user.is_bot and _norm_login(user.login) not in allowed:
        return _ignore(ev, f"sent by the bot {user.login}, which is not in allowed_bots")
    return None


def _ignore(ev: Envelope, reason: str, *, number: int | None = None, reply: str = "") -> Ignore:
    actor = ev.sender.login if ev.sender else ""
    return Ignore(
        reason=reason, reply=reply, repo=ev.repository.full_name, number=number, actor=actor
    )


def _job(ev: Envelope, ctx: Context, kind: JobKind, actor: str, **fields: Any) -> Job | Ignore:
    if kind not in ctx.kinds:
        return _ignore(
            ev, f"agentbot cannot run {kind.value} jobs yet", number=fields.get("number")
        )
    return Job(
        kind=kind,
        repo=ev.repository.full_name,
        actor=actor,
        installation_id=ev.installation.id if ev.installation else None,
        **fields,
    )


def _state(ev: IssuesEvent | IssueCommentEvent) -> Ignore | None:
    issue = ev.issue
    what = "pull request" if issue.is_pull_request else "issue"
    if issue.state == "closed":
        return _ignore(ev, f"{what} #{issue.number} is closed", number=issue.number)
    if issue.locked:
        return _ignore(ev, f"{what} #{issue.number} is locked", number=issue.number)
    return None


# --- issues.labeled ---------------------------------------------------------------------------


def screen_issues(action: str, payload: Mapping[str, Any], bot_login: str) -> Envelope | Ignore:
    """A label put on an open issue by someone other than the bot."""
    if action != "labeled":
        return early(payload, f"{event_label('issues', action)} does not trigger agentbot")
    ev = _parse(IssuesEvent, "issues", payload)
    if isinstance(ev, Ignore):
        return ev
    number = ev.issue.number
    if ev.sender is None:
        return _ignore(ev, "issues.labeled without a sender", number=number)
    if ev.label is None:
        return _ignore(ev, "issues.labeled without a label", number=number)
    if guard := _itself(ev.sender, bot_login, ev):
        return guard
    if ev.issue.is_pull_request:
        return _ignore(ev, f"#{number} is a pull request, not an issue", number=number)
    return _state(ev) or ev


def settle_issues(event: Envelope, ctx: Context) -> Job | Ignore:
    """The label must be one of the repository's agentbot labels (of a built kind)."""
    assert isinstance(event, IssuesEvent) and event.sender and event.label
    if guard := _other_bot(event.sender, ctx.config, event):
        return guard
    labels = ctx.config.labels
    offered = [(labels.fix, JobKind.FIX_ISSUE, "fixes"), (labels.tdd, JobKind.TDD, "runs TDD")]
    offered = [(name, kind, does) for name, kind, does in offered if kind in ctx.kinds]
    name = event.label.name.casefold()
    # GitHub label names are case-insensitive; an empty configured label matches nothing.
    for label, kind, _ in offered:
        if label.strip() and name == label.casefold():
            params = {"trigger": "label", "label": event.label.name}
            return _job(
                event, ctx, kind, event.sender.login, number=event.issue.number, params=params
            )
    which = ", ".join(f"{label!r} {does}" for label, _, does in offered)
    return _ignore(
        event,
        f"label {event.label.name!r} is not an agentbot label ({which})",
        number=event.issue.number,
    )


# --- issue_comment.created ----------------------------------------------------------------------


def screen_comment(action: str, payload: Mapping[str, Any], bot_login: str) -> Envelope | Ignore:
    """A new comment by a person, on an open issue or PR, that starts like a command."""
    if action != "created":
        return early(
            payload,
            f"{event_label('issue_comment', action)} does not trigger agentbot"
            " (only new comments are read)",
        )
    ev = _parse(IssueCommentEvent, "issue_comment", payload)
    if isinstance(ev, Ignore):
        return ev
    number = ev.issue.number
    for user in (ev.sender, ev.comment.user):
        if guard := _itself(user, bot_login, ev):
            return guard
    if ev.sender is None and ev.comment.user is None:
        return _ignore(ev, "issue_comment.created without a sender", number=number)
    # Every command starts with a sigil (bot.config.COMMAND_SIGILS): prose needs no config.
    if not (ev.comment.body or "").lstrip().startswith(COMMAND_SIGILS):
        return _ignore(ev, f"comment on #{number} is not an agentbot command", number=number)
    return _state(ev) or ev


def settle_comment(event: Envelope, ctx: Context) -> Job | Ignore:
    """The comment must start with a command of a built kind, used on the right kind of thread."""
    assert isinstance(event, IssueCommentEvent)
    issue, comment = event.issue, event.comment
    number = issue.number
    for user in (event.sender, comment.user):
        if guard := _other_bot(user, ctx.config, event):
            return guard
    author = event.sender or comment.user
    assert author is not None
    cmds = ctx.config.commands
    names = [name for name, kind in COMMAND_KINDS.items() if kind in ctx.kinds]
    matched = match_command(comment.body or "", cmds, names)
    if matched is None:
        return _ignore(event, f"comment on #{number} is not an agentbot command", number=number)
    name, rest = matched
    command = getattr(cmds, name)
    on_pr = issue.is_pull_request
    if name == "fix" and on_pr:
        uses = [f"`{cmds.implement} [tasks.md]` to implement a task list"]
        if "cover" in names:
            uses.append(f"`{cmds.cover}` to add tests")
        reply = f"`{command}` works on issues. On a pull request, use {' or '.join(uses)}."
        return _ignore(event, f"{command} on pull request #{number}", number=number, reply=reply)
    if name in ("implement", "cover") and not on_pr:
        reply = f"`{command}` works on pull requests. On an issue, use `{cmds.fix}`."
        return _ignore(event, f"{command} on issue #{number}", number=number, reply=reply)
    params: dict[str, Any] = {"trigger": "comment"}
    if comment.id is not None:
        params["comment_id"] = comment.id
    if name == "implement":
        path, problem = implement_path(rest)
        if problem:
            reply = f"`{command}`: {problem}. Name a tasks.md path relative to the repository root."
            return _ignore(event, f"{command} on #{number}: {problem}", number=number, reply=reply)
        params["tasks_path"] = path
    return _job(event, ctx, COMMAND_KINDS[name], author.login, number=number, params=params)


# --- push -------------------------------------------------------------------------------------


def screen_push(action: str, payload: Mapping[str, Any], bot_login: str) -> Envelope | Ignore:
    """A push of a branch other than the default one that changed a tasks.md."""
    if action:
        return early(payload, f"{event_label('push', action)} does not trigger agentbot")
    ev = _parse(PushEvent, "push", payload)
    if isinstance(ev, Ignore):
        return ev
    if guard := _itself(ev.sender, bot_login, ev):
        return guard
    if not ev.ref.startswith(BRANCH_PREFIX):
        return _ignore(ev, f"push of {ev.ref} is not a branch push (tags never trigger)")
    branch = ev.ref.removeprefix(BRANCH_PREFIX)
    if ev.deleted:
        return _ignore(ev, f"branch {branch} was deleted")
    if branch == ev.repository.default_branch:
        return _default_branch_push(ev, branch)
    if not changed_tasks_md(ev.commits, ev.head_commit):
        return _ignore(ev, f"push to {branch} changed no tasks.md")
    return ev


def _default_branch_push(ev: Envelope, branch: str) -> Ignore:
    return _ignore(
        ev, f"push to the default branch {branch} (tasks.md runs only on other branches)"
    )


def settle_push(event: Envelope, ctx: Context) -> Job | Ignore:
    """Implement the first tasks.md the push changed, on the pushed branch."""
    assert isinstance(event, PushEvent)
    if guard := _other_bot(event.sender, ctx.config, event):
        return guard
    branch = event.ref.removeprefix(BRANCH_PREFIX)
    default = event.repository.default_branch or ctx.default_branch
    if not default:
        return _ignore(event, f"push to {branch}: the default branch is unknown, so it may be it")
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
    return _job(event, ctx, JobKind.IMPLEMENT, actor, ref=branch, params=params)


# --- schedule and workflow_dispatch ---------------------------------------------------------------


def screen_schedule(action: str, payload: Mapping[str, Any], bot_login: str) -> Envelope | Ignore:
    """A timer, not a person: no sender guard (whatever Actions puts in `sender` is no loop)."""
    return _parse(ScheduleEvent, "schedule", payload)


def settle_schedule(event: Envelope, ctx: Context) -> Job | Ignore:
    """A scheduled refuel."""
    assert isinstance(event, ScheduleEvent)
    params: dict[str, Any] = {"trigger": "schedule"}
    if event.schedule:
        params["schedule"] = event.schedule
    actor = event.sender.login if event.sender else ""
    return _job(event, ctx, JobKind.REFUEL, actor, params=params)


def screen_dispatch(action: str, payload: Mapping[str, Any], bot_login: str) -> Envelope | Ignore:
    """An explicit run by someone GitHub let dispatch workflows (write access), or by the App's
    own worker handing a job to Actions: no sender guard."""
    return _parse(WorkflowDispatchEvent, "workflow_dispatch", payload)


def settle_dispatch(event: Envelope, ctx: Context) -> Job | Ignore:
    """The job the App handed over (`inputs.kind`), else a refuel with the run's inputs."""
    assert isinstance(event, WorkflowDispatchEvent)
    inputs = event.inputs or {}
    if inputs.get("kind"):
        fields, problem = dispatched_job(inputs)
        if problem:
            return _ignore(event, f"workflow_dispatch: {problem}")
        kind, actor = fields.pop("kind"), fields.pop("actor")
        return _job(event, ctx, kind, actor, **fields)
    params, problem = dispatch_params(inputs)
    if problem:
        return _ignore(event, f"workflow_dispatch: {problem}")
    params = {"trigger": "workflow_dispatch", **params}
    actor = event.sender.login if event.sender else ""
    return _job(event, ctx, JobKind.REFUEL, actor, params=params)


ROUTES: dict[str, Route] = {
    "issues": Route(screen_issues, settle_issues),
    "issue_comment": Route(screen_comment, settle_comment),
    "push": Route(screen_push, settle_push),
    "schedule": Route(screen_schedule, settle_schedule),
    "workflow_dispatch": Route(screen_dispatch, settle_dispatch),
}
