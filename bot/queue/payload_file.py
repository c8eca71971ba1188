"""The SQLite queue's payloads: one append-only file beside the queue, rows hold where.

SQLite writes a 12 KB payload twice (its WAL, then the checkpoint into the database) and
spends ~45 µs of CPU per delivery doing so, which in `agentbot serve` is CPU the receiver
lacks (`bench/webhook_load`). Here a payload is written once: appended to
`<queue file>.payloads` (mode 0600), synced, and only then is its row (offset, size,
CRC-32) committed, so a committed row never points at bytes the disk may not hold. A
process that dies mid-append leaves bytes no row points at; they stay, unread.

Appends from several processes (serve's store process, a CLI, a second serve) take an
`flock` on the file for the moment they write; reads are `pread`s and take no lock. A
payload whose bytes are missing or fail their CRC (the file restored from an older backup
than the queue, a damaged disk) is named as such, never read as another payload.
"""

from __future__ import annotations

import fcntl
import os
import threading
import zlib
from collections.abc import Sequence
from pathlib import Path

from bot.errors import QueueError


class PayloadFile:
    """`<queue file>.payloads`, opened on first use (module docstring)."""

    def __init__(self, queue_file: Path) -> None:
        self.path = queue_file.with_name(queue_file.name + ".payloads")
        self._fd: int | None = None
        self._lock = threading.RLock()

    def append(self, bodies: Sequence[bytes]) -> list[tuple[int, int, int]]:
        """Write `bodies` one after another and wait until the disk holds them: their
        (offset, size, CRC-32)."""
        data = b"".join(bodies)
        with self._lock:
            fd = self._opened()
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                try:
                    at = os.lseek(fd, 0, os.SEEK_END)
                    _write_all(fd, data, at)
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
        """The payload stored at `at`; None if its bytes are missing or damaged."""
        try:
            data = os.pread(self._opened(), size, at)
        except OSError:
            return None
        return data if len(data) == size and zlib.crc32(data) == crc else None

    def close(self) -> None:
        """Close the file (opened again on next use)."""
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None

    def _opened(self) -> int:
        if self._fd is not None:
            return self._fd
        with self._lock:
            if self._fd is not None:  # opened by another thread meanwhile
                return self._fd
            created = not self.path.exists()
            try:
                self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
                if created:
                    # The name must outlive a power cut as the rows pointing into it do.
                    folder = os.open(self.path.parent, os.O_RDONLY | os.O_DIRECTORY)
                    try:
                        os.fsync(folder)
                    finally:
                        os.close(folder)
            except OSError as exc:
                raise QueueError(f"cannot open the payload file {self.path}: {exc}") from exc
            return self._fd


def _write_all(fd: int, data: bytes, at: int) -> None:
    view = memoryview(data)
    while view:
        n = os.pwrite(fd, view, at)
        view, at = view[n:], at + n
