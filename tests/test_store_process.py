"""serve's store process: the frames, the spool, the spooled store and the real child.

Every test here uses real files, a real SQLite queue and (for the child) a real process
over a real socket pair and shared memory.
"""

from __future__ import annotations

import asyncio
import json
import mmap
import os
import signal
from pathlib import Path

import pytest

from bot.errors import QueueError
from bot.queue import Delivery, JobState
from bot.queue.sqlite import SqliteQueue
from webhooks import store_process
from webhooks.payload_check import NOT_JSON, NOT_OBJECT, Incoming, Verdict
from webhooks.spool import Spool, read_records, record, recover, spool_path
from webhooks.spooled_store import SpooledStore
from webhooks.store_process import StoreProcess
from webhooks.store_wire import (
    decode_batch,
    decode_verdicts,
    encode_batch,
    encode_verdicts,
    frame_length,
)

BODY = json.dumps({"action": "labeled", "repository": {"full_name": "octo/app"}}).encode()


def item(n: int, body: bytes = BODY) -> Incoming:
    return Incoming(Delivery(f"d-{n}", "issues", body))


# --- the frames ------------------------------------------------------------------------------


@pytest.mark.parametrize("shared_size", [None, 1 << 20, 10])
def test_a_batch_crosses_inline_or_through_shared_memory(shared_size: int | None) -> None:
    shared = mmap.mmap(-1, shared_size) if shared_size else None
    items = [item(1), Incoming(Delivery("d-2", "push", b"[1]", "o/r"), checked=True)]
    framed = encode_batch(items, shared)
    assert frame_length(framed[:4]) == len(framed) - 4
    # 10 bytes of shared memory cannot hold the payloads: they travel in the frame
    inline = shared is None or shared_size == 10
    assert (BODY in framed) is inline
    back = decode_batch(framed[4:], shared)
    assert [(i.delivery.delivery_id, i.delivery.payload, i.checked) for i in back] == [
        ("d-1", BODY, False),
        ("d-2", b"[1]", True),
    ]
    assert back[1].delivery.repo == "o/r"


def test_a_damaged_batch_is_refused_not_misread() -> None:
    framed = encode_batch([item(1)])[4:]
    with pytest.raises(ValueError, match=r"truncated|past the end"):
        decode_batch(framed[:-5])
    with pytest.raises(ValueError, match="after the last"):
        decode_batch(framed + b"x")
    shared_batch = encode_batch([item(1)], mmap.mmap(-1, 1 << 16))[4:]
    with pytest.raises(ValueError, match="none is mapped"):
        decode_batch(shared_batch)


def test_verdicts_round_trip_and_unknown_codes_are_refused() -> None:
    verdicts: list[Verdict] = [True, False, NOT_JSON, NOT_OBJECT]
    assert decode_verdicts(encode_verdicts(verdicts)[5:]) == verdicts
    with pytest.raises(ValueError, match="no verdict"):
        decode_verdicts(b"\x09")


# --- the spool -------------------------------------------------------------------------------


def delivery(n: int) -> Delivery:
    return Delivery(f"d-{n}", "issues", BODY, "octo/app")


def test_spool_records_read_back_and_a_torn_tail_is_dropped(tmp_path: Path) -> None:
    spool = Spool(tmp_path / "q.db.spool-1", room=1 << 16)
    spool.append([delivery(1), delivery(2)])
    data = (tmp_path / "q.db.spool-1").read_bytes()
    assert len(data) == 1 << 16  # zeroed room, overwritten in place
    assert [d.delivery_id for d in read_records(data)] == ["d-1", "d-2"]
    torn = record(delivery(1)) + record(delivery(2))[:-3]
    assert [d.delivery_id for d in read_records(torn)] == ["d-1"]
    flipped = bytearray(record(delivery(1)))
    flipped[-1] ^= 1
    assert list(read_records(bytes(flipped))) == []
    spool.close(remove=True)
    assert not (tmp_path / "q.db.spool-1").exists()


def test_a_dead_process_spool_is_replayed_and_a_live_one_left_alone(tmp_path: Path) -> None:
    queue = SqliteQueue(tmp_path / "q.db")
    queue.enqueue("d-1", "issues", BODY)  # already moved before the process died
    dead = Spool(spool_path(queue.path, pid=1), room=1 << 16)
    dead.append([delivery(1), delivery(2), delivery(3)])
    os.close(dead.fd)  # the process died: its lock is gone, the file stays
    live = Spool(spool_path(queue.path, pid=2), room=1 << 16)
    live.append([delivery(4)])

    assert recover(queue, queue.path) == 3
    assert not dead.path.exists()
    assert live.path.exists()  # locked: its process still runs
    ids = sorted(r.id for r in queue.list())
    assert ids == ["d-1", "d-2", "d-3"]  # d-1 once, d-4 not taken from a live spool
    assert queue.get("d-2") is not None
    live.close(remove=True)
    queue.close()


