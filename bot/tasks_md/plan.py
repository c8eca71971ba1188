"""The parsed tasks.md: tasks, phases, and the execution order (batches, dependents)."""

from __future__ import annotations

import heapq
from collections.abc import Collection

from pydantic import BaseModel, ConfigDict, PrivateAttr

from bot.errors import TaskParseError

__all__ = ["Phase", "Task", "TaskPlan"]


class Task(BaseModel):
    """One task line (plus its continuation lines) of a tasks.md."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    done: bool
    parallel: bool
    tags: list[str]
    story: str | None
    description: str
    line: int
    end_line: int
    phase: int
    depends_on: list[str]


class Phase(BaseModel):
    """A ``## `` heading that holds tasks; `index` is its position in `TaskPlan.phases`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    index: int
    title: str
    number: int | None
    line: int


class TaskPlan(BaseModel):
    """The parsed tasks.md: phases and tasks in file order, with the execution order on top."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    phases: list[Phase]
    tasks: list[Task]
    _index: dict[str, int] = PrivateAttr(default_factory=dict)

    def model_post_init(self, context: object, /) -> None:
        """Index tasks by id."""
        self._index = {t.id: i for i, t in enumerate(self.tasks)}

    def get(self, task_id: str) -> Task:
        """Return the task with this id; KeyError if there is none."""
        return self.tasks[self._index[task_id]]

    def select(self, *, tasks: Collection[str] = (), phases: Collection[int] = ()) -> set[str]:
        """Ids of the named tasks and of every task in the phases with these numbers (or all)."""
        if not tasks and not phases:
            return set(self._index)
        unknown = [t for t in tasks if t not in self._index]
        numbers = {p.number for p in self.phases}
        unknown += [f"phase {n}" for n in phases if n not in numbers]
        if unknown:
            raise TaskParseError(f"not in this tasks.md: {', '.join(unknown)}")
        wanted = {p.index for p in self.phases if p.number in phases}
        return set(tasks) | {t.id for t in self.tasks if t.phase in wanted}

    def batches(
        self, *, include_done: bool = False, only: Collection[str] | None = None
    ) -> list[list[Task]]:
        """Tasks in execution order: each inner list may run concurrently, lists run in order.

        Phases are barriers. Within a phase, tasks follow file order except that a task waits
        for its `depends_on` (stable topological sort); a run of consecutive ``[P]`` tasks in
        that order is split into as few batches as its own dependencies allow, and every other
        task is a batch of its own. Done tasks are left out unless `include_done`; `only`
        keeps just those ids. A dependency on a task that is left out counts as satisfied.
        """
        if only is not None:
            missing = sorted(set(only) - set(self._index))
            if missing:
                raise TaskParseError(f"not in this tasks.md: {', '.join(missing)}")
        keep = [
            t for t in self.tasks if (include_done or not t.done) and (only is None or t.id in only)
        ]
        out: list[list[Task]] = []
        for phase in self.phases:
            run: list[Task] = []
            for task in self._ordered([t for t in keep if t.phase == phase.index]):
                if task.parallel:
                    run.append(task)
                    continue
                out += _layers(run)
                run = []
                out.append([task])
            out += _layers(run)
        return out

    def dependents(self, task_id: str) -> set[str]:
        """Ids that transitively declare `depends on` task_id: skip them if it fails.

        Only explicit dependencies count: phases and file order are a schedule, not a claim
        that later tasks need earlier ones, so independent tasks go on after a failure.
        """
        self.get(task_id)
        users: dict[str, list[str]] = {}
        for task in self.tasks:
            for dep in task.depends_on:
                users.setdefault(dep, []).append(task.id)
        found: set[str] = set()
        todo = [task_id]
        while todo:
            for user in users.get(todo.pop(), []):
                if user not in found:
                    found.add(user)
                    todo.append(user)
        return found

    def _ordered(self, tasks: list[Task]) -> list[Task]:
        """Stable topological sort of `tasks` (file order first) on their dependencies."""
        ids = {t.id for t in tasks}
        waiting = {t.id: {d for d in t.depends_on if d in ids} for t in tasks}
        ready = [self._index[t.id] for t in tasks if not waiting[t.id]]
        heapq.heapify(ready)
        order: list[Task] = []
        while ready:
            task = self.tasks[heapq.heappop(ready)]
            order.append(task)
            for other, deps in waiting.items():
                if task.id in deps:
                    deps.discard(task.id)
                    if not deps:
                        heapq.heappush(ready, self._index[other])
        if len(order) != len(tasks):
            raise TaskParseError(f"dependency cycle among {', '.join(sorted(ids))}")
        return order


def _layers(run: list[Task]) -> list[list[Task]]:
    """Split a run of [P] tasks (in dependency order) into the fewest dependent-free batches."""
    level: dict[str, int] = {}
    layers: list[list[Task]] = []
    for task in run:
        n = max((level[d] + 1 for d in task.depends_on if d in level), default=0)
        level[task.id] = n
        if n == len(layers):
            layers.append([])
        layers[n].append(task)
    return layers
