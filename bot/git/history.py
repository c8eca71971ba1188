"""Writing history: commit (dirty index), merge, cherry-pick (seed 001 FR-024a)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from bot.errors import GitError
from bot.git.runner import IDENTITY

if TYPE_CHECKING:
    from bot.git.workspace import Workspace

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"


def commit(ws: Workspace, message: str, *, paths: list[str] | None, everything: bool) -> str:
    """Commit as the bot and return the sha; see Workspace.commit.

    No hook runs (the bot's git ignores the repository's hooks, DESIGN §13): what is
    committed is exactly what was staged, never a hook's late edit.
    """
    if paths is not None and not paths:
        raise GitError("nothing to commit: no paths given", operation="commit", recoverable=False)
    if paths is not None:
        stage_paths(ws, paths)
    elif everything:
        ws.git("add", "--all")
    if not has_staged(ws, paths):
        raise GitError("nothing to commit", operation="commit", recoverable=False)
    args = [*IDENTITY, "commit", "--cleanup=whitespace", "--file=-"]
    if paths is not None:
        # --only: git commits these paths from a temporary index and leaves every other
        # staged change staged (the stash-commit-pop of FR-024a, done by git itself, and
        # safe next to parallel worktrees, which share one refs/stash).
        args = ["--literal-pathspecs", *args, "--only", "--", *paths]
    got = ws.run(args, stdin=message, check=False)
    if got.returncode != 0:
        raise ws.error(args, got, operation="commit", hint="git refused the commit")
    return ws.head_sha()


def stage_paths(ws: Workspace, paths: Sequence[str]) -> None:
    """`git add --all` these paths: new, modified and deleted files alike."""
    # `git add` refuses a path that is neither on disk nor in the index (a deletion already
    # staged); `commit --only` still takes it from HEAD, so it is skipped here.
    known = set(ws.git("--literal-pathspecs", "ls-files", "-z", "--", *paths).split("\0"))
    addable = [p for p in paths if (ws.path / p).exists() or p in known]
    if addable:
        ws.git("--literal-pathspecs", "add", "--all", "--", *addable)


def head_or_empty(ws: Workspace) -> str:
    """HEAD, or the empty tree on a branch with no commit yet."""
    return "HEAD" if ws.succeeds("rev-parse", "--verify", "--quiet", "HEAD") else EMPTY_TREE


def has_staged(ws: Workspace, paths: Sequence[str] | None) -> bool:
    """Whether the index differs from HEAD (within `paths` if given)."""
    args = ["--literal-pathspecs", "diff", "--cached", "--quiet", head_or_empty(ws), "--"]
    return not ws.succeeds(*args, *(paths or []))


def merge(ws: Workspace, ref: str) -> None:
    """Merge `ref` into HEAD; a conflict is aborted and raised (recoverable=False)."""
    args = [*IDENTITY, "merge", "--no-edit", ref]
    got = ws.run(args, check=False)
    if got.returncode == 0:
        return
    conflicted = conflicted_paths(ws)
    if ws.succeeds("rev-parse", "--verify", "--quiet", "MERGE_HEAD"):
        ws.run(["merge", "--abort"], check=False)
    hint = f"conflict in {', '.join(conflicted)}; merge aborted" if conflicted else ""
    raise ws.error(args, got, operation="merge", recoverable=False, hint=hint)


def cherry_pick(ws: Workspace, sha: str) -> str:
    """Apply commit `sha` onto HEAD and return the new sha; a conflict is aborted and raised."""
    args = [*IDENTITY, "cherry-pick", sha]
    got = ws.run(args, check=False)
    if got.returncode == 0:
        return ws.head_sha()
    conflicted = conflicted_paths(ws)
    picking = ws.succeeds("rev-parse", "--verify", "--quiet", "CHERRY_PICK_HEAD")
    if picking:
        ws.run(["cherry-pick", "--abort"], check=False)
    if conflicted:
        hint = f"conflict in {', '.join(conflicted)}; cherry-pick aborted"
    elif picking:
        hint = "the commit is empty here (already applied?); cherry-pick aborted"
    else:
        hint = ""
    raise ws.error(args, got, operation="cherry-pick", recoverable=False, hint=hint)


def apply_changes(ws: Workspace, sha: str) -> None:
    """`cherry-pick --no-commit`; a conflict is undone (tree back at HEAD) and raised."""
    args = ["cherry-pick", "--no-commit", sha]
    got = ws.run(args, check=False)
    if got.returncode == 0:
        return
    conflicted = conflicted_paths(ws)
    ws.run(["cherry-pick", "--abort"], check=False)
    ws.git("reset", "--hard", "--quiet", "HEAD")
    hint = f"conflict in {', '.join(conflicted)}; changes not applied" if conflicted else ""
    raise ws.error(args, got, operation="cherry-pick", recoverable=False, hint=hint)


def conflicted_paths(ws: Workspace) -> list[str]:
    """Unmerged paths after a failed merge or cherry-pick."""
    out = ws.git("diff", "--name-only", "--diff-filter=U", "-z")
    return sorted({p for p in out.split("\0") if p})