def test_what_only_looks_like_a_spool_is_left_alone_not_waited_on_or_followed(
    tmp_path: Path,
) -> None:
    """A FIFO would block the replay (and serve's start); a link would have it read, and
    remove, what another user pointed it at."""
    queue = SqliteQueue(tmp_path / "q.db")
    fifo = Path(f"{queue.path}.spool-1-fifo")
    os.mkfifo(fifo)
    elsewhere = tmp_path / "elsewhere"
    dead = Spool(elsewhere, room=1 << 16)
    dead.append([delivery(1)])
    os.close(dead.fd)
    link = Path(f"{queue.path}.spool-2-link")
    link.symlink_to(elsewhere)
    assert recover(queue, queue.path) == 0
    assert fifo.exists() and link.is_symlink() and elsewhere.exists()
    assert queue.list() == []
    queue.close()


def test_a_spool_written_again_from_its_start_replays_nothing_new(tmp_path: Path) -> None:
    queue = SqliteQueue(tmp_path / "q.db")
    spool = Spool(spool_path(queue.path, pid=7), room=1 << 16)
    spool.append([delivery(n) for n in range(1, 6)])
    queue.enqueue_many([delivery(n) for n in range(1, 6)])
    spool.empty()  # all of it is in the queue
    spool.append([delivery(9)])
    os.close(spool.fd)
    assert recover(queue, queue.path) >= 1
    ids = sorted(r.id for r in queue.list())
    assert ids == ["d-1", "d-2", "d-3", "d-4", "d-5", "d-9"]
    queue.close()


# --- the spooled store -----------------------------------------------------------------------


def test_spooled_store_answers_known_new_and_refused_and_moves_to_the_queue(
    tmp_path: Path,
) -> None:
    queue = SqliteQueue(tmp_path / "q.db")
    queue.enqueue("d-0", "issues", BODY)
    spool = Spool(spool_path(queue.path), room=1 << 20)
    store = SpooledStore(queue, spool)
    first = store.store([item(0), item(1), item(1), item(2, b"{"), item(3, b"[]")])
    assert first == [False, True, False, NOT_JSON, NOT_OBJECT]
    # d-1 is known while it waits in the spool and once it is in the queue
    assert store.store([item(1)]) == [False]
    store.close()
    assert not spool.path.exists()  # everything moved: removed
    check = SqliteQueue(tmp_path / "q.db")
    record_ = check.get("d-1")
    assert record_ is not None and record_.repo == "octo/app" and record_.state is JobState.QUEUED
    assert {r.id for r in check.list()} == {"d-0", "d-1"}
    check.close()


class SyncCountingQueue(SqliteQueue):
    """A real queue that records how each move was committed, and each sync with whether
    a spool file still lay beside the queue then."""

    def __init__(self, path: Path, fail_syncs: bool = False) -> None:
        super().__init__(path)
        self.events: list[str] = []
        self.fail_syncs = fail_syncs

    def enqueue_many(self, deliveries, *, sync=True):  # type: ignore[no-untyped-def]
        self.events.append(f"commit sync={sync}")
        return super().enqueue_many(deliveries, sync=sync)

    def sync(self) -> None:
        spooled = any(self.path.parent.glob(f"{self.path.name}.spool-*"))
        self.events.append("sync, spool kept" if spooled else "sync, no spool")
        if self.fail_syncs:
            raise QueueError("could not sync the queue (EIO)")
        super().sync()


def test_the_mover_waits_for_the_disk_only_before_the_spool_is_written_again(
    tmp_path: Path,
) -> None:
    queue = SyncCountingQueue(tmp_path / "q.db")
    spool = Spool(spool_path(queue.path), room=40 * len(record(item(0).delivery)))
    store = SpooledStore(queue, spool)
    for n in range(5):
        store.store([item(n)])
    assert store.settle()
    # below the spool's mark the moves are not synced, and the spool keeps them
    assert set(queue.events) == {"commit sync=False"}
    assert spool.size > 0 and len(list(read_records(spool_bytes(spool)))) == 5
    for n in range(5, 40):
        store.store([item(n)])
    assert store.settle()
    assert "sync, spool kept" in queue.events  # the queue reached the disk...
    assert spool.size < 10 * len(record(item(0).delivery))  # ...then the spool started over
    store.store([item(99)])
    assert store.settle()
    queue.events.clear()
    store.close()
    # a clean stop removes the spool only once the queue's moves are on disk
    assert queue.events[-1] == "sync, spool kept" and not spool.path.exists()
    check = SqliteQueue(tmp_path / "q.db")
    assert len(check.list(limit=100)) == 41
    check.close()


