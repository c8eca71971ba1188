"""What both queue backends share: delivery checks, the public signatures and row mapping."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from bot.models import JobResult
from bot.queue import Delivery, JobRecord, JobState, QueuedJob, check_delivery_id
from bot.queue.ledger import Ledger

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


class QueueBase(Ledger):
    """The backend-neutral half of a JobQueue; a backend supplies the storage hooks."""

    max_attempts: int

    def enqueue(
        self,
        delivery_id: str,
        event_name: str,
        payload: bytes | Mapping[str, Any],
        *,
        repo: str = "",
    ) -> bool:
        """Store a delivery durably; False if the delivery id is already stored."""
        return self.enqueue_many([Delivery(delivery_id, event_name, payload, repo)])[0]

    def enqueue_many(self, deliveries: Sequence[Delivery]) -> list[bool]:
        """Store several deliveries in one durable transaction; per delivery, False if known."""
        for d in deliveries:
            check_delivery_id(d.delivery_id)
        return self._store([(d, payload_bytes(d.payload)) for d in deliveries])

    def complete(
        self,
        job_id: str,
        result: JobResult | None,
        decision: str,
        *,
        worker_id: str | None = None,
        log: Sequence[str] = (),
    ) -> bool:
        """`done` with the result, or `ignored` when there is none; `log` lines appended."""
        state = JobState.DONE if result is not None else JobState.IGNORED
        return self._complete(job_id, state, result_json(result), decision, worker_id, log)

    def fail(
        self,
        job_id: str,
        error: str,
        retry_at: datetime | None,
        *,
        worker_id: str | None = None,
        log: Sequence[str] = (),
    ) -> bool:
        """Retry at `retry_at`, or bury the job when there is none or attempts ran out."""
        return self._fail(job_id, error, retry_at, worker_id, log)

    def append_log(self, job_id: str, line: str) -> None:
        """Add one line to the job's log."""
        self.append_logs(job_id, [line])

    def cancel(self, job_id: str, reason: str) -> bool:
        """Cancel a job no worker has claimed yet: it ends `ignored` (`cancelled: reason`) and
        is never claimed; False when it is unknown, claimed already, or finished."""
        return self._cancel(job_id, f"cancelled: {reason}")

    def queued(self, repo: str, event_name: str, limit: int = 100) -> list[QueuedJob]:
        """Jobs of `repo` and `event_name` no worker has claimed yet, oldest first."""
        return [
            QueuedJob(
                id=r[0],
                delivery_id=r[0],
                event_name=event_name,
                payload=bytes(r[1]),
                attempts=0,
                state=JobState.QUEUED,
                received_at=as_datetime(r[2]),
                worker_id="",
            )
            for r in self._queued(repo, event_name, limit)
        ]

    def append_logs(self, job_id: str, lines: Sequence[str]) -> None:
        """Add lines to the job's log, in order, in one transaction."""
        raise NotImplementedError

    # --- the storage hooks ------------------------------------------------------------------

    def _store(self, rows: Sequence[tuple[Delivery, bytes]]) -> list[bool]:
        """Insert (delivery, payload) rows in one durable transaction; True where new."""
        raise NotImplementedError

    def _complete(
        self,
        job_id: str,
        state: JobState,
        result: str | None,
        decision: str,
        worker_id: str | None,
        log: Sequence[str],
    ) -> bool:
        """Finish the job in `state` with its serialized result (see `complete`)."""
        raise NotImplementedError

    def _fail(
        self,
        job_id: str,
        error: str,
        retry_at: datetime | None,
        worker_id: str | None,
        log: Sequence[str],
    ) -> bool:
        """Record the failure (see `fail`)."""
        raise NotImplementedError

    def _cancel(self, job_id: str, decision: str) -> bool:
        """End a never-claimed queued job as ignored with `decision` (see `cancel`)."""
        raise NotImplementedError

    def _queued(self, repo: str, event_name: str, limit: int) -> list[Any]:
        """(delivery_id, payload, received_at) of never-claimed queued jobs, oldest first."""
        raise NotImplementedError

    def _select(self, column: str | None, value: str | None, limit: int) -> list[Any]:
        """Rows of `COLUMNS`, newest first, where `column` equals `value` (all if None)."""
        raise NotImplementedError

    def _log_lines(self, job_id: str) -> list[str]:
        """The job's log lines, oldest first."""
        raise NotImplementedError

    def list(self, limit: int = 50, state: JobState | None = None) -> list[JobRecord]:
        """The newest jobs first, without logs."""
        if state is None:
            return [record(r) for r in self._select(None, None, limit)]
        return [record(r) for r in self._select("state", JobState(state).value, limit)]

    def get(self, job_id: str) -> JobRecord | None:
        """One job with its log lines."""
        rows = self._select("delivery_id", job_id, 1)
        if not rows:
            return None
        return record(rows[0]).model_copy(update={"log": self._log_lines(job_id)})
