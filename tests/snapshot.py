"""Snapshot files: compare rendered text with tests/snapshots/NAME; UPDATE_SNAPSHOTS=1 rewrites."""

from __future__ import annotations

import os
from pathlib import Path

SNAPSHOTS = Path(__file__).parent / "snapshots"


def assert_snapshot(name: str, text: str) -> None:
    """Fail unless `text` equals the stored snapshot (a missing snapshot fails too)."""
    path = SNAPSHOTS / name
    if os.environ.get("UPDATE_SNAPSHOTS") == "1":
        path.write_text(text, encoding="utf-8")
        return
    assert path.exists(), f"snapshot {name} missing: run with UPDATE_SNAPSHOTS=1 and review it"
    assert text == path.read_text(encoding="utf-8"), f"snapshot {name} differs"
