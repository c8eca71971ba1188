"""The test stage on the base commit, in a temporary git worktree, cached by commit SHA.

The gate fails only on tests the change broke: a test that already fails on the base
commit is reported apart and does not fail it. The base runs in a worktree of its own,
so the workspace is never touched; its result is cached as JSON under the data dir,
keyed by the commit SHA and the test command.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
from dataclasses import dataclass
from pathlib import Path

from bot.clock import Clock
from bot.git import runner as git
from bot.models import TestResult
from bot.validation.environment import StageEnv, workspace_key, write_atomic
from bot.validation.parsers import parse_test_counts
from bot.validation.runner import run_command

_GIT_TIMEOUT = 300.0


@dataclass(frozen=True)
class Baseline:
    """What the test stage did on the base commit."""

    sha: str
    tests: TestResult | None
    exit_code: int
    timed_out: bool = False
    cached: bool = False

    @property
    def failing(self) -> set[str]:
        """Ids of the tests that fail on the base commit."""
        return set(self.tests.failed_tests) if self.tests else set()


def resolve_commit(repo: Path, ref: str) -> str | None:
    """The full SHA of `ref` in `repo`, or None if it names no commit."""
    args = ["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"]
    proc = git.run(args, cwd=repo, timeout=_GIT_TIMEOUT, check=False)
    return proc.stdout.strip() if proc.returncode == 0 and proc.stdout.strip() else None


def run_baseline(
    senv: StageEnv, sha: str, *, command: str, runner: str, timeout: float, clock: Clock
) -> Baseline:
    """The base commit's failing tests, from the cache or from a run in a temporary worktree."""
    cache = senv.data_dir / "baselines" / f"{sha}.json"
    cached = _load(cache, command)
    if cached is not None:
        return cached
    tmp = senv.data_dir / "worktrees" / f"{sha[:12]}-{secrets.token_hex(4)}"
    tmp.parent.mkdir(parents=True, exist_ok=True)
    # The bot's own (hardened) git: no post-checkout hook or filter runs; the stages are the
    # only repository code we mean to run, and they run in the sandbox.
    add = git.run(
        ["worktree", "add", "--detach", "--quiet", str(tmp), sha],
        cwd=senv.repo,
        timeout=_GIT_TIMEOUT,
        check=False,
    )
    if add.returncode != 0:
        return Baseline(sha=sha, tests=None, exit_code=add.returncode)
    try:
        writable = [tmp, *(p for p in senv.writable if p != senv.repo)]
        result = run_command(
            command,
            tmp,
            env=_borrowed_env(senv, tmp),
            timeout=timeout,
            clock=clock,
            sandbox=senv.sandbox,
            writable=writable,
            readable=[senv.repo],  # its node_modules and venv are borrowed, never changed
        )
    finally:
        _remove_worktree(senv.repo, tmp)
    tests = None if result.timed_out else parse_test_counts(runner, result.output)
    base = Baseline(sha=sha, tests=tests, exit_code=result.exit_code, timed_out=result.timed_out)
    if tests is not None:
        # A timeout or an unreadable output may be a fluke: only a counted run is cached.
        doc = {
            "sha": sha,
            "command": command,
            "exit_code": result.exit_code,
            "tests": tests.model_dump(mode="json"),
        }
        write_atomic(cache, json.dumps(doc))
    return base


def _borrowed_env(senv: StageEnv, tmp: Path) -> dict[str, str]:
    """The workspace's stage environment, pointed at the base checkout's own code.

    The workspace's dependencies are borrowed rather than installed again: Python puts
    the base's sources before the workspace's editable install, JavaScript links the
    workspace's node_modules, Rust builds into a target dir of its own.
    """
    env = dict(senv.env)
    name = senv.profile.name
    if senv.profile.venv:
        env["PYTHONPATH"] = os.pathsep.join([str(tmp / "src"), str(tmp)])
    if name in ("javascript", "typescript") and (senv.repo / "node_modules").is_dir():
        link = tmp / "node_modules"
        if not link.exists():
            link.symlink_to(senv.repo / "node_modules", target_is_directory=True)
        env["PATH"] = env["PATH"].replace(
            str(senv.repo / "node_modules" / ".bin"), str(link / ".bin")
        )
    if name == "rust":
        target = senv.data_dir / "cache" / workspace_key(senv.repo) / "baseline-target"
        env["CARGO_TARGET_DIR"] = str(target)
    return env


def _remove_worktree(repo: Path, tmp: Path) -> None:
    remove = ["worktree", "remove", "--force", str(tmp)]
    git.run(remove, cwd=repo, timeout=_GIT_TIMEOUT, check=False)
    if tmp.exists():
        shutil.rmtree(tmp, ignore_errors=True)
    git.run(["worktree", "prune"], cwd=repo, timeout=_GIT_TIMEOUT, check=False)


def _load(path: Path, command: str) -> Baseline | None:
    try:
        data = json.loads(path.read_text())
        if data.get("command") != command:
            return None
        return Baseline(
            sha=data["sha"],
            tests=TestResult.model_validate(data["tests"]),
            exit_code=int(data["exit_code"]),
            cached=True,
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None
