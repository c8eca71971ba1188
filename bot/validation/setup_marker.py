"""What the last setup that succeeded in a workspace recorded: its fingerprint and notes."""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass
from pathlib import Path

from bot.validation.environment import StageEnv, write_atomic


@dataclass(frozen=True)
class Marker:
    """What the last setup that succeeded here recorded."""

    fingerprint: str
    flags: list[str]
    warnings: list[str]
    clone: str
    """The clone it was made in (`clone_id`)."""


def write(
    marker: Path, senv: StageEnv, stamp: str, command: str, flags: list[str], warnings: list[str]
) -> None:
    """Record a setup that succeeded (or an environment copied in) for this workspace."""
    doc = {"workspace": str(senv.repo), "fingerprint": stamp, "command": command,
           "clone": clone_id(senv.repo)}  # fmt: skip
    write_atomic(marker, json.dumps({**doc, "flags": flags, "warnings": warnings}))


def clone_id(repo: Path) -> str:
    """Which clone this workspace is: the App clones afresh for every job at the same path,
    and a venv an earlier clone's stages wrote into is not this job's ("" for no .git dir)."""
    git_dir = repo / ".git"
    if not git_dir.is_dir():
        return ""
    # In .git, which no stage may write (the sandbox mounts it read-only).
    path = git_dir / "agentbot-clone-id"
    try:
        return path.read_text().strip()
    except FileNotFoundError:
        made = uuid.uuid4().hex
        path.write_text(made)
        return made


def read(path: Path) -> Marker | None:
    """The marker of the last setup that succeeded here; None if none is readable."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("fingerprint"), str):
        return None
    return Marker(
        fingerprint=data["fingerprint"],
        flags=[str(f) for f in data.get("flags", [])],
        warnings=[str(w) for w in data.get("warnings", [])],
        clone=str(data.get("clone", "")),
    )


UNREACHABLE = "unreachable"
"""A setup flag: a step fell back because a package host could not be reached (not because
the project cannot be installed), so the next run tries the step again, not the marker."""
_UNREACHABLE = re.compile(
    r"(?i)failed to fetch|tcp connect error|connection (?:refused|reset|timed out)"
    r"|could not connect|name resolution|newconnectionerror|proxyerror|network is unreachable"
    r"|dns error|max retries exceeded"
)


def unreachable(output: str) -> bool:
    """Whether an install's output says a package host could not be reached (uv, pip)."""
    return _UNREACHABLE.search(output) is not None
