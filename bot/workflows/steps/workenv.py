"""The agent's working environment: validation's setup, run before the agent starts.

The setup stage (dependencies into the per-workspace venv or node_modules, cached by
the dependency files' fingerprint) runs once before the first agent, so the agent's
shell has the project's interpreter, tools and dependencies first on PATH, inside the
job's sandbox, and the validation after it finds the setup done. The commands
validation will run are resolved here too, so the prompt can name them exactly.

The venv is readable, not writable, for the agent: what it installs by hand would not
be in the repository's dependency files, so validation (and CI) would not have it.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bot.ports import JobEnv
from bot.tools import ShellEnv
from bot.validation import prepare
from bot.validation.baseline import BaseTree
from bot.validation.discovery import choose
from bot.validation.environment import StageEnv
from bot.validation.stage import StageSpec

_LABELS = {
    "test": "full test suite",
    "lint": "lint",
    "typecheck": "type check",
    "format": "format check",
}
# Runners that take test file paths after the suite command.
_FILE_RUNNERS = frozenset({"pytest", "jest", "vitest", "mocha", "rspec", "node"})


@dataclass(frozen=True)
class WorkEnv:
    """The prepared shell environment and the commands validation resolved."""

    shell: ShellEnv
    commands: dict[str, str] = field(default_factory=dict)
    """Label (`full test suite`, `one test file`, `lint`, ...) -> command."""
    problem: str = ""
    """Why setup did not complete (the agent works anyway; validation will tell)."""
    stage_env: StageEnv | None = None
    """Validation's environment for this workspace (the proof runs tests in it)."""
    test: StageSpec | None = None
    """The test stage's command and runner, as validation resolved it."""
    base_failures: list[str] = field(default_factory=list)
    """Tests failing on the base commit (validation's baseline, cached for it)."""

    def describe(self) -> str:
        """The environment paragraph of the prompt: the commands, and what not to do."""
        lines = [
            "The shell runs in the project's environment: its dependencies are installed"
            " (the project's venv or node_modules first on PATH). Do not install packages"
            " into the system or by hand: add a dependency to the project's dependency"
            " files if the fix really needs one."
        ]
        if self.problem:
            lines.append(f"Setting the environment up did not complete: {self.problem}")
        if self.commands:
            lines.append("The commands validation runs (use them):")
            lines += [f"- {label}: `{command}`" for label, command in self.commands.items()]
        return "\n".join(lines)


def prepare_workenv(env: JobEnv, repo: Path, base_sha: str | None = None) -> WorkEnv:
    """Set `repo` up as validation will (cached), and the agent's shell environment in it;
    with `base_sha`, the tests failing there (validation reuses the cached run)."""
    ready = prepare(
        repo,
        env.config.validation,
        data_dir=env.data_dir,
        env=os.environ,
        clock=env.clock,
        sandbox=env.sandbox,
        commands_from=env.commands_from,
    )
    senv = ready.senv
    problem = ""
    if ready.setup.status in ("failed", "timed_out"):
        result = ready.setup.command_result
        last = result.output.strip().splitlines()[-1:] if result else []
        problem = f"`{ready.setup.command}` {ready.setup.status}: {' '.join(last)[:300]}"
    commands: dict[str, str] = {}
    test: StageSpec | None = None
    for stage in ("test", "lint", "typecheck", "format"):
        spec, _ = choose(ready.specs.get(stage, []), senv.env, senv.repo, ready.flags)
        if spec is None:
            continue
        commands[_LABELS[stage]] = spec.command
        if stage == "test":
            test = spec
        if stage == "test" and spec.runner in _FILE_RUNNERS:
            commands["one test file"] = f"{spec.command} <path/to/test_file>"
        elif stage == "test" and spec.runner == "go":
            commands["one package"] = "go test ./<package dir>/"
    shell = agent_shell(senv)
    failing: list[str] = []
    if base_sha and test is not None and not problem:
        timeout = env.config.validation.timeout_seconds
        base = BaseTree(senv, base_sha, timeout=timeout, clock=env.clock)
        try:
            baseline = base.run("test", test.command, runner=test.runner)
        finally:
            base.close()
        failing = sorted(baseline.failing) if baseline is not None else []
    return WorkEnv(
        shell=shell, commands=commands, problem=problem, stage_env=senv, test=test,
        base_failures=failing,
    )  # fmt: skip


def agent_shell(senv: StageEnv) -> ShellEnv:
    """The stage environment for the agent: what validation will trust stays read-only.

    The venv, the installed node_modules and validation's tool caches are readable only
    (a bytecode file or a tool planted there would change what validation sees without
    showing in the diff); the agent's own caches live apart, writable.
    """
    own = senv.cache / "agent"
    env = {
        **senv.env,
        "PYTHONPYCACHEPREFIX": str(own / "pycache"),
        "MYPY_CACHE_DIR": str(own / "mypy"),
        "RUFF_CACHE_DIR": str(own / "ruff"),
    }
    installed = [senv.repo / "node_modules"] if (senv.repo / "node_modules").is_dir() else []
    senv.cache.mkdir(parents=True, exist_ok=True)
    venv = [senv.venv] if senv.venv is not None and senv.venv.is_dir() else []
    return ShellEnv(env=env, writable=(own,), readable=(senv.cache, *installed, *venv))


def file_tree(paths: Sequence[str], *, cap: int = 150) -> str:
    """A compact map of the tracked files: every path when few, else folders with counts."""
    if len(paths) <= cap:
        return "\n".join(paths)
    counts: Counter[str] = Counter()
    roots: list[str] = []
    for path in paths:
        parts = path.split("/")
        if len(parts) == 1:
            roots.append(path)
        else:
            counts["/".join(parts[: min(len(parts) - 1, 2)]) + "/"] += 1
    lines = roots[: cap // 3] + [f"{d} ({n} files)" for d, n in sorted(counts.items())]
    if len(lines) > cap:
        lines = [*lines[:cap], f"… and {len(lines) - cap} more folders"]
    return "\n".join(lines)
