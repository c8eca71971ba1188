"""What every event's rules are built from: the context, a route's two halves, and the
small judgements they share (no loops, other bots, closed or locked issues, job or not)."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any

from bot.config import RepoConfig
from bot.events.decision import Ignore
from bot.events.payloads import (
    Envelope,
    IssueCommentEvent,
    IssuesEvent,
    P,
    User,
    parse,
    repo_full_name,
)
from bot.models import Job, JobKind


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


def parse_event(model: type[P], event_name: str, payload: Mapping[str, Any]) -> P | Ignore:
    """The event's model, or an Ignore naming the field that does not fit."""
    parsed = parse(model, payload)
    if isinstance(parsed, str):
        return Ignore(reason=f"malformed {event_name} payload {parsed}")
    return parsed


def norm_login(login: str) -> str:
    """A login as compared: trimmed, case-folded, without `[bot]`."""
    return login.strip().casefold().removesuffix("[bot]")


def itself(user: User | None, bot_login: str, ev: Envelope) -> Ignore | None:
    """No loops: the bot itself never triggers work, whatever the config allows."""
    if user is not None and bot_login.strip() and norm_login(user.login) == norm_login(bot_login):
        return ignore(ev, f"sent by agentbot itself ({user.login}); ignored to avoid loops")
    return None


def other_bot(user: User | None, config: RepoConfig, ev: Envelope) -> Ignore | None:
    """Other bots only when the repository allows them."""
    allowed = {norm_login(b) for b in config.allowed_bots}
    if user is not None and user.is_bot and norm_login(user.login) not in allowed:
        return ignore(ev, f"sent by the bot {user.login}, which is not in allowed_bots")
    return None


def ignore(ev: Envelope, reason: str, *, number: int | None = None, reply: str = "") -> Ignore:
    """An Ignore with the event's repository and sender."""
    actor = ev.sender.login if ev.sender else ""
    return Ignore(
        reason=reason, reply=reply, repo=ev.repository.full_name, number=number, actor=actor
    )


def job(ev: Envelope, ctx: Context, kind: JobKind, actor: str, **fields: Any) -> Job | Ignore:
    """A job of `kind`, or an Ignore when that kind has no handler (is not built)."""
    if kind not in ctx.kinds:
        return ignore(ev, f"agentbot cannot run {kind.value} jobs yet", number=fields.get("number"))
    return Job(
        kind=kind,
        repo=ev.repository.full_name,
        actor=actor,
        installation_id=ev.installation.id if ev.installation else None,
        **fields,
    )


def state(ev: IssuesEvent | IssueCommentEvent) -> Ignore | None:
    """An Ignore when the payload says the issue or pull request is closed or locked."""
    issue = ev.issue
    what = "pull request" if issue.is_pull_request else "issue"
    if issue.state == "closed":
        return ignore(ev, f"{what} #{issue.number} is closed", number=issue.number)
    if issue.locked:
        return ignore(ev, f"{what} #{issue.number} is locked", number=issue.number)
    return None
