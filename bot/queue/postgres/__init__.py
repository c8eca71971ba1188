"""The PostgreSQL queue on procrastinate: several machines share the work.

Procrastinate owns queueing and claiming: its schema (applied once per schema, under an
advisory lock), `procrastinate_fetch_job_v2` (FOR UPDATE SKIP LOCKED), its retry and finish
procedures, and its worker heartbeats, which are our leases: each of our worker ids maps to
one procrastinate worker row; a job whose worker's heartbeat is older than the lease is
stalled and handed out again. Beside it, `agentbot_deliveries` (delivery id primary key)
holds the raw delivery, our state and the result; the insert into it and the deferral of
the procrastinate job happen in one transaction, so a redelivery is never queued twice.
"""

from bot.queue.postgres.queue import PostgresQueue

__all__ = ["PostgresQueue"]
