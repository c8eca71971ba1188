"""Job transitions of the PostgreSQL queue that run inside a caller's transaction."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import psycopg

from bot.queue.postgres.sql import QUEUE_NAME, STALLED

Conn = psycopg.Connection[tuple[Any, ...]]


def recover_stalled(conn: Conn, lease: float, max_attempts: int) -> None:
    """Hand stalled jobs out again, or bury them once they used every attempt."""
    # Rows of workers long gone (killed processes); their jobs count as stalled below.
    conn.execute("SELECT procrastinate_prune_stalled_workers_v1(%s)", (max(10 * lease, 600.0),))
    stalled = conn.execute(STALLED, {"queue": QUEUE_NAME}).fetchall()
    for pj_id, delivery_id, attempts in stalled:
        if attempts >= max_attempts:
            conn.execute("SELECT procrastinate_finish_job_v1(%s, 'failed', false)", (pj_id,))
            conn.execute(
                "UPDATE agentbot_deliveries SET state = 'dead', finished_at = now(),"
                " updated_at = now(), error = %s WHERE delivery_id = %s",
                (
                    f"the worker stopped (lease expired) on each of {attempts} attempts",
                    delivery_id,
                ),
            )
            conn.execute("DELETE FROM agentbot_running_keys WHERE job_id = %s", (delivery_id,))
        else:
            conn.execute("SELECT procrastinate_retry_job_v2(%s, now(), NULL, NULL, NULL)", (pj_id,))
            conn.execute(
                "UPDATE agentbot_deliveries SET state = 'queued', updated_at = now()"
                " WHERE delivery_id = %s",
                (delivery_id,),
            )


Owned = tuple[int, int, str]
"""(procrastinate job id, attempts so far, procrastinate status) of a job being finished."""


def complete(
    conn: Conn, job_id: str, owned: Owned, state: str, result: str | None, decision: str
) -> None:
    """Record the job's end (done or ignored) and release its key."""
    pj_id, _, status = owned
    if status in ("doing", "todo"):
        conn.execute("SELECT procrastinate_finish_job_v1(%s, 'succeeded', false)", (pj_id,))
    conn.execute(
        "UPDATE agentbot_deliveries SET state = %s, result = %s::jsonb, decision = %s,"
        " finished_at = now(), updated_at = now() WHERE delivery_id = %s",
        (state, result, decision, job_id),
    )
    conn.execute("DELETE FROM agentbot_running_keys WHERE job_id = %s", (job_id,))


def fail(
    conn: Conn,
    job_id: str,
    owned: Owned,
    error: str,
    retry_at: datetime | None,
    max_attempts: int,
) -> None:
    """Retry through procrastinate at `retry_at` while attempts remain, else bury the job."""
    pj_id, attempts, status = owned
    if retry_at is not None and attempts < max_attempts:
        if status in ("doing", "failed"):
            conn.execute(
                "SELECT procrastinate_retry_job_v2(%s, %s, NULL, NULL, NULL)", (pj_id, retry_at)
            )
        conn.execute(
            "UPDATE agentbot_deliveries SET state = 'failed', error = %s,"
            " next_attempt_at = %s, updated_at = now() WHERE delivery_id = %s",
            (error, retry_at, job_id),
        )
    else:
        if status in ("doing", "todo"):
            conn.execute("SELECT procrastinate_finish_job_v1(%s, 'failed', false)", (pj_id,))
        conn.execute(
            "UPDATE agentbot_deliveries SET state = 'dead', error = %s,"
            " next_attempt_at = NULL, finished_at = now(), updated_at = now()"
            " WHERE delivery_id = %s",
            (error, job_id),
        )
    conn.execute("DELETE FROM agentbot_running_keys WHERE job_id = %s", (job_id,))
