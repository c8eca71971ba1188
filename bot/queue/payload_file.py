"""The SQLite queue's payloads: one append-only file beside the queue, rows hold where.

SQLite writes a 12 KB payload twice (its WAL, then the checkpoint into the database) and
spends ~45 µs of CPU per delivery doing so, which in `agentbot serve` is CPU the receiver
lacks (`bench/webhook_load`). Here a payload is written once: appended to
`<queue file>.payloads` (mode 0600), synced, and only then is its row (offset, size,
CRC-32) committed, so a committed row never points at bytes the disk may not hold. A
failed write is cut off again; a process that dies mid-append leaves bytes no row points
at, which stay unread.

Appends from several processes (serve's store process, a CLI, a second serve) take an
`flock` on the file while they write; reads are `pread`s and take no lock. Only an append
creates the file, and only if no row points into it yet: a queue whose payload file is
missing or shorter than its rows say (restored from another backup, moved without it) is
refused with the file's name rather than written over. The file must be a regular file:
a symbolic link there is refused, never followed (a link to another file would have
deliveries appended to it). A payload whose bytes fail their CRC is reported as damaged,
never read as another one.
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
import threading
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path

from bot.errors import QueueError


class PayloadFile:
    """`<queue file>.payloads`, opened on first use (module docstring)."""

    def __init__(self, queue_file: Path) -> None:
        self.path = queue_file.with_name(queue_file.name + ".payloads")
        self._fd: int | None = None
        self._end: int | None = None
        """Where this process last saw the file end (None: not checked since it was opened):
        it only grows, unless cut short."""
        self._lock = threading.RLock()

    def append(
        self, bodies: Sequence[bytes], rows_end: Callable[[], int]
    ) -> list[tuple[int, int, int]]:
        """Write `bodies` one after another and wait until the disk holds them: their
        (offset, size, CRC-32). `rows_end` is where the queue's rows say the file ends
        (asked before the first append to this file)."""
        data = b"".join(bodies)
        with self._lock:
            self._forget_if_moved()
            if self._end is None:
                self.check(end := rows_end())
                self._end = end
            fd = self._opened(create=True)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                try:
                    at = os.lseek(fd, 0, os.SEEK_END)
                    if at < self._end:  # cut short while open: appending would overlap rows
                        seen, self._end = self._end, None
                        raise QueueError(self._short(at, seen))
                    try:
                        _write_all(fd, data, at)
                    except OSError:
                        os.ftruncate(fd, at)  # no half payload for the next append to follow
                        raise
                    self._end = at + len(data)
                finally:
                    fcntl.flock(fd, fcntl.LOCK_UN)
                getattr(os, "fdatasync", os.fsync)(fd)
            except OSError as exc:
                raise QueueError(f"cannot write payloads to {self.path}: {exc}") from exc
        refs = []
        for body in bodies:
            refs.append((at, len(body), zlib.crc32(body)))
            at += len(body)
        return refs

    def read(self, at: int, size: int, crc: int) -> bytes | None:
        """The payload stored at `at`; None if its bytes are cut off or damaged.

        Raises QueueError if the file cannot be read at all (missing, I/O error): that may
        pass, so the job stays queued instead of ending.
        """
        try:
            with self._lock:
                self._forget_if_moved()
                fd = self._opened(create=False)
            data = os.pread(fd, size, at)
        except OSError as exc:
            raise QueueError(f"cannot read the payload file {self.path}: {exc}") from exc
        return data if len(data) == size and zlib.crc32(data) == crc else None

    def close(self) -> None:
        """Close the file (opened again on next use)."""
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None
            self._end = None

    def check(self, rows_end: int) -> None:
        """Raise QueueError unless payloads may be read and appended: a regular file at
        least `rows_end` bytes long, or no file while no row points into one."""
        try:
            info = os.lstat(self.path)
        except FileNotFoundError:
            if rows_end:
                raise QueueError(self._missing()) from None
            return
        except OSError as exc:
            raise QueueError(f"cannot read the payload file {self.path}: {exc}") from exc
        if not stat.S_ISREG(info.st_mode):
            raise QueueError(
                f"the payload file {self.path} is not a regular file (a link, a folder):"
                " put the queue's own payload file there, or move the queue aside"
            )
        if info.st_size < rows_end:
            raise QueueError(self._short(info.st_size, rows_end))

    def _short(self, size: int, rows_end: int) -> str:
        return (
            f"the payload file {self.path} holds {size} bytes but the queue's rows point up"
            f" to byte {rows_end}: restore it from the backup the queue came from (copied"
            " after the queue), or move the queue aside to start a new one"
        )

    def _missing(self) -> str:
        return f"the payload file {self.path} is missing: restore it with the queue"

    def _opened(self, *, create: bool) -> int:
        with self._lock:
            if self._fd is not None:
                return self._fd
            flags = os.O_RDWR | os.O_CLOEXEC | os.O_NOFOLLOW | (os.O_CREAT if create else 0)
            created = create and not os.path.lexists(self.path)
            try:
                fd = os.open(self.path, flags, 0o600)
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    os.close(fd)
                    raise OSError(errno.EINVAL, "not a regular file")
            except FileNotFoundError:
                raise QueueError(self._missing()) from None
            except OSError as exc:
                why = "a symbolic link" if exc.errno == errno.ELOOP else exc
                raise QueueError(f"cannot open the payload file {self.path}: {why}") from exc
            if created:
                # The name must outlive a power cut as the rows pointing into it do.
                folder = os.open(self.path.parent, os.O_RDONLY | os.O_DIRECTORY)
                try:
                    os.fsync(folder)
                finally:
                    os.close(folder)
            self._fd = fd
            return fd

    def _forget_if_moved(self) -> None:
        """Close the file if its name no longer leads to it (moved, replaced, removed since
        it was opened): the one there now is checked afresh."""
        if self._fd is None:
            return
        try:
            named, held = os.lstat(self.path), os.fstat(self._fd)
            if (named.st_dev, named.st_ino) == (held.st_dev, held.st_ino):
                return
        except OSError:
            pass
        os.close(self._fd)
        self._fd, self._end = None, None


def _write_all(fd: int, data: bytes, at: int) -> None:
    view = memoryview(data)
    while view:
        n = os.pwrite(fd, view, at)
        view, at = view[n:], at + n
