"""Routing in two pure, total halves (DESIGN §3): `screen` on the payload, `settle` with config.

`screen(delivery)` applies every rule the payload alone can settle (the event and action,
the shape, the bot's own events, closed or locked issues, a comment that is no command, a
push to the default branch or without a tasks.md). It needs no config, so a delivery it
dismisses costs no request to GitHub. `settle(screened, config, kinds=…)` finishes the
decision with the repository's config: labels, commands, `allowed_bots`, and only the
job kinds that have a handler (`kinds`): an unbuilt kind's trigger is no trigger.
`decide` is both halves at once, for `agentbot route` and tests. The permission check, a
fresh look at the issue and the one-job-per-issue rule need the API and are the doors'.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from bot.config import RepoConfig
from bot.events.decision import Ignore
from bot.events.delivery import Delivery
from bot.events.payloads import Envelope
from bot.events.routes import ROUTES
from bot.events.rules import Context, early, event_label
from bot.models import Job, JobKind


@dataclass(frozen=True)
class Screened:
    """A delivery the payload alone could not dismiss: its parsed event, awaiting the config."""

    delivery: Delivery
    event: Envelope


def screen(delivery: Delivery, *, bot_login: str = "") -> Screened | Ignore:
    """The payload-only half: an Ignore, or the parsed event for `settle`; never raises."""
    event_name, payload = delivery.event_name, delivery.payload
    if not isinstance(event_name, str) or not event_name:
        return Ignore(reason=f"no event name (got {event_name!r})")
    action = payload.get("action")
    route = ROUTES.get(event_name)
    if route is None:
        return early(payload, f"{event_label(event_name, action)} does not trigger agentbot")
    if action is not None and not isinstance(action, str):
        return early(payload, f"malformed {event_name} payload: action is {action!r}")
    parsed = route.screen(action or "", payload, bot_login)
    if isinstance(parsed, Ignore):
        return parsed
    return Screened(delivery=delivery, event=parsed)


def settle(
    screened: Screened,
    config: RepoConfig,
    *,
    kinds: Collection[JobKind],
    bot_login: str = "",
    default_branch: str | None = None,
) -> Job | Ignore:
    """The config half: a Job of one of `kinds`, or an Ignore; never raises."""
    route = ROUTES[screened.delivery.event_name]
    branch = default_branch or screened.delivery.default_branch
    return route.settle(screened.event, Context(config, kinds, bot_login, branch))


def decide(
    event_name: str,
    payload: Mapping[str, Any],
    config: RepoConfig,
    *,
    kinds: Collection[JobKind],
    bot_login: str = "",
    default_branch: str | None = None,
) -> Job | Ignore:
    """Decide what an event asks of agentbot; never raises, whatever the payload holds."""
    if not isinstance(payload, Mapping):
        return Ignore(reason=f"{event_name} payload is not a JSON object")
    screened = screen(Delivery(event_name, payload), bot_login=bot_login)
    if isinstance(screened, Ignore):
        return screened
    return settle(screened, config, kinds=kinds, bot_login=bot_login, default_branch=default_branch)
