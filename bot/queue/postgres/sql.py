"""The SQL of the PostgreSQL queue: our tables beside procrastinate's, and the statements."""

from __future__ import annotations

import re

import psycopg
from procrastinate.schema import SchemaManager

from bot.queue.ledger import ledger_tables

QUEUE_NAME = "agentbot"
TASK_NAME = "agentbot.process_delivery"

OURS = """
CREATE TABLE IF NOT EXISTS agentbot_deliveries (
    delivery_id text PRIMARY KEY,
    pj_id bigint,
    event_name text NOT NULL,
    state text NOT NULL DEFAULT 'queued',
    attempts integer NOT NULL DEFAULT 0,
    received_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    started_at timestamptz,
    finished_at timestamptz,
    next_attempt_at timestamptz,
    worker_id text NOT NULL DEFAULT '',
    repo text NOT NULL DEFAULT '',
    number integer,
    kind text NOT NULL DEFAULT '',
    decision text NOT NULL DEFAULT '',
    error text NOT NULL DEFAULT '',
    result jsonb,
    lease_seconds double precision NOT NULL DEFAULT 60,
    seq bigserial
);
CREATE INDEX IF NOT EXISTS agentbot_deliveries_pj ON agentbot_deliveries (pj_id);
CREATE INDEX IF NOT EXISTS agentbot_deliveries_seq ON agentbot_deliveries (seq);
CREATE INDEX IF NOT EXISTS agentbot_deliveries_state ON agentbot_deliveries (state, seq);
CREATE TABLE IF NOT EXISTS agentbot_payloads (delivery_id text PRIMARY KEY, body bytea NOT NULL);
CREATE TABLE IF NOT EXISTS agentbot_job_logs (
    id bigserial PRIMARY KEY, job_id text NOT NULL, ts timestamptz NOT NULL DEFAULT now(),
    line text NOT NULL
);
CREATE INDEX IF NOT EXISTS agentbot_job_logs_job ON agentbot_job_logs (job_id, id);
CREATE TABLE IF NOT EXISTS agentbot_running_keys (key text PRIMARY KEY, job_id text NOT NULL);
"""

DEFER = (
    "SELECT unnest(procrastinate_defer_jobs_v1(ARRAY[ROW(%s, %s, 0, NULL, NULL, %s::jsonb, NULL)"
    "::procrastinate_job_to_defer_v1]))"
)

# Stalled: doing, and its worker row is gone (pruned) or its heartbeat is older than the lease
# the holder asked for.
STALLED = """
SELECT job.id, d.delivery_id, d.attempts
  FROM procrastinate_jobs job
  JOIN agentbot_deliveries d ON d.pj_id = job.id
  LEFT JOIN procrastinate_workers w ON w.id = job.worker_id
 WHERE job.status = 'doing' AND job.queue_name = %(queue)s
   AND (w.id IS NULL OR w.last_heartbeat < now() - make_interval(secs => d.lease_seconds))
   FOR UPDATE OF job SKIP LOCKED
"""

ACQUIRE = """
INSERT INTO agentbot_running_keys (key, job_id) VALUES (%(key)s, %(job)s)
ON CONFLICT (key) DO UPDATE SET job_id = excluded.job_id
WHERE agentbot_running_keys.job_id = excluded.job_id OR NOT EXISTS (
    SELECT 1 FROM agentbot_deliveries d
     WHERE d.delivery_id = agentbot_running_keys.job_id AND d.state = 'running')
RETURNING job_id
"""

SCHEMA_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")


def setup(conninfo: str, schema: str) -> None:
    """Create the schema, procrastinate's tables and ours, once, whoever comes first."""
    with psycopg.connect(conninfo, autocommit=False) as conn:
        conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"agentbot:{schema}",))
        conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
        conn.execute(f'SET LOCAL search_path = "{schema}"')
        row = conn.execute("SELECT to_regclass(%s)", (f'"{schema}".procrastinate_jobs',)).fetchone()
        if row is None or row[0] is None:
            conn.execute(SchemaManager.get_schema())
        conn.execute(OURS)
        conn.execute(ledger_tables(postgres=True))
        conn.commit()
