"""The /cover result for people: one row per method, rendered from data (pure)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from bot.cover.coverage import ChangedCoverage

_ZONE = {"green": "🟢 green", "yellow": "🟡 yellow", "red": "🔴 red"}


@dataclass
class MethodReport:
    """What the pipeline did for one method."""

    method_id: str
    qualname: str
    zone: str
    mode: str
    tests: list[str] = field(default_factory=list)
    """Ids of the new tests kept."""
    dropped: list[str] = field(default_factory=list)
    """Ids of new tests no mutant made fail."""
    before: ChangedCoverage | None = None
    after: ChangedCoverage | None = None
    mutants: int = 0
    killed: int = 0
    stages: dict[str, str] = field(default_factory=dict)
    """Stage -> `done`, `cached`, `skipped: why`, `failed: why`; absent = not run."""
    cost_usd: float = 0.0

    @property
    def failed(self) -> str:
        """The failed stage's name, or ""."""
        return next((s for s, v in self.stages.items() if v.startswith("failed")), "")


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _coverage(m: MethodReport) -> str:
    before = m.before.label() if m.before else "n/a"
    after = m.after.label() if m.after else "n/a"
    if m.after is not None and m.after.executable:
        return f"{before} → {after} ({m.after.covered}/{m.after.executable} lines)"
    return f"{before} → {after}"


def _stages(m: MethodReport) -> str:
    notes = [f"{s} {v}" for s, v in m.stages.items() if v.startswith(("skipped", "failed"))]
    cached = [s for s, v in m.stages.items() if v == "cached"]
    if cached:
        notes.append("cached: " + ", ".join(cached))
    if not m.stages:
        notes.append("not run")
    return "; ".join(notes) or "all done"


def cover_table(methods: Sequence[MethodReport]) -> str:
    """The markdown table: method, zone, tests added, coverage, mutants, stages, cost."""
    rows = [
        "| method | zone | tests added | changed-line coverage | mutants killed | stages | cost |",
        "|---|---|---|---|---|---|---|",
    ]
    for m in methods:
        mutants = f"{m.killed}/{m.mutants}" if m.mutants else "—"
        rows.append(
            f"| `{_cell(m.qualname)}` ({m.mode}) | {_ZONE.get(m.zone, m.zone)} | {len(m.tests)}"
            f" | {_coverage(m)} | {mutants} | {_cell(_stages(m))} | ${m.cost_usd:.4f} |"
        )
    lines = ["\n".join(rows)]
    dropped = [(m.qualname, t) for m in methods for t in m.dropped]
    if dropped:
        lines.append(
            "Dropped, because no mutant of their method made them fail (they test nothing"
            " about it):\n" + "\n".join(f"- `{_cell(t)}` (for `{q}`)" for q, t in dropped)
        )
    return "\n\n".join(lines)


def red_zone_message(methods: Sequence[tuple[str, str, int, int]], command: str) -> str:
    """The `red_zone_new_code` stop: (qualname, path, lines, complexity) of each method."""
    listed = "\n".join(
        f"- `{name}` in `{path}`: {loc} lines, cyclomatic complexity {cc}"
        for name, path, loc, cc in methods
    )
    return (
        "**Stopped: `red_zone_new_code`.** This pull request adds methods in the red"
        " complexity zone, too large or branching to cover well with tests:\n\n"
        f"{listed}\n\nSplit them into smaller methods, or comment `{command} --force` to"
        " write tests for them anyway."
    )
