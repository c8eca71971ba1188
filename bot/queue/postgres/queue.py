"""The PostgreSQL queue on procrastinate (see the package docstring)."""

# Over 300 lines: one backend of the queue contract; its SQL and transitions already live beside it.

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from typing import Any

import psycopg
from psycopg.conninfo import conninfo_to_dict
from psycopg.rows import tuple_row
from psycopg_pool import ConnectionPool

from bot.db_url import url_password, without_password
from bot.errors import ConfigError, QueueError
from bot.queue import DEFAULT_MAX_ATTEMPTS, Delivery, JobState, QueuedJob
from bot.queue.base import Completion, Failure, QueueBase
from bot.queue.postgres.sql import ACQUIRE, DEFER, QUEUE_NAME, SCHEMA_NAME, TASK_NAME, setup
from bot.queue.postgres.transitions import complete, fail, recover_stalled
from bot.queue.records import COLUMNS, claimed


class PostgresQueue(QueueBase):
    """The shared queue for several workers and machines (see the module docstring)."""

    def __init__(
        self,
        conninfo: str,
        *,
        schema: str = "agentbot",
        max_attempts: int = DEFAULT_MAX_ATTEMPTS,
        pool_size: int = 10,
    ) -> None:
        if not SCHEMA_NAME.fullmatch(schema):
            raise QueueError(f"schema name {schema!r} must match {SCHEMA_NAME.pattern}")
        self.schema = schema
        self.max_attempts = max_attempts
        self._workers: dict[str, int] = {}
        self._workers_lock = threading.Lock()
        try:  # libpq's parse errors quote the password: none of their text is shown
            conninfo_to_dict(conninfo)
        except psycopg.Error:
            raise ConfigError(
                "the PostgreSQL URL does not parse: percent-encode the user name and password"
                " (% as %25, a space as %20, @ as %40, / as %2F)",
                path="AGENTBOT_QUEUE",
            ) from None
        try:
            setup(conninfo, schema)
            self._pool = ConnectionPool(
                conninfo,
                min_size=1,
                max_size=pool_size,
                kwargs={"options": f"-c search_path={schema}", "row_factory": tuple_row},
                open=True,
                timeout=30,
            )
        except psycopg.Error as exc:
            # One line (libpq puts its hint on a line of its own); the driver quotes what it
            # cannot parse, a password too.
            why = "; ".join(ln.strip() for ln in str(exc).splitlines() if ln.strip())
            message = without_password(why, url_password(conninfo))
            raise QueueError(f"cannot open the PostgreSQL queue: {message}") from exc

    def _q(self, sql: str, args: Any = None) -> list[tuple[Any, ...]]:
        """Run one statement in its own transaction."""
        try:
            with self._pool.connection() as conn:
                cur = conn.execute(sql, args)
                return cur.fetchall() if cur.description else []
        except psycopg.Error as exc:
            raise QueueError(f"PostgreSQL queue: {exc}") from exc

    def _worker_row(self, conn: psycopg.Connection[tuple[Any, ...]], worker_id: str) -> int:
        """This worker's procrastinate worker id, heartbeat refreshed (re-registered if pruned)."""
        with self._workers_lock:
            wid = self._workers.get(worker_id)
        if wid is not None:
            row = conn.execute(
                "UPDATE procrastinate_workers SET last_heartbeat = now()"
                " WHERE id = %s RETURNING id",
                (wid,),
            ).fetchone()
            if row is not None:
                return wid
        row = conn.execute("SELECT worker_id FROM procrastinate_register_worker_v1()").fetchone()
        assert row is not None
        with self._workers_lock:
            self._workers[worker_id] = int(row[0])
        return int(row[0])

    # --- the contract -----------------------------------------------------------------------

    def _store(self, rows: Sequence[tuple[Delivery, bytes]], sync: bool) -> list[bool]:
        """Store deliveries and defer their procrastinate jobs, all in one transaction (always
        durable: `sync` is for a backend with a spool in front of it)."""
        fresh: list[bool] = []
        try:
            with self._pool.connection() as conn, conn.transaction():
                for d, body in rows:
                    fresh.append(self._insert(conn, d, body))
        except psycopg.Error as exc:
            raise QueueError(f"PostgreSQL queue: cannot store deliveries: {exc}") from exc
        return fresh

    def _insert(self, conn: psycopg.Connection[tuple[Any, ...]], d: Delivery, body: bytes) -> bool:
        row = conn.execute(
            "INSERT INTO agentbot_deliveries (delivery_id, event_name, repo)"
            " VALUES (%s, %s, %s) ON CONFLICT (delivery_id) DO NOTHING"
            " RETURNING delivery_id",
            (d.delivery_id, d.event_name, d.repo),
        ).fetchone()
        if row is None:
            return False
        conn.execute("INSERT INTO agentbot_payloads VALUES (%s, %s)", (d.delivery_id, body))
        args = json.dumps({"delivery_id": d.delivery_id})
        pj = conn.execute(DEFER, (QUEUE_NAME, TASK_NAME, args)).fetchone()
        assert pj is not None
        conn.execute(
            "UPDATE agentbot_deliveries SET pj_id = %s WHERE delivery_id = %s",
            (pj[0], d.delivery_id),
        )
        return True

    def claim(self, worker_id: str, lease_seconds: float) -> QueuedJob | None:
        """Requeue stalled jobs, then fetch the next one through procrastinate."""
        try:
            with self._pool.connection() as conn, conn.transaction():
                wid = self._worker_row(conn, worker_id)
                recover_stalled(conn, lease_seconds, self.max_attempts)
                job = conn.execute(
                    "SELECT id FROM procrastinate_fetch_job_v2(%s::varchar[], %s)",
                    ([QUEUE_NAME], wid),
                ).fetchone()
                if job is None or job[0] is None:
                    return None
                row = conn.execute(
                    "UPDATE agentbot_deliveries SET state = 'running', attempts = attempts + 1,"
                    " worker_id = %s, started_at = now(), updated_at = now(), lease_seconds = %s,"
                    " next_attempt_at = NULL WHERE pj_id = %s"
                    " RETURNING delivery_id, event_name, attempts, received_at",
                    (worker_id, lease_seconds, job[0]),
                ).fetchone()
                if row is None:  # a procrastinate job that is not ours: leave it done
                    conn.execute("SELECT procrastinate_finish_job_v1(%s, 'failed', false)", job)
                    return None
                body = conn.execute(
                    "SELECT body FROM agentbot_payloads WHERE delivery_id = %s", (row[0],)
                ).fetchone()
        except psycopg.Error as exc:
            raise QueueError(f"PostgreSQL queue: cannot claim: {exc}") from exc
        return claimed(row, body, worker_id)

    def heartbeat(self, job_id: str, worker_id: str, lease_seconds: float) -> bool:
        """Refresh the worker's procrastinate heartbeat; False if the job left it."""
        with self._workers_lock:
            wid = self._workers.get(worker_id)
        if wid is None:
            return False
        rows = self._q(
            "WITH beat AS (UPDATE procrastinate_workers SET last_heartbeat = now()"
            " WHERE id = %(wid)s RETURNING id)"
            " UPDATE agentbot_deliveries d SET lease_seconds = %(lease)s, updated_at = now()"
            " FROM procrastinate_jobs j, beat WHERE j.id = d.pj_id AND beat.id = j.worker_id"
            " AND d.delivery_id = %(job)s AND j.status = 'doing' AND d.state = 'running'"
            " RETURNING 1",
            {"wid": wid, "job": job_id, "lease": lease_seconds},
        )
        return bool(rows)

    def _owned(
        self, conn: psycopg.Connection[tuple[Any, ...]], job_id: str, worker_id: str | None
    ) -> tuple[int, int, str] | None:
        """Lock the job (procrastinate row first, as claims do); return it if we may finish it."""
        ref = conn.execute(
            "SELECT pj_id FROM agentbot_deliveries WHERE delivery_id = %s", (job_id,)
        ).fetchone()
        if ref is None:
            return None
        job = conn.execute(
            "SELECT status::text, worker_id FROM procrastinate_jobs WHERE id = %s FOR UPDATE",
            (ref[0],),
        ).fetchone()
        status, pj_worker = job if job is not None else ("", None)
        mine = conn.execute(
            "SELECT attempts, state FROM agentbot_deliveries WHERE delivery_id = %s FOR UPDATE",
            (job_id,),
        ).fetchone()
        assert mine is not None
        attempts, state = mine
        if worker_id is not None:
            with self._workers_lock:
                wid = self._workers.get(worker_id)
            if state != "running" or wid is None or pj_worker != wid:
                return None
        return ref[0], attempts, status

    def _end(
        self, job_id: str, end: Completion | Failure, worker_id: str | None, log: Sequence[str]
    ) -> bool:
        """Finish the job, or retry it through procrastinate at `retry_at`, or bury it."""
        try:
            with self._pool.connection() as conn, conn.transaction():
                self._insert_logs(conn, job_id, log)
                owned = self._owned(conn, job_id, worker_id)
                if owned is None:
                    return False
                if isinstance(end, Completion):
                    complete(conn, job_id, owned, end.state.value, end.result, end.decision)
                else:
                    fail(conn, job_id, owned, end.error, end.retry_at, self.max_attempts)
        except psycopg.Error as exc:
            raise QueueError(f"PostgreSQL queue: cannot end {job_id}: {exc}") from exc
        return True

    def _cancel(self, job_id: str, decision: str) -> bool:
        try:
            with self._pool.connection() as conn, conn.transaction():
                row = conn.execute(
                    "UPDATE agentbot_deliveries SET state = 'ignored', decision = %s,"
                    " finished_at = now(), updated_at = now() WHERE delivery_id = %s"
                    " AND state = 'queued' AND attempts = 0 RETURNING pj_id",
                    (decision, job_id),
                ).fetchone()
                if row is None:
                    return False
                # Still `todo` for procrastinate (the state above says no worker fetched it).
                conn.execute("SELECT procrastinate_cancel_job_v1(%s, false, false)", row)
        except psycopg.Error as exc:
            raise QueueError(f"PostgreSQL queue: cannot cancel {job_id}: {exc}") from exc
        return True

    def _queued(self, repo: str, event_name: str, limit: int) -> list[Any]:
        return self._q(
            "SELECT d.delivery_id, p.body, d.received_at FROM agentbot_deliveries d"
            " JOIN agentbot_payloads p ON p.delivery_id = d.delivery_id WHERE d.state = 'queued'"
            " AND d.attempts = 0 AND d.repo = %s AND d.event_name = %s ORDER BY d.seq LIMIT %s",
            (repo, event_name, limit),
        )

    def annotate(
        self, job_id: str, *, repo: str = "", number: int | None = None, kind: str = ""
    ) -> None:
        """Record repo, issue/PR number and kind for the jobs page."""
        self._q(
            "UPDATE agentbot_deliveries SET repo = CASE WHEN %(repo)s = '' THEN repo"
            " ELSE %(repo)s END, number = coalesce(%(number)s, number),"
            " kind = CASE WHEN %(kind)s = '' THEN kind ELSE %(kind)s END"
            " WHERE delivery_id = %(job)s",
            {"repo": repo, "number": number, "kind": kind, "job": job_id},
        )

    def acquire_key(self, key: str, job_id: str) -> bool:
        """Hold `key` unless another running job holds it."""
        return bool(self._q(ACQUIRE, {"key": key, "job": job_id}))

    def release_key(self, key: str, job_id: str) -> None:
        """Give `key` back if this job holds it."""
        self._q("DELETE FROM agentbot_running_keys WHERE key = %s AND job_id = %s", (key, job_id))

    def append_logs(self, job_id: str, lines: Sequence[str]) -> None:
        """Add lines to the job's log, in order, in one transaction."""
        if not lines:
            return
        try:
            with self._pool.connection() as conn, conn.transaction():
                self._insert_logs(conn, job_id, lines)
        except psycopg.Error as exc:
            raise QueueError(f"PostgreSQL queue: cannot append to the log: {exc}") from exc

    @staticmethod
    def _insert_logs(
        conn: psycopg.Connection[tuple[Any, ...]], job_id: str, lines: Sequence[str]
    ) -> None:
        if lines:
            with conn.cursor() as cur:
                cur.executemany(
                    "INSERT INTO agentbot_job_logs (job_id, line) VALUES (%s, %s)",
                    [(job_id, line) for line in lines],
                )

    def _select(self, column: str | None, value: str | None, limit: int) -> list[Any]:
        where, args = (f"WHERE {column} = %s", (value,)) if column else ("", ())
        return self._q(
            f"SELECT {COLUMNS} FROM agentbot_deliveries {where} ORDER BY seq DESC LIMIT %s",  # noqa: S608
            (*args, limit),
        )

    _prefix = "agentbot_"

    def _read(self, sql: str, args: Sequence[Any] = ()) -> list[Any]:
        return self._q(sql.replace("?", "%s"), tuple(args))

    def _write(self, sql: str, args: Sequence[Any] = ()) -> None:
        self._q(sql.replace("?", "%s"), tuple(args))

    def _log_lines(self, job_id: str) -> list[str]:
        rows = self._q(
            "SELECT line FROM agentbot_job_logs WHERE job_id = %s ORDER BY id", (job_id,)
        )
        return [r[0] for r in rows]

    def counts(self) -> dict[JobState, int]:
        """Jobs per state."""
        out = dict.fromkeys(JobState, 0)
        for state, n in self._q("SELECT state, count(*) FROM agentbot_deliveries GROUP BY state"):
            out[JobState(state)] = int(n)
        return out

    def ping(self) -> None:
        """Raise QueueError if PostgreSQL is unreachable."""
        self._q("SELECT 1")

    def close(self) -> None:
        """Unregister our procrastinate workers and close the pool."""
        with self._workers_lock:
            ids = list(self._workers.values())
            self._workers.clear()
        try:
            for wid in ids:
                self._q("SELECT procrastinate_unregister_worker_v1(%s)", (wid,))
        except QueueError:
            pass  # the server is gone; the rows are pruned as stalled later
        self._pool.close()
