"""Unassigning agentbot cancels the job its assignment queued (issue #28).

The receiver calls `cancel_unassigned` right after it stores an `issues.unassigned`
delivery: a queued `issues.assigned` delivery of the same issue and login that no worker
has claimed yet ends `ignored` (`cancelled: ...`) and never runs. One a worker already
holds runs its guards, which find the issue no longer assigned (`bot.guards`).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

from bot.events import repo_full_name
from bot.events.assignments import assigns, unassignment_of
from bot.queue import JobQueue

log = logging.getLogger("agentbot.worker")


def cancel_unassigned(queue: JobQueue, event_name: str, payload: Mapping[str, Any]) -> list[str]:
    """Cancel the queued assignments an unassignment undoes; the ids cancelled."""
    undone, repo = unassignment_of(event_name, payload), repo_full_name(payload)
    if undone is None or repo is None:
        return []
    number, login = undone
    sender = payload.get("sender")
    who = sender.get("login") if isinstance(sender, Mapping) else None
    reason = f"#{number} was unassigned from {login}" + (
        f" by {who}" if isinstance(who, str) else ""
    )
    cancelled = []
    for queued in queue.queued(repo, "issues"):
        try:
            earlier = json.loads(queued.payload)
        except ValueError:
            continue
        mine = isinstance(earlier, dict) and assigns("issues", earlier, number, login)
        if mine and queue.cancel(queued.id, reason):
            log.info("cancelled queued job %s: %s", queued.id, reason)
            cancelled.append(queued.id)
    return cancelled
