"""An agent's moves of HEAD (commits, resets, another branch) are undone, its changes kept."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from bot.git import Workspace
from bot.workflows.steps.head_guard import guarded


def git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=root, check=True, capture_output=True, text=True
    ).stdout


def repo(tmp: Path, *, commit: bool = True) -> Workspace:
    root = tmp / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "a.py").write_text("A = 1\n")
    ws = Workspace(root)
    if commit:
        ws.commit("init")
    return ws


def agent(root: Path, *shell: str) -> str:
    """What an agent's bash does: edit, then its own git commands."""
    (root / "a.py").write_text("A = 2\n")
    for line in shell:
        subprocess.run(line, shell=True, cwd=root, check=True, capture_output=True)
    return "done"


COMMIT = "git -c user.name=x -c user.email=x@x commit -qam 'forged' --allow-empty"


@pytest.mark.parametrize(
    "shell",
    [
        (COMMIT, COMMIT),
        ("git checkout -q -b other", COMMIT),
        (COMMIT, "git checkout -q --detach HEAD"),
    ],
)
def test_an_agents_commits_are_undone_and_its_changes_kept(
    tmp_path: Path, shell: tuple[str, ...]
) -> None:
    ws = repo(tmp_path)
    before = ws.head_sha()
    assert guarded(ws, "the tester agent", lambda: agent(ws.path, *shell)) == "done"
    assert (ws.head_sha(), ws.current_branch()) == (before, "main")
    assert (ws.path / "a.py").read_text() == "A = 2\n"
    assert "a.py" in git(ws.path, "status", "--porcelain")


def test_a_first_commit_on_an_unborn_branch_is_undone(tmp_path: Path) -> None:
    ws = repo(tmp_path, commit=False)
    guarded(ws, "the tester agent", lambda: agent(ws.path, "git add -A", COMMIT))
    assert not ws.succeeds("rev-parse", "--verify", "--quiet", "HEAD")
    assert (ws.path / "a.py").read_text() == "A = 2\n"


def test_a_run_that_raises_is_undone_too(tmp_path: Path) -> None:
    ws = repo(tmp_path)
    before = ws.head_sha()

    def broken() -> None:
        agent(ws.path, COMMIT)
        raise RuntimeError("budget")

    with pytest.raises(RuntimeError):
        guarded(ws, "the tester agent", broken)
    assert ws.head_sha() == before
