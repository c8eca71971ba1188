"""The environment /cover runs a repository's tests in: validation's setup, plus coverage tools.

The repository is set up exactly as validation sets it up (the same per-workspace
virtualenv or node_modules, the same cached setup marker), so the tests run against the
repository's own dependencies. Python runs also need coverage.py in that interpreter;
when it is missing it is installed there with the installer that made the venv (uv's
venvs have no pip), in setup's sandbox (the one step allowed the network).
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
from bot.validation import prepare as prepare_validation
from bot.validation.discovery import choose
from bot.validation.environment import StageEnv
from bot.validation.installer import install_into
from bot.validation.runner import run_command


def prepare(
    repo: Path,
    config: ValidationConfig,
    *,
    data_dir: Path,
    clock: Clock,
    base_env: Mapping[str, str] | None = None,
    sandbox: Sandbox | None = None,
) -> tuple[StageEnv, str | None]:
    """Run the repository's setup (cached per workspace); its stage env and test command.

    The test command is the one validation would run (the repository's own first); None
    when the test stage is disabled. With the job's `sandbox`, setup and every later run
    of the repository's code happen in it.
    """
    env = os.environ if base_env is None else base_env
    ready = prepare_validation(
        repo, config, data_dir=data_dir, env=env, clock=clock, sandbox=sandbox
    )
    if ready.setup.status in ("failed", "timed_out"):
        result = ready.setup.command_result
        tail = result.output[-2000:] if result else ready.setup.warning
        raise AgentbotError(
            "setting up the repository failed; fix its setup or set validation.setup in"
            f" .github/agentbot.yml:\n{tail}"
        )
    spec, _ = choose(ready.specs.get("test", []), ready.senv.env, repo, ready.flags)
    return ready.senv, spec.command if spec is not None else None


def ensure_coverage_py(senv: StageEnv, python: str, *, timeout: float, clock: Clock) -> str:
    """Make `import coverage` work for `python`; "" when it does, else why it cannot."""
    py = shlex.quote(python)
    probe = run_command(
        f'{py} -c "import coverage"', senv.repo, env=senv.env, timeout=60, clock=clock,
        sandbox=senv.sandbox, writable=senv.writable, readable=senv.readable,
    )  # fmt: skip
    if probe.success:
        return ""
    if senv.venv is None:
        return f"coverage.py is not installed for `{python}`; add it to the test dependencies"
    command = install_into(senv, python, ["coverage"])
    if command is None:
        return "coverage.py could not be installed: the venv's installer (uv) is not found"
    install = run_command(
        command, senv.repo, env=senv.env, timeout=timeout, clock=clock,
        sandbox=senv.sandbox, writable=senv.setup_writable, setup=True,  # setup's network, if any
    )  # fmt: skip
    return "" if install.success else "coverage.py could not be installed in the repository's venv"