def test_a_failed_sync_keeps_the_spool_refuses_when_full_and_is_replayed_later(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("webhooks.spooled_store.CATCH_UP_SECONDS", 0.3)
    queue = SyncCountingQueue(tmp_path / "q.db", fail_syncs=True)
    spool = Spool(spool_path(queue.path), room=8 * len(record(item(0).delivery)))
    store = SpooledStore(queue, spool)
    for n in range(8):
        assert store.store([item(n)]) == [True]
    assert store.settle()
    assert queue.events.count("sync, spool kept") == 1  # tried once, never again
    # the spool is never written over: full, the next batch is refused, naming why
    with pytest.raises(QueueError, match="could not be synced"):
        store.store([item(8)])
    assert len(list(read_records(spool_bytes(spool)))) == 8
    store.close()
    assert spool.path.exists()  # kept for the next start

    queue = SyncCountingQueue(tmp_path / "q.db")
    assert recover(queue, queue.path) == 8
    # replayed deliveries the queue already held: synced before the spool went
    assert queue.events[-1] == "sync, spool kept" and not spool.path.exists()
    assert len(queue.list(limit=100)) == 8
    queue.close()


def spool_bytes(spool: Spool) -> bytes:
    return os.pread(spool.fd, spool.size, 0)


class RefusingQueue(SqliteQueue):
    """A real queue that refuses every write (a full disk, a locked file)."""

    def enqueue_many(self, deliveries, *, sync=True):  # type: ignore[no-untyped-def]
        raise QueueError("database is locked")


def test_a_queue_that_refuses_writes_keeps_the_spool_for_the_next_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("webhooks.spooled_store.RETRY_SECONDS", 0.01)
    refusing = RefusingQueue(tmp_path / "q.db")
    spool = Spool(spool_path(refusing.path), room=1 << 20)
    store = SpooledStore(refusing, spool)
    assert store.store([item(1), item(2)]) == [True, True]  # durable in the spool: a 2xx
    store.close()
    assert spool.path.exists()

    queue = SqliteQueue(tmp_path / "q.db")
    assert recover(queue, queue.path) == 2
    assert {r.id for r in queue.list()} == {"d-1", "d-2"}
    queue.close()


def test_a_full_spool_waits_for_the_queue_then_refuses_the_batch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("webhooks.spooled_store.RETRY_SECONDS", 0.01)
    monkeypatch.setattr("webhooks.spooled_store.CATCH_UP_SECONDS", 0.2)
    refusing = RefusingQueue(tmp_path / "q.db")
    store = SpooledStore(refusing, Spool(spool_path(refusing.path), room=len(BODY)))
    assert store.store([item(1)]) == [True]
    with pytest.raises(QueueError, match="behind the spool"):
        store.store([item(2)])
    store.close()


# --- the real child --------------------------------------------------------------------------


def test_the_store_process_stores_restarts_after_a_crash_and_stops(tmp_path: Path) -> None:
    db = tmp_path / "q.db"
    store = StoreProcess(f"sqlite:///{db}")
    store.start()

    async def scenario() -> None:
        assert await store.store_many([item(1), item(2, b"nope")]) == [True, NOT_JSON]
        assert await store.store_many([item(1)]) == [False]
        assert store.proc is not None
        os.kill(store.proc.pid, signal.SIGKILL)
        store.proc.wait()
        with pytest.raises(QueueError, match="ended"):
            await store.store_many([item(3)])
        # the next batch starts a new child, which replays the dead one's spool first
        assert await store.store_many([item(4), item(1)]) == [True, False]
        await store.close()

    asyncio.run(scenario())
    assert store.started == 2
    assert list(tmp_path.glob("q.db.spool-*")) == []  # both spools ended in the queue
    queue = SqliteQueue(db)
    assert {r.id for r in queue.list()} == {"d-1", "d-4"}
    queue.close()


def test_a_batch_larger_than_the_shared_memory_still_arrives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store_process, "SHARED_BYTES", 64)
    store = StoreProcess(f"sqlite:///{tmp_path / 'q.db'}")
    store.start()

    async def scenario() -> list[object]:
        try:
            return list(await store.store_many([item(n) for n in range(5)]))
        finally:
            await store.close()

    assert asyncio.run(scenario()) == [True] * 5


def test_a_queue_the_store_process_cannot_open_is_named_at_start(tmp_path: Path) -> None:
    (tmp_path / "dir.db").mkdir()
    store = StoreProcess(f"sqlite:///{tmp_path / 'dir.db'}")
    with pytest.raises(QueueError, match=r"could not open the queue.*dir\.db"):
        store.start()
    assert store.proc is None and store.sock is None


def test_a_payload_file_the_queue_cannot_use_stops_the_store_process_at_start(
    tmp_path: Path,
) -> None:
    (tmp_path / "q.db.payloads").symlink_to("/etc/passwd")
    store = StoreProcess(f"sqlite:///{tmp_path / 'q.db'}")
    with pytest.raises(QueueError, match=r"could not open the queue.*q\.db\.payloads is not a"):
        store.start()
    assert store.proc is None and store.sock is None


