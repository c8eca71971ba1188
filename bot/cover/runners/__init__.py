"""Run a repository's tests the /cover way: chosen files, per-test results, line coverage.

One runner per test framework, each driving the repository's own tool with its
machine-readable reports switched on: pytest (JUnit XML) under coverage.py, jest or vitest
(their JSON results, lcov from their own coverage: istanbul or V8), RSpec (its JSON
formatter, SimpleCov where installed, else Ruby's own `Coverage`), `go test -json` with a
cover profile, `cargo test` (its text output; no coverage). `runner_for` picks the one a
language and repository call for.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from bot.clock import Clock
from bot.cover.runners.base import OUT_DIR, RunResult, SuiteRunner
from bot.cover.runners.go import GoRunner
from bot.cover.runners.node import JestRunner, VitestRunner
from bot.cover.runners.python import PYTEST_COMMAND, PytestRunner
from bot.cover.runners.ruby import RSpecRunner
from bot.cover.runners.rust import RustRunner
from bot.validation.environment import StageEnv

__all__ = [
    "OUT_DIR",
    "GoRunner",
    "JestRunner",
    "PytestRunner",
    "RSpecRunner",
    "RunResult",
    "RustRunner",
    "SuiteRunner",
    "VitestRunner",
    "runner_for",
]


def runner_for(
    language: str,
    repo: Path,
    senv: StageEnv,
    *,
    test_command: str | None,
    timeout: float,
    clock: Clock,
) -> SuiteRunner | None:
    """The runner for a language's tests in this repository, or None when /cover has none."""
    common = (repo, senv, timeout, clock)
    if language == "python":
        found = PYTEST_COMMAND.match(test_command or "")
        if found is None:
            return PytestRunner(*common, name="pytest")
        return PytestRunner(
            *common, name="pytest", python=found["py"], env_prefix=found["env"],
            options=found["args"].strip(),
        )  # fmt: skip
    if language in ("javascript", "typescript", "tsx"):
        deps = _package_deps(repo)
        if "vitest" in deps:
            return VitestRunner(*common, name="vitest")
        if "jest" in deps:
            return JestRunner(*common, name="jest")
        return None
    if language == "ruby":
        return RSpecRunner(*common, name="rspec", bundler=(repo / "Gemfile").is_file())
    if language == "rust":
        return RustRunner(*common, name="cargo test") if (repo / "Cargo.toml").is_file() else None
    if language == "go":
        found = re.search(r"^module\s+(\S+)", _read(repo / "go.mod"), re.M)
        return (
            GoRunner(*common, name="go test", module=found[1] if found else "") if found else None
        )
    return None


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        return ""


def _package_deps(repo: Path) -> set[str]:
    try:
        pkg = json.loads((repo / "package.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return set()
    if not isinstance(pkg, dict):
        return set()
    names: set[str] = set()
    for key in ("dependencies", "devDependencies"):
        section = pkg.get(key)
        if isinstance(section, dict):
            names |= set(section)
    return names
