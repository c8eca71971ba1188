"""What the last setup that succeeded in a workspace recorded: its fingerprint and notes."""

from __future__ import annotations

import json
from pathlib import Path

from bot.validation.environment import StageEnv, write_atomic


def write(
    marker: Path, senv: StageEnv, stamp: str, command: str, flags: list[str], warnings: list[str]
) -> None:
    """Record a setup that succeeded (or an environment copied in) for this workspace."""
    doc = {"workspace": str(senv.repo), "fingerprint": stamp, "command": command}
    write_atomic(marker, json.dumps({**doc, "flags": flags, "warnings": warnings}))


def read(path: Path) -> tuple[str, list[str], list[str]] | None:
    """(fingerprint, flags, warnings) of the last setup that succeeded here."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("fingerprint"), str):
        return None
    flags = [str(f) for f in data.get("flags", [])]
    return data["fingerprint"], flags, [str(w) for w in data.get("warnings", [])]
