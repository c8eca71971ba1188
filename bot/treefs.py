"""Files inside a working tree, read and written by the bot without ever following a link.

The repository's code and the agent run sandboxed, but the bot's own process reads and
writes the workspace between their commands. A sandboxed command can leave a symlink (or
turn a directory into one) pointing anywhere on the host; a bot that then writes
`dir/file` through it writes outside the tree (a `.pth` into its own venv, another
tenant's workspace), and a bot that reads through it hands a host file to the model. Every
path here is walked one component at a time with `O_NOFOLLOW` relative to the tree's own
directory descriptor, so a link is an error (reads) or is replaced (writes), never
followed. Special files (FIFOs, devices) are not opened: a FIFO would block the bot.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
MAX_READ = 64 * 1024 * 1024
"""Larger files are not read into the bot's memory (a sparse file costs no disk)."""


class UnsafePath(OSError):
    """The path leaves the tree through a link, or is not a regular file."""


def _parts(rel: str | Path) -> list[str]:
    parts = [p for p in Path(rel).parts if p not in ("", ".")]
    if not parts or any(p == ".." or p.startswith("/") for p in parts):
        raise UnsafePath(f"{rel}: not a path inside the tree")
    return parts


@contextlib.contextmanager
def _parent(root: Path, parts: list[str], *, create: bool) -> Iterator[int]:
    """A descriptor of the directory holding `parts[-1]`, reached without following links.

    With `create`, missing directories are made and a link or file in the way is replaced by
    a directory (the bot puts the tree back as it was); without, it raises UnsafePath.
    """
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for name in parts[:-1]:
            try:
                nxt = os.open(name, _DIR, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                os.mkdir(name, 0o755, dir_fd=fd)
                nxt = os.open(name, _DIR, dir_fd=fd)
            except OSError as exc:
                if not create or isinstance(exc, PermissionError):
                    msg = f"{'/'.join(parts)}: {name} is a link or not a folder"
                    raise UnsafePath(msg) from None
                os.unlink(name, dir_fd=fd)
                os.mkdir(name, 0o755, dir_fd=fd)
                nxt = os.open(name, _DIR, dir_fd=fd)
            os.close(fd)
            fd = nxt
        yield fd
    finally:
        os.close(fd)


def kind(root: Path, rel: str | Path) -> str:
    """`file`, `link`, `dir`, `special` or `missing`, judged without following any link."""
    parts = _parts(rel)
    try:
        with _parent(root, parts, create=False) as fd:
            mode = os.stat(parts[-1], dir_fd=fd, follow_symlinks=False).st_mode
    except (FileNotFoundError, UnsafePath, NotADirectoryError):
        return "missing"
    if stat.S_ISLNK(mode):
        return "link"
    if stat.S_ISDIR(mode):
        return "dir"
    return "file" if stat.S_ISREG(mode) else "special"


def read_bytes(root: Path, rel: str | Path, *, limit: int = MAX_READ) -> bytes:
    """The bytes of a regular file in the tree; UnsafePath for a link, special or huge file."""
    parts = _parts(rel)
    with _parent(root, parts, create=False) as dfd:
        try:
            fd = os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=dfd)
        except OSError as exc:
            if isinstance(exc, FileNotFoundError):
                raise
            raise UnsafePath(f"{rel}: a link or not readable ({exc.strerror})") from None
    with os.fdopen(fd, "rb") as fh:
        info = os.fstat(fh.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise UnsafePath(f"{rel}: not a regular file")
        if info.st_size > limit:
            raise UnsafePath(f"{rel}: {info.st_size} bytes, over {limit}")
        return fh.read(limit + 1)[:limit]


def read_text(root: Path, rel: str | Path, *, limit: int = MAX_READ) -> str:
    """`read_bytes` decoded as UTF-8 (undecodable bytes replaced)."""
    return read_bytes(root, rel, limit=limit).decode("utf-8", errors="replace")


def readlink(root: Path, rel: str | Path) -> str:
    """The target of a link in the tree (the link itself is never followed)."""
    parts = _parts(rel)
    with _parent(root, parts, create=False) as fd:
        return os.readlink(parts[-1], dir_fd=fd)


def write_bytes(root: Path, rel: str | Path, data: bytes) -> None:
    """Write a regular file in the tree; a link at the path or on the way is replaced."""
    parts = _parts(rel)
    with _parent(root, parts, create=True) as dfd:
        _clear(dfd, parts[-1], keep_file=True)
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(parts[-1], flags, 0o644, dir_fd=dfd)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)


def symlink(root: Path, rel: str | Path, target: str) -> None:
    """Make `rel` a link to `target` (put back as a stage found it; never followed here)."""
    parts = _parts(rel)
    with _parent(root, parts, create=True) as dfd:
        _clear(dfd, parts[-1], keep_file=False)
        os.symlink(target, parts[-1], dir_fd=dfd)


def remove(root: Path, rel: str | Path, *, prune: bool = True) -> None:
    """Delete `rel` (a folder with its contents); then folders it leaves empty, if `prune`."""
    parts = _parts(rel)
    try:
        with _parent(root, parts, create=False) as dfd:
            _clear(dfd, parts[-1], keep_file=False)
    except (FileNotFoundError, UnsafePath, NotADirectoryError):
        return  # not inside the tree as a path: the link on the way is removed as its own path
    if prune:
        for depth in range(len(parts) - 1, 0, -1):
            try:
                with _parent(root, parts[:depth], create=False) as dfd:
                    os.rmdir(parts[depth - 1], dir_fd=dfd)
            except OSError:
                break


def _clear(dfd: int, name: str, *, keep_file: bool) -> None:
    """Remove what is at `name` in `dfd`, unless it is a regular file and `keep_file`."""
    try:
        mode = os.stat(name, dir_fd=dfd, follow_symlinks=False).st_mode
    except FileNotFoundError:
        return
    if stat.S_ISDIR(mode):
        shutil.rmtree(name, dir_fd=dfd)
    elif not (keep_file and stat.S_ISREG(mode)):
        os.unlink(name, dir_fd=dfd)
