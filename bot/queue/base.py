"""The queue's contract (`JobQueue`) and its backend-neutral half; a backend fills the hooks."""

from __future__ import annotations

import builtins
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from bot.models import JobResult
from bot.queue.ledger import Ledger
from bot.queue.records import (
    Delivery,
    JobRecord,
    JobState,
    QueuedJob,
    as_datetime,
    check_delivery_id,
    payload_bytes,
    record,
    result_json,
)


@dataclass(frozen=True, slots=True)
class Completion:
    """How `complete` ends a job: its state, serialized result and decision."""

    state: JobState
    result: str | None
    decision: str


@dataclass(frozen=True, slots=True)
class Failure:
    """How `fail` ends an attempt: the error, and when to retry (None: bury the job)."""

    error: str
    retry_at: datetime | None


class QueueBase(Ledger):
    """What the receiver, the workers and the CLI need from a queue (tests/test_queue_contract).

    The public methods are the contract; the `_` hooks below them are what a backend adds.
    """

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
        return self.enqueue_many([Delivery(delivery_id, event_name, payload, repo)])[0]

    def enqueue_many(self, deliveries: Sequence[Delivery], *, sync: bool = True) -> list[bool]:
        """Store several deliveries in one transaction; per delivery, False if known.

        Durable on return, unless `sync` is False: then a backend may leave it to `sync()`
        (for deliveries another durable copy holds meanwhile: serve's spool).
        """
        for d in deliveries:
            check_delivery_id(d.delivery_id)
        return self._store([(d, payload_bytes(d.payload)) for d in deliveries], sync)

    def sync(self) -> None:
        """Make every committed `enqueue_many` durable (a backend that always syncs: nothing)."""

    def claim(self, worker_id: str, lease_seconds: float) -> QueuedJob | None:
        """Take the oldest due job (queued, retry due, or lease lapsed) for this worker."""
        raise NotImplementedError

    def heartbeat(self, job_id: str, worker_id: str, lease_seconds: float) -> bool:
        """Extend the worker's lease; False if the job is no longer this worker's."""
        raise NotImplementedError

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
        state = JobState.DONE if result is not None else JobState.IGNORED
        return self._end(job_id, Completion(state, result_json(result), decision), worker_id, log)

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
        return self._end(job_id, Failure(error, retry_at), worker_id, log)

    def cancel(self, job_id: str, reason: str) -> bool:
        """Cancel a job no worker has claimed: it ends `ignored` (`cancelled: reason`) and is
        never claimed; False when it is unknown, claimed already, or finished."""
        return self._cancel(job_id, f"cancelled: {reason}")

    def queued(self, repo: str, event_name: str, limit: int = 100) -> list[QueuedJob]:
        """The never-claimed queued jobs of `repo` and `event_name`, oldest first."""
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

    def annotate(
        self, job_id: str, *, repo: str = "", number: int | None = None, kind: str = ""
    ) -> None:
        """Record what routing found (repo, issue/PR, job kind) for the jobs page."""
        raise NotImplementedError

    def acquire_key(self, key: str, job_id: str) -> bool:
        """Hold `key` (`owner/repo#N`) for this job unless another running job holds it."""
        raise NotImplementedError

    def release_key(self, key: str, job_id: str) -> None:
        """Give `key` back (also done by complete and fail)."""
        raise NotImplementedError

    def append_log(self, job_id: str, line: str) -> None:
        """Add one line to the job's log."""
        self.append_logs(job_id, [line])

    def append_logs(self, job_id: str, lines: Sequence[str]) -> None:
        """Add lines to the job's log, in order, in one transaction."""
        raise NotImplementedError

    def list(self, limit: int = 50, state: JobState | None = None) -> builtins.list[JobRecord]:
        """The newest jobs first, without their logs."""
        if state is None:
            return [record(r) for r in self._select(None, None, limit)]
        return [record(r) for r in self._select("state", JobState(state).value, limit)]

    def get(self, job_id: str) -> JobRecord | None:
        """One job with its log, or None."""
        rows = self._select("delivery_id", job_id, 1)
        if not rows:
            return None
        return record(rows[0]).model_copy(update={"log": self._log_lines(job_id)})

    def counts(self) -> dict[JobState, int]:
        """How many jobs are in each state (every state present)."""
        raise NotImplementedError

    def ping(self) -> None:
        """Raise QueueError if the store is unreachable."""
        raise NotImplementedError

    def close(self) -> None:
        """Release connections."""
        raise NotImplementedError

    # --- the storage hooks ------------------------------------------------------------------

    def _store(self, rows: Sequence[tuple[Delivery, bytes]], sync: bool) -> builtins.list[bool]:
        """Insert (delivery, payload) rows in one transaction, durable if `sync`; True if new."""
        raise NotImplementedError

    def _end(
        self, job_id: str, end: Completion | Failure, worker_id: str | None, log: Sequence[str]
    ) -> bool:
        """Append `log` and end the job as `end` says, if `worker_id` (when given) holds it."""
        raise NotImplementedError

    def _cancel(self, job_id: str, decision: str) -> bool:
        """End a never-claimed queued job as ignored with `decision` (see `cancel`)."""
        raise NotImplementedError

    def _queued(self, repo: str, event_name: str, limit: int) -> builtins.list[Any]:
        """(delivery_id, payload, received_at) of never-claimed queued jobs, oldest first."""
        raise NotImplementedError

    def _select(self, column: str | None, value: str | None, limit: int) -> builtins.list[Any]:
        """Rows of `COLUMNS`, newest first, where `column` equals `value` (all if None)."""
        raise NotImplementedError

    def _log_lines(self, job_id: str) -> builtins.list[str]:
        """The job's log lines, oldest first."""
        raise NotImplementedError
