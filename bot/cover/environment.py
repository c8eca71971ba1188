"""The environment /cover runs a repository's tests in: validation's setup, plus coverage tools.

The repository is set up exactly as validation sets it up (the same per-workspace
virtualenv or node_modules, the same cached setup marker), so the tests run against the
repository's own dependencies. Python runs also need coverage.py in that interpreter;
when it is missing it is installed there (setup is the one step allowed the network).
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping
from pathlib import Path

from bot.clock import Clock
from bot.config import ValidationConfig
from bot.errors import AgentbotError
from bot.sandbox import Sandbox
from bot.validation.environment import StageEnv, build_stage_env, run_setup
from bot.validation.profiles import detect_profile
from bot.validation.runner import run_command


def stage_command(config: ValidationConfig, stage: str, repo: Path) -> tuple[str | None, str]:
    """A stage's command as validation resolves it (`default` = the language profile's)."""
    value: str | None = getattr(config, stage)
    if value is None:
        return None, "disabled in config"
    if value == "default":
        profile = detect_profile(repo)
        return profile.command(stage), profile.note(stage)
    return value, ""


def prepare(
    repo: Path,
    config: ValidationConfig,
    *,
    data_dir: Path,
    clock: Clock,
    base_env: Mapping[str, str] | None = None,
    sandbox: Sandbox | None = None,
) -> StageEnv:
    """Run the repository's setup (cached per workspace) and return the stage environment.

    With the job's `sandbox`, setup and every later run of the repository's code happen in it.
    """
    profile = detect_profile(repo)
    setup, why = stage_command(config, "setup", repo)
    senv = build_stage_env(
        repo, profile, data_dir, os.environ if base_env is None else base_env,
        use_venv=setup is not None, sandbox=sandbox,
    )  # fmt: skip
    result = run_setup(senv, setup, why_none=why, timeout=config.timeout_seconds, clock=clock)
    if result.status in ("failed", "timed_out"):
        tail = result.command_result.output[-2000:] if result.command_result else ""
        raise AgentbotError(
            f"setting up the repository failed (`{setup}`); fix its setup or set"
            f" validation.setup in .github/agentbot.yml:\n{tail}"
        )
    return senv


def ensure_coverage_py(senv: StageEnv, python: str, *, timeout: float, clock: Clock) -> str:
    """Make `import coverage` work for `python`; "" when it does, else why it cannot."""
    py = shlex.quote(python)
    probe = run_command(
        f'{py} -c "import coverage"', senv.repo, env=senv.env, timeout=60, clock=clock,
        sandbox=senv.sandbox, writable=senv.writable,
    )  # fmt: skip
    if probe.success:
        return ""
    if senv.venv is None:
        return f"coverage.py is not installed for `{python}`; add it to the test dependencies"
    install = run_command(
        f"{py} -m pip install -q --disable-pip-version-check coverage",
        senv.repo, env=senv.env, timeout=timeout, clock=clock,
        sandbox=senv.sandbox, writable=senv.writable, setup=True,  # setup's network, if any
    )  # fmt: skip
    return "" if install.success else "coverage.py could not be installed in the repository's venv"
