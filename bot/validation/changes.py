"""The change under validation, and keeping every stage to it (git plumbing the bot runs).

`changed_files` is what the stages are scoped to: files that differ from the base commit,
tracked or new. `TreeGuard` takes a snapshot of the working tree before a stage and puts
back afterwards whatever the stage had no business changing: tracked files outside the
change are checked out again, the change's own files get their content back unless the
stage was an auto-fix, and files a stage created are deleted (or, for setup, whose
installs belong in the checkout, kept out of git through `.git/info/exclude`). Build and
cache litter is excluded from the start, so it never lands in a commit.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from bot import treefs
from bot.git import runner
from bot.validation.compare import LineMap, parse_unified_zero

_GIT_TIMEOUT = 300.0
LITTER = (
    "*.egg-info/",
    "__pycache__/",
    "*.py[cod]",
    ".pytest_cache/",
    ".mypy_cache/",
    ".ruff_cache/",
    ".tox/",
    ".nox/",
    ".eggs/",
    ".venv/",
    "node_modules/",
    ".coverage",
    ".coverage.*",
    "htmlcov/",
)
"""Never part of a change: installs, caches and coverage data (written to .git/info/exclude)."""
_MARK = "# agentbot: build litter and installs, never committed"


def git(repo: Path, *args: str, check: bool = True) -> str:
    """Run one of the bot's own (hardened) git commands in `repo`; stdout."""
    # No hooks, filters, fsmonitor or planted config: bot.git.runner ignores them all.
    proc = runner.run(args, cwd=repo, timeout=_GIT_TIMEOUT, check=False)
    if check and proc.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)}: {proc.stderr.strip()}")
    return proc.stdout


def changed_files(repo: Path, base: str) -> list[str]:
    """Files that differ from `base` and still exist: modified, added, and new untracked ones."""
    tracked = git(repo, "diff", "--name-only", "-z", "--no-renames", "--no-ext-diff", base)
    untracked = git(repo, "ls-files", "--others", "--exclude-standard", "-z")
    names = [n for n in (tracked + untracked).split("\0") if n]
    return sorted(n for n in dict.fromkeys(names) if (repo / n).is_file())


def tree_files(repo: Path) -> list[str]:
    """Every file of the working tree git sees: tracked and untracked, not ignored."""
    out = git(repo, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    return sorted(n for n in dict.fromkeys(out.split("\0")) if n and (repo / n).is_file())


def line_maps(repo: Path, base: str, files: Iterable[str]) -> dict[str, LineMap]:
    """How the change moved the lines of each file since `base`."""
    paths = list(files)
    if not paths:
        return {}
    diff = git(
        repo, "diff", "-U0", "--no-renames", "--no-ext-diff", "--no-textconv", base, "--", *paths
    )
    return parse_unified_zero(diff)


def is_checkout(repo: Path) -> bool:
    """True if `repo` is a git working tree (validation also runs on plain folders)."""
    return git(repo, "rev-parse", "--is-inside-work-tree", check=False).strip() == "true"


def exclude(repo: Path, patterns: Iterable[str]) -> None:
    """Add patterns to the checkout's `.git/info/exclude` (local, never committed)."""
    if not is_checkout(repo):
        return
    path = Path(git(repo, "rev-parse", "--git-path", "info/exclude").strip())
    path = path if path.is_absolute() else repo / path
    text = path.read_text() if path.is_file() else ""
    lines = set(text.splitlines())
    new = [p for p in patterns if p not in lines]
    if not new:
        return
    if _MARK not in lines:
        new.insert(0, _MARK)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        text + ("" if not text or text.endswith("\n") else "\n") + "\n".join(new) + "\n"
    )


def _literal(path: str) -> str:
    """`path` as a gitignore pattern matching only itself (a trailing `/` kept a folder's)."""
    folder = path.endswith("/")
    body = re.sub(r"([\\*?\[\]!# ])", r"\\\1", path.rstrip("/"))
    return body + ("/" if folder else "")


@dataclass
class Snapshot:
    """The working tree's dirty paths (status code) and their content before a stage."""

    status: dict[str, str]
    content: dict[str, bytes | None] = field(default_factory=dict)


