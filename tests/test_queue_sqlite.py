"""SQLite specifics: queue URLs, WAL, leases and retries on an injected clock, processes."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import threading
import time
from datetime import timedelta
from pathlib import Path

import pytest

from bot.clock import FakeClock
from bot.errors import ConfigError, QueueError
from bot.queue import Delivery, JobState, open_queue
from bot.queue import sqlite as sqlite_queue
from bot.queue.sqlite import SqliteQueue

ROOT = Path(__file__).resolve().parents[1]


def test_queue_urls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    rel = open_queue("sqlite:///./sub/rel.db")
    assert isinstance(rel, SqliteQueue) and rel.path == Path("./sub/rel.db")
    assert (tmp_path / "sub" / "rel.db").exists()
    rel.close()
    absolute = open_queue(f"sqlite:///{tmp_path}/abs.db")  # four slashes: absolute
    assert isinstance(absolute, SqliteQueue) and absolute.path == tmp_path / "abs.db"
    absolute.close()
    for bad in ("sqlite:///", "sqlite://x.db", "redis://localhost", "sqlite:///dir/"):
        with pytest.raises(ConfigError) as info:
            open_queue(bad)
        assert info.value.path == "AGENTBOT_QUEUE"


def test_opening_only_an_existing_queue_creates_nothing(tmp_path: Path) -> None:
    db = tmp_path / "missing" / "q.db"
    with pytest.raises(ConfigError, match=rf"there is no queue at {db}: `agentbot serve`"):
        open_queue(f"sqlite:///{db}", create=False)
    assert list(tmp_path.iterdir()) == []
    SqliteQueue(tmp_path / "q.db").close()
    made = sorted(tmp_path.iterdir())
    existing = open_queue(f"sqlite:///{tmp_path / 'q.db'}", create=False)
    assert existing.list(10) == []
    existing.close()
    assert sorted(tmp_path.iterdir()) == made


def test_a_queue_file_removed_while_open_is_not_made_anew(tmp_path: Path) -> None:
    q = SqliteQueue(tmp_path / "q.db")
    q.enqueue("d-1", "ping", b"{}")
    for name in ("q.db", "q.db-wal", "q.db-shm"):
        (tmp_path / name).unlink(missing_ok=True)
    seen: list[BaseException] = []

    def other_thread() -> None:  # a new connection: it must not make an empty queue there
        try:
            q.list(10)
        except QueueError as exc:
            seen.append(exc)

    thread = threading.Thread(target=other_thread)
    thread.start()
    thread.join()
    q.close()
    assert seen and not (tmp_path / "q.db").exists()


def test_wal_and_payloads_in_their_own_file(tmp_path: Path) -> None:
    q = SqliteQueue(tmp_path / "q.db")
    q.enqueue("d-1", "issues", b'{"a": 1}')
    q.enqueue_many([Delivery("d-1", "issues", b'{"again": 1}'), Delivery("d-2", "ping", b"{}")])
    conn = sqlite3.connect(tmp_path / "q.db")
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    columns = [r[1] for r in conn.execute("PRAGMA table_info(jobs)")]
    assert "body" not in columns and "payload" not in columns  # state changes stay small
    assert conn.execute("SELECT count(*) FROM payloads").fetchone()[0] == 0
    conn.close()
    file = tmp_path / "q.db.payloads"
    # each payload written once, a known delivery's not at all
    assert file.read_bytes() == b'{"a": 1}{}' and file.stat().st_mode & 0o777 == 0o600
    job = q.claim("w", 60)
    assert job is not None and job.payload == b'{"a": 1}'
    q.close()


def test_a_queue_from_before_the_payload_file_still_reads_its_payloads(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "q.db")
    SqliteQueue(tmp_path / "q.db").close()  # the schema
    conn.execute(
        "INSERT INTO jobs (delivery_id, event_name, received_at, updated_at, repo)"
        " VALUES ('old', 'issues', 1, 1, 'o/r')"
    )
    conn.execute("INSERT INTO payloads VALUES ('old', ?)", (b'{"inline": true}',))
    conn.commit()
    conn.close()
    q = SqliteQueue(tmp_path / "q.db")
    assert [j.payload for j in q.queued("o/r", "issues")] == [b'{"inline": true}']
    job = q.claim("w", 60)
    assert job is not None and job.payload == b'{"inline": true}'
    q.close()


@pytest.mark.parametrize("target_exists", [False, True])
def test_a_link_at_the_queue_path_is_refused_never_followed(
    tmp_path: Path, target_exists: bool
) -> None:
    """serve runs as root on a data dir another user may write: a planted link must not
    make it create or write a database anywhere else."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    target = elsewhere / "victim"
    if target_exists:
        target.write_bytes(b"")
    link = tmp_path / "data" / "agentbot.db"
    link.parent.mkdir()
    link.symlink_to(target)
    for create in (True, False):
        with pytest.raises(ConfigError, match=r"agentbot\.db is a link"):
            SqliteQueue(link, create=create)
    assert target.exists() == target_exists
    assert not target_exists or target.read_bytes() == b""
    assert sorted(p.name for p in link.parent.iterdir()) == ["agentbot.db"]


