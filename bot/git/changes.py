"""What changed against a base, working tree included: snapshots and diffs."""

from __future__ import annotations

import contextlib
import shutil
import uuid
from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bot.git.workspace import Workspace


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


def paths_of(out: str) -> list[str]:
    """The sorted paths of `--name-only -z` output."""
    return sorted(p for p in out.split("\0") if p)


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