@dataclass
class Settled:
    """What a stage left that was put back: restored files, and files it modified in the change."""

    restored: list[str] = field(default_factory=list)
    modified: list[str] = field(default_factory=list)


class TreeGuard:
    """Snapshots of one checkout, to undo what a stage should not have done."""

    def __init__(self, repo: Path) -> None:
        self.repo = repo
        self.active = is_checkout(repo)

    def status(self) -> dict[str, str]:
        """Path -> two-letter porcelain status of every path that differs from HEAD."""
        if not self.active:
            return {}
        out = git(
            self.repo, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames"
        )
        return {entry[3:]: entry[:2] for entry in out.split("\0") if len(entry) > 3}

    def snapshot(self) -> Snapshot:
        """The dirty paths and their bytes (None for a deleted file)."""
        status = self.status()
        return Snapshot(status=status, content={p: self._read(p) for p in status})

    def settle(
        self, before: Snapshot, *, keep: Collection[str] = (), setup: bool = False
    ) -> Settled:
        """Put back what changed since `before`, except edits to `keep`; setup's new files stay."""
        settled = Settled()
        if not self.active:
            return settled
        after = self.status()
        created = [p for p, code in after.items() if p not in before.status and code == "??"]
        if setup:
            tops = {p: self._top_new(p, before.status) for p in created}
            for path, top in tops.items():
                if "\n" in top or "\r" in top:  # no exclude line can name it: not kept
                    self._remove(path)
            lines = {f"/{_literal(t)}" for t in tops.values() if "\n" not in t and "\r" not in t}
            exclude(self.repo, sorted(lines))
        else:
            # First, so that a link a stage put where a folder was is gone before restoring.
            for path in created:
                self._remove(path)
        for path in sorted(set(after) | set(before.status)):
            if path not in before.status:
                if path in keep and after[path][1] == "M":  # a clean file a fixer may fix
                    settled.modified.append(path)
                elif after[path] != "??":  # a clean tracked file the stage modified or deleted
                    git(self.repo, "checkout", "-q", "--", path, check=False)
                    settled.restored.append(path)
                continue
            old = before.content.get(path)
            if self._read(path) == old:
                continue
            if path in keep:
                settled.modified.append(path)
                continue
            self._write(path, old)
            settled.restored.append(path)
        return settled

    def restore(self, before: Mapping[str, bytes | None], paths: Iterable[str]) -> None:
        """Write `paths` back to the content `before` held (undoing an auto-fix)."""
        for path in paths:
            self._write(path, before.get(path))

    def _top_new(self, path: str, before: Mapping[str, str]) -> str:
        """The outermost directory of `path` holding no tracked file and nothing of the change."""
        parts = path.split("/")
        for depth in range(1, len(parts)):
            prefix = "/".join(parts[:depth]) + "/"
            if any(p.startswith(prefix) for p in before):
                continue
            if not git(self.repo, "ls-files", "-z", "--", prefix).strip("\0"):
                return prefix
        return path

    def _read(self, rel: str) -> bytes | None:
        # Never through a link: a stage may have turned a folder on the way into one.
        found = treefs.kind(self.repo, rel)
        if found == "link":
            return b"symlink:" + treefs.readlink(self.repo, rel).encode()
        if found != "file":
            return None if found in ("missing", "dir") else b"special:"
        try:
            return treefs.read_bytes(self.repo, rel)
        except treefs.UnsafePath:
            stat = (self.repo / rel).lstat()
            return f"large:{stat.st_size}:{stat.st_mtime_ns}".encode()

    def _write(self, rel: str, content: bytes | None) -> None:
        if content is None:
            self._remove(rel)
        elif content.startswith(b"symlink:"):
            treefs.symlink(self.repo, rel, content.removeprefix(b"symlink:").decode())
        elif not content.startswith((b"special:", b"large:")):
            treefs.write_bytes(self.repo, rel, content)
        # A special or huge file cannot be put back; the outbound limits refuse it anyway.

    def _remove(self, rel: str) -> None:
        # Empty directories the stage made go too (git never lists them).
        treefs.remove(self.repo, rel)
