"""`decide()`: a pure, total map from (event name, payload, RepoConfig) to a Job or an Ignore.

Only the guards the payload itself can answer live here (bot senders, closed or locked
issues); the permission check, a fresh look at the issue and the one-job-per-issue rule need
the API and are the worker's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from bot.config import RepoConfig
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


@dataclass(frozen=True)
class _Context:
    config: RepoConfig
    bot_login: str
    default_branch: str | None


Route = Callable[[str, Mapping[str, Any], _Context], "Job | Ignore"]


def decide(
    event_name: str,
    payload: Mapping[str, Any],
    config: RepoConfig,
    *,
    bot_login: str = "",
    default_branch: str | None = None,
) -> Job | Ignore:
    """Decide what an event asks of agentbot; never raises, whatever the payload holds."""
    if not isinstance(event_name, str) or not event_name:
        return Ignore(reason=f"no event name (got {event_name!r})")
    if not isinstance(payload, Mapping):
        return Ignore(reason=f"{event_name} payload is not a JSON object")
    action = payload.get("action")
    route = _ROUTES.get(event_name)
    if route is None:
        return _early(payload, f"{_label(event_name, action)} does not trigger agentbot")
    if action is not None and not isinstance(action, str):
        return _early(payload, f"malformed {event_name} payload: action is {action!r}")
    return route(action or "", payload, _Context(config, bot_login, default_branch))


def _label(event_name: str, action: object) -> str:
    return f"{event_name}.{action}" if isinstance(action, str) and action else event_name


def _early(payload: Mapping[str, Any], reason: str) -> Ignore:
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
    login = login.strip().casefold()
    return login.removesuffix("[bot]")


def _sender_guard(user: User | None, ctx: _Context, ev: Envelope) -> Ignore | None:
    """No loops: the bot itself never triggers work; other bots only when allowed."""
    if user is None:
        return None
    login = _norm_login(user.login)
    if ctx.bot_login.strip() and login == _norm_login(ctx.bot_login):
        return _ignore(ev, f"sent by agentbot itself ({user.login}); ignored to avoid loops")
    if user.is_bot and login not in {_norm_login(b) for b in ctx.config.allowed_bots}:
        return _ignore(ev, f"sent by the bot {user.login}, which is not in allowed_bots")
    return None


def _ignore(ev: Envelope, reason: str, *, number: int | None = None, reply: str = "") -> Ignore:
    actor = ev.sender.login if ev.sender else ""
    return Ignore(
        reason=reason, reply=reply, repo=ev.repository.full_name, number=number, actor=actor
    )


def _job(ev: Envelope, kind: JobKind, actor: str, **fields: Any) -> Job:
    return Job(
        kind=kind,
        repo=ev.repository.full_name,
        actor=actor,
        installation_id=ev.installation.id if ev.installation else None,
        **fields,
    )


def _state_guard(ev: IssuesEvent | IssueCommentEvent) -> Ignore | None:
    issue = ev.issue
    what = "pull request" if issue.is_pull_request else "issue"
    if issue.state == "closed":
        return _ignore(ev, f"{what} #{issue.number} is closed", number=issue.number)
    if issue.locked:
        return _ignore(ev, f"{what} #{issue.number} is locked", number=issue.number)
    return None


def _issues(action: str, payload: Mapping[str, Any], ctx: _Context) -> Job | Ignore:
    if action != "labeled":
        return _early(payload, f"{_label('issues', action)} does not trigger agentbot")
    ev = _parse(IssuesEvent, "issues", payload)
    if isinstance(ev, Ignore):
        return ev
    number = ev.issue.number
    if ev.sender is None:
        return _ignore(ev, "issues.labeled without a sender", number=number)
    if guard := _sender_guard(ev.sender, ctx, ev):
        return guard
    if ev.label is None:
        return _ignore(ev, "issues.labeled without a label", number=number)
    labels = ctx.config.labels
    name = ev.label.name.casefold()
    # GitHub label names are case-insensitive; an empty configured label matches nothing.
    if labels.fix.strip() and name == labels.fix.casefold():
        kind = JobKind.FIX_ISSUE
    elif labels.tdd.strip() and name == labels.tdd.casefold():
        kind = JobKind.TDD
    else:
        return _ignore(
            ev,
            f"label {ev.label.name!r} is not an agentbot label"
            f" ({labels.fix!r} fixes, {labels.tdd!r} runs TDD)",
            number=number,
        )
    if ev.issue.is_pull_request:
        return _ignore(ev, f"#{number} is a pull request, not an issue", number=number)
    if guard := _state_guard(ev):
        return guard
    params = {"trigger": "label", "label": ev.label.name}
    return _job(ev, kind, ev.sender.login, number=number, params=params)


def _issue_comment(action: str, payload: Mapping[str, Any], ctx: _Context) -> Job | Ignore:
    if action != "created":
        return _early(
            payload,
            f"{_label('issue_comment', action)} does not trigger agentbot"
            " (only new comments are read)",
        )
    ev = _parse(IssueCommentEvent, "issue_comment", payload)
    if isinstance(ev, Ignore):
        return ev
    issue, comment = ev.issue, ev.comment
    number = issue.number
    for user in (ev.sender, comment.user):
        if guard := _sender_guard(user, ctx, ev):
            return guard
    author = ev.sender or comment.user
    if author is None:
        return _ignore(ev, "issue_comment.created without a sender", number=number)
    cmds = ctx.config.commands
    matched = match_command(comment.body or "", cmds)
    if matched is None:
        return _ignore(ev, f"comment on #{number} is not an agentbot command", number=number)
    name, rest = matched
    command = getattr(cmds, name)
    on_pr = issue.is_pull_request
    if name == "fix" and on_pr:
        reply = (
            f"`{command}` works on issues. On a pull request, use `{cmds.implement} [tasks.md]`"
            f" to implement a task list or `{cmds.cover}` to add tests."
        )
        return _ignore(ev, f"{command} on pull request #{number}", number=number, reply=reply)
    if name in ("implement", "cover") and not on_pr:
        reply = f"`{command}` works on pull requests. On an issue, use `{cmds.fix}`."
        return _ignore(ev, f"{command} on issue #{number}", number=number, reply=reply)
    params: dict[str, Any] = {"trigger": "comment"}
    if comment.id is not None:
        params["comment_id"] = comment.id
    if name == "implement":
        path, problem = implement_path(rest)
        if problem:
            reply = f"`{command}`: {problem}. Name a tasks.md path relative to the repository root."
            return _ignore(ev, f"{command} on #{number}: {problem}", number=number, reply=reply)
        params["tasks_path"] = path
    if guard := _state_guard(ev):
        return guard
    kind = {"fix": JobKind.FIX_ISSUE, "implement": JobKind.IMPLEMENT, "cover": JobKind.COVER}
    return _job(ev, kind[name], author.login, number=number, params=params)


def _push(action: str, payload: Mapping[str, Any], ctx: _Context) -> Job | Ignore:
    if action:
        return _early(payload, f"{_label('push', action)} does not trigger agentbot")
    ev = _parse(PushEvent, "push", payload)
    if isinstance(ev, Ignore):
        return ev
    if guard := _sender_guard(ev.sender, ctx, ev):
        return guard
    pusher = ev.pusher.name if ev.pusher else None
    actor = ev.sender.login if ev.sender else (pusher or "")
    if not ev.ref.startswith(BRANCH_PREFIX):
        return _ignore(ev, f"push of {ev.ref} is not a branch push (tags never trigger)")
    branch = ev.ref.removeprefix(BRANCH_PREFIX)
    if ev.deleted:
        return _ignore(ev, f"branch {branch} was deleted")
    default = ev.repository.default_branch or ctx.default_branch
    if not default:
        return _ignore(ev, f"push to {branch}: the default branch is unknown, so it may be it")
    if branch == default:
        return _ignore(
            ev, f"push to the default branch {branch} (tasks.md runs only on other branches)"
        )
    paths = changed_tasks_md(ev.commits, ev.head_commit)
    if not paths:
        return _ignore(ev, f"push to {branch} changed no tasks.md")
    params: dict[str, Any] = {"trigger": "push", "tasks_path": paths[0]}
    if len(paths) > 1:
        params["tasks_paths"] = paths
    if ev.after:
        params["sha"] = ev.after
    return _job(ev, JobKind.IMPLEMENT, actor, ref=branch, params=params)


def _schedule(action: str, payload: Mapping[str, Any], ctx: _Context) -> Job | Ignore:
    # A timer, not a person: no sender guard (whatever Actions puts in `sender` is not a loop).
    ev = _parse(ScheduleEvent, "schedule", payload)
    if isinstance(ev, Ignore):
        return ev
    params: dict[str, Any] = {"trigger": "schedule"}
    if ev.schedule:
        params["schedule"] = ev.schedule
    return _job(ev, JobKind.REFUEL, ev.sender.login if ev.sender else "", params=params)


def _workflow_dispatch(action: str, payload: Mapping[str, Any], ctx: _Context) -> Job | Ignore:
    # An explicit run by someone GitHub already let dispatch workflows (write access), and
    # the App's own worker dispatches runs this way: no sender guard here.
    ev = _parse(WorkflowDispatchEvent, "workflow_dispatch", payload)
    if isinstance(ev, Ignore):
        return ev
    inputs = ev.inputs or {}
    if inputs.get("kind"):
        # A job the App's worker handed to Actions (execution mode `actions`): run that job.
        fields, problem = dispatched_job(inputs)
        if problem:
            return _ignore(ev, f"workflow_dispatch: {problem}")
        return _job(ev, **fields)
    params, problem = dispatch_params(inputs)
    if problem:
        return _ignore(ev, f"workflow_dispatch: {problem}")
    params = {"trigger": "workflow_dispatch", **params}
    return _job(ev, JobKind.REFUEL, ev.sender.login if ev.sender else "", params=params)


_ROUTES: dict[str, Route] = {
    "issues": _issues,
    "issue_comment": _issue_comment,
    "push": _push,
    "schedule": _schedule,
    "workflow_dispatch": _workflow_dispatch,
}
