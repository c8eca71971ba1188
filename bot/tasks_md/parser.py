"""Read tasks.md text into a TaskPlan, and tick one checkbox without touching anything else."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from bot.errors import TaskParseError
from bot.tasks_md.plan import Phase, Task, TaskPlan

__all__ = ["TASK_LINE", "parse_tasks", "tick"]

TASK_LINE = "- [ ] T001 Description"
"""What a Spec Kit task line looks like, for messages about a file that holds none."""

_ID = r"T\d{3,}[a-z]?"
_TASKLIKE = re.compile(r"^([ \t]*)[-*+][ \t]+\[([^\[\]]*)\][ \t]*T\d")
_TASK = re.compile(r"^[-*+][ \t]+\[([^\[\]]*)\]([ \t]*)(\S*)(.*)$")
_TAG = re.compile(r"^[ \t]+\[([^\[\]]+)\](?=[ \t]|$)")
_HEADING = re.compile(r"^##(?:[ \t]+(.*?))?[ \t]*$")
_PHASE_NO = re.compile(r"^Phase[ \t]+(\d+)[ \t]*(?:(?:[:—–-])[ \t]*(.*))?$", re.IGNORECASE)
_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})(.*)$")
_REF = rf"{_ID}(?:[ \t]*(?:-|–|\.\.)[ \t]*{_ID})?(?![A-Za-z0-9])"
_SEP = r"(?:[ \t]*[,&/][ \t]*(?:and[ \t]+)?|[ \t]+and[ \t]+)"
_DEPENDS = re.compile(rf"(?i:\bdepends[ \t]+on)\b:?[ \t]*({_REF}(?:{_SEP}{_REF})*)")
_RANGE = re.compile(rf"({_ID})(?:[ \t]*(?:-|–|\.\.)[ \t]*({_ID}))?")


@dataclass
class _Draft:
    """A task while its continuation lines are still being read."""

    id: str
    done: bool
    parallel: bool
    tags: list[str]
    line: int
    phase: int
    box: int
    parts: list[tuple[int, str]] = field(default_factory=list)


def _lines(text: str) -> Iterator[tuple[int, int, str]]:
    """Yield (1-based number, offset of the first char, line without \\r\\n or BOM)."""
    offset = 0
    for number, raw in enumerate(text.split("\n"), 1):
        skip = 1 if number == 1 and raw.startswith("\ufeff") else 0
        yield number, offset + skip, raw[skip:].removesuffix("\r")
        offset += len(raw) + 1


def _task(line: str, number: int, offset: int, phase: int) -> _Draft:
    """Parse a line that starts like a task, or say precisely what is wrong with it."""
    m = _TASK.match(line)
    if m is None:
        raise TaskParseError(
            "task lines start at column 0 (nested tasks are not supported)", line_number=number
        )
    box, space, token, rest = m.groups()
    if box not in (" ", "x", "X"):
        raise TaskParseError(f"bad checkbox [{box}]: use [ ], [x] or [X]", line_number=number)
    if not space:
        raise TaskParseError("put a space between the checkbox and the task id", line_number=number)
    if not re.fullmatch(_ID, token):
        raise TaskParseError(
            f"bad task id {token!r}: use T and at least three digits, optionally one lowercase"
            " letter (T001, T011a), then a space",
            line_number=number,
        )
    tags: list[str] = []
    while tag := _TAG.match(rest):
        tags.append(tag.group(1).strip())
        rest = rest[tag.end() :]
    if not rest.strip():
        raise TaskParseError(f"task {token} has no description", line_number=number)
    parallel = "P" in tags
    tags = [t for t in tags if t != "P"]
    draft = _Draft(token, box != " ", parallel, tags, number, phase, offset + m.start(1))
    draft.parts.append((number, rest.strip()))
    return draft


def _scan(text: str) -> tuple[TaskPlan, dict[str, int]]:
    """Parse `text` into a plan and the offset of each task's checkbox character."""
    headings: list[tuple[str, int | None, int]] = []  # every `## ` heading seen
    phase_of_heading: dict[int, int] = {}  # heading position -> phase index
    phases: list[Phase] = []
    drafts: list[_Draft] = []
    seen: dict[str, int] = {}
    fence: tuple[str, int, int] | None = None  # fence chars, its line, first hidden task line
    current: _Draft | None = None
    for number, offset, line in _lines(text):
        if fence is not None:
            close = _FENCE.match(line)
            if (
                close
                and close.group(1)[0] == fence[0][0]
                and len(close.group(1)) >= len(fence[0])
                and not close.group(2).strip()
            ):
                fence = None
                continue
            if _TASKLIKE.match(line) and not fence[2]:
                fence = (fence[0], fence[1], number)
            continue
        opening = _FENCE.match(line)
        if opening and not (opening.group(1)[0] == "`" and "`" in opening.group(2)):
            fence, current = (opening.group(1), number, 0), None
            continue
        if _TASKLIKE.match(line):
            key = len(headings) - 1
            if key not in phase_of_heading:
                title, num, at = headings[key] if headings else ("", None, 0)
                phase_of_heading[key] = len(phases)
                phases.append(Phase(index=len(phases), title=title, number=num, line=at))
            current = _task(line, number, offset, phase_of_heading[key])
            if current.id in seen:
                raise TaskParseError(
                    f"duplicate task id {current.id} (first on line {seen[current.id]})",
                    line_number=number,
                )
            seen[current.id] = number
            drafts.append(current)
            continue
        if current is not None and line[:1] in (" ", "\t") and line.strip():
            current.parts.append((number, line.strip()))
            continue
        current = None
        heading = _HEADING.match(line)
        if heading:
            headings.append(_heading(heading.group(1) or "", number))
    if fence is not None and fence[2]:
        raise TaskParseError(
            f"code fence is never closed and hides the task line {fence[2]}",
            line_number=fence[1],
        )
    tasks = _resolve(drafts)
    return TaskPlan(phases=phases, tasks=tasks), {d.id: d.box for d in drafts}


