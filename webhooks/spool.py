"""The store process's spool: deliveries acknowledged before they reach the SQLite queue.

A SQLite commit of a 12 KB delivery writes ~5 pages as ~10 system calls, and a WAL
checkpoint now and then rewrites megabytes: over a millisecond per batch, which every
delivery of the batch waited for. Appending the batch to this file is one write and one
`fdatasync`, after which the delivery is as durable as a commit, so the 202 goes out then;
a thread of the store process moves the batch into the queue right after. The file is
named `<queue file>.spool-<pid>-<random>` and locked (`flock`) while its process lives; a store
process that starts replays every unlocked spool beside its queue (its process died) into
the queue, then removes it. Replaying a delivery the queue already holds changes nothing
(the delivery id is the key, and jobs are never deleted), so the file is written from its
start again only when everything in it is in the queue and on disk (`Spool`,
`webhooks.spooled_store`).

A record is its length and CRC-32, then four lengths (id, event, repo, payload) and the
four byte strings. A torn last record (the process died while writing it) fails its CRC
and is dropped: it was never acknowledged.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import secrets
import stat
import struct
import zlib
from collections.abc import Iterator, Sequence
from pathlib import Path

from bot.queue import Delivery, JobQueue
from bot.queue.records import payload_bytes

log = logging.getLogger("agentbot.webhooks")

SPOOL_BYTES = 32 * 1024 * 1024
"""Zeroed room a spool starts with."""
_HEAD = struct.Struct("<II")
_ITEM = struct.Struct("<IIII")


def spool_path(queue_file: Path, pid: int | None = None) -> Path:
    """A new spool's name beside `queue_file`: the pid, and a random part (pids repeat, and
    containers sharing a volume can have the same one)."""
    return queue_file.with_name(
        f"{queue_file.name}.spool-{pid or os.getpid()}-{secrets.token_hex(4)}"
    )


class Spool:
    """This process's spool file, locked while it is open.

    The file is filled with zeros when made, and records overwrite it from the start:
    `fdatasync` after an append that grows a file also waits for the file system's journal
    (0.34 ms for an 86 KB batch here), after an overwrite only for the data (0.15 ms).
    Emptied, it is written from the start again; the records of the round before that lie
    past the end are all in the queue, so replaying them changes nothing, and a zero or
    half-overwritten record ends the replay.
    """

    def __init__(self, path: Path, room: int = SPOOL_BYTES) -> None:
        self.path = path
        self.room = room
        self.fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            zeros = bytes(1024 * 1024)
            for at in range(0, room, len(zeros)):
                os.pwrite(self.fd, zeros[: room - at], at)
            os.fsync(self.fd)
            # ...and the directory entry: a spool that vanished with a power cut would take
            # the deliveries it acknowledged with it.
            folder = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
            try:
                os.fsync(folder)
            finally:
                os.close(folder)
        except BaseException:
            os.close(self.fd)
            path.unlink(missing_ok=True)
            raise
        self.size = 0
        """Bytes of records written since the spool was last emptied."""

    @property
    def full(self) -> bool:
        """The zeroed room is used up (appends still work, more slowly)."""
        return self.size >= self.room

    def append(self, deliveries: Sequence[Delivery]) -> None:
        """Write `deliveries` and wait until the disk holds them."""
        data = b"".join(map(record, deliveries))
        view = memoryview(data)
        at = self.size
        while view:
            n = os.pwrite(self.fd, view, at)
            view, at = view[n:], at + n
        _datasync(self.fd)
        self.size = at

    def empty(self) -> None:
        """Write from the start again (everything written so far is in the queue, synced)."""
        self.size = 0

    def close(self, *, remove: bool) -> None:
        """Close the file; `remove` it when everything in it is in the queue."""
        if remove:
            self.path.unlink(missing_ok=True)
        os.close(self.fd)


def _datasync(fd: int) -> None:
    """`fdatasync` where there is one (Linux), else `fsync`."""
    getattr(os, "fdatasync", os.fsync)(fd)


def record(d: Delivery) -> bytes:
    """One delivery as a spool record."""
    fields = [d.delivery_id.encode(), d.event_name.encode(), d.repo.encode()]
    payload = payload_bytes(d.payload)
    body = _ITEM.pack(*map(len, fields), len(payload)) + b"".join(fields) + payload
    return _HEAD.pack(len(body), zlib.crc32(body)) + body


def read_records(data: bytes) -> Iterator[Delivery]:
    """The deliveries of a spool's bytes, up to the first torn or damaged record."""
    at = 0
    while at + _HEAD.size <= len(data):
        size, crc = _HEAD.unpack_from(data, at)
        body = data[at + _HEAD.size : at + _HEAD.size + size]
        if len(body) != size or zlib.crc32(body) != crc or size < _ITEM.size:
            return
        lengths = _ITEM.unpack_from(body, 0)
        if _ITEM.size + sum(lengths) != size:
            return
        fields, pos = [], _ITEM.size
        for n in lengths:
            fields.append(body[pos : pos + n])
            pos += n
        did, event, repo, payload = fields
        try:
            yield Delivery(did.decode(), event.decode(), payload, repo.decode())
        except UnicodeDecodeError:
            return
        at += _HEAD.size + size


def orphans(queue_file: Path) -> Iterator[tuple[Path, int]]:
    """(path, locked descriptor) of each spool beside `queue_file` whose process is gone."""
    for path in sorted(queue_file.parent.glob(f"{queue_file.name}.spool-*")):
        try:
            # Never through a link, never waiting on a FIFO: only our own regular files.
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK)
        except FileNotFoundError:
            continue  # replayed and removed by another store process meanwhile
        except OSError as exc:
            log.warning("left %s alone: not a spool file (%s)", path, exc.strerror or exc)
            continue
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            log.warning("left %s alone: not a spool file (not a regular file)", path)
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)  # its process is alive
            continue
        yield path, fd


def recover(queue: JobQueue, queue_file: Path) -> int:
    """Move every orphaned spool's deliveries into `queue`, then remove the spool."""
    moved = 0
    for path, fd in orphans(queue_file):
        try:
            # Read and remove what is locked: the name may be another file's by now.
            with os.fdopen(os.dup(fd), "rb") as file:
                deliveries = list(read_records(file.read()))
            for at in range(0, len(deliveries), 500):
                queue.enqueue_many(deliveries[at : at + 500])
            with contextlib.suppress(FileNotFoundError):
                if path.stat().st_ino == os.fstat(fd).st_ino:
                    path.unlink()
            moved += len(deliveries)
        finally:
            os.close(fd)
    return moved
