"""Reuse the Python environment an earlier job set up for the same dependency files.

In the App every job gets a workspace (and a venv) of its own. After a job's setup made a
venv from scratch, a copy is kept per repository and setup fingerprint under the data dir
(`envs/<repo>/<fingerprint>`); the next job whose plan and dependency files hash the same
starts from a copy of it instead of resolving, building and installing again (issue #24,
#31). The paths a venv records (its own, in scripts' shebangs; the workspace, in the
editable install's `.pth`, finder and `direct_url.json`) are rewritten to the new job's.

Trust: a copy is kept only from a clean checkout of a commit the remote's default branch
already holds (code the repository's maintainers merged), taken right after setup and
before any test or agent runs, and it lives outside every path a stage can write. Copies
are made, never hardlinked, so nothing a later job does to its venv reaches the kept one.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

from bot.git import runner
from bot.validation.changes import git, is_checkout
from bot.validation.environment import StageEnv, repository_key

KEEP = 2
"""Environments kept per repository (the most recent): enough for main and one other lock."""
_MAX_TEXT = 2_000_000  # larger files in a venv's bin/ or site-packages root are no text we edit
_META = "agentbot-env.json"


@dataclass(frozen=True)
class Reused:
    """What setup recorded when it made the environment now copied into this workspace."""

    flags: list[str]
    warnings: list[str]


def portable(command: str, senv: StageEnv) -> str:
    """A setup command with this workspace's own paths replaced, so jobs can compare it."""
    pairs = [(senv.venv, "$VENV"), (senv.cache, "$CACHE"), (senv.packages, "$PACKAGES"),
             (senv.repo, "$REPO")]  # fmt: skip
    for path, name in pairs:
        if path is not None:
            command = command.replace(str(path), name)
    return command


def _home(senv: StageEnv, stamp: str) -> Path:
    # Beside, not under, `packages/`: every stage may write there, and none may write here.
    return senv.data_dir / "envs" / repository_key(senv.repo) / _key(stamp)


def _key(stamp: str) -> str:
    # The interpreter the venv was made with is part of what it is.
    return hashlib.sha256(f"{stamp}\0{sys.version}".encode()).hexdigest()[:24]


def restore(senv: StageEnv, stamp: str) -> Reused | None:
    """Copy the kept environment for `stamp` into this workspace's (missing) venv, if any."""
    if senv.venv is None or senv.venv.exists():
        return None
    home = _home(senv, stamp)
    try:
        meta = json.loads((home / _META).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(meta, dict) or not (home / "venv" / "bin" / "python").exists():
        return None
    senv.venv.parent.mkdir(parents=True, exist_ok=True)
    staging = senv.venv.with_name(f".{senv.venv.name}.{os.getpid()}.{threading.get_ident()}")
    if not _copy(home / "venv", staging):
        return None
    _relocate(staging, {str(meta["venv"]): str(senv.venv), str(meta["workspace"]): str(senv.repo)})
    # Paths are rewritten for the final place before it appears there: no half-moved venv.
    staging.replace(senv.venv)
    os.utime(home)  # the most recently used copies are the ones kept
    return Reused(flags=[str(f) for f in meta.get("flags", [])],
                  warnings=[str(w) for w in meta.get("warnings", [])])  # fmt: skip


def keep(senv: StageEnv, stamp: str, flags: list[str], warnings: list[str]) -> bool:
    """Keep a copy of the venv setup just made, when the checkout is trusted; True if kept."""
    if senv.venv is None or not (senv.venv / "bin" / "python").exists():
        return False
    home = _home(senv, stamp)
    if home.exists() or not trusted(senv.repo):
        return False
    home.parent.mkdir(parents=True, exist_ok=True)
    staging = home.with_name(f".{home.name}.{os.getpid()}.{threading.get_ident()}")
    if not _copy(senv.venv, staging / "venv"):
        shutil.rmtree(staging, ignore_errors=True)
        return False
    meta = {"venv": str(senv.venv), "workspace": str(senv.repo), "flags": flags,
            "warnings": warnings}  # fmt: skip
    (staging / _META).write_text(json.dumps(meta))
    try:
        staging.rename(home)
    except OSError:  # another job kept the same environment first
        shutil.rmtree(staging, ignore_errors=True)
        return False
    _evict(home.parent)
    return True


def trusted(repo: Path) -> bool:
    """A clean checkout of a commit the remote's default branch holds."""
    if not is_checkout(repo):
        return False
    if git(repo, "status", "--porcelain", check=False).strip():  # never inside a submodule
        return False
    default = git(repo, "rev-parse", "-q", "--verify", "refs/remotes/origin/HEAD", check=False)
    if not default.strip():
        return False
    # The verdict of --is-ancestor is its exit status alone.
    probe = ["merge-base", "--is-ancestor", "HEAD", default.strip()]
    return runner.run(probe, cwd=repo, timeout=30, check=False).returncode == 0


def _copy(src: Path, dst: Path) -> bool:
    """A real copy (new inodes: uv's venv files are hardlinks into the writable uv cache)."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(["cp", "-a", "--", str(src), str(dst)], capture_output=True, check=False)
    if proc.returncode != 0:
        shutil.rmtree(dst, ignore_errors=True)
    return proc.returncode == 0


def _relocate(venv: Path, moves: dict[str, str]) -> None:
    """Rewrite the old venv and workspace paths in the files of a venv that record them."""
    olds = sorted(moves, key=len, reverse=True)  # the longer path first, if one holds another
    for path in _recording_files(venv):
        try:
            data = path.read_bytes()
        except OSError:
            continue
        if b"\0" in data[:8192] or not any(o.encode() in data for o in olds):
            continue
        for old in olds:
            data = data.replace(old.encode(), moves[old].encode())
        mode = path.stat().st_mode
        path.unlink()  # never write through a link into another file
        path.write_bytes(data)
        path.chmod(mode)
        cached = path.parent / "__pycache__"
        for pyc in cached.glob(f"{path.stem}.*.pyc") if path.suffix == ".py" else ():
            pyc.unlink(missing_ok=True)


def _recording_files(venv: Path) -> list[Path]:
    """Scripts in bin/, pyvenv.cfg, and site-packages' top-level files and dist-info records."""
    out = [p for p in (venv / "bin").iterdir() if p.is_file() and not p.is_symlink()]
    out.append(venv / "pyvenv.cfg")
    for site in venv.glob("lib*/python*/site-packages"):
        out += [p for p in site.iterdir() if p.is_file() and not p.is_symlink()]
        out += [p for p in site.glob("*.dist-info/*") if p.name in ("direct_url.json", "RECORD")]
        out += list(site.glob("*.egg-link"))
    return [p for p in out if p.is_file() and p.stat().st_size < _MAX_TEXT]


def _evict(parent: Path) -> None:
    """Keep the KEEP most recently used environments of this repository."""
    homes = [p for p in parent.iterdir() if p.is_dir() and not p.name.startswith(".")]
    homes.sort(key=lambda p: p.stat().st_mtime, reverse=True)
    for old in homes[KEEP:]:
        shutil.rmtree(old, ignore_errors=True)
