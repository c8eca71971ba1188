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

from urllib.parse import parse_qs, urlsplit

from bot.clock import Clock
from bot.errors import ConfigError
from bot.queue.base import QueueBase
from bot.queue.records import (
    DEFAULT_MAX_ATTEMPTS,
    MAX_DELIVERY_ID,
    Delivery,
    JobRecord,
    JobState,
    QueuedJob,
    check_delivery_id,
)

JobQueue = QueueBase
"""What the receiver, the workers and the CLI hold: either backend."""


def open_queue(
    url: str,
    *,
    clock: Clock | None = None,
    max_attempts: int = DEFAULT_MAX_ATTEMPTS,
    create: bool = True,
) -> JobQueue:
    """Open `sqlite:///PATH` (`sqlite:////abs.db` is absolute) or `postgresql://...[?schema=S]`."""
    # Without `create` (commands that only read) a SQLite queue must exist: nothing is made.
    scheme = url.partition(":")[0].lower() if ":" in url else ""  # urlsplit may raise
    if scheme == "sqlite":
        from bot.db_url import sqlite_file
        from bot.queue.sqlite import SqliteQueue

        path = sqlite_file(url)
        if path is None:
            raise ConfigError(
                "sqlite queue URL names no file: use sqlite:///./agentbot.db or sqlite:////abs/x.db",
                path="AGENTBOT_QUEUE",
            )
        return SqliteQueue(path, clock=clock, max_attempts=max_attempts, create=create)
    if scheme in ("postgresql", "postgres"):
        try:
            from bot.queue.postgres import PostgresQueue
        except ModuleNotFoundError as exc:
            raise ConfigError(
                f"a PostgreSQL queue needs the postgres extra ({exc.name} is not installed):"
                " pip install 'agentbot[postgres]', or unset AGENTBOT_QUEUE for SQLite",
                path="AGENTBOT_QUEUE",
            ) from exc

        conninfo, schema = _postgres_parts(url)
        return PostgresQueue(conninfo, schema=schema, max_attempts=max_attempts)
    raise ConfigError(
        f"unsupported queue URL scheme {scheme!r}: use sqlite:///PATH or postgresql://...",
        path="AGENTBOT_QUEUE",
    )


def _postgres_parts(url: str) -> tuple[str, str]:
    """(libpq's URL, schema) of a PostgreSQL AGENTBOT_QUEUE; ConfigError saying what is wrong."""
    from bot.db_url import safe_url
    from bot.queue.postgres.sql import SCHEMA_NAME

    # The driver's own errors would exit 1 without naming the variable; the password is
    # never shown (safe_url), and a URL that does not split is not quoted at all.
    try:
        parts = urlsplit(url)
    except ValueError as exc:
        raise ConfigError(
            f"the PostgreSQL URL does not parse ({exc})", path="AGENTBOT_QUEUE"
        ) from None
    try:
        parts.port  # noqa: B018 (parsed for its error)
    except ValueError:
        port = parts.netloc.rpartition("@")[2].rpartition(":")[2]
        raise ConfigError(
            f"the port {port!r} of {safe_url(url)} is not a number from 1 to 65535: fix it, or"
            " leave it out for 5432",
            path="AGENTBOT_QUEUE",
        ) from None
    query = parse_qs(parts.query)
    schema = query.pop("schema", ["agentbot"])[-1]
    if not SCHEMA_NAME.fullmatch(schema):
        raise ConfigError(
            f"the schema {schema!r} of {safe_url(url)} is not a plain name: use lower-case"
            " letters, digits and _ (at most 63), or leave ?schema= out for agentbot",
            path="AGENTBOT_QUEUE",
        )
    rest = "&".join(f"{k}={v}" for k, vs in query.items() for v in vs)
    return parts._replace(query=rest).geturl(), schema


__all__ = [
    "DEFAULT_MAX_ATTEMPTS",
    "MAX_DELIVERY_ID",
    "Delivery",
    "JobQueue",
    "JobRecord",
    "JobState",
    "QueuedJob",
    "check_delivery_id",
    "open_queue",
]
