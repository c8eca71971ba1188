"""The handler map: which workflow runs a job of each kind, in one place.

A kind is routed only when it has a handler here (`decide(..., kinds=HANDLERS)`), so a
trigger whose workflow is not built never starts a job, and the bot never offers it. To
add a kind: write the package `bot/workflows/<kind>/` whose `story` module has
`<kind>(job, env) -> JobResult`, add it below, and add its trigger's rules to
`bot.events.routes`. Tests pass their own map to
the doors (`UseCase(handlers=...)`) the way the entry points pass this one.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from types import MappingProxyType

from bot.models import JobKind
from bot.ports import Handler
from bot.workflows.cover.story import cover
from bot.workflows.fix.story import fix_issue
from bot.workflows.follow_up.story import follow_up
from bot.workflows.implement.story import implement
from bot.workflows.plan.story import plan
from bot.workflows.refuel.story import refuel
from bot.workflows.tdd.story import tdd

HANDLERS: Mapping[JobKind, Handler] = MappingProxyType(
    {
        JobKind.COVER: cover,
        JobKind.FIX_ISSUE: fix_issue,
        JobKind.FOLLOW_UP: follow_up,
        JobKind.IMPLEMENT: implement,
        JobKind.PLAN: partial(plan, run_fix=fix_issue),
        JobKind.REFUEL: partial(refuel, run_fix=fix_issue),
        JobKind.TDD: tdd,
    }
)
"""Every built job kind and its workflow."""
