"""The SQLite queue: one file, WAL, delivery id primary key, lease-based claims.

Safe across threads and processes: each thread has its own connection; writes in this
process are serialized by a lock (so threads never sleep in SQLite's busy handler), and
other processes are waited for through `busy_timeout`. Every write transaction is
`BEGIN IMMEDIATE`. Storing deliveries commits with `synchronous=FULL` (the WAL is fsynced:
a delivery acknowledged with 202 survives a power cut), except serve's moves from its
spool, which hold a durable copy until `sync()`; the workers' bookkeeping (claims,
results, log lines) commits with `NORMAL`, which survives a killed process and may lose
its last commits to a power cut, where a job is simply run again (at-least-once). Payloads
live in a file beside the queue (`bot.queue.payload_file`).
"""

# Over 300 lines: one queue backend, its schema and locking beside the SQL they guard.

from __future__ import annotations

import os
import sqlite3
import stat
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeGuard

from bot.clock import Clock, SystemClock
from bot.errors import ConfigError, QueueError
from bot.queue import DEFAULT_MAX_ATTEMPTS, Delivery, JobState, QueuedJob
from bot.queue.base import Completion, Failure, QueueBase
from bot.queue.ledger import ledger_tables
from bot.queue.payload_file import PayloadFile
from bot.queue.records import COLUMNS, claimed

QUEUE_FORMAT = 2
"""The queue's layout, kept in `PRAGMA user_version`: 2 keeps payloads in `<queue>.payloads`
(1 or 0: inline). An agentbot that finds a higher number than its own refuses the queue
rather than misread it; agentbot before format 2 did not look (docs/operations.md)."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS jobs (
    delivery_id TEXT PRIMARY KEY,
    event_name TEXT NOT NULL,
    state TEXT NOT NULL DEFAULT 'queued',
    attempts INTEGER NOT NULL DEFAULT 0,
    received_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    started_at REAL,
    finished_at REAL,
    next_attempt_at REAL,
    lease_expires_at REAL,
    worker_id TEXT NOT NULL DEFAULT '',
    repo TEXT NOT NULL DEFAULT '',
    number INTEGER,
    kind TEXT NOT NULL DEFAULT '',
    decision TEXT NOT NULL DEFAULT '',
    error TEXT NOT NULL DEFAULT '',
    result TEXT
);
CREATE INDEX IF NOT EXISTS jobs_state ON jobs (state);
-- Payloads apart: a state change must not rewrite a 25 MB row. Where each one lies in the
-- payload file (bot.queue.payload_file); `payloads` holds those of queues made before it.
CREATE TABLE IF NOT EXISTS payload_refs (
    delivery_id TEXT PRIMARY KEY, at INTEGER NOT NULL, size INTEGER NOT NULL,
    crc INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS payloads (delivery_id TEXT PRIMARY KEY, body BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS job_logs (
    id INTEGER PRIMARY KEY, job_id TEXT NOT NULL, ts REAL NOT NULL, line TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS job_logs_job ON job_logs (job_id, id);
CREATE TABLE IF NOT EXISTS running_keys (key TEXT PRIMARY KEY, job_id TEXT NOT NULL);
"""

# Where the payload file ends, by the rows pointing into it.
_PAYLOADS_END = "SELECT coalesce(max(at + size), 0) FROM payload_refs"

# The oldest due job; each branch is an index lookup on `state`, not a scan of done jobs.
_CLAIM = """
UPDATE jobs SET state = 'running', worker_id = :worker, attempts = attempts + 1,
    lease_expires_at = :expires, started_at = :now, updated_at = :now, next_attempt_at = NULL
WHERE rowid = (SELECT min(r) FROM (
    SELECT min(rowid) AS r FROM jobs WHERE state = 'queued'
    UNION ALL SELECT min(rowid) FROM jobs WHERE state = 'failed' AND next_attempt_at <= :now
    UNION ALL SELECT min(rowid) FROM jobs WHERE state = 'running' AND lease_expires_at <= :now))
RETURNING delivery_id, event_name, attempts, received_at
"""

# A lapsed lease on a job out of attempts: it killed its worker that often; stop.
_BURY = """
UPDATE jobs SET state = 'dead', finished_at = :now, updated_at = :now, lease_expires_at = NULL,
    error = 'the worker stopped (lease expired) on each of ' || attempts || ' attempts'
WHERE state = 'running' AND lease_expires_at <= :now AND attempts >= :max
RETURNING delivery_id
"""

