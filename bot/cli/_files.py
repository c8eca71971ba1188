"""The private folders the CLI makes."""

from __future__ import annotations

from pathlib import Path


def private_dir(path: Path) -> Path:
    """`path`, made mode 0700 when missing (the data dir holds transcripts and workspaces)."""
    # As serve, worker and doctor make it: an existing folder's mode is the owner's choice.
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    return path
