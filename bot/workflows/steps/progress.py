"""The sticky progress comment: created once per job, edited as steps finish, reused on re-runs.

`TaskBoard` is the Implementer's: one line per selected task (pending, running, done, failed,
skipped with the reason), the batch under way and the cost so far, then the final state.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from bot.errors import AgentbotError
from bot.models.github import Comment
from bot.ports import GitHubWrites
from bot.report import PROGRESS_MARKER, Step, StepState, progress_comment
from bot.tasks_md import Task

log = logging.getLogger("agentbot.job")


@dataclass
class Progress:
    """A job's one progress comment on `repo#number`, written through `github`."""

    github: GitHubWrites
    repo: str
    number: int
    title: str
    steps: list[Step]
    comment_id: int | None = None
    footer: str = ""
    previous: str = ""
    """The reused comment's body before this run: the last report, for `restore`."""

    def start(
        self, existing: Sequence[Comment], bot_login: str = "", *, publish: bool = True
    ) -> None:
        """Reuse our earlier progress comment (a re-run) or create a new one.

        Only a bot's comment is reused (or `bot_login`'s): anyone can post the marker, and
        the bot must never write its progress into a comment someone else owns.
        """
        head = progress_comment(self.title, []).split("\n", 2)
        for c in existing:
            mine = c.user.endswith("[bot]") or (bot_login and c.user == bot_login)
            # Another command's progress comment on the same thread keeps its own.
            ours = c.body.startswith(PROGRESS_MARKER) and c.body.split("\n", 2)[1:2] == head[1:2]
            if mine and ours:
                self.comment_id, self.previous = c.id, c.body
        if publish:
            self._publish()

    def set(self, title: str, state: StepState, detail: str = "", *, publish: bool = True) -> None:
        """Change one step's state; publish now, or with the next change (fewer API writes)."""
        self.steps = [
            replace(s, state=state, detail=detail) if s.title == title else s for s in self.steps
        ]
        if publish:
            self._publish()

    def running(self) -> str | None:
        """The title of the step under way, if any."""
        return next((s.title for s in self.steps if s.state == "running"), None)

    def finish(self, footer: str) -> None:
        """Write the final state: pending steps are marked skipped, a step still running failed
        (the run stopped there; a finished comment never shows 🔄)."""
        self.steps = [
            replace(s, state="skipped")
            if s.state == "pending"
            else replace(s, state="failed", detail=s.detail or "stopped")
            if s.state == "running"
            else s
            for s in self.steps
        ]
        self.footer = footer
        self._publish()

    def restore(self) -> bool:
        """Put the last report back (a failed run must not replace it); False when none."""
        if self.comment_id is None or not self.previous:
            return False
        self.github.update_comment(self.repo, self.comment_id, self.previous)
        return True

    def publish(self) -> None:
        """Write the current state (create the comment the first time)."""
        self._publish()

    def _publish(self) -> None:
        body = progress_comment(self.title, self.steps, footer=self.footer)
        if self.comment_id is None:
            self.comment_id = self.github.create_comment(self.repo, self.number, body).id
        else:
            self.github.update_comment(self.repo, self.comment_id, body)


@dataclass
class TaskBoard:
    """The Implementer's progress comment on its pull request, in terms of tasks."""

    progress: Progress
    titles: dict[str, str] = field(default_factory=dict)

    @classmethod
    def open(
        cls,
        github: GitHubWrites,
        repo: str,
        number: int,
        *,
        tasks_path: str,
        tasks: Sequence[Task],
        existing: Sequence[Comment],
    ) -> TaskBoard:
        """The board, taking over this tasks file's comment from an earlier run; unpublished."""
        titles = {t.id: f"{t.id} {_short(t.description)}" for t in tasks}
        steps = [Step(title) for title in titles.values()]
        board = cls(Progress(github, repo, number, f"agentbot /implement {tasks_path}", steps))
        board.titles = titles
        board.progress.start(existing, publish=False)  # the first batch or result publishes
        return board

    def batch(self, index: int, total: int, running: Sequence[str], cost: float) -> None:
        """Batch `index` of `total` starts: its tasks are running."""
        for tid in running:
            self.progress.set(self.titles[tid], "running", publish=False)
        self.progress.footer = (
            f"Batch {index}/{total} running: {', '.join(running)} · cost so far ${cost:.4f}"
        )
        self.progress.publish()

    def settle(
        self, states: Mapping[str, tuple[StepState, str]], cost: float, *, note: str = ""
    ) -> None:
        """Tasks done, failed or skipped (with why); published at once."""
        for tid, (state, detail) in states.items():
            if tid in self.titles:
                self.progress.set(self.titles[tid], state, _short(detail, 160), publish=False)
        self.progress.footer = note or f"Cost so far ${cost:.4f}"
        self.progress.publish()

    def finish(self, footer: str) -> None:
        """The final state: what never ran is marked skipped."""
        self.progress.finish(footer)


def _short(text: str, limit: int = 80) -> str:
    one = " ".join(text.split())
    return one if len(one) <= limit else one[: limit - 1] + "…"


def label_failure(github: GitHubWrites, repo: str, number: int | None, label: str) -> None:
    """Label the job's issue or pull request as failed (README: every workflow's failure);
    a refused label is logged, never a second failure."""
    if number is None:
        return
    try:
        github.add_labels(repo, number, [label])
    except AgentbotError as exc:
        log.warning("could not label %s#%s %r: %s", repo, number, label, exc)