def _heading(raw: str, number: int) -> tuple[str, int | None, int]:
    """Title and phase number of a `## ` heading (closing #s dropped)."""
    text = re.sub(r"[ \t]+#+$", "", raw).strip()
    m = _PHASE_NO.match(text)
    if m is None:
        return text, None, number
    return (m.group(2) or "").strip() or text, int(m.group(1)), number


def _resolve(drafts: list[_Draft]) -> list[Task]:
    """Turn drafts into tasks: join descriptions, read and check dependencies."""
    ids = [d.id for d in drafts]
    phase = {d.id: d.phase for d in drafts}
    tasks: list[Task] = []
    for d in drafts:
        description = " ".join(text for _, text in d.parts)
        deps: list[str] = []
        for clause in _DEPENDS.finditer(description):
            for ref in _RANGE.finditer(clause.group(1)):
                for dep in _expand(ref.group(1), ref.group(2), ids, d):
                    if phase[dep] > d.phase:
                        raise TaskParseError(
                            f"{d.id} depends on {dep}, which is in a later phase; phases run in"
                            " file order, so move one of them",
                            line_number=_where(d, dep),
                        )
                    if dep not in deps:
                        deps.append(dep)
        story = next((t for t in d.tags if re.fullmatch(r"US\d+", t)), None)
        tasks.append(
            Task(
                id=d.id,
                done=d.done,
                parallel=d.parallel,
                tags=d.tags,
                story=story,
                description=description,
                line=d.line,
                end_line=d.parts[-1][0],
                phase=d.phase,
                depends_on=deps,
            )
        )
    _check_cycles(tasks)
    return tasks


def _expand(first: str, last: str | None, ids: list[str], d: _Draft) -> list[str]:
    """The ids a reference names: one id, or every id numbered first..last."""
    for ref in (first, last):
        if ref is not None and ref not in ids:
            raise TaskParseError(
                f"{d.id} depends on unknown task {ref}", line_number=_where(d, ref)
            )
    if last is None:
        return [first]
    low, high = _number(first), _number(last)
    if low > high:
        raise TaskParseError(
            f"{d.id}: range {first}-{last} runs backwards", line_number=_where(d, first)
        )
    return [i for i in ids if low <= _number(i) <= high]


def _number(task_id: str) -> int:
    """The numeric part of a task id (T011a -> 11)."""
    return int(task_id[1:].rstrip("abcdefghijklmnopqrstuvwxyz"))


def _where(d: _Draft, ref: str) -> int:
    """The line of the task that mentions `ref` (the task line if none does on its own)."""
    pattern = re.compile(rf"(?<![A-Za-z0-9]){ref}(?![A-Za-z0-9])")
    return next((n for n, text in d.parts if pattern.search(text)), d.line)


def _check_cycles(tasks: list[Task]) -> None:
    """Raise on the first dependency cycle found (in file order)."""
    by_id = {t.id: t for t in tasks}
    state: dict[str, int] = {}  # 1 = on the current path, 2 = finished
    for root in tasks:
        path: list[str] = []
        stack: list[tuple[str, Iterator[str]]] = []
        if state.get(root.id):
            continue
        state[root.id] = 1
        path.append(root.id)
        stack.append((root.id, iter(root.depends_on)))
        while stack:
            node, deps = stack[-1]
            dep = next(deps, None)
            if dep is None:
                state[node] = 2
                path.pop()
                stack.pop()
            elif state.get(dep) == 1:
                cycle = [*path[path.index(dep) :], dep]
                raise TaskParseError(
                    f"dependency cycle: {' -> '.join(cycle)}", line_number=by_id[dep].line
                )
            elif not state.get(dep):
                state[dep] = 1
                path.append(dep)
                stack.append((dep, iter(by_id[dep].depends_on)))


def parse_tasks(text: str) -> TaskPlan:
    """Parse a Spec Kit tasks.md; TaskParseError (with line_number) if it is malformed."""
    return _scan(text)[0]


def tick(text: str, task_id: str, done: bool = True) -> str:
    """Set one task's checkbox; every other character of `text` stays as it was.

    Ticking a task already marked ``[X]`` keeps the capital X. KeyError if there is no such
    task; TaskParseError if `text` does not parse.
    """
    at = _scan(text)[1][task_id]
    mark = (text[at] if text[at] in "xX" else "x") if done else " "
    return text[:at] + mark + text[at + 1 :]