def test_a_queue_records_its_format_and_one_from_a_newer_agentbot_is_refused(
    tmp_path: Path,
) -> None:
    """An older agentbot would misread a newer queue (payloads where it does not look):
    from this format on, it says so instead."""
    db = tmp_path / "q.db"
    SqliteQueue(db).close()
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == sqlite_queue.QUEUE_FORMAT
    conn.execute(f"PRAGMA user_version = {sqlite_queue.QUEUE_FORMAT + 1}")
    conn.close()
    for create in (True, False):
        with pytest.raises(ConfigError, match=r"made by a newer agentbot .*upgrade agentbot"):
            SqliteQueue(db, create=create)
    conn = sqlite3.connect(db)  # and left as it was
    assert conn.execute("PRAGMA user_version").fetchone()[0] == sqlite_queue.QUEUE_FORMAT + 1
    conn.close()


def test_a_queue_from_before_formats_were_recorded_is_marked_when_opened_to_write(
    tmp_path: Path,
) -> None:
    db = tmp_path / "q.db"
    SqliteQueue(db).close()
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA user_version = 0")
    conn.close()
    SqliteQueue(db, create=False).close()  # only read: not marked
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 0
    conn.close()
    SqliteQueue(db).close()
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == sqlite_queue.QUEUE_FORMAT
    conn.close()


@pytest.mark.parametrize("damage", ["truncated", "overwritten"])
def test_a_payload_the_file_no_longer_holds_ends_its_job_with_the_reason(
    tmp_path: Path, damage: str
) -> None:
    q = SqliteQueue(tmp_path / "q.db")
    q.enqueue("kept", "issues", b'{"n": 1}', repo="o/r")
    q.enqueue("lost", "issues", b'{"n": 2}', repo="o/r")
    q.close()
    file = tmp_path / "q.db.payloads"
    if damage == "truncated":
        os.truncate(file, 12)
    else:
        file.write_bytes(file.read_bytes()[:8] + b'{"n": 9}')
    q = SqliteQueue(tmp_path / "q.db")
    assert [j.payload for j in q.queued("o/r", "issues")] == [b'{"n": 1}']
    # never another delivery's bytes, never an empty payload: the next readable job
    claims = [q.claim("w", 60), q.claim("w", 60)]
    assert [j.payload for j in claims if j is not None] == [b'{"n": 1}']
    dead = q.get("lost")
    assert dead is not None and dead.state is JobState.DEAD
    assert "q.db.payloads" in dead.error and "restore" in dead.error
    q.close()


