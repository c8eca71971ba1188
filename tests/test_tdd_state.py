"""Cycles written as commit trailers come back on a re-run; an edited kata keeps what applies."""

from __future__ import annotations

from bot.models import TDDPhase
from bot.tdd.state import CycleRecord, TddState, from_history, resume
from bot.tdd.table import feat_message, pr_body, refactor_message


def record(cycle: int, requirement: int, text: str) -> CycleRecord:
    return CycleRecord(
        cycle=cycle,
        requirement=requirement,
        requirement_text=text,
        test=f"test_{cycle}",
        red_reason="assertion",
        tester_attempts=2,
        implementer_attempts=1,
        verdicts=["test attempt 1: overshoot: the new test passes without any new code"],
        cost_usd=0.25,
        phase=TDDPhase.COMPLETE,
    )


def test_trailers_round_trip_through_the_history() -> None:
    one, two = record(1, 1, "1 is I"), record(2, 2, "2 is II")
    history = [
        ("a1", feat_message("roman", one)),
        ("b2", "chore: a person's commit\n"),
        ("c3", feat_message("roman", two)),
        ("d4", refactor_message("roman", 2, "extract the table")),
        ("e5", "feat: broken trailer\n\nTDD-Cycle: {not json}\n"),
    ]
    got = from_history(history)
    assert [(c.cycle, c.commit, c.phase) for c in got] == [
        (1, "a1", TDDPhase.COMPLETE),
        (2, "c3", TDDPhase.COMPLETE),
    ]
    assert got[1].refactorings == ["extract the table"] and got[1].refactor_attempts == 1
    assert got[0].verdicts == one.verdicts and got[0].cost_usd == 0.25


def test_an_edited_kata_keeps_the_cycles_that_still_apply() -> None:
    history = [record(1, 1, "1 is I"), record(2, 2, "2 is II"), record(3, 3, "gone")]
    kept, number = resume(history, ["2 is II", "1 is I", "5 is V"])
    assert [(c.cycle, c.requirement) for c in kept] == [(1, 2), (2, 1)]
    assert number == 4
    state = TddState(title="Roman", requirements=["2 is II", "1 is I", "5 is V"], cycles=kept)
    assert state.remaining() == [3]
    body = pr_body(state, issue=7, cost_usd=0.5, turns=9)
    assert "3. 5 is V — ⬜ not covered yet" in body and "Closes #7" not in body
    assert "| 1 | 1 is I | `test_1` | assertion (rejected first: overshoot) | 2/1/0 |" in body
