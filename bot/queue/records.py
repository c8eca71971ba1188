"""The queue's records: deliveries, jobs and their states, and how stored rows read back."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from bot.models import JobResult

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


def check_delivery_id(delivery_id: str) -> None:
    """Reject empty, overlong, non-ASCII or non-printable delivery ids, and `.` and `..`."""
    # An id is the URL-encoded end of its `/jobs/` link; clients drop `.` and `..` segments
    # there, `%2E` as well, so no link could reach those.
    # ASCII only: a header's bytes have no encoding, and UTF-8 read as Latin-1 is another id.
    if (
        not delivery_id
        or len(delivery_id) > MAX_DELIVERY_ID
        or not delivery_id.isascii()
        or not delivery_id.isprintable()
    ):
        raise ValueError(f"delivery id must be 1-{MAX_DELIVERY_ID} printable ASCII characters")
    if delivery_id in (".", ".."):
        raise ValueError("delivery id must not be '.' or '..' (no URL can name it)")


COLUMNS = (
    "delivery_id, event_name, state, attempts, received_at, updated_at, started_at,"
    " finished_at, next_attempt_at, worker_id, repo, number, kind, decision, error, result"
)
"""The job columns `_select` returns, in the order `record` reads them."""


def payload_bytes(payload: bytes | Mapping[str, Any]) -> bytes:
    """The stored form of a payload: raw bytes as given, a mapping as compact JSON."""
    if isinstance(payload, bytes | bytearray | memoryview):
        return bytes(payload)
    return json.dumps(payload, separators=(",", ":")).encode()


def result_json(result: JobResult | None) -> str | None:
    """Serialize a result for storage."""
    return result.model_dump_json() if result is not None else None


def stored_result(value: Any) -> JobResult | None:
    """Read a stored result (JSON text, or a dict from jsonb); an unreadable one reads as None."""
    if not value:
        return None
    try:
        if isinstance(value, str | bytes):
            return JobResult.model_validate_json(value)
        return JobResult.model_validate(value)
    except ValueError:
        return None


def as_datetime(value: Any) -> Any:
    """A stored time as a datetime: SQLite keeps epoch seconds, PostgreSQL timestamptz."""
    if isinstance(value, int | float):
        return datetime.fromtimestamp(value, UTC)
    return value


def record(row: Sequence[Any]) -> JobRecord:
    """A JobRecord from a row of `COLUMNS`."""
    return JobRecord(
        id=row[0],
        delivery_id=row[0],
        event_name=row[1],
        state=JobState(row[2]),
        attempts=row[3],
        received_at=as_datetime(row[4]),
        updated_at=as_datetime(row[5]),
        started_at=as_datetime(row[6]),
        finished_at=as_datetime(row[7]),
        next_attempt_at=as_datetime(row[8]),
        worker_id=row[9],
        repo=row[10],
        number=row[11],
        kind=row[12],
        decision=row[13],
        error=row[14],
        result=stored_result(row[15]),
    )


def claimed(row: Sequence[Any], body: Sequence[Any] | None, worker_id: str) -> QueuedJob:
    """The QueuedJob for a claimed row (delivery_id, event_name, attempts, received_at)."""
    return QueuedJob(
        id=row[0],
        delivery_id=row[0],
        event_name=row[1],
        payload=bytes(body[0]) if body else b"",
        attempts=row[2],
        state=JobState.RUNNING,
        received_at=as_datetime(row[3]),
        worker_id=worker_id,
    )