def test_a_webhooks_folder_in_the_working_directory_does_not_replace_the_child(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    planted = tmp_path / "cwd" / "webhooks"
    planted.mkdir(parents=True)
    (planted / "__init__.py").write_text("")
    marker = tmp_path / "ran"
    (planted / "store_child.py").write_text(f"open({str(marker)!r}, 'w').write('x')\n")
    monkeypatch.chdir(tmp_path / "cwd")
    store = StoreProcess(f"sqlite:///{tmp_path / 'q.db'}")
    store.start()

    async def scenario() -> list[object]:
        try:
            return list(await store.store_many([item(1)]))
        finally:
            await store.close()

    assert asyncio.run(scenario()) == [True]
    assert not marker.exists()


def test_the_child_sees_no_credential_of_the_app(monkeypatch: pytest.MonkeyPatch) -> None:
    env = {
        "PATH": "/usr/bin",
        "PGPASSWORD": "db",
        "LC_ALL": "C.UTF-8",
        "GITHUB_WEBHOOK_SECRET": "s",
        "GITHUB_APP_PRIVATE_KEY": "k",
        "AGENTBOT_LLM_API_KEY": "sk-x",
        "AGENTBOT_JOBS_PASSWORD": "p",
    }
    assert store_process.child_environment(env) == {
        "PATH": "/usr/bin",
        "PGPASSWORD": "db",
        "LC_ALL": "C.UTF-8",
    }


def test_a_child_that_dies_while_idle_is_replaced_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_WEBHOOK_SECRET", "not-for-the-child")
    store = StoreProcess(f"sqlite:///{tmp_path / 'q.db'}")
    store.start()

    async def scenario() -> tuple[int, bytes]:
        assert await store.store_many([item(1)]) == [True]
        assert store.proc is not None
        environ = Path(f"/proc/{store.proc.pid}/environ").read_bytes()
        os.kill(store.proc.pid, signal.SIGKILL)
        for _ in range(200):  # no batch arrives: the receiver notices on its own
            if store.started == 2 and store.sock is not None:
                break
            await asyncio.sleep(0.05)
        started = store.started
        assert await store.store_many([item(1), item(2)]) == [False, True]
        await store.close()
        return started, environ

    started, environ = asyncio.run(scenario())
    assert started == 2
    assert b"not-for-the-child" not in environ and b"GITHUB_WEBHOOK_SECRET" not in environ


def test_a_batch_cancelled_before_its_answer_costs_the_child_not_the_next_batch(
    tmp_path: Path,
) -> None:
    """The cancelled batch's answer would be read as the next one's: the child goes, the
    next batch gets a new child, and the cancelled batch (it was spooled) is a duplicate."""
    store = StoreProcess(f"sqlite:///{tmp_path / 'q.db'}")
    store.start()

    async def scenario() -> tuple[list[Verdict], int]:
        task = asyncio.create_task(store.store_many([item(1)]))
        await asyncio.sleep(0)  # the batch is on its way
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        try:
            return await store.store_many([item(2), item(1)]), store.started
        finally:
            await store.close()

    verdicts, started = asyncio.run(scenario())
    assert started == 2
    assert verdicts[0] is True and verdicts[1] in (True, False)
    assert store.proc is None and store.sock is None and store.channel is None


def test_a_failure_that_keeps_coming_is_one_json_line_each_its_traceback_once(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "q.db"
    store = StoreProcess(f"sqlite:///{db}")
    store.start()
    in_the_way = tmp_path / "q.db.payloads"
    in_the_way.mkdir()  # every commit of the mover fails until it goes

    async def scenario() -> list[str]:
        assert await store.store_many([item(1)]) == [True]  # in the spool: acknowledged
        said: list[str] = []
        for _ in range(150):  # the mover tries again each second: three tries
            await asyncio.sleep(0.1)
            said += [line for line in capfd.readouterr().err.splitlines() if line]
            if len(said) >= 3:
                break
        in_the_way.rmdir()
        await store.close()
        return said

    said = asyncio.run(scenario())
    lines = [json.loads(line) for line in said]  # JSON lines like serve's: no bare traceback
    assert len(lines) >= 3, said
    assert all(line["msg"].startswith("could not move 1 spooled deliveries") for line in lines)
    assert "not a regular file" in lines[1]["msg"]
    assert "Traceback" in lines[0]["exc"] and not any("exc" in line for line in lines[1:])
    queue = SqliteQueue(db)  # stopped while refused: the spool keeps it for the next start
    assert recover(queue, db) == 1 and [r.id for r in queue.list()] == ["d-1"]
    queue.close()
