"""The environment stages run in, and the once-per-workspace `setup` stage with its marker.

Every stage runs with an allowlisted environment (bot.secrets), in the job's sandbox, never
with agentbot's own virtualenv on PATH, and with tool caches kept under the data dir so
the workspace is left as the agent left it. Python stages get a virtualenv per
workspace under the data dir; the setup that fills it runs again only when the
dependency files (or the setup command) change.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from bot.clock import Clock
from bot.models import QualityGateResult
from bot.sandbox import Sandbox
from bot.secrets import agent_env
from bot.validation.profiles import Profile
from bot.validation.runner import clip, run_command

# Set unless the caller's environment says otherwise: non-interactive, no colour codes.
_DEFAULTS = {
    "CI": "true",
    "NO_COLOR": "1",
    "FORCE_COLOR": "0",
    "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    "PIP_NO_INPUT": "1",
}
# Never inherited: they would point the workspace's tools at agentbot's interpreter.
_DROPPED = ("VIRTUAL_ENV", "PYTHONHOME", "PYTHONPATH", "CONDA_PREFIX")


def workspace_key(repo: Path) -> str:
    """A short stable name for a workspace path (its venv, marker and cache folders)."""
    digest = hashlib.sha256(str(repo.resolve()).encode()).hexdigest()[:16]
    return f"{repo.resolve().name}-{digest}"


@dataclass(frozen=True)
class StageEnv:
    """Where and with what environment the stages of one workspace run."""

    repo: Path
    profile: Profile
    data_dir: Path
    env: dict[str, str]
    venv: Path | None
    sandbox: Sandbox | None = None
    """The job's sandbox, where every stage command runs (None: run directly)."""

    def with_vars(self, **extra: str) -> dict[str, str]:
        """The stage environment plus some variables."""
        return {**self.env, **extra}

    @property
    def cache(self) -> Path:
        """This workspace's tool caches under the data dir."""
        return self.data_dir / "cache" / workspace_key(self.repo)

    @property
    def writable(self) -> tuple[Path, ...]:
        """What a stage may write inside the sandbox: the workspace, its venv and caches."""
        return (self.repo, self.cache, *([self.venv] if self.venv else []))


def build_stage_env(
    repo: Path,
    profile: Profile,
    data_dir: Path,
    base: Mapping[str, str],
    *,
    use_venv: bool,
    sandbox: Sandbox | None = None,
) -> StageEnv:
    """The environment of every stage subprocess of this workspace."""
    key = workspace_key(repo)
    cache = data_dir / "cache" / key
    env = {k: v for k, v in agent_env(base).items() if k not in _DROPPED}
    for name, value in _DEFAULTS.items():
        env.setdefault(name, value)
    path = [p for p in env.get("PATH", os.defpath).split(os.pathsep) if p]
    if sys.prefix != sys.base_prefix:
        # agentbot runs from a venv: its bin must not lend the workspace a pytest or a ruff.
        own = str(Path(sys.prefix, "bin"))
        path = [p for p in path if p != own]
    front = [str(repo / d) for d in profile.bin_dirs]
    venv = data_dir / "venvs" / key if profile.venv and use_venv else None
    if venv is not None:
        front.insert(0, str(venv / "bin"))
        env["VIRTUAL_ENV"] = str(venv)
    env["PATH"] = os.pathsep.join(front + path)
    if profile.venv:
        # Tool caches outside the workspace, so validating leaves no untracked files.
        env.setdefault("PYTHONPYCACHEPREFIX", str(cache / "pycache"))
        env.setdefault("MYPY_CACHE_DIR", str(cache / "mypy"))
        env.setdefault("RUFF_CACHE_DIR", str(cache / "ruff"))
    return StageEnv(
        repo=repo, profile=profile, data_dir=data_dir, env=env, venv=venv, sandbox=sandbox
    )


def setup_fingerprint(repo: Path, profile: Profile, command: str) -> str:
    """A hash of the setup command and the dependency files it installs from."""
    h = hashlib.sha256(f"{profile.name}\0{command}\0".encode())
    files = sorted({p for pattern in profile.lockfiles for p in repo.glob(pattern) if p.is_file()})
    for path in files:
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def run_setup(
    senv: StageEnv, command: str | None, *, why_none: str, timeout: float, clock: Clock
) -> QualityGateResult:
    """Run the setup command unless this workspace is already set up for its dependency files."""
    if command is None:
        return QualityGateResult(gate_name="setup", status="skipped", warning=why_none)
    marker = senv.data_dir / "setup" / f"{workspace_key(senv.repo)}.json"
    fingerprint = setup_fingerprint(senv.repo, senv.profile, command)
    venv_ok = senv.venv is None or (senv.venv / "bin" / "python").exists()
    if venv_ok and _read_marker(marker) == fingerprint:
        return QualityGateResult(
            gate_name="setup",
            status="skipped",
            warning="already set up for these dependency files (cached)",
        )
    full = command
    if senv.venv is not None and not (senv.venv / "bin" / "python").exists():
        # A venv of the interpreter running agentbot, but empty: never agentbot's own venv.
        create = f"{shlex.quote(sys.executable)} -m venv {shlex.quote(str(senv.venv))}"
        full = f"{create} && {command}"
        senv.venv.parent.mkdir(parents=True, exist_ok=True)
    result = run_command(
        full,
        senv.repo,
        env=senv.env,
        timeout=timeout,
        clock=clock,
        sandbox=senv.sandbox,
        writable=senv.writable,
        setup=True,
    )
    if result.success:
        doc = {"workspace": str(senv.repo), "fingerprint": fingerprint, "command": full}
        write_atomic(marker, json.dumps(doc))
    status = "timed_out" if result.timed_out else "passed" if result.success else "failed"
    return QualityGateResult(
        gate_name="setup",
        status=status,
        command_result=result.model_copy(update={"output": clip(result.output)}),
        warning=f"killed after {timeout:g}s" if result.timed_out else "",
    )


def write_atomic(path: Path, text: str) -> None:
    """Write a file so that a concurrent reader sees the old or the new text, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    tmp.write_text(text)
    tmp.replace(path)


def _read_marker(path: Path) -> str | None:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    value = data.get("fingerprint") if isinstance(data, dict) else None
    return value if isinstance(value, str) else None
