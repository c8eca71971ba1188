"""The environment stages run in.

Every stage runs with an allowlisted environment (bot.secrets), in the job's sandbox, never
with agentbot's own virtualenv on PATH, and with tool caches kept under the data dir so
the workspace is left as the agent left it. Python stages get a virtualenv per
workspace under the data dir.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import subprocess
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from bot.errors import GitError
from bot.git import runner
from bot.sandbox import Sandbox
from bot.secrets import agent_env
from bot.validation.node import manager_bin
from bot.validation.profiles import Profile

# Set unless the caller's environment says otherwise: non-interactive, as on CI. Nothing a
# repository's tests could observe that its CI does not set (#25): no NO_COLOR/FORCE_COLOR
# (the output is no terminal: tools print no colour codes anyway, and parsers strip them).
_DEFAULTS = {
    "CI": "true",
    "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    "PIP_NO_INPUT": "1",
    "UV_NO_PROGRESS": "1",
    "UV_PYTHON_DOWNLOADS": "never",
    "HUSKY": "0",  # husky's install would point the checkout's git at the repo's hooks
    "npm_config_audit": "false",
    "npm_config_fund": "false",
    "npm_config_update_notifier": "false",
    "MYPY_FORCE_TERMINAL_WIDTH": "1000",  # one line per error, even with `pretty = true`
}
# Package caches, per repository under the data dir (`StageEnv.packages`).
_PACKAGE_CACHES = {
    "UV_CACHE_DIR": "uv", "PIP_CACHE_DIR": "pip", "npm_config_cache": "npm",
    "npm_config_store_dir": "pnpm-store", "YARN_CACHE_FOLDER": "yarn",
    "YARN_GLOBAL_FOLDER": "yarn-berry", "GOMODCACHE": "go-mod",
    "COREPACK_HOME": "corepack", "CARGO_HOME": "cargo",
}  # fmt: skip
# The package caches' folders under `packages`, each writable in every stage.
SHARED_CACHES = (*_PACKAGE_CACHES.values(), "pre-commit")
# Never inherited: they would point the workspace's tools at agentbot's interpreter.
_DROPPED = ("VIRTUAL_ENV", "PYTHONHOME", "PYTHONPATH", "CONDA_PREFIX")


@functools.lru_cache(maxsize=256)  # asked for every stage command; a checkout keeps its origin
def repository_key(repo: Path) -> str:
    """A short stable name for the repository a workspace checks out (its origin), so every
    job's workspace of one repository shares its package caches; else the workspace's."""
    try:
        # The bot's hardened git: no config the checkout planted runs anything.
        proc = runner.run(
            ["config", "--get", "remote.origin.url"], cwd=repo, timeout=10, check=False
        )
        url = proc.stdout.strip() if proc.returncode == 0 else ""
    except (OSError, subprocess.SubprocessError, GitError):
        url = ""
    # github.com/o/r, git@github.com:o/r.git and a token-bearing URL name one repository.
    m = re.search(r"([^/:@]+)/([^/:@]+?)(?:\.git)?/?$", url)
    if m is None:
        return workspace_key(repo)
    name = f"{m.group(1)}/{m.group(2)}".lower()
    return f"{m.group(2)}-{hashlib.sha256(name.encode()).hexdigest()[:16]}"


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
    def packages(self) -> Path:
        """The repository's package caches (uv, pip, npm, pnpm, yarn, cargo, go) and package
        managers, shared by every job's workspace of it, kept across jobs."""
        return self.data_dir / "packages" / repository_key(self.repo)

    @property
    def writable(self) -> tuple[Path, ...]:
        """What a stage may write inside the sandbox: the workspace, its own venv and caches,
        and the repository's package caches; never another job's venv or a package manager
        (a later job would run what a stage planted there)."""
        venv = (self.venv,) if self.venv is not None else ()
        shared = tuple(self.packages / name for name in SHARED_CACHES)
        return (self.repo, self.cache, *venv, *shared)

    @property
    def setup_writable(self) -> tuple[Path, ...]:
        """What setup may write: the stages' paths and the package managers it installs."""
        return (*self.writable, self.packages / "pm")

    @property
    def readable(self) -> tuple[Path, ...]:
        """What a stage sees read-only beside: the package managers setup installed."""
        return (self.packages / "pm",) if (self.packages / "pm").is_dir() else ()


def build_stage_env(
    repo: Path,
    profile: Profile,
    data_dir: Path,
    base: Mapping[str, str],
    *,
    use_venv: bool,
    from_root: bool = False,
    sandbox: Sandbox | None = None,
) -> StageEnv:
    """The environment of every stage subprocess of this workspace.

    `from_root`: the project could not be installed, so its code is imported from the
    checkout (the repository root, and src/ if there is one).
    """
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
    packages = data_dir / "packages" / repository_key(repo)
    front = [str(repo / d) for d in profile.bin_dirs]
    if profile.name in ("javascript", "typescript"):
        found = manager_bin(repo, packages)  # the repo's pnpm/yarn, for its own scripts too
        front += [str(found)] if found is not None else []
    # Beside the repository's uv cache, in one mount of the sandbox: uv hardlinks from its
    # cache instead of copying every file (hardlinks cannot cross mounts).
    venv = packages / "venvs" / key if profile.venv and use_venv else None
    if venv is not None:
        front.insert(0, str(venv / "bin"))
        env["VIRTUAL_ENV"] = str(venv)
    env["PATH"] = os.pathsep.join(front + path)
    if from_root:
        env["PYTHONPATH"] = os.pathsep.join(str(p) for p in (repo / "src", repo) if p.is_dir())
    env.setdefault("PRE_COMMIT_HOME", str(packages / "pre-commit"))
    # A copy, not a hardlink into uv's cache: what a stage writes into its venv stays there.
    env.setdefault("UV_LINK_MODE", "copy")
    # Downloads outside the job's throwaway HOME: the next job on this repository reuses them.
    for name, folder in _PACKAGE_CACHES.items():
        env[name] = str(packages / folder)
    if profile.venv:
        # Tool caches outside the workspace, so validating leaves no untracked files. No
        # PYTHONPYCACHEPREFIX: tests may check where bytecode lands (runner.drop_bytecode).
        env.setdefault("MYPY_CACHE_DIR", str(cache / "mypy"))
        env.setdefault("RUFF_CACHE_DIR", str(cache / "ruff"))
    return StageEnv(
        repo=repo, profile=profile, data_dir=data_dir, env=env, venv=venv, sandbox=sandbox
    )


def write_atomic(path: Path, text: str) -> None:
    """Write a file so that a concurrent reader sees the old or the new text, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    tmp.write_text(text)
    tmp.replace(path)