_ACQUIRE = """
INSERT INTO running_keys (key, job_id) VALUES (:key, :job)
ON CONFLICT (key) DO UPDATE SET job_id = excluded.job_id
WHERE running_keys.job_id = excluded.job_id OR NOT EXISTS (
    SELECT 1 FROM jobs WHERE jobs.delivery_id = running_keys.job_id AND jobs.state = 'running')
RETURNING job_id
"""


def queue_file_exists(path: Path) -> bool:
    """Whether the queue file is there; ConfigError naming the folder this user cannot enter."""
    try:
        path.stat()
    except FileNotFoundError:
        return False
    except NotADirectoryError:
        return False  # a file where a folder should be: named when the queue is made
    except PermissionError:
        folder = _closed_folder(path)
        raise ConfigError(
            f"cannot look into the folder {folder} as uid {os.getuid()} (permission denied):"
            " run agentbot as the user that owns it, give this uid access to it, or set"
            " AGENTBOT_DATA_DIR (or AGENTBOT_QUEUE) to a folder of this user",
            path="AGENTBOT_DATA_DIR",
        ) from None
    return True


def _closed_folder(path: Path) -> Path:
    """The first folder on the way to `path` this user may not enter."""
    for folder in reversed(path.absolute().parents):
        if not os.access(folder, os.X_OK):
            return folder
    return path.absolute().parent


