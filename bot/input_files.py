"""Reading a file a person named (a tasks.md, a kata, a payload, a config): a regular file,
of a sane size. The CLI and the config loader share it."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

MAX_INPUT_BYTES = 5 * 1024 * 1024
"""The most the CLI reads of a named file (tasks.md, a kata, a payload, a config)."""


class NotAFile(OSError):
    """The path names a FIFO, a device or a socket: reading it would block or never end."""


class TooLarge(OSError):
    """The file is over MAX_INPUT_BYTES."""


def read_input(path: Path, *, limit: int = MAX_INPUT_BYTES) -> bytes:
    """The bytes of the regular file at `path`; OSError (with a `strerror`) otherwise."""
    # O_NONBLOCK: opening a FIFO with no writer would wait forever before fstat can say no.
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as fh:
        info = os.fstat(fh.fileno())
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(errno.EISDIR, "is a directory", str(path))
        if not stat.S_ISREG(info.st_mode):
            raise NotAFile(errno.EINVAL, "not a regular file (a FIFO, device or socket)")
        data = fh.read(limit + 1)  # st_size can be stale: the read is capped too
    if len(data) > limit:
        raise TooLarge(errno.EFBIG, f"over the {limit // (1024 * 1024)} MB limit for input files")
    return data
