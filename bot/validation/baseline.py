"""Any stage's command on the base commit, in a temporary git worktree, cached by commit SHA.

Only problems a change introduced fail the gate: the base commit runs the same command
(same tools, same environment, its own code) and what it reports too is pre-existing.
The base is checked out once per validation, lazily, beside the workspace (never in it)
and removed at the end; each result is cached as JSON under the data dir, keyed by the
commit SHA, the stage and the command, so a re-validation of the same base runs nothing.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from bot.clock import Clock
from bot.git import runner as git
from bot.git import submodules
from bot.models import Diagnostic, TestResult
from bot.validation.diagnostics import parse_diagnostics
from bot.validation.environment import StageEnv, workspace_key, write_atomic
from bot.validation.parsers import parse_test_counts
from bot.validation.runner import run_command

_GIT_TIMEOUT = 300.0


@dataclass(frozen=True)
class Baseline:
    """What one stage's command did on the base commit."""

    sha: str
    exit_code: int
    tests: TestResult | None = None
    diagnostics: list[Diagnostic] = field(default_factory=list)
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


def cache_path(data_dir: Path, sha: str, stage: str, command: str) -> Path:
    """Where a stage command's result on commit `sha` is cached."""
    key = hashlib.sha256(f"{stage}\0{command}".encode()).hexdigest()[:16]
    return data_dir / "baselines" / sha / f"{stage}-{key}.json"


class BaseTree:
    """The base commit, checked out on first use in a worktree of its own; `close` removes it."""

    def __init__(self, senv: StageEnv, sha: str, *, timeout: float, clock: Clock) -> None:
        self.senv, self.sha, self.timeout, self.clock = senv, sha, timeout, clock
        self.path: Path | None = None
        self.broken = False

    def exists(self, rel: str) -> bool:
        """True if the base commit has the file `rel`."""
        args = ["cat-file", "-e", f"{self.sha}:{rel}"]
        return git.run(args, cwd=self.senv.repo, timeout=_GIT_TIMEOUT, check=False).returncode == 0

    def run(self, stage: str, command: str, *, runner: str = "auto") -> Baseline | None:
        """The command's result on the base commit (cached); None if the base cannot be had."""
        cache = cache_path(self.senv.data_dir, self.sha, stage, command)
        cached = _load(cache, command)
        if cached is not None:
            return cached
        tmp = self._checkout()
        if tmp is None:
            return None
        senv = self.senv
        result = run_command(
            command,
            tmp,
            env=_borrowed_env(senv, tmp, stage),
            timeout=self.timeout,
            clock=self.clock,
            sandbox=senv.sandbox,
            writable=[tmp, *(p for p in senv.writable if p != senv.repo)],
            readable=[
                senv.repo,
                *senv.readable,
            ],  # its node_modules and venv are borrowed, never changed
        )
        roots = (tmp, self.senv.repo)
        tests = parse_test_counts(runner, result.output) if stage == "test" else None
        diagnostics = [] if stage == "test" else parse_diagnostics(result.output, roots)
        base = Baseline(
            sha=self.sha, exit_code=result.exit_code, tests=tests, diagnostics=diagnostics,
            timed_out=result.timed_out,
        )  # fmt: skip
        # A timeout or an uncounted test run may be a fluke: only those are not cached.
        if not result.timed_out and (stage != "test" or tests is not None):
            doc = {
                "sha": self.sha,
                "stage": stage,
                "command": command,
                "exit_code": result.exit_code,
                "tests": tests.model_dump(mode="json") if tests else None,
                "diagnostics": [d.model_dump(mode="json") for d in diagnostics],
            }
            write_atomic(cache, json.dumps(doc))
        return base

    def _checkout(self) -> Path | None:
        if self.path is not None or self.broken:
            return self.path
        tmp = self.senv.data_dir / "worktrees" / f"{self.sha[:12]}-{secrets.token_hex(4)}"
        tmp.parent.mkdir(parents=True, exist_ok=True)
        # The bot's own (hardened) git: no post-checkout hook or filter runs; the stages are the
        # only repository code we mean to run, and they run in the sandbox.
        args = ["worktree", "add", "--detach", "--quiet", str(tmp), self.sha]
        add = git.run(args, cwd=self.senv.repo, timeout=_GIT_TIMEOUT, check=False)
        if add.returncode != 0:
            self.broken = True
            return None
        # A worktree leaves the submodules empty: the workspace's clones of them fill them.
        submodules.fill(self.senv.repo, tmp, self.sha, timeout=_GIT_TIMEOUT)
        self.path = tmp
        return tmp

    def close(self) -> None:
        """Remove the base worktree, if one was made."""
        if self.path is None:
            return
        repo = self.senv.repo
        remove = ["worktree", "remove", "--force", str(self.path)]
        git.run(remove, cwd=repo, timeout=_GIT_TIMEOUT, check=False)
        if self.path.exists():
            shutil.rmtree(self.path, ignore_errors=True)
        git.run(["worktree", "prune"], cwd=repo, timeout=_GIT_TIMEOUT, check=False)
        self.path = None


def _borrowed_env(senv: StageEnv, tmp: Path, stage: str = "test") -> dict[str, str]:
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
        target = senv.data_dir / "cache" / workspace_key(senv.repo) / f"baseline-target-{stage}"
        env["CARGO_TARGET_DIR"] = str(target)
    return env


def _load(path: Path, command: str) -> Baseline | None:
    try:
        data = json.loads(path.read_text())
        if data.get("command") != command:
            return None
        return Baseline(
            sha=data["sha"],
            exit_code=int(data["exit_code"]),
            tests=TestResult.model_validate(data["tests"]) if data.get("tests") else None,
            diagnostics=[Diagnostic.model_validate(d) for d in data.get("diagnostics", [])],
            cached=True,
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None
