"""The durable job queue: one stored webhook delivery per job, claimed under a lease.

A job's id is its delivery id (`X-GitHub-Delivery`), so the id GitHub shows under
"Recent Deliveries" finds the job on the jobs page, and a redelivery is a duplicate by
construction. Two backends share one contract (tests/test_queue_contract.py):
`sqlite:///PATH` (one file, the default) and `postgresql://...` (procrastinate).

States: `queued` -> `running` -> `done` | `ignored` | `failed` (a retry is scheduled, back to
running when due) | `dead` (no retry: not retryable, or attempts used up). A `running` job
whose lease lapsed (its worker died) is claimed again; at-least-once, so jobs are idempotent.
"""

from __future__ import annotations

import builtins
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any, Protocol
from urllib.parse import parse_qs, urlsplit

from pydantic import BaseModel, ConfigDict, Field

from bot.clock import Clock
from bot.errors import ConfigError
from bot.models import JobResult
from bot.models.stats import PullOutcome, SpendRow

DEFAULT_MAX_ATTEMPTS = 5
MAX_DELIVERY_ID = 200
"""Longest delivery id accepted; GitHub's are 36-character GUIDs."""


class JobState(StrEnum):
    """Where a job is in its life."""

    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    """Failed, retry scheduled at `next_attempt_at`."""
    DEAD = "dead"
    """Failed for good: not retryable, or out of attempts."""
    IGNORED = "ignored"
    """Routing or a guard decided there is nothing to do."""

    @property
    def finished(self) -> bool:
        """True for states no worker will touch again."""
        return self in (JobState.DONE, JobState.DEAD, JobState.IGNORED)


@dataclass(frozen=True, slots=True)
class Delivery:
    """One webhook delivery to store."""

    delivery_id: str
    event_name: str
    payload: bytes | Mapping[str, Any]
    repo: str = ""


@dataclass(frozen=True, slots=True)
class QueuedJob:
    """A claimed job: the raw delivery plus the bookkeeping a worker needs."""

    id: str
    delivery_id: str
    event_name: str
    payload: bytes
    attempts: int
    """Claims so far, this one included."""
    state: JobState
    received_at: datetime
    worker_id: str


class JobRecord(BaseModel):
    """One job as the jobs page, `agentbot jobs` and `GET /jobs/{id}` show it."""

    model_config = ConfigDict(extra="forbid")

    id: str
    delivery_id: str
    event_name: str
    state: JobState
    attempts: int = 0
    received_at: datetime
    updated_at: datetime
    started_at: datetime | None = None
    finished_at: datetime | None = None
    next_attempt_at: datetime | None = None
    worker_id: str = ""
    repo: str = ""
    number: int | None = None
    kind: str = ""
    decision: str = ""
    """What the worker decided: `ignored: <reason>`, `ran fix_issue`, `dispatched ...`."""
    error: str = ""
    result: JobResult | None = None
    log: list[str] = Field(default_factory=list)
    """The job's log lines (only filled by `get`)."""

    @property
    def cost_usd(self) -> float:
        """What the job's LLM calls cost, 0 before it finished."""
        return self.result.cost_usd if self.result is not None else 0.0


