"""The TDD session as people read it (pure): commit messages, the PR body's cycle table."""

from __future__ import annotations

import re
from typing import Any

from bot.outbound.structure import defuse_closing, model_text
from bot.tdd.state import CycleRecord, TddState, refactor_trailer, trailer

SUBJECT = 72


def _short(text: str, limit: int) -> str:
    one = " ".join(text.split())
    return one if len(one) <= limit else one[: limit - 1].rstrip() + "…"


def feat_message(scope: str, record: CycleRecord) -> str:
    """`feat(<scope>): <requirement>`, what the runner saw, and the cycle's trailer."""
    head = f"feat({scope}): "
    subject = head + _short(model_text(record.requirement_text), SUBJECT - len(head))
    body = model_text(
        f"TDD cycle {record.cycle}: `{record.test}` failed first ({record.red_reason}),"
        " then the suite passed."
    )
    return f"{subject}\n\n{body}\n\n{trailer(record)}\n"


def refactor_message(scope: str, cycle: int, what: str) -> str:
    """`refactor(<scope>): <what>` with the trailer naming its cycle."""
    head = f"refactor({scope}): "
    subject = head + _short(model_text(what) or "tidy up", SUBJECT - len(head))
    return f"{subject}\n\n{refactor_trailer(cycle)}\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ") or "—"


def cycle_table(state: TddState) -> str:
    """The cycle table: requirement, test, red reason, attempts, refactoring, cost."""
    rows = [
        "| # | Requirement | Test | Red reason | Attempts (test/code/refactor) | Refactoring"
        " | Cost (test + code) |",
        "|---|---|---|---|---|---|---|",
    ]
    for c in state.cycles:
        reverted = any(v.startswith("refactoring attempt") for v in c.verdicts)
        refactoring = "; ".join(c.refactorings) or ("reverted" if reverted else "none")
        rejected = [v.split(": ")[1] for v in c.verdicts if v.startswith("test attempt")]
        red = c.red_reason + (f" (rejected first: {', '.join(rejected)})" if rejected else "")
        rows.append(
            f"| {c.cycle} | {_cell(c.requirement_text)} | `{_cell(c.test)}` |"
            f" {_cell(red)} | {c.tester_attempts}/{c.implementer_attempts}/"
            f"{c.refactor_attempts} | {_cell(refactoring)} | ${c.cost_usd:.4f} |"
        )
    return "\n".join(rows)


def coverage_list(state: TddState) -> str:
    """Which test covers which requirement, and what remains."""
    by_req = {c.requirement: c for c in state.cycles}
    lines = []
    for i, text in enumerate(state.requirements, 1):
        got = by_req.get(i)
        mark = f"✅ `{got.test}`" if got else "⬜ not covered yet"
        lines.append(f"{i}. {_short(text, 120)} — {mark}")
    return "\n".join(lines)


def rejections(state: TddState) -> str:
    """Every attempt the runner rejected (overshoots, wrong red reasons, refused edits)."""
    lines = [f"- cycle {c.cycle}: {v}" for c in state.cycles for v in c.verdicts]
    return "\n".join(lines)


USAGE = re.compile(r"<!-- agentbot:tdd-usage cost=(\d{1,9}\.\d{1,6}) turns=(\d{1,9}) -->")
"""The session's cost and turns so far, kept in the PR body so a resumed run adds to them."""


def earlier_usage(body: str | None) -> tuple[float, int]:
    """(cost, turns) of the runs before this one, from the PR body's marker; (0, 0) if none."""
    found = USAGE.findall(body or "")
    return (float(found[-1][0]), int(found[-1][1])) if found else (0.0, 0)


def pr_body(
    state: TddState, *, issue: int | None, cost_usd: float, turns: int, gate: str = ""
) -> str:
    """The pull request's body; `gate` is the last passing gate's table, when one ran."""
    done = len(state.cycles)
    parts = [
        f"TDD session for **{_short(state.title, 100)}**: {done} of"
        f" {len(state.requirements)} requirement(s) done in red-green-refactor cycles."
        " Each `feat` commit holds one test and the code that made it pass; no commit has a"
        " failing suite.",
    ]
    if state.stopped:
        parts.append(f"**Stopped:** {state.stopped}. A re-run continues with cycle {done + 1}.")
    parts += ["## Cycles", cycle_table(state), "## Requirements", coverage_list(state)]
    if gate:
        parts += ["## Validation of the last cycle", gate]
    if rejected := rejections(state):
        parts += ["## Rejected by the runner", rejected]
    parts.append(f"Cost ${cost_usd:.4f} · {turns} turns (every run of the session)")
    body = defuse_closing("\n\n".join(parts))  # only the bot's own `Closes #N` closes
    if issue is not None and not state.remaining():
        body += f"\n\nCloses #{issue}"
    return body + f"\n\n<!-- agentbot:tdd-usage cost={cost_usd:.6f} turns={turns} -->"


def cycle_items(state: TddState) -> list[dict[str, Any]]:
    """The job result's items: each cycle's record, with the `id`, `status` and `detail` the
    step summary's table shows (one row per cycle, never an empty one)."""
    items = []
    for c in state.cycles:
        attempts = f"{c.tester_attempts}/{c.implementer_attempts}/{c.refactor_attempts}"
        detail = f"`{c.test}`; red: {c.red_reason or '—'}; attempts {attempts}; ${c.cost_usd:.4f}"
        items.append(
            {
                **c.model_dump(mode="json"),
                "id": f"cycle {c.cycle}: {_short(c.requirement_text, 60)}",
                "status": "done" if c.commit else "unfinished",
                "detail": detail,
            }
        )
    return items
