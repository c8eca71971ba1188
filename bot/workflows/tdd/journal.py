"""What a TDD session leaves in its session folder: verdicts and notes in the transcript,
`tdd.json`, and `status.json` (seed 004) with a line per completed cycle."""

from __future__ import annotations

from dataclasses import dataclass

from bot.clock import Clock
from bot.models import SessionStatusFile
from bot.session import Session
from bot.tdd import state as tdd_state
from bot.tdd.state import CycleRecord, TddState
from bot.tdd.verdict import Verdict


@dataclass
class Journal:
    """One session folder, written as the cycles go."""

    session: Session
    clock: Clock

    def verdict(self, phase: str, record: CycleRecord, attempt: int, verdict: Verdict) -> None:
        """The runner's verdict (and the tail of its output) in the transcript."""
        self.session.append_transcript(
            {
                "event": "verdict",
                "role": "runner",
                "phase": phase,
                "cycle": record.cycle,
                "attempt": attempt,
                "ok": verdict.ok,
                "reason": verdict.reason,
                "output": verdict.detail,
            }
        )

    def note(self, role: str, cycle: int, text: str) -> None:
        """A note in the transcript."""
        self.session.append_transcript(
            {"event": "note", "role": role, "cycle": cycle, "text": text}
        )

    def save(self, state: TddState) -> None:
        """`tdd.json`, and `status.json`'s completed cycles, retries and stop reason."""
        tdd_state.save(state, self.session.path)
        try:
            status = self.session.read_status()
        except (OSError, ValueError):
            status = SessionStatusFile(session=self.session.name)
        retries = {
            f"cycle {c.cycle}": {
                "tester": c.tester_attempts,
                "implementer": c.implementer_attempts,
                "refactorer": c.refactor_attempts,
            }
            for c in state.cycles
        }
        self.session.write_status(
            status.model_copy(
                update={
                    "completed_tasks": [
                        f"cycle {c.cycle}: {c.requirement_text}" for c in state.cycles
                    ],
                    "retry_counts": retries,
                    "known_issues": [state.stopped] if state.stopped else [],
                    "last_ci_result": "green" if state.cycles else "unknown",
                    "last_update": self.clock.now(),
                }
            )
        )
