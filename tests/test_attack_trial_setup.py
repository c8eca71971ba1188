"""Attacker trial on setup and what later jobs inherit from it: a hostile repository and a
prompt-injected model, with real git, real uv and the real bubblewrap sandbox.

Every test asserts the SAFE behaviour. A test marked xfail(strict=True) is an attack this
trial reached: it fails today and will XPASS (and so fail the run) once the defence lands.
"""

from __future__ import annotations

import shlex
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.config import ValidationConfig
from bot.sandbox import Sandbox, SandboxPolicy, sandbox_status
from bot.tools.changes import ChangeTracker
from bot.tools.shell import run_bash
from bot.validation import env_reuse, prepare
from bot.validation.changes import TreeGuard
from bot.validation.runner import run_command
from tests.test_validation import (
    BACKEND,
    CODE,
    PYPROJECT,
    TESTS,
    build_wheelhouse,
    git,
    offline_env,
    write,
)

needs_bwrap = pytest.mark.skipif(
    not sandbox_status().ok, reason=f"bubblewrap not usable: {sandbox_status().reason}"
)
pytestmark = [needs_bwrap, pytest.mark.slow]


@pytest.fixture(scope="module")
def base_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return offline_env(build_wheelhouse(tmp_path_factory.mktemp("wheelhouse")))


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture
def sandbox(data: Path) -> Iterator[Sandbox]:
    """The job's sandbox as a worker makes it: the data dir hidden, App mode."""
    policy = SandboxPolicy(root=data / "sandbox", hidden=(data,), app=True, host_home=Path.home())
    with policy.open() as box:
        yield box


def _origin(root: Path, files: dict[str, str], gitlinks: tuple[str, ...] = ()) -> Path:
    """A bare origin holding `files` (and gitlinks at `gitlinks`, as a submodule leaves)."""
    src = root / "src-demo"
    src.mkdir(parents=True)
    git(src, "init", "-q", "-b", "main")
    write(src, files)
    git(src, "add", "-A")
    for path in gitlinks:
        git(src, "update-index", "--add", "--cacheinfo", f"160000,{'1' * 40},{path}")
    git(src, "commit", "-q", "-m", "demo")
    bare = root / "demo.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(src), str(bare)], check=True)
    subprocess.run(["git", "-C", str(bare), "symbolic-ref", "HEAD", "refs/heads/main"], check=True)
    return bare


def _clone(bare: Path, ws: Path) -> Path:
    """A job's workspace, as open_workspace makes it: a fresh clone, origin/HEAD pinned."""
    if ws.exists():
        subprocess.run(["rm", "-rf", str(ws)], check=True)
    subprocess.run(["git", "clone", "-q", str(bare), str(ws)], check=True)
    git(ws, "remote", "set-head", "origin", "main")
    return ws


DEMO = {"pyproject.toml": PYPROJECT, "_build/backend.py": BACKEND,
        "src/demo/__init__.py": CODE, "tests/test_demo.py": TESTS}  # fmt: skip


# --- 1. a nested repository's config runs in the bot's own git, outside the sandbox -----------


def _plant_nested_repo(escaped: Path) -> str:
    """Shell (run in the sandbox) that makes `vendor/lib` a repository whose clean filter
    writes `escaped`: a path the sandbox cannot see, so only the bot's own git can write it."""
    filt = shlex.quote(f"sh -c 'touch {escaped}; cat'")
    return (
        "set -e; rm -rf vendor/lib; mkdir -p vendor/lib; cd vendor/lib; git init -q .;"
        " echo hello > a; echo '* filter=x' > .gitattributes; git add a .gitattributes;"
        " git -c user.name=m -c user.email=m@m commit -qm s;"
        f" git config filter.x.clean {filt};"
        # Same size, another mtime: git must hash the file again, through the filter.
        " touch -d 2001-01-01 a"
    )