class JobQueue(Protocol):
    """What the receiver, the workers and the CLI need from a queue backend."""

    max_attempts: int

    def enqueue(
        self,
        delivery_id: str,
        event_name: str,
        payload: bytes | Mapping[str, Any],
        *,
        repo: str = "",
    ) -> bool:
        """Store a delivery durably (committed on return); False if the delivery id is known."""
        ...

    def enqueue_many(self, deliveries: Sequence[Delivery]) -> list[bool]:
        """Store several deliveries in one transaction; per delivery, False if known."""
        ...

    def claim(self, worker_id: str, lease_seconds: float) -> QueuedJob | None:
        """Take the oldest due job (queued, retry due, or lease lapsed) for this worker."""
        ...

    def heartbeat(self, job_id: str, worker_id: str, lease_seconds: float) -> bool:
        """Extend the worker's lease; False if the job is no longer this worker's."""
        ...

    def complete(
        self,
        job_id: str,
        result: JobResult | None,
        decision: str,
        *,
        worker_id: str | None = None,
        log: Sequence[str] = (),
    ) -> bool:
        """Finish a job: `done` with its result, or `ignored` when result is None.

        With `worker_id`, only while that worker still holds the job (False otherwise).
        Keys the job holds are released; `log` lines are appended to its log either way.
        """
        ...

    def fail(
        self,
        job_id: str,
        error: str,
        retry_at: datetime | None,
        *,
        worker_id: str | None = None,
        log: Sequence[str] = (),
    ) -> bool:
        """Record a failure: retry at `retry_at`, or `dead` if None or out of attempts."""
        ...

    def cancel(self, job_id: str, reason: str) -> bool:
        """Cancel a job no worker has claimed: `ignored` with `cancelled: reason`; False if
        it is unknown, claimed or finished."""
        ...

    def queued(self, repo: str, event_name: str, limit: int = 100) -> list[QueuedJob]:
        """The never-claimed queued jobs of `repo` and `event_name`, oldest first."""
        ...

    def annotate(
        self, job_id: str, *, repo: str = "", number: int | None = None, kind: str = ""
    ) -> None:
        """Record what routing found (repo, issue/PR, job kind) for the jobs page."""
        ...

    def acquire_key(self, key: str, job_id: str) -> bool:
        """Hold `key` (`owner/repo#N`) for this job unless another running job holds it."""
        ...

    def release_key(self, key: str, job_id: str) -> None:
        """Give `key` back (also done by complete and fail)."""
        ...

    def append_log(self, job_id: str, line: str) -> None:
        """Add one line to the job's log."""
        ...

    def append_logs(self, job_id: str, lines: Sequence[str]) -> None:
        """Add lines to the job's log, in order."""
        ...

    def list(self, limit: int = 50, state: JobState | None = None) -> list[JobRecord]:
        """The newest jobs first, without their logs."""
        ...

    def get(self, job_id: str) -> JobRecord | None:
        """One job with its log, or None."""
        ...

    def counts(self) -> dict[JobState, int]:
        """How many jobs are in each state (every state present)."""
        ...

    def ping(self) -> None:
        """Raise QueueError if the store is unreachable."""
        ...

    # --- the operator's tables (bot.queue.ledger) -------------------------------------------

    def record_spend(
        self, job_id: str, repo: str, number: int | None, kind: str, usd: float, at: datetime
    ) -> None:
        """Add money a job spent (one model call) at `at`."""
        ...

    def spent(self, repo: str | None, since: datetime) -> float:
        """USD spent from `since` on, in `repo` or (None) everywhere."""
        ...

    def spend_rows(self, since: datetime) -> builtins.list[SpendRow]:
        """Every spend from `since` on, oldest first."""
        ...

    def set_repo_caps(
        self, repo: str, per_day: float | None, per_month: float | None, at: datetime
    ) -> None:
        """Remember the caps a repository's config set, as last seen by a job."""
        ...

    def repo_caps(self) -> dict[str, tuple[float | None, float | None]]:
        """Each repository's (per day, per month) caps as last seen."""
        ...

    def save_pull(self, pull: PullOutcome) -> None:
        """Store a pull request's outcome (replacing what was stored for it)."""
        ...

    def pulls(self, repo: str | None = None) -> builtins.list[PullOutcome]:
        """Stored pull requests, in `repo` or everywhere."""
        ...

    def pull(self, repo: str, number: int) -> PullOutcome | None:
        """One stored pull request."""
        ...

    def close(self) -> None:
        """Release connections."""
        ...


def check_delivery_id(delivery_id: str) -> None:
    """Reject empty, overlong or non-printable delivery ids (they become URL path parts)."""
    if not delivery_id or len(delivery_id) > MAX_DELIVERY_ID or not delivery_id.isprintable():
        raise ValueError(f"delivery id must be 1-{MAX_DELIVERY_ID} printable characters")


def open_queue(
    url: str, *, clock: Clock | None = None, max_attempts: int = DEFAULT_MAX_ATTEMPTS
) -> JobQueue:
    """Open `sqlite:///PATH` (`sqlite:////abs.db` is absolute) or `postgresql://...[?schema=S]`."""
    scheme = urlsplit(url).scheme
    if scheme == "sqlite":
        from bot.queue.sqlite import SqliteQueue

        # SQLAlchemy's convention: sqlite:///rel/a.db is relative, sqlite:////abs/a.db absolute.
        path = url[len("sqlite:///") :] if url.startswith("sqlite:///") else ""
        if not path or path.endswith("/"):
            raise ConfigError(
                "sqlite queue URL names no file: use sqlite:///./agentbot.db or sqlite:////abs/x.db",
                path="AGENTBOT_QUEUE",
            )
        return SqliteQueue(path, clock=clock, max_attempts=max_attempts)
    if scheme in ("postgresql", "postgres"):
        try:
            from bot.queue.postgres import PostgresQueue
        except ModuleNotFoundError as exc:
            raise ConfigError(
                f"a PostgreSQL queue needs the postgres extra ({exc.name} is not installed):"
                " pip install 'agentbot[postgres]', or unset AGENTBOT_QUEUE for SQLite",
                path="AGENTBOT_QUEUE",
            ) from exc

        parts = urlsplit(url)
        query = parse_qs(parts.query)
        schema = query.pop("schema", ["agentbot"])[-1]
        rest = "&".join(f"{k}={v}" for k, vs in query.items() for v in vs)
        conninfo = parts._replace(query=rest).geturl()
        return PostgresQueue(conninfo, schema=schema, max_attempts=max_attempts)
    raise ConfigError(
        f"unsupported queue URL scheme {scheme!r}: use sqlite:///PATH or postgresql://...",
        path="AGENTBOT_QUEUE",
    )


__all__ = [
    "DEFAULT_MAX_ATTEMPTS",
    "Delivery",
    "JobQueue",
    "JobRecord",
    "JobState",
    "QueuedJob",
    "open_queue",
]
