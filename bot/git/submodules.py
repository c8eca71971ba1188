"""A worktree's submodules, checked out from the clones the workspace already has.

`git worktree add` leaves every submodule directory empty, so a base or proof worktree of a
repository whose tests read a submodule fails before any test runs. The workspace's setup
has initialised them (`git submodule update --init --recursive`); each is checked out in
the worktree at the commit the worktree's commit records, from that local clone: no
network, and nothing the agent may have edited in the workspace's copy.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from bot.git import runner

GITLINK = "160000"


def gitlinks(repo: Path, commit: str, *, timeout: float) -> list[tuple[str, str]]:
    """(path, recorded commit) of each submodule `commit` records in `repo`."""
    args = ["ls-tree", "-r", "-z", "--full-tree", commit]
    out = runner.run(args, cwd=repo, timeout=timeout, check=False).stdout
    links = []
    for entry in out.split("\0"):
        meta, _, path = entry.partition("\t")
        mode, _, rest = meta.partition(" ")
        if mode == GITLINK and path:
            links.append((path, rest.split()[-1]))
    return links


def fill(source: Path, dest: Path, commit: str, *, timeout: float) -> list[str]:
    """Check out in `dest` (a worktree of `commit`) each submodule `source` has a clone of,
    at the commit `commit` records, nested ones too; the paths filled. A submodule git
    cannot check out is left empty, as before (only a timeout raises)."""
    filled: list[str] = []
    for path, recorded in gitlinks(source, commit, timeout=timeout):
        clone, target = source / path, dest / path
        if not (clone / ".git").exists() or not _has(clone, recorded, timeout):
            continue  # not initialised here (or at another commit): left empty, as a clone is
        if not _check_out(clone, recorded, target, timeout):
            continue
        filled.append(path)
        inner = fill(clone, target, recorded, timeout=timeout)
        filled.extend(f"{path}/{p}" for p in inner)
    return filled


def _check_out(clone: Path, commit: str, target: Path, timeout: float) -> bool:
    """The files of `commit` in `clone` written under `target`; False if git failed."""
    with tempfile.TemporaryDirectory(prefix="agentbot-index-") as tmp:
        # An index of our own: the clone's index and work tree stay as they are.
        env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
        read = runner.run(["read-tree", commit], cwd=clone, timeout=timeout, env=env, check=False)
        if read.returncode != 0:
            return False
        target.mkdir(parents=True, exist_ok=True)
        checkout = ["checkout-index", "--all", "--force", f"--prefix={target}/"]
        done = runner.run(checkout, cwd=clone, timeout=timeout, env=env, check=False)
        return done.returncode == 0


def _has(clone: Path, commit: str, timeout: float) -> bool:
    args = ["cat-file", "-e", f"{commit}^{{commit}}"]
    return runner.run(args, cwd=clone, timeout=timeout, check=False).returncode == 0
