"""`go test -json` on the chosen test files' packages, coverage from a cover profile."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from bot.cover.coverage import LineCoverage, parse_go_cover
from bot.cover.results import CaseResult, parse_go_json
from bot.cover.runners.base import SuiteRunner


@dataclass
class GoRunner(SuiteRunner):
    """`go test -json` on the chosen test files' packages, with a cover profile."""

    module: str = ""
    """The module path from go.mod (import paths in the reports start with it)."""

    def command(self, files: Sequence[str], out: str, coverage_of: Sequence[str]) -> str:
        """`go test -json -count=1 [-coverprofile …] ./pkg … > events.json`."""
        folders = sorted({str(PurePosixPath(f).parent) for f in files})
        targets = " ".join(shlex.quote("./" + d if d != "." else ".") for d in folders)
        cover = f" -coverprofile={out}/cover.out -coverpkg=./..." if coverage_of else ""
        # The events go to a file; build errors still reach the run's output (stderr).
        return f"go test -json -count=1{cover} {targets or './...'} > {out}/events.json"

    def read(self, out: Path, root: str) -> tuple[list[CaseResult], LineCoverage | None]:
        """The JSON events and the cover profile."""
        events = (out / "events.json").read_text(encoding="utf-8")
        tests = parse_go_json(events, self.module, Path(root))
        profile = out / "cover.out"
        cov = parse_go_cover(profile.read_text(), self.module) if profile.is_file() else None
        return tests, cov
