"""Which files a bash command changed: `git status` before and after, or an mtime scan.

In a git work tree the snapshot is every path `git status` lists (modified, added,
deleted, untracked; ignored files are left out) with its size and mtime; a file is changed
when it appears, disappears or its stat moves between two snapshots. Outside git every
file is stat'ed. Tool caches (`__pycache__`, `.pytest_cache`…) never count as changes.
"""

from __future__ import annotations

import os
from pathlib import Path

from bot.git import runner

Snapshot = dict[str, tuple[int, int]]

IGNORED_PARTS = frozenset(
    {
        ".git",
        "__pycache__",
        ".pytest_cache",
        ".mypy_cache",
        ".ruff_cache",
        ".hypothesis",
        "node_modules",
        ".venv",
        ".tox",
    }
)
MAX_SCAN_FILES = 50_000


def _stat(path: Path) -> tuple[int, int]:
    try:
        st = path.lstat()
    except OSError:
        return (-1, -1)  # deleted
    return (st.st_mtime_ns, st.st_size)


def _ignored(rel: str) -> bool:
    return any(part in IGNORED_PARTS for part in rel.split("/"))


class ChangeTracker:
    """Snapshots a workspace so that two snapshots tell which files changed in between."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._prefix: str | None = None
        self._git: bool | None = None

    def _run(self, *args: str) -> runner.Completed:
        # The bot's own git (hardened: nothing the agent planted runs). Read-only status:
        # never take index.lock while the agent's own git may run.
        return runner.run(
            list(args),
            cwd=self.root,
            timeout=120,
            env={"GIT_OPTIONAL_LOCKS": "0"},
            check=False,
        )

    def _git_prefix(self) -> str | None:
        """The workspace's path inside its repository, or None outside git."""
        if self._git is None:
            proc = self._run("rev-parse", "--show-prefix")
            self._git = proc.returncode == 0
            self._prefix = proc.stdout.strip() if self._git else None
        return self._prefix

    def snapshot(self) -> Snapshot:
        """The state to compare: git status entries, or every file's stat."""
        prefix = self._git_prefix()
        if prefix is not None:
            snap = self._git_snapshot(prefix)
            if snap is not None:
                return snap
        return self._scan()

    def _git_snapshot(self, prefix: str) -> Snapshot | None:
        proc = self._run("status", "--porcelain=v1", "-z", "--untracked-files=all", "--", ".")
        if proc.returncode != 0:
            return None
        snap: Snapshot = {}
        fields = proc.stdout.split("\0")
        i = 0
        while i < len(fields):
            entry = fields[i]
            i += 1
            if len(entry) < 4:
                continue
            code, path = entry[:2], entry[3:]
            if code[0] in "RC":
                i += 1  # the next field is the rename's source
            rel = path.removeprefix(prefix)  # porcelain paths are relative to the repo root
            if not _ignored(rel):
                snap[rel] = _stat(self.root / rel)
        return snap

    def _scan(self) -> Snapshot:
        snap: Snapshot = {}
        for dirpath, dirnames, filenames in os.walk(self.root):
            dirnames[:] = [d for d in dirnames if d not in IGNORED_PARTS]
            base = Path(dirpath)
            for name in filenames:
                rel = (base / name).relative_to(self.root).as_posix()
                snap[rel] = _stat(base / name)
                if len(snap) >= MAX_SCAN_FILES:
                    return snap
        return snap

    @staticmethod
    def changed(before: Snapshot, after: Snapshot) -> set[Path]:
        """Paths that appeared, disappeared, or changed size or mtime between snapshots."""
        keys = before.keys() | after.keys()
        return {Path(k) for k in keys if before.get(k) != after.get(k)}