@pytest.mark.xfail(
    strict=True,
    reason="the bot's `git status` after the agent's bash recurses into a gitlink whose .git the"
    " agent made, and runs that repository's filter.x.clean outside the sandbox",
)
def test_attack_agent_bash_plants_a_nested_repo_under_a_gitlink(
    tmp_path: Path, data: Path, sandbox: Sandbox
) -> None:
    bare = _origin(tmp_path, {"app.py": "x = 1\n"}, gitlinks=("vendor/lib",))
    ws = _clone(bare, data / "workspaces" / "octo__demo-issue-1")
    escaped = tmp_path / "escaped-from-agent-bash"
    tracker = ChangeTracker(ws)
    before = tracker.snapshot()
    run = run_bash(_plant_nested_repo(escaped), cwd=ws, env={"PATH": "/usr/bin:/bin"},
                   timeout=60, cap=10_000, sandbox=sandbox)  # fmt: skip
    assert run.exit_code == 0, run.output
    assert not escaped.exists()  # the sandbox could not write it itself
    tracker.changed(before, tracker.snapshot())  # what the bash tool does after every call
    assert not escaped.exists(), "the nested repository's filter ran in the bot's process tree"


@pytest.mark.xfail(
    strict=True,
    reason="a hostile repository's build backend (setup, in the sandbox) plants vendor/lib/.git;"
    " the TreeGuard's `git status` after setup runs its clean filter outside the sandbox",
)
def test_attack_setup_plants_a_nested_repo_under_a_gitlink(
    tmp_path: Path, data: Path, sandbox: Sandbox, base_env: dict[str, str]
) -> None:
    escaped = tmp_path / "escaped-from-setup"
    plant = _plant_nested_repo(escaped)
    backend = BACKEND.replace(
        "def build_editable(",
        f"import subprocess\n\nsubprocess.run({plant!r}, shell=True, cwd='.')\n\n\n"
        "def build_editable(",
    )
    files = {**DEMO, "_build/backend.py": backend}
    bare = _origin(tmp_path, files, gitlinks=("vendor/lib",))
    ws = _clone(bare, data / "workspaces" / "octo__demo-issue-2")
    prepare(ws, ValidationConfig(), data_dir=data, env=base_env, sandbox=sandbox)
    assert (ws / "vendor/lib/.git").is_dir()  # the backend did run, in the sandbox
    assert not escaped.exists(), "the nested repository's filter ran in the bot's process tree"


@pytest.mark.xfail(
    strict=True,
    reason="env_reuse.trusted() runs `git status --ignore-submodules=none`, entering the"
    " planted nested repository and running its filter outside the sandbox",
)
def test_attack_trust_check_enters_a_planted_nested_repo(
    tmp_path: Path, data: Path, sandbox: Sandbox
) -> None:
    bare = _origin(tmp_path, {"app.py": "x = 1\n"}, gitlinks=("vendor/lib",))
    ws = _clone(bare, data / "workspaces" / "octo__demo-issue-3")
    escaped = tmp_path / "escaped-from-trust"
    run = run_bash(_plant_nested_repo(escaped), cwd=ws, env={"PATH": "/usr/bin:/bin"},
                   timeout=60, cap=10_000, sandbox=sandbox)  # fmt: skip
    assert run.exit_code == 0, run.output
    env_reuse.trusted(ws)
    assert not escaped.exists(), "the nested repository's filter ran in the bot's process tree"


def test_attack_stage_guard_does_not_enter_a_repo_without_a_gitlink(
    tmp_path: Path, data: Path, sandbox: Sandbox
) -> None:
    """Without a gitlink in the index (the agent cannot write .git), a nested repository is an
    untracked folder: git lists it and does not run anything of it."""
    bare = _origin(tmp_path, {"app.py": "x = 1\n"})
    ws = _clone(bare, data / "workspaces" / "octo__demo-issue-4")
    escaped = tmp_path / "escaped-without-gitlink"
    run = run_bash(_plant_nested_repo(escaped), cwd=ws, env={"PATH": "/usr/bin:/bin"},
                   timeout=60, cap=10_000, sandbox=sandbox)  # fmt: skip
    assert run.exit_code == 0, run.output
    ChangeTracker(ws).snapshot()
    TreeGuard(ws).snapshot()
    env_reuse.trusted(ws)
    assert not escaped.exists()