def test_a_missing_payload_file_is_named_and_nothing_is_buried_or_written_over(
    tmp_path: Path,
) -> None:
    q = SqliteQueue(tmp_path / "q.db")
    q.enqueue("a", "issues", b'{"n": 1}', repo="o/r")
    q.close()
    file = tmp_path / "q.db.payloads"
    saved = file.read_bytes()
    file.unlink()  # the queue moved without it, or a backup restored without it
    q = SqliteQueue(tmp_path / "q.db")
    with pytest.raises(QueueError, match=r"q\.db\.payloads is missing"):
        q.claim("w", 60)
    for refused in (lambda: q.enqueue("b", "issues", b'{"n": 2}'), q.ping, q.check_payloads):
        with pytest.raises(QueueError, match=r"q\.db\.payloads is missing: restore it"):
            refused()
    assert not file.exists()  # not made anew for a delivery to land where old rows point
    job = q.get("a")
    assert job is not None and job.state is JobState.QUEUED and q.get("b") is None
    q.close()
    file.write_bytes(saved[:3])
    q = SqliteQueue(tmp_path / "q.db")
    with pytest.raises(QueueError, match=r"holds 3 bytes but the queue's rows point up to byte 8"):
        q.check_payloads()
    q.close()
    file.write_bytes(saved)  # restored: everything is there again
    q = SqliteQueue(tmp_path / "q.db")
    assert q.enqueue("b", "issues", b'{"n": 2}')
    claimed = [q.claim("w", 60), q.claim("w", 60)]
    assert [j.payload for j in claimed if j is not None] == [b'{"n": 1}', b'{"n": 2}']
    q.close()


def test_a_payload_file_cut_short_or_moved_while_open_is_never_written_over(
    tmp_path: Path,
) -> None:
    q = SqliteQueue(tmp_path / "q.db")
    q.enqueue("a", "issues", b'{"n": 1}')
    q.enqueue("b", "issues", b'{"n": 2}')
    file = tmp_path / "q.db.payloads"
    saved = file.read_bytes()
    os.truncate(file, 8)  # while the queue holds it open
    with pytest.raises(QueueError, match="holds 8 bytes but the queue's rows point up to byte 16"):
        q.enqueue("c", "issues", b'{"n": 3}')
    (tmp_path / "restored").write_bytes(saved)
    os.replace(tmp_path / "restored", file)  # put back by a rename: a new file, same name
    assert q.enqueue("c", "issues", b'{"n": 3}')
    claimed = [q.claim("w", 60) for _ in range(3)]
    assert [j.payload for j in claimed if j] == [b'{"n": 1}', b'{"n": 2}', b'{"n": 3}']
    q.close()


@pytest.mark.parametrize("where", ["a link to a file", "a link to nowhere", "a folder"])
def test_a_payload_file_that_is_not_a_regular_file_is_refused_never_followed(
    tmp_path: Path, where: str
) -> None:
    outside = tmp_path / "passwd"
    outside.write_text("root:x:0:0\n")
    file = tmp_path / "q.db.payloads"
    if where == "a link to a file":
        file.symlink_to(outside)
    elif where == "a link to nowhere":
        file.symlink_to(tmp_path / "gone")
    else:
        file.mkdir()
    q = SqliteQueue(tmp_path / "q.db")
    with pytest.raises(QueueError, match=r"q\.db\.payloads is not a regular file"):
        q.enqueue("a", "issues", b'{"n": 1}')
    for check in (q.ping, q.check_payloads):
        with pytest.raises(QueueError, match="not a regular file"):
            check()
    assert q.get("a") is None and outside.read_text() == "root:x:0:0\n"
    assert not (tmp_path / "gone").exists()
    q.close()


def test_a_failed_payload_write_stores_nothing_and_leaves_no_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    q = SqliteQueue(tmp_path / "q.db")
    q.enqueue("a", "issues", b'{"n": 1}')
    real_pwrite = os.pwrite

    def half_then_full(fd: int, data: bytes | memoryview, at: int) -> int:
        real_pwrite(fd, bytes(data)[:3], at)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("bot.queue.payload_file.os.pwrite", half_then_full)
    with pytest.raises(QueueError, match="No space left"):
        q.enqueue("b", "issues", b'{"n": 2}')
    monkeypatch.undo()
    assert q.get("b") is None  # not known: a redelivery stores it
    assert (tmp_path / "q.db.payloads").stat().st_size == 8
    assert q.enqueue("b", "issues", b'{"n": 2}')
    assert [q.claim("w", 60).payload for _ in range(2)] == [b'{"n": 1}', b'{"n": 2}']  # type: ignore[union-attr]
    q.close()


