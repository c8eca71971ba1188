"""Cycles done, kept where a re-run finds them: in each `feat` commit on the branch (a trailer)
and in the session folder (`tdd.json`, and `status.json`'s completed tasks).

The branch is the truth: a re-run reads the `TDD-Cycle:` trailers of `base..HEAD` and goes
on after the last completed cycle, so no model is asked again for work already committed.
A refactoring's commit names its cycle with `TDD-Refactor-Of:`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from pydantic import Field, ValidationError

from bot.models import TDDPhase
from bot.models.base import Model

CYCLE_TRAILER = "TDD-Cycle"
REFACTOR_TRAILER = "TDD-Refactor-Of"
STATE_FILE = "tdd.json"


class CycleRecord(Model):
    """One red-green-refactor cycle as the PR table and a re-run need it (seed 003 CycleState)."""

    cycle: int = Field(ge=1)
    requirement: int = Field(ge=1)
    """1-based index into the kata's requirements."""
    requirement_text: str
    phase: TDDPhase = TDDPhase.TESTING
    test: str = ""
    """The new test's id as the runner names it (or its file when it cannot tell)."""
    test_files: list[str] = Field(default_factory=list)
    red_reason: str = ""
    tester_attempts: int = 0
    implementer_attempts: int = 0
    refactor_attempts: int = 0
    refactorings: list[str] = Field(default_factory=list)
    """What each of the cycle's `refactor:` commits did (their subjects, type and scope off)."""
    verdicts: list[str] = Field(default_factory=list)
    """What the runner said of each rejected attempt (overshoot, wrong red, red refactor…)."""
    cost_usd: float = 0.0
    commit: str = ""


class TddState(Model):
    """A session: the kata's requirements and the cycles done so far."""

    title: str
    requirements: list[str]
    cycles: list[CycleRecord] = Field(default_factory=list)
    done: bool = False
    stopped: str = ""
    """Why the run stopped before every requirement was covered ("" when it did not)."""

    def covered(self) -> set[int]:
        """Requirements (1-based) a committed cycle covers (its refactoring is optional)."""
        return {c.requirement for c in self.cycles if c.commit or c.phase == TDDPhase.COMPLETE}

    def remaining(self) -> list[int]:
        """Requirements (1-based) no completed cycle covers yet, in order."""
        done = self.covered()
        return [i for i in range(1, len(self.requirements) + 1) if i not in done]


def trailer(record: CycleRecord) -> str:
    """The `TDD-Cycle:` trailer line of a cycle's `feat` commit."""
    data = record.model_dump(mode="json", exclude={"commit", "refactorings", "phase"})
    return f"{CYCLE_TRAILER}: {json.dumps(data, separators=(',', ':'), ensure_ascii=False)}"


def refactor_trailer(cycle: int) -> str:
    """The trailer naming the cycle a `refactor:` commit belongs to."""
    return f"{REFACTOR_TRAILER}: {cycle}"


_TRAILER = re.compile(rf"^{CYCLE_TRAILER}: (\{{.*\}})\s*$", re.M)
_REFACTOR = re.compile(rf"^{REFACTOR_TRAILER}: (\d+)\s*$", re.M)


def from_history(commits: list[tuple[str, str]]) -> list[CycleRecord]:
    """Completed cycles from `(sha, message)` pairs, oldest first; unreadable trailers skipped."""
    cycles: dict[int, CycleRecord] = {}
    for sha, message in commits:
        # Trailers are the last paragraph only (as git reads them); the body is not asked.
        trailers = message.strip().rsplit("\n\n", 1)[-1]
        if found := _TRAILER.search(trailers):
            try:
                record = CycleRecord.model_validate(json.loads(found[1]))
            except (ValueError, ValidationError):
                continue
            cycles[record.cycle] = record.model_copy(
                update={"commit": sha, "phase": TDDPhase.COMPLETE}
            )
        elif (ref := _REFACTOR.search(trailers)) and int(ref[1]) in cycles:
            owner = cycles[int(ref[1])]
            subject = message.strip().splitlines()[0].split(": ", 1)[-1]
            owner.refactorings = [*owner.refactorings, subject]
            # Only kept refactorings leave a trace on the branch; reverted tries do not.
            owner.refactor_attempts = len(owner.refactorings)
    return [cycles[n] for n in sorted(cycles)]


def resume(history: list[CycleRecord], requirements: list[str]) -> tuple[list[CycleRecord], int]:
    """The cycles of `history` that cover one of `requirements` (matched by text, so an edited
    kata keeps what still applies), and the next cycle's number."""
    index = {text: i for i, text in enumerate(requirements, 1)}
    kept = [
        c.model_copy(update={"requirement": index[c.requirement_text]})
        for c in history
        if c.requirement_text in index
    ]
    return kept, max((c.cycle for c in history), default=0) + 1


def save(state: TddState, folder: Path) -> None:
    """Write the state as `tdd.json` into the session folder."""
    (folder / STATE_FILE).write_text(state.model_dump_json(indent=2) + "\n", encoding="utf-8")
