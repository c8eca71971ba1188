"""A TDD cycle's workspace checks: files an agent changed, test files kept as they were."""

from __future__ import annotations

from bot import treefs
from bot.git import Workspace
from bot.outbound.paths import TEST_PATH
from bot.tdd.runner_config import is_runner_config, runner_part

Snapshot = dict[str, tuple[str, bytes]]
"""Test or runner config file -> (`file`, its bytes) or (`link`, its target); absent files are
not in it. A runner config file counts as changed only when the runner's part of it did.

Read and put back through `bot.treefs`: an agent may leave a link where a test file was,
and the bot must neither read nor write through it."""


def is_test(path: str) -> bool:
    """A test file by the usual conventions (`tests/`, `test_*.py`, `*.test.js`, `_test.go`…)."""
    return bool(TEST_PATH.search(path)) and "__pycache__" not in path


def test_files(ws: Workspace) -> list[str]:
    """Test files in the working tree and at HEAD (tracked or new, not ignored)."""
    out = ws.git("ls-files", "-z", "--cached", "--others", "--exclude-standard")
    return sorted({p for p in out.split("\0") if p and is_test(p)})


def guarded_files(ws: Workspace) -> list[str]:
    """Test files and the test runner's configuration files (`bot.tdd.runner_config`)."""
    out = ws.git("ls-files", "-z", "--cached", "--others", "--exclude-standard")
    return sorted({p for p in out.split("\0") if p and (is_test(p) or is_runner_config(p))})


def snapshot(ws: Workspace) -> Snapshot:
    """The test files and the runner's configuration as they are now."""
    snap: Snapshot = {}
    for rel in guarded_files(ws):
        what = treefs.kind(ws.path, rel)
        if what == "file":
            snap[rel] = ("file", treefs.read_bytes(ws.path, rel))
        elif what == "link":
            snap[rel] = ("link", treefs.readlink(ws.path, rel).encode())
    return snap


def test_changes(ws: Workspace, before: Snapshot) -> list[str]:
    """Test files (and the runner's part of its config files) edited, added or deleted since
    `before`."""
    now = snapshot(ws)
    return sorted(p for p in before.keys() | now.keys() if _seen(p, before) != _seen(p, now))


def _seen(path: str, snap: Snapshot) -> tuple[str, bytes] | None:
    got = snap.get(path)
    if got is None or got[0] != "file" or is_test(path):
        return got
    return got[0], runner_part(path, got[1])


def restore(ws: Workspace, before: Snapshot, paths: list[str]) -> None:
    """Put `paths` back as `before` had them (deleting those it did not have)."""
    for rel in paths:
        was = before.get(rel)
        if was is None:
            treefs.remove(ws.path, rel, prune=False)
        elif was[0] == "link":
            treefs.symlink(ws.path, rel, was[1].decode())
        else:
            treefs.write_bytes(ws.path, rel, was[1])


def discard(ws: Workspace, paths: list[str] | None = None) -> None:
    """Undo changes since HEAD: of `paths`, or all of them (new files deleted, ignored kept)."""
    if paths is None:
        ws.reset_hard("HEAD", clean=True)
        return
    for rel in paths:
        if ws.succeeds("cat-file", "-e", f"HEAD:{rel}"):
            ws.git("checkout", "HEAD", "--", rel)
        else:
            treefs.remove(ws.path, rel, prune=False)
