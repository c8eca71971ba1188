"""A TDD cycle's workspace checks: files an agent changed, test files kept as they were."""

from __future__ import annotations

from bot.git import Workspace
from bot.outbound.paths import TEST_PATH

Snapshot = dict[str, bytes | None]
"""Test file -> its bytes (None: absent)."""


def is_test(path: str) -> bool:
    """A test file by the usual conventions (`tests/`, `test_*.py`, `*.test.js`, `_test.go`…)."""
    return bool(TEST_PATH.search(path)) and "__pycache__" not in path


def changed_paths(ws: Workspace) -> list[str]:
    """Files that differ from HEAD: modified, added, deleted, untracked (one per path)."""
    out = ws.git("status", "--porcelain", "-z", "--untracked-files=all")
    paths: list[str] = []
    entries = iter(out.split("\0"))
    for entry in entries:
        if not entry:
            continue
        if entry[0] in "RC":
            next(entries, None)  # a rename's second field is its old path
        paths.append(entry[3:])
    return paths


def test_files(ws: Workspace) -> list[str]:
    """Test files in the working tree and at HEAD (tracked or new, not ignored)."""
    out = ws.git("ls-files", "-z", "--cached", "--others", "--exclude-standard")
    return sorted({p for p in out.split("\0") if p and is_test(p)})


def snapshot(ws: Workspace) -> Snapshot:
    """The test files as they are now."""
    snap: Snapshot = {}
    for rel in test_files(ws):
        path = ws.path / rel
        snap[rel] = path.read_bytes() if path.is_file() else None
    return snap


def test_changes(ws: Workspace, before: Snapshot) -> list[str]:
    """Test files edited, added or deleted since `before`."""
    now = snapshot(ws)
    return sorted(p for p in before.keys() | now.keys() if before.get(p) != now.get(p))


def restore(ws: Workspace, before: Snapshot, paths: list[str]) -> None:
    """Put `paths` back as `before` had them (deleting those it did not have)."""
    for rel in paths:
        path = ws.path / rel
        data = before.get(rel)
        if data is None:
            path.unlink(missing_ok=True)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)


def discard(ws: Workspace, paths: list[str] | None = None) -> None:
    """Undo changes since HEAD: of `paths`, or all of them (new files deleted, ignored kept)."""
    if paths is None:
        ws.reset_hard("HEAD", clean=True)
        return
    for rel in paths:
        if ws.succeeds("cat-file", "-e", f"HEAD:{rel}"):
            ws.git("checkout", "HEAD", "--", rel)
        else:
            (ws.path / rel).unlink(missing_ok=True)
