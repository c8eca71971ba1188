"""What changed against a base, working tree included: FileChange, snapshots, diff parsing."""

from __future__ import annotations

import contextlib
import shutil
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from bot.git.workspace import Workspace

Status = Literal["A", "M", "D", "R"]

# Git's other letters folded into the four we report: a copy is a new file, a type change
# (file <-> symlink) or an unmerged entry is a modification.
_STATUS: dict[str, Status] = {"A": "A", "C": "A", "M": "M", "T": "M", "U": "M", "D": "D", "R": "R"}


@dataclass(frozen=True)
class FileChange:
    """One changed file: lines added and deleted, and how (Added, Modified, Deleted, Renamed)."""

    path: str
    added: int
    deleted: int
    status: Status
    old_path: str | None = None
    """The path before a rename."""
    binary: bool = False
    """Git counts no lines for binary files (added = deleted = 0)."""


def parse_name_status(out: str) -> list[tuple[Status, str, str | None]]:
    """Parse `git diff --name-status -z` into (status, path, old path of a rename or copy)."""
    fields = out.split("\0")
    entries: list[tuple[Status, str, str | None]] = []
    i = 0
    while i < len(fields) and fields[i]:
        letter = fields[i][0]
        if letter in "RC":
            entries.append((_STATUS[letter], fields[i + 2], fields[i + 1]))
            i += 3
        else:
            entries.append((_STATUS.get(letter, "M"), fields[i + 1], None))
            i += 2
    return entries


def parse_numstat(out: str) -> dict[str, tuple[int, int, bool]]:
    """Parse `git diff --numstat -z` into path -> (added, deleted, binary)."""
    fields = out.split("\0")
    counts: dict[str, tuple[int, int, bool]] = {}
    i = 0
    while i < len(fields) and fields[i]:
        added, deleted, path = fields[i].split("\t", 2)
        i += 1
        if not path:
            # A rename: the old and the new path follow as fields of their own.
            path = fields[i + 1]
            i += 2
        binary = added == "-"
        counts[path] = (0 if binary else int(added), 0 if binary else int(deleted), binary)
    return counts


def merge_changes(
    entries: list[tuple[Status, str, str | None]], counts: dict[str, tuple[int, int, bool]]
) -> list[FileChange]:
    """Join name-status entries with their numstat counts, sorted by path."""
    changes = []
    for status, path, old in entries:
        added, deleted, binary = counts.get(path, (0, 0, False))
        changes.append(FileChange(path, added, deleted, status, old, binary))
    return sorted(changes, key=lambda c: c.path)


@contextlib.contextmanager
def snapshot(ws: Workspace) -> Iterator[str]:
    """A tree of the working tree as `git add --all` would stage it; the index is untouched."""
    index = ws.git_path("index")
    tmp = index.with_name(f"index.agentbot-{uuid.uuid4().hex}")
    try:
        if index.exists():
            shutil.copyfile(index, tmp)  # a warm start: its stat data spares re-hashing files
        env = {"GIT_INDEX_FILE": str(tmp)}
        ws.run(["add", "--all"], env=env)
        yield ws.run(["write-tree"], env=env).stdout.strip()
    finally:
        tmp.unlink(missing_ok=True)


def fork_point(ws: Workspace, base: str) -> str:
    """Where HEAD left `base`, so commits base gained since are not counted as ours."""
    got = ws.run(["merge-base", base, "HEAD"], check=False)
    return got.stdout.strip() if got.returncode == 0 else ws.rev(base)


_DIFF = ("diff", "--no-ext-diff", "--no-textconv")


def diff_against(ws: Workspace, base: str, *opts: str) -> str:
    """`git diff *opts` from the fork point with `base` to the working tree snapshot."""
    with snapshot(ws) as tree:
        return ws.git(*_DIFF, *opts, fork_point(ws, base), tree, "--")


def file_changes(ws: Workspace, base: str) -> list[FileChange]:
    """Per-file line counts and status since `base`, working tree included."""
    with snapshot(ws) as tree:
        fork = fork_point(ws, base)
        names = ws.git(*_DIFF, "-M", "-z", "--name-status", fork, tree, "--")
        counts = ws.git(*_DIFF, "-M", "-z", "--numstat", fork, tree, "--")
    return merge_changes(parse_name_status(names), parse_numstat(counts))


def paths_of(out: str) -> list[str]:
    """The sorted paths of `--name-only -z` output."""
    return sorted(p for p in out.split("\0") if p)
