"""What routing returns when it starts nothing (`Ignore`), and both outcomes as JSON."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from bot.models import Job


class Ignore(BaseModel):
    """No job for this event, and why; the context fields are filled in when known."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    reason: str
    reply: str = ""
    """Text to post on the issue/PR (a command used on the wrong kind, a bad path). The
    worker posts it only after the commenter passes the permission check."""
    repo: str | None = None
    number: int | None = None
    actor: str = ""


def describe(job: Job) -> str:
    """A one-line account of a job, for logs and `agentbot route`."""
    where = job.repo
    if job.number is not None:
        where += f"#{job.number}"
    elif job.ref:
        where += f"@{job.ref}"
    trigger = job.params.get("trigger")
    text = f"{job.kind.value} on {where}"
    if job.actor:
        text += f" for {job.actor}"
    if isinstance(trigger, str) and trigger:
        text += f" (by {trigger})"
    return text


def decision_json(decision: Job | Ignore) -> dict[str, Any]:
    """The decision as the JSON object `agentbot route` prints (DESIGN §2)."""
    if isinstance(decision, Job):
        return {
            "action": decision.kind.value,
            "reason": describe(decision),
            "repo": decision.repo,
            "number": decision.number,
            "actor": decision.actor,
            "ref": decision.ref,
            "installation_id": decision.installation_id,
            "params": dict(decision.params),
        }
    return {
        "action": "ignore",
        "reason": decision.reason,
        "repo": decision.repo,
        "number": decision.number,
        "actor": decision.actor,
        "ref": "",
        "installation_id": None,
        "params": {"reply": decision.reply} if decision.reply else {},
    }