def test_queues_on_one_file_append_payloads_side_by_side(tmp_path: Path) -> None:
    queues = [SqliteQueue(tmp_path / "q.db") for _ in range(3)]

    def fill(n: int) -> None:
        for k in range(40):
            body = f'{{"writer": {n}, "k": {k}, "pad": "{"x" * (n * 500 + k)}"}}'.encode()
            queues[n].enqueue_many([Delivery(f"{n}-{k}", "ping", body)])

    threads = [threading.Thread(target=fill, args=(n,)) for n in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    seen = set()
    while (job := queues[0].claim("w", 60)) is not None:
        body = json.loads(job.payload)
        assert job.id == f"{body['writer']}-{body['k']}"
        seen.add(job.id)
    assert len(seen) == 120
    for q in queues:
        q.close()


def test_sync_puts_the_wal_on_disk_and_a_failure_stays_failed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    q = SqliteQueue(tmp_path / "q.db")
    q.enqueue_many([Delivery("a", "ping", b"{}")], sync=False)
    synced: list[str] = []
    real_fsync = os.fsync

    def spy(fd: int) -> None:
        synced.append(os.readlink(f"/proc/self/fd/{fd}"))
        real_fsync(fd)

    monkeypatch.setattr("bot.queue.sqlite.os.fsync", spy)
    q.sync()
    assert synced == [f"{tmp_path}/q.db-wal"]

    def eio(fd: int) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr("bot.queue.sqlite.os.fsync", eio)
    with pytest.raises(QueueError, match="Input/output error"):
        q.sync()
    monkeypatch.setattr("bot.queue.sqlite.os.fsync", spy)
    with pytest.raises(QueueError, match="may not be on disk"):
        q.sync()  # Linux would say nothing now: the failure must not be forgotten
    q.close()


def test_enqueue_many_commits_together_and_dedupes(tmp_path: Path) -> None:
    q = SqliteQueue(tmp_path / "q.db")
    fresh = q.enqueue_many(
        [Delivery("a", "ping", b"{}"), Delivery("b", "ping", b"{}"), Delivery("a", "ping", b"{}")]
    )
    assert fresh == [True, True, False]
    assert q.enqueue_many([]) == []
    with pytest.raises(ValueError):
        q.enqueue_many([Delivery("c", "ping", b"{}"), Delivery("", "ping", b"{}")])
    assert q.get("c") is None  # a bad batch stores nothing
    q.close()


def test_leases_and_retries_follow_the_injected_clock(tmp_path: Path) -> None:
    clock = FakeClock()
    q = SqliteQueue(tmp_path / "q.db", clock=clock, max_attempts=2)
    q.enqueue("d-1", "issues", b"{}")
    assert q.claim("a", 60) is not None
    clock.advance(59)
    assert q.claim("b", 60) is None
    assert q.heartbeat("d-1", "a", 60)
    clock.advance(59)
    assert q.claim("b", 60) is None  # the heartbeat moved the lease
    clock.advance(2)
    job = q.claim("b", 60)
    assert job is not None and job.attempts == 2
    q.fail("d-1", "flaky", clock.now() + timedelta(seconds=10), worker_id="b")
    rec = q.get("d-1")
    assert rec is not None and rec.state is JobState.DEAD  # attempts used up
    assert rec.received_at == clock.now() - timedelta(seconds=120)
    q.close()


def test_a_second_process_sees_commits_and_waits_for_the_lock(tmp_path: Path) -> None:
    db = tmp_path / "q.db"
    q = SqliteQueue(db)
    script = (
        "import sys; from bot.queue.sqlite import SqliteQueue\n"
        "q = SqliteQueue(sys.argv[1])\n"
        "print('ready', flush=True); sys.stdin.readline()\n"
        "print(q.enqueue('from-child', 'ping', b'{}'))\n"
        "job = q.claim('child', 30); print(job.id if job else None)\n"
    )
    child = subprocess.Popen(
        [sys.executable, "-c", script, str(db)],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None and child.stdin is not None
    assert child.stdout.readline().strip() == "ready"
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")  # hold the write lock: the child must wait, not fail
    child.stdin.write("go\n")
    child.stdin.flush()
    time.sleep(0.8)
    assert child.poll() is None
    conn.execute("COMMIT")
    out, _ = child.communicate(timeout=30)
    assert out.split() == ["True", "from-child"]
    rec = q.get("from-child")
    assert rec is not None and rec.state is JobState.RUNNING and rec.worker_id == "child"
    conn.close()
    q.close()


def test_enqueue_many_big_batch_keeps_order_payloads_and_dupes(tmp_path: Path) -> None:
    q = SqliteQueue(tmp_path / "q.db")
    q.enqueue("d-7", "ping", b'{"old": 1}')
    batch = [Delivery(f"d-{i}", "ping", f'{{"i": {i}}}'.encode()) for i in range(1200)]
    batch.insert(900, Delivery("d-3", "ping", b"{}"))  # a repeat in another statement
    fresh = q.enqueue_many(batch)
    assert fresh.count(False) == 2 and not fresh[7] and not fresh[900]
    assert q.counts()[JobState.QUEUED] == 1200
    job = q.claim("w", 30)
    assert job is not None and job.id == "d-7" and job.payload == b'{"old": 1}'
    job = q.claim("w", 30)
    assert job is not None and job.id == "d-0" and job.payload == b'{"i": 0}'
    q.close()


def test_stores_commit_with_synchronous_full_and_bookkeeping_with_normal(tmp_path: Path) -> None:
    """A stored delivery is fsynced before it is acknowledged (power-cut safe); claims and
    results are not."""
    q = SqliteQueue(tmp_path / "q.db")
    statements: list[str] = []
    q._conn().set_trace_callback(statements.append)

    def levels() -> list[str]:
        """The synchronous level in force at each COMMIT, in order."""
        level, out = "NORMAL", []
        for sql in statements:
            if sql.startswith("PRAGMA synchronous = "):
                level = sql.rsplit(" ", 1)[1]
            elif sql == "COMMIT":
                out.append(level)
        return out

    q.enqueue("d-1", "ping", b"{}")
    q.enqueue("d-2", "ping", b"{}")
    assert levels() == ["FULL", "FULL"]
    q.claim("w", 30)
    q.enqueue("d-3", "ping", b"{}")
    assert levels() == ["FULL", "FULL", "NORMAL", "FULL"]
    q.close()


def test_closing_while_other_threads_write_ends_their_writes_cleanly(tmp_path: Path) -> None:
    """A connection closed under a writing thread crashed the process (a segfault seen in the
    suite: a worker finishing a job while the queue closed); writes in flight finish first
    and later ones are refused with a QueueError."""
    import threading

    from bot.errors import QueueError

    q = SqliteQueue(tmp_path / "q.db")
    errors: list[BaseException] = []
    stored = [0]

    def write(n: int) -> None:
        try:
            for i in range(10_000):
                q.enqueue(f"d-{n}-{i}", "issues", b'{"a": 1}')
                stored[0] += 1
        except QueueError as exc:
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    while stored[0] < 50:
        time.sleep(0.001)
    q.close()
    for t in threads:
        t.join()
    assert len(errors) == 4 and all("is closed" in str(e) for e in errors), errors
    reopened = SqliteQueue(tmp_path / "q.db")
    assert sum(reopened.counts().values()) >= stored[0]  # every write that returned is kept
    reopened.close()
