"""Base and proof worktrees get the submodules the workspace has, at the recorded commits.

`git worktree add` leaves a submodule's directory empty; a repository whose tests read a
submodule (tomlkit's toml-test) then fails on the base before any test runs, and a fix of
it cannot be proven. Real git throughout, local file remotes.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from bot.clock import SystemClock
from bot.git import Workspace, submodules
from bot.validation.baseline import BaseTree
from bot.validation.environment import StageEnv
from bot.validation.profiles import detect_profile
from bot.workflows.steps.proof import trees

WHO = ["-c", "user.name=t", "-c", "user.email=t@t", "-c", "protocol.file.allow=always"]


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *WHO, *args], cwd=cwd, check=True, capture_output=True, text=True)
    return done.stdout.strip()


def repo(root: Path, files: dict[str, str]) -> Path:
    """A repository with one commit of `files`."""
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "files")
    return root


def workspace(tmp: Path) -> tuple[Path, str]:
    """A clone of a project whose tests/data submodule (with a nested one) is recorded at
    a commit its remote has moved past, submodules initialised as setup does; and HEAD."""
    inner = repo(tmp / "inner", {"inner.txt": "deep\n"})
    data = repo(tmp / "data", {"numbers.txt": "1 2 3\n"})
    git(data, "submodule", "add", "-q", str(inner), "deep")
    git(data, "commit", "-qm", "deep")
    recorded = git(data, "rev-parse", "HEAD")
    (data / "numbers.txt").write_text("4 5 6\n")  # later: the project does not record it
    git(data, "commit", "-qam", "later")
    app = repo(tmp / "app", {"README": "app\n"})
    git(app, "submodule", "add", "-q", str(data), "tests/data")
    git(app / "tests" / "data", "checkout", "-q", recorded)
    git(app, "add", "-A")
    git(app, "commit", "-qm", "data")
    ws = tmp / "ws"
    git(tmp, "clone", "-q", str(app), str(ws))
    git(ws, "submodule", "update", "--init", "--recursive", "-q")
    return ws, git(ws, "rev-parse", "HEAD")


def test_a_worktree_gets_each_submodule_at_the_commit_its_commit_records(
    tmp_path: Path,
) -> None:
    ws, head = workspace(tmp_path)
    (ws / "tests/data/numbers.txt").write_text("edited\n")  # the agent's copy: not the base's
    wt = tmp_path / "wt"
    git(ws, "worktree", "add", "-q", "--detach", str(wt), head)
    assert not any((wt / "tests/data").iterdir())
    filled = submodules.fill(ws, wt, head, timeout=60)
    assert filled == ["tests/data", "tests/data/deep"]
    assert (wt / "tests/data/numbers.txt").read_text() == "1 2 3\n"
    assert (wt / "tests/data/deep/inner.txt").read_text() == "deep\n"
    # The workspace's clone is as it was: its index untouched, the edit still there.
    assert git(ws / "tests/data", "status", "--porcelain") == "M numbers.txt"


def test_a_submodule_the_workspace_has_not_initialised_is_left_empty(tmp_path: Path) -> None:
    ws, head = workspace(tmp_path)
    fresh = tmp_path / "fresh"
    git(tmp_path, "clone", "-q", str(ws), str(fresh))
    wt = tmp_path / "wt"
    git(fresh, "worktree", "add", "-q", "--detach", str(wt), head)
    assert submodules.fill(fresh, wt, head, timeout=60) == []
    assert not any((wt / "tests/data").iterdir())


def stage_env(ws: Path, tmp: Path) -> StageEnv:
    return StageEnv(ws, detect_profile(ws), tmp / "data-dir", dict(os.environ), None)


def test_the_base_commit_runs_with_its_submodules(tmp_path: Path) -> None:
    ws, head = workspace(tmp_path)
    base = BaseTree(stage_env(ws, tmp_path), head, timeout=60, clock=SystemClock())
    try:
        done = base.run("format", "cat tests/data/numbers.txt tests/data/deep/inner.txt")
    finally:
        base.close()
    assert done is not None and done.exit_code == 0


def test_the_proofs_trees_have_the_submodules(tmp_path: Path) -> None:
    ws, head = workspace(tmp_path)
    with trees.tree(Workspace(ws), head, stage_env(ws, tmp_path)) as path:
        assert path is not None
        assert (path / "tests/data/numbers.txt").read_text() == "1 2 3\n"
        assert (path / "tests/data/deep/inner.txt").read_text() == "deep\n"
