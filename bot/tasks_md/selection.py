"""Which tasks of a tasks.md a run works on: `T010-T015`, `T012,T014`, `phase 3`, `US2` (pure).

Decided here:

- Words are separated by spaces and commas; case is ignored (`t003`, `Phase 2`, `us1`).
  Several words select the union: `T003 phase 4` is T003 and every task of phase 4.
- `T010-T015` (also `T010..T015`) is every task numbered 10 to 15, suffixed ids such as
  T011a included, in file order; a range that holds no task is an error, its ends need not
  exist. `phase N` (or `phaseN`) is phase number N; `USn` the tasks tagged `[USn]`.
- An empty selection means every task. An id, phase or story the file lacks is an error
  naming it (TaskParseError without a line): a typo never silently runs nothing, or all.
- `blockers` reports the explicit `depends on` of a selected task that lie outside the
  selection and are not ticked: the run stops that task instead of building on missing work.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, field

from bot.errors import TaskParseError
from bot.tasks_md.plan import TaskPlan

__all__ = ["Selection", "blockers", "parse_selection", "select"]

# ASCII digits only, and few enough to be a number (`²` or 5,000 digits are a typo, not a task).
_ID = r"T([0-9]{3,9})([a-z]?)"
_RANGE = re.compile(rf"{_ID}(?:-|\.\.){_ID}", re.I | re.A)
_TASK = re.compile(_ID, re.I | re.A)
_PHASE = re.compile(r"phase([0-9]{1,9})", re.I | re.A)
_STORY = re.compile(r"US[0-9]{1,9}", re.I | re.A)
_NUMBER = re.compile(r"[0-9]{1,9}", re.A)
USAGE = "T010-T015, T012,T014, phase 3 or US2"


@dataclass(frozen=True)
class Selection:
    """A parsed selection: task ids, id ranges (numbers), phase numbers and story tags."""

    tasks: tuple[str, ...] = ()
    ranges: tuple[tuple[int, int], ...] = ()
    phases: tuple[int, ...] = ()
    stories: tuple[str, ...] = ()
    text: str = field(default="", compare=False)

    def __bool__(self) -> bool:
        return bool(self.tasks or self.ranges or self.phases or self.stories)


def parse_selection(text: str) -> Selection:
    """Parse what follows the tasks path; TaskParseError names the word it cannot read."""
    words = [w.strip("`'\"") for w in re.split(r"[\s,]+", text.strip()) if w.strip("`'\"")]
    tasks: list[str] = []
    ranges: list[tuple[int, int]] = []
    phases: list[int] = []
    stories: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        if word.casefold() == "phase" and i + 1 < len(words) and _NUMBER.fullmatch(words[i + 1]):
            phases.append(int(words[i + 1]))
            i += 2
            continue
        if m := _RANGE.fullmatch(word):
            low, high = int(m.group(1)), int(m.group(3))
            if low > high:
                raise TaskParseError(
                    f"task range {word!r} runs backwards; write T{m.group(3)}-T{m.group(1)}"
                )
            ranges.append((low, high))
        elif m := _TASK.fullmatch(word):
            tasks.append(f"T{m.group(1)}{m.group(2).lower()}")
        elif m := _PHASE.fullmatch(word):
            phases.append(int(m.group(1)))
        elif _STORY.fullmatch(word):
            stories.append(word.upper())
        else:
            shown = word if len(word) <= 40 else word[:37] + "..."
            raise TaskParseError(f"cannot read {shown!r} as a task selection; use {USAGE}")
        i += 1
    return Selection(tuple(tasks), tuple(ranges), tuple(phases), tuple(stories), text.strip())


def select(plan: TaskPlan, selection: Selection) -> set[str] | None:
    """The ids `selection` names in `plan` (None for an empty selection: every task)."""
    if not selection:
        return None
    unknown = [t for t in selection.tasks if t not in {x.id for x in plan.tasks}]
    chosen = set(selection.tasks) - set(unknown)
    for low, high in selection.ranges:
        hit = {t.id for t in plan.tasks if low <= _number(t.id) <= high}
        if not hit:
            unknown.append(f"T{low:03d}-T{high:03d}")
        chosen |= hit
    numbers = {p.number: p.index for p in plan.phases if p.number is not None}
    for n in selection.phases:
        if n not in numbers:
            unknown.append(f"phase {n}")
        chosen |= {t.id for t in plan.tasks if n in numbers and t.phase == numbers[n]}
    for story in selection.stories:
        hit = {t.id for t in plan.tasks if t.story == story}
        if not hit:
            unknown.append(story)
        chosen |= hit
    if unknown:
        raise TaskParseError(f"not in this tasks.md: {', '.join(unknown)}")
    return chosen


def blockers(plan: TaskPlan, task_id: str, selected: Collection[str] | None) -> list[str]:
    """`depends on` ids of `task_id` outside `selected` (None: all) whose box is not ticked."""
    if selected is None:
        return []
    return [d for d in plan.get(task_id).depends_on if d not in selected and not plan.get(d).done]


def _number(task_id: str) -> int:
    return int(re.sub(r"\D", "", task_id))
