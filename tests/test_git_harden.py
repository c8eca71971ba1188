"""The bot's own git ignores what an agent can plant in `.git` and in HOME (DESIGN §13).

Each test plants what a prompt-injected agent with a shell (and no sandbox) could write,
then drives the bot's git commands (add, commit, status, diff, rev-parse, log, checkout,
push) and checks that nothing planted ran or changed what the bot saw.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from bot.config import Limits
from bot.git import Workspace, clone
from bot.outbound.guard import PushGuard, worktree_violations
from tests.fakes.gitrepo import branch_sha, file_url, git, make_remote, read_file

FILES = {"app.py": "x = 1\n", "README.md": "# demo\n"}
BRANCH = "agentbot/fix-issue-1"


@pytest.fixture
def remote(tmp_path: Path) -> Path:
    return make_remote(tmp_path, FILES)


@pytest.fixture
def ws(remote: Path, tmp_path: Path) -> Workspace:
    return clone(file_url(remote), tmp_path / "work")


def plant_script(ws: Workspace, rel: str, marker: Path) -> str:
    """An executable that records that it ran; returns its path."""
    path = ws.path / ".git" / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'#!/bin/sh\necho "$0 $*" >> "{marker}"\ncat\n')
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return str(path)


def drive(ws: Workspace) -> str:
    """What a job does with git after the agent: status, diff, add, commit, push."""
    ws.prepare_branch(BRANCH, base="origin/main")
    (ws.path / "app.py").write_text("x = 2\n")
    assert ws.has_changes()
    ws.diff("origin/main")
    base = ws.rev("origin/main")
    ws.push_guard = PushGuard(base=base)  # the outbound judge's git runs hardened too
    assert worktree_violations(ws, base, Limits()) == []
    sha = ws.commit("fix: two")
    ws.push(BRANCH)
    ws.git("log", "--oneline", "-3")
    ws.checkout("main")
    ws.checkout(BRANCH)
    return sha


def test_planted_hooks_fsmonitor_filters_and_aliases_never_run(
    ws: Workspace, remote: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "ran"
    for name in ("pre-commit", "post-commit", "post-checkout", "pre-push", "reference-transaction"):
        plant_script(ws, f"hooks/{name}", marker)
    evil = plant_script(ws, "evil", marker)
    git(ws.path, "config", "core.fsmonitor", evil)
    git(ws.path, "config", "filter.evil.clean", evil)
    git(ws.path, "config", "filter.evil.smudge", evil)
    git(ws.path, "config", "filter.evil.process", evil)
    git(ws.path, "config", "diff.evil.textconv", evil)
    git(ws.path, "config", "core.pager", evil)
    git(ws.path, "config", "core.sshCommand", evil)
    (ws.path / ".git" / "info" / "attributes").write_text("* filter=evil diff=evil\n")
    (ws.path / ".gitattributes").write_text("*.py filter=evil\n")
    sha = drive(ws)
    assert not marker.exists(), marker.read_text()
    # The content pushed is the file as written, not a filter's output.
    assert read_file(remote, BRANCH, "app.py") == "x = 2\n"
    assert branch_sha(remote, BRANCH) == sha
    left = git(ws.path, "config", "--local", "--name-only", "--list").split()
    assert not {"core.fsmonitor", "filter.evil.clean", "core.pager", "core.sshcommand"} & set(left)


def test_a_planted_global_config_is_ignored(
    ws: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = tmp_path / "ran"
    evil = plant_script(ws, "evil", marker)
    home = tmp_path / "home"
    (home / ".config" / "git").mkdir(parents=True)
    trace = tmp_path / "trace2.json"
    planted = (
        f"[core]\n\thooksPath = {ws.path / '.git' / 'hooks'}\n\tfsmonitor = {evil}\n"
        f'[filter "evil"]\n\tclean = {evil}\n\tsmudge = {evil}\n'
        f"[trace2]\n\teventTarget = {trace}\n\tenvVars = GIT_CONFIG_VALUE_2,GIT_CONFIG_VALUE_9\n"
    )
    (home / ".gitconfig").write_text(planted)
    (home / ".config" / "git" / "config").write_text(planted)
    (home / ".config" / "git" / "attributes").write_text("* filter=evil\n")
    plant_script(ws, "hooks/pre-commit", marker)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    drive(ws)
    assert not marker.exists()
    assert not trace.exists()


def test_replace_objects_and_grafts_do_not_change_what_the_bot_sees(
    ws: Workspace, tmp_path: Path
) -> None:
    base = ws.head_sha()
    # A fake base commit with other content, swapped in for the real one.
    (ws.path / "README.md").write_text("# fake\n")
    git(ws.path, "add", "README.md")
    git(ws.path, "commit", "-q", "-m", "fake")
    fake = git(ws.path, "rev-parse", "HEAD").strip()
    git(ws.path, "reset", "-q", "--hard", base)
    git(ws.path, "replace", base, fake)
    (ws.path / ".git" / "info" / "grafts").write_text(f"{base}\n")
    assert git(ws.path, "show", f"{base}:README.md") == "# fake\n"  # plain git is fooled
    assert ws.git("show", f"{base}:README.md") == "# demo\n"
    assert ws.rev("HEAD") == base
    assert ws.changed_files(base) == []


def test_a_planted_worktree_or_include_is_removed(ws: Workspace, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "stolen.txt").write_text("private\n")
    included = tmp_path / "included.config"
    included.write_text(f"[core]\n\tworktree = {elsewhere}\n")
    git(ws.path, "config", "include.path", str(included))
    git(ws.path, "config", "core.worktree", str(elsewhere))
    assert ws.changed_files("HEAD") == []
    assert "stolen.txt" not in ws.git("status", "--porcelain")
    left = git(ws.path, "config", "--local", "--name-only", "--list").split()
    assert "core.worktree" not in left and "include.path" not in left


def test_opening_a_checkout_deletes_the_credentials_file_checkout_v6_includes(
    remote: Path, tmp_path: Path
) -> None:
    checkout = tmp_path / "checkout"
    git(tmp_path, "clone", "--quiet", remote.as_uri(), str(checkout))
    runner_temp = tmp_path / "_temp"
    runner_temp.mkdir()
    creds = runner_temp / "git-credentials-0b4c2f9e-6a1d-4c55-9a39-2f0d8f3a1e77.config"
    creds.write_text(
        '[http "https://github.com/"]\n\textraheader = AUTHORIZATION: basic c2VjcmV0\n'
    )
    git(checkout, "config", f"includeIf.gitdir:{checkout / '.git'}.path", str(creds))
    Workspace(checkout, token="ghs_" + "t" * 36)
    assert not creds.exists()
    assert "includeif" not in git(checkout, "config", "--local", "--list").lower()


def test_git_children_run_with_global_and_system_config_off(
    ws: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text("[alias]\n\tlol = log --oneline\n")
    monkeypatch.setenv("HOME", str(home))
    assert ws.run(["lol"], check=False).returncode != 0
    assert os.environ["HOME"] == str(home)
