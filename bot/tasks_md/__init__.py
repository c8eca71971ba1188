"""Spec Kit tasks.md: parse tasks and phases, order them into batches, tick checkboxes (pure).

Rules beyond DESIGN §9, decided here:

- Lines are split on ``\\n`` only (a ``\\r`` before it is kept by `tick` and ignored by the
  parser); a UTF-8 byte-order mark before line 1 is ignored.
- A task line starts at column 0 with ``-``, ``*`` or ``+``; an indented task-like line is an
  error (nested tasks are not supported), never a silent continuation. ``[P]`` may appear
  anywhere among the leading bracket tags.
- Tasks before the first ``## `` heading form an implicit phase with title ``""``,
  number ``None`` and line 0. ``###`` and ``#`` headings never start a phase.
- ``depends on`` (any case, optional ``:``) takes a list of ids separated by ``,``, ``&``,
  ``/`` or ``and``; a range ``T010-T012`` means every task numbered 10 to 12 (T011a too).
- A dependency on a task of a later phase is an error: phases are barriers, so it would
  deadlock. A dependency on a later task of the same phase delays the dependent task: within
  a phase the order is file order, except that a task never runs before its dependencies
  (a stable topological sort); the tasks in between keep their order.
- Fences are ``` or ~~~ at any indentation, closed by the same character at least as long.
  A fence left open at the end of the file is an error only if it hides task-like lines.
  A task-like line in an indented code block is an error (nested task); fence it instead.
- `TaskPlan.dependents` follows explicit ``depends on`` edges only: a failed task skips the
  tasks that need it, and independent tasks, later phases included, go on.
- Looking up an id that is not in the file (`get`, `dependents`, `tick`) raises KeyError; a
  user's selection (`select`, `batches(only=...)`) raises TaskParseError without a line.
"""

from bot.tasks_md.parser import TASK_LINE, parse_tasks, tick
from bot.tasks_md.plan import Phase, Task, TaskPlan
from bot.tasks_md.selection import Selection, blockers, parse_selection, select

__all__ = [
    "TASK_LINE",
    "Phase",
    "Selection",
    "Task",
    "TaskPlan",
    "blockers",
    "parse_selection",
    "parse_tasks",
    "select",
    "tick",
]
