"""The sticky progress comment: created once per job, edited as steps finish, reused on re-runs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from bot.models.github import Comment
from bot.ports import GitHubWrites
from bot.report import PROGRESS_MARKER, Step, StepState, progress_comment


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

    def start(self, existing: Sequence[Comment], bot_login: str = "") -> None:
        """Reuse our earlier progress comment (a re-run) or create a new one.

        Only a bot's comment is reused (or `bot_login`'s): anyone can post the marker, and
        the bot must never write its progress into a comment someone else owns.
        """
        for c in existing:
            mine = c.user.endswith("[bot]") or (bot_login and c.user == bot_login)
            if c.body.startswith(PROGRESS_MARKER) and mine:
                self.comment_id = c.id
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
        """Write the final state: remaining pending steps are marked skipped."""
        self.steps = [
            replace(s, state="skipped") if s.state == "pending" else s for s in self.steps
        ]
        self.footer = footer
        self._publish()

    def _publish(self) -> None:
        body = progress_comment(self.title, self.steps, footer=self.footer)
        if self.comment_id is None:
            self.comment_id = self.github.create_comment(self.repo, self.number, body).id
        else:
            self.github.update_comment(self.repo, self.comment_id, body)