class SqliteQueue(QueueBase):
    """The default queue: a single SQLite file (see the module docstring)."""

    def __init__(
        self,
        path: str | Path,
        *,
        clock: Clock | None = None,
        max_attempts: int = DEFAULT_MAX_ATTEMPTS,
        busy_timeout: float = 30.0,
        create: bool = True,
    ) -> None:
        if sqlite3.sqlite_version_info < (3, 35, 0):
            raise QueueError(f"SQLite >= 3.35 is needed (found {sqlite3.sqlite_version})")
        self.path = Path(path)
        # Every connection opens the file that is there (mode=rw): one made anew, empty,
        # would read as a queue without jobs (a file removed, a command that only reads).
        self._uri = self.path.absolute().as_uri() + "?mode=rw"
        self.clock: Clock = clock or SystemClock()
        self.max_attempts = max_attempts
        self._busy_timeout = busy_timeout
        self._local = threading.local()
        self._write_lock = threading.Lock()
        self._closed = False
        self._conns: list[sqlite3.Connection] = []
        self._conns_lock = threading.Lock()
        self.payloads = PayloadFile(self.path)
        exists = queue_file_exists(self.path)
        if self.path.is_symlink():
            # serve may run as root on a data dir others can write: a planted link would
            # have it create or write a database wherever the link points.
            raise ConfigError(
                f"{self.path} is a link (to {self.path.readlink()}): agentbot never opens its"
                " queue through a link; set AGENTBOT_QUEUE to the file itself, or remove the link",
                path="AGENTBOT_QUEUE",
            )
        if not create and not exists:
            raise ConfigError(
                f"there is no queue at {self.path}: `agentbot serve` (or `agentbot worker`)"
                " creates it; if it should be there, check AGENTBOT_QUEUE and AGENTBOT_DATA_DIR"
            )
        # The queue holds every delivery's payload: only its owner may read it (SQLite gives
        # the -wal and -shm files the database's mode).
        try:
            if create:
                self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
                if not exists:  # a link made meanwhile is not followed
                    flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW
                    os.close(os.open(self.path, flags, 0o600))
        except OSError as exc:
            raise ConfigError(
                f"cannot create the queue {self.path} ({exc.strerror or exc}): set"
                " AGENTBOT_DATA_DIR, or AGENTBOT_QUEUE, to a folder you can write",
                path="AGENTBOT_DATA_DIR",
            ) from None
        conn = self._opened()
        self._check_format(conn)
        with self._write_lock:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.executescript(_SCHEMA + ledger_tables(postgres=False))
        if create:  # serve and the workers write: a queue they cannot is named at their start
            self.check_writable()
            with self._write_lock:
                conn.execute(f"PRAGMA user_version = {QUEUE_FORMAT}")
        # Opened now and kept: a descriptor opened after a failed write-back would not
        # hear of the failure from fsync.
        self._wal = _open_if_there(Path(f"{self.path}-wal"))
        self._sync_failed: str | None = None

    # --- plumbing ---------------------------------------------------------------------------

    def _opened(self) -> sqlite3.Connection:
        # A file that is not a SQLite database is a wrong AGENTBOT_QUEUE, not a crash.
        try:
            return self._conn()
        except QueueError as exc:
            cause = exc.__cause__
            if _read_only(cause):
                raise ConfigError(self._not_writable(cause)) from None
            if self.path.is_dir() or (
                isinstance(cause, sqlite3.DatabaseError)
                and not isinstance(cause, sqlite3.OperationalError)
            ):
                raise ConfigError(
                    f"{self.path} is not a queue database ({cause}): point it at a new file"
                    " or at agentbot's queue",
                    path="AGENTBOT_QUEUE",
                ) from None
            raise

    def _check_format(self, conn: sqlite3.Connection) -> None:
        """Raise ConfigError for a queue a newer agentbot made (it may keep things elsewhere)."""
        found = int(conn.execute("PRAGMA user_version").fetchone()[0])
        if found > QUEUE_FORMAT:
            raise ConfigError(
                f"the queue {self.path} was made by a newer agentbot (format {found}; this one"
                f" reads up to {QUEUE_FORMAT}): upgrade agentbot here, as on the host that made"
                " it, or point AGENTBOT_QUEUE at another queue",
                path="AGENTBOT_QUEUE",
            )

    def _not_writable(self, why: str | sqlite3.Error) -> str:
        folder = self.path.absolute().parent
        if getattr(why, "sqlite_errorname", "") == "SQLITE_READONLY_DIRECTORY":
            why = f"its folder {folder} is read-only"
        return (
            f"the queue {self.path} is not writable by uid {os.geteuid()} ({why}): give that"
            f" user write access to it and its folder {folder} (the files beside it are made"
            " there), or set AGENTBOT_QUEUE (or AGENTBOT_DATA_DIR) to a queue it can write"
        )

    def check_writable(self) -> None:
        """Raise ConfigError unless this process may write the queue, its folder, its payloads."""
        folder = self.path.absolute().parent
        if not os.access(folder, os.W_OK | os.X_OK):
            raise ConfigError(self._not_writable(f"its folder {folder} is read-only"))
        payloads = self.payloads.path  # not a regular file: refused as such where it is used
        if _regular(payloads) and not os.access(payloads, os.W_OK):
            raise ConfigError(self._not_writable(f"{payloads} is read-only"))
        conn = self._conn()
        with self._write_lock:
            try:
                conn.execute("BEGIN IMMEDIATE")
                try:  # writes no row, but SQLite checks it could
                    conn.execute("DELETE FROM running_keys WHERE 0")
                finally:
                    conn.execute("ROLLBACK")
            except sqlite3.Error as exc:
                if _read_only(exc):
                    raise ConfigError(self._not_writable(exc)) from None
                raise QueueError(f"queue {self.path} is busy or unwritable: {exc}") from exc

    def _conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if self._closed:
            raise QueueError(f"the queue {self.path} is closed (agentbot is stopping)")
        if conn is None:
            try:
                conn = sqlite3.connect(
                    self._uri, isolation_level=None, check_same_thread=False, timeout=0, uri=True
                )
                conn.execute(f"PRAGMA busy_timeout = {int(self._busy_timeout * 1000)}")
                conn.execute("PRAGMA synchronous = NORMAL")
            except sqlite3.Error as exc:
                raise QueueError(f"cannot open the queue {self.path}: {exc}") from exc
            self._local.conn = conn
            with self._conns_lock:
                self._conns.append(conn)
        return conn

    @contextmanager
    def _tx(self, *, durable: bool = False) -> Iterator[sqlite3.Connection]:
        """One write transaction, serialized in-process, committed on exit (fsynced if durable)."""
        conn = self._conn()
        with self._write_lock:
            if self._closed:  # closed while this thread waited for the lock
                raise QueueError(f"the queue {self.path} is closed (agentbot is stopping)")
            try:
                if durable:
                    conn.execute("PRAGMA synchronous = FULL")
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                raise QueueError(f"queue {self.path} is busy or unwritable: {exc}") from exc
            try:
                yield conn
            except BaseException as exc:
                if conn.in_transaction:  # SQLite may have rolled back already (disk full)
                    conn.execute("ROLLBACK")
                if _read_only(exc):  # made read-only while running: named, not a crash
                    raise QueueError(self._not_writable(exc)) from exc
                if isinstance(exc, sqlite3.Error):
                    raise QueueError(f"cannot write to the queue {self.path}: {exc}") from exc
                raise
            try:
                conn.execute("COMMIT")
            except sqlite3.Error as exc:
                conn.execute("ROLLBACK")
                raise QueueError(f"cannot commit to the queue {self.path}: {exc}") from exc
            finally:
                if durable:
                    conn.execute("PRAGMA synchronous = NORMAL")

    def _now(self) -> float:
        return self.clock.now().timestamp()

    # --- the contract -----------------------------------------------------------------------

    def sync(self) -> None:
        """Put every transaction committed so far on disk (its WAL), however committed.

        fsync acts on the file, not on the descriptor, so a descriptor of our own reaches
        what SQLite wrote; a checkpoint that moved frames into the database synced it first.
        A failure is final: Linux reports it once and then drops the pages, so a later
        success would not mean the earlier commits are on disk.
        """
        with self._write_lock:
            if self._closed:
                raise QueueError(f"the queue {self.path} is closed (agentbot is stopping)")
            if self._sync_failed is None:
                if self._wal is None:
                    self._wal = _open_if_there(Path(f"{self.path}-wal"))
                try:
                    if self._wal is not None:  # none: nothing committed in WAL mode yet
                        os.fsync(self._wal)
                    return
                except OSError as exc:
                    self._sync_failed = str(exc)
        raise QueueError(
            f"could not sync the queue {self.path} ({self._sync_failed}): commits since the"
            " last sync may not be on disk"
        )

    def _store(self, rows: Sequence[tuple[Delivery, bytes]], sync: bool) -> list[bool]:
        """Insert the deliveries in one transaction (one fsync for all when `sync`); the new
        ones' payloads reach the payload file's disk before their rows are committed."""
        now = self._now()
        fresh: list[bool] = []
        with self._tx(durable=sync) as conn:
            for d, _ in rows:
                cur = conn.execute(
                    "INSERT INTO jobs (delivery_id, event_name, received_at, updated_at, repo)"
                    " VALUES (?, ?, ?, ?, ?) ON CONFLICT (delivery_id) DO NOTHING",
                    (d.delivery_id, d.event_name, now, now, d.repo),
                )
                fresh.append(cur.rowcount == 1)
            new = [row for row, is_new in zip(rows, fresh, strict=True) if is_new]
            if new:
                refs = self.payloads.append(
                    [body for _, body in new],
                    lambda: int(conn.execute(_PAYLOADS_END).fetchone()[0]),
                )
                conn.executemany(
                    "INSERT INTO payload_refs VALUES (?, ?, ?, ?)",
                    [(d.delivery_id, *ref) for (d, _), ref in zip(new, refs, strict=True)],
                )
        if sync and not any(fresh):
            # Nothing new, so nothing was synced: the deliveries may have come unsynced
            # (serve's spool, replayed after a crash, is removed once this returns).
            self.sync()
        return fresh

    def _payload(self, conn: sqlite3.Connection, delivery_id: str) -> bytes | None:
        """A delivery's payload: from the payload file, or inline in an older queue; None
        if it is missing or damaged."""
        ref = conn.execute(
            "SELECT at, size, crc FROM payload_refs WHERE delivery_id = ?", (delivery_id,)
        ).fetchone()
        if ref is not None:
            return self.payloads.read(*ref)
        row = conn.execute("SELECT body FROM payloads WHERE delivery_id = ?", (delivery_id,))
        body = row.fetchone()
        return bytes(body[0]) if body else None

    def claim(self, worker_id: str, lease_seconds: float) -> QueuedJob | None:
        """Take the oldest due job under a lease of `lease_seconds`."""
        now = self._now()
        args = {"worker": worker_id, "now": now, "expires": now + lease_seconds}
        with self._tx() as conn:
            buried = [r[0] for r in conn.execute(_BURY, {"now": now, "max": self.max_attempts})]
            for job_id in buried:
                conn.execute("DELETE FROM running_keys WHERE job_id = ?", (job_id,))
            while (row := conn.execute(_CLAIM, args).fetchone()) is not None:
                body = self._payload(conn, row[0])
                if body is not None:
                    return claimed(row, (body,), worker_id)
                # Unreadable: no worker can do anything with it, so say so and take the next.
                conn.execute(
                    "UPDATE jobs SET state = 'dead', finished_at = :now, updated_at = :now,"
                    " lease_expires_at = NULL, error = :error WHERE delivery_id = :job",
                    {"now": now, "job": row[0], "error": self._unreadable()},
                )
        return None

    def _unreadable(self) -> str:
        return (
            f"its payload is cut off or damaged in {self.payloads.path}: restore that file"
            " from the backup the queue came from, or trigger the job again on GitHub"
        )

    def heartbeat(self, job_id: str, worker_id: str, lease_seconds: float) -> bool:
        """Extend this worker's lease on the job; False if it is not this worker's any more."""
        now = self._now()
        with self._tx() as conn:
            row = conn.execute(
                "UPDATE jobs SET lease_expires_at = ?, updated_at = ? WHERE delivery_id = ?"
                " AND state = 'running' AND worker_id = ? RETURNING 1",
                (now + lease_seconds, now, job_id, worker_id),
            ).fetchone()
        return row is not None

    def _finish(
        self,
        job_id: str,
        worker_id: str | None,
        sets: str,
        args: dict[str, Any],
        log: Sequence[str],
    ) -> bool:
        owner = " AND state = 'running' AND worker_id = :worker" if worker_id is not None else ""
        now = self._now()
        with self._tx() as conn:
            # the lines are the job's even when another worker owns it now
            conn.executemany(
                "INSERT INTO job_logs (job_id, ts, line) VALUES (?, ?, ?)",
                [(job_id, now, line) for line in log],
            )
            row = conn.execute(
                f"UPDATE jobs SET {sets}, updated_at = :now, lease_expires_at = NULL"  # noqa: S608
                f" WHERE delivery_id = :job{owner} RETURNING 1",
                {**args, "job": job_id, "worker": worker_id, "now": now},
            ).fetchone()
            if row is not None:
                conn.execute("DELETE FROM running_keys WHERE job_id = ?", (job_id,))
        return row is not None

    def _end(
        self, job_id: str, end: Completion | Failure, worker_id: str | None, log: Sequence[str]
    ) -> bool:
        if isinstance(end, Completion):
            sets = "state = :state, result = :result, decision = :decision, finished_at = :now"
            args: dict[str, Any] = {
                "state": end.state.value,
                "result": end.result,
                "decision": end.decision,
            }
        else:
            sets = (
                "error = :error, next_attempt_at = CASE WHEN :retry IS NULL OR attempts >= :max"
                " THEN NULL ELSE :retry END, state = CASE WHEN :retry IS NULL OR attempts >= :max"
                " THEN 'dead' ELSE 'failed' END, finished_at = CASE WHEN :retry IS NULL"
                " OR attempts >= :max THEN :now END"
            )
            retry = end.retry_at.timestamp() if end.retry_at is not None else None
            args = {"error": end.error, "retry": retry, "max": self.max_attempts}
        return self._finish(job_id, worker_id, sets, args, log)

    def _cancel(self, job_id: str, decision: str) -> bool:
        now = self._now()
        with self._tx() as conn:
            row = conn.execute(
                "UPDATE jobs SET state = 'ignored', decision = ?, finished_at = ?, updated_at = ?"
                " WHERE delivery_id = ? AND state = 'queued' AND attempts = 0 RETURNING 1",
                (decision, now, now, job_id),
            ).fetchone()
        return row is not None

    def _queued(self, repo: str, event_name: str, limit: int) -> list[Any]:
        with self._tx() as conn:
            ids = conn.execute(
                "SELECT delivery_id, received_at FROM jobs WHERE state = 'queued'"
                " AND attempts = 0 AND repo = ? AND event_name = ? ORDER BY rowid LIMIT ?",
                (repo, event_name, limit),
            ).fetchall()
            found = [(job, self._payload(conn, job), at) for job, at in ids]
        # One whose payload is unreadable is left for `claim`, which ends it with the reason.
        return [row for row in found if row[1] is not None]

    def annotate(
        self, job_id: str, *, repo: str = "", number: int | None = None, kind: str = ""
    ) -> None:
        """Record repo, issue/PR number and kind for the jobs page."""
        with self._tx() as conn:
            conn.execute(
                "UPDATE jobs SET repo = CASE WHEN ? = '' THEN repo ELSE ? END,"
                " number = coalesce(?, number), kind = CASE WHEN ? = '' THEN kind ELSE ? END"
                " WHERE delivery_id = ?",
                (repo, repo, number, kind, kind, job_id),
            )

    def acquire_key(self, key: str, job_id: str) -> bool:
        """Hold `key` unless another running job holds it."""
        with self._tx() as conn:
            row = conn.execute(_ACQUIRE, {"key": key, "job": job_id}).fetchone()
        return row is not None

    def release_key(self, key: str, job_id: str) -> None:
        """Give `key` back if this job holds it."""
        with self._tx() as conn:
            conn.execute("DELETE FROM running_keys WHERE key = ? AND job_id = ?", (key, job_id))

    def append_logs(self, job_id: str, lines: Sequence[str]) -> None:
        """Add lines to the job's log, in order, in one transaction."""
        if not lines:
            return
        now = self._now()
        with self._tx() as conn:
            conn.executemany(
                "INSERT INTO job_logs (job_id, ts, line) VALUES (?, ?, ?)",
                [(job_id, now, line) for line in lines],
            )

    def _select(self, column: str | None, value: str | None, limit: int) -> list[Any]:
        where, args = (f"WHERE {column} = ?", (value,)) if column else ("", ())
        try:
            return (
                self._conn()
                .execute(
                    f"SELECT {COLUMNS} FROM jobs {where} ORDER BY rowid DESC LIMIT ?",  # noqa: S608
                    (*args, limit),
                )
                .fetchall()
            )
        except sqlite3.Error as exc:
            raise QueueError(f"cannot read the queue {self.path}: {exc}") from exc

    def _read(self, sql: str, args: Sequence[Any] = ()) -> list[Any]:
        try:
            return self._conn().execute(sql, tuple(args)).fetchall()
        except sqlite3.Error as exc:
            raise QueueError(f"cannot read the queue {self.path}: {exc}") from exc

    def _write(self, sql: str, args: Sequence[Any] = ()) -> None:
        with self._tx() as conn:
            conn.execute(sql, tuple(args))

    def _log_lines(self, job_id: str) -> list[str]:
        rows = self._conn().execute(
            "SELECT line FROM job_logs WHERE job_id = ? ORDER BY id", (job_id,)
        )
        return [r[0] for r in rows]

    def known_ids(self, ids: Sequence[str]) -> set[str]:
        """Which of the delivery ids `ids` the queue holds."""
        found: set[str] = set()
        for at in range(0, len(ids), 500):
            chunk = list(ids[at : at + 500])
            marks = ",".join("?" * len(chunk))
            sql = f"SELECT delivery_id FROM jobs WHERE delivery_id IN ({marks})"  # noqa: S608
            found.update(row[0] for row in self._read(sql, chunk))
        return found

    def counts(self) -> dict[JobState, int]:
        """Jobs per state."""
        out = dict.fromkeys(JobState, 0)
        for state, n in self._conn().execute("SELECT state, count(*) FROM jobs GROUP BY state"):
            out[JobState(state)] = n
        return out

    def ping(self) -> None:
        """Raise QueueError if the queue, or its payload file, cannot be read."""
        try:
            has_refs = bool(self._conn().execute("SELECT 1 FROM payload_refs LIMIT 1").fetchall())
        except sqlite3.Error as exc:
            raise QueueError(f"queue {self.path} is unreadable: {exc}") from exc
        self.payloads.check(1 if has_refs else 0)  # not its full length: a scan of the rows

    def check_payloads(self) -> None:
        """Raise QueueError unless the payload file holds what the rows point at (at start)."""
        self.payloads.check(int(self._read(_PAYLOADS_END)[0][0]))

    def close(self) -> None:
        """Close every connection this queue opened, once no write is in flight."""
        # A connection closed while another thread writes through it crashes the process
        # (sqlite3 with check_same_thread=False): wait for the write, refuse later ones.
        with self._write_lock, self._conns_lock:
            self._closed = True
            for conn in self._conns:
                conn.close()
            self._conns.clear()
            self.payloads.close()
            if self._wal is not None:
                os.close(self._wal)
                self._wal = None
        self._local = threading.local()


def _read_only(exc: BaseException | None) -> TypeGuard[sqlite3.Error]:
    """Whether SQLite refused a write because the file or its folder is read-only."""
    code = getattr(exc, "sqlite_errorcode", None)
    return (
        isinstance(exc, sqlite3.Error)
        and code is not None
        and code & 0xFF == sqlite3.SQLITE_READONLY
    )


def _regular(path: Path) -> bool:
    """Whether `path` is a regular file itself (not through a link)."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def _open_if_there(path: Path) -> int | None:
    """A read-only descriptor of `path`, or None if there is no such file."""
    try:
        return os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
