"""A request is carried out once, whatever delivers it again.

A request is a command comment, or an event on an issue or pull request (a label, an
assignment, a review). Every comment its job writes on that thread carries the request's key
in a hidden marker (a rewritten comment keeps the keys it had), so a redelivery, or a re-run
of the Action with a fresh data folder, finds from reads alone that it was answered: no
model request, no write. Only the bot's own comments count (anyone can type the marker).

The marker names the delivery too: the App's queue retrying the same delivery (its worker
died mid-job) runs it again. In the Action a delivery is one attempt of a workflow run
(`run-<id>.<attempt>`): "Re-run jobs" is the same event again. An event job whose thread
carries the failure label is not answered, though: re-running a failed or budget-stopped
run tries again (TDD resumes), which is what that button is for.
"""

from __future__ import annotations

import hashlib
import json
import re

from bot.models.github import Comment
from bot.models.jobs import Job
from bot.ports.github import GitHubPort, GitHubProxy

_MARK = "<!-- agentbot:answers {}@{} -->"
_MARKS = re.compile(
    r"\n?<!-- agentbot:answers (\d{1,20}\.[0-9a-f]{12}|e\.[0-9a-f]{12})@([A-Za-z0-9.-]{0,72}) -->"
)
_NOT_ID = re.compile(r"[^A-Za-z0-9.-]")


def command_comment(job: Job) -> str | None:
    """The key of the request `job` carries out: `<comment id>.<digest of what it asked>` for a
    command (an edited comment asking something else is a new request), `e.<digest>` for an
    event on an issue or pull request that came with a delivery id; else None."""
    found = job.params.get("comment_id")
    if job.number is None:
        return None
    asked = json.dumps([job.kind.value, job.params], sort_keys=True, default=str)
    if isinstance(found, int) and not isinstance(found, bool):
        return f"{found}.{_digest(asked)}"
    if found is None and job.delivery_id:
        return f"e.{_digest(asked + _event(job.delivery_id))}"
    return None


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def _event(delivery_id: str) -> str:
    """The event a delivery carries: every attempt of one workflow run carries the same."""
    return delivery_id.rsplit(".", 1)[0] if delivery_id.startswith("run-") else delivery_id


def answered(
    job: Job, github: GitHubPort, bot_login: str = "", failed_label: str = "agent-failed"
) -> str | None:
    """Why `job` has nothing to do (its request was answered before), or None."""

    # The bot's own comments: a GitHub App's login ends in [bot], a PAT's is `bot_login`.
    def mine(user: str) -> bool:
        return user.endswith("[bot]") or bool(bot_login and user == bot_login)

    key = command_comment(job)
    if key is None or job.number is None:
        return None
    ours = _delivery(job.delivery_id)
    for c in github.list_issue_comments(job.repo, job.number):
        marks = _MARKS.findall(c.body) if mine(c.user) else []
        if any(i == key and (not ours or by != ours) for i, by in marks):
            if (
                key.startswith("e.")
                and failed_label in github.get_issue(job.repo, job.number).labels
            ):
                return None  # its run failed or stopped: this one tries again
            what = "the event" if key.startswith("e.") else f"comment {key.split('.')[0]}"
            return f"{what} on #{job.number} was answered before"
    return None


def _delivery(delivery_id: str) -> str:
    return _NOT_ID.sub("", delivery_id)[:72]


class Answering(GitHubProxy):
    """`inner`, marking every comment written on `repo#number` as answering `comment`."""

    def __init__(self, inner: GitHubPort, job: Job, comment: str) -> None:
        super().__init__(inner)
        self.repo, self.number, self.comment = job.repo, job.number, comment
        self.delivery = _delivery(job.delivery_id)
        self._bodies: dict[int, str] = {}
        """Bodies read or written, by comment id: an edit keeps the ids they were marked with."""

    def list_issue_comments(self, repo: str, number: int) -> list[Comment]:
        """Forwarded; the bodies are remembered."""
        found = self.inner.list_issue_comments(repo, number)
        self._bodies.update((c.id, c.body) for c in found if repo == self.repo)
        return found

    def create_comment(self, repo: str, number: int, body: str) -> Comment:
        """Forwarded; marked when on the job's thread."""
        if (repo, number) == (self.repo, self.number):
            body = self._marked(body, "")
        made = self.inner.create_comment(repo, number, body)
        self._bodies[made.id] = body
        return made

    def update_comment(self, repo: str, comment_id: int, body: str) -> Comment:
        """Forwarded; marked, keeping the ids the comment answered before."""
        if repo == self.repo:
            body = self._marked(body, self._bodies.get(comment_id, ""))
            self._bodies[comment_id] = body
        return self.inner.update_comment(repo, comment_id, body)

    def _marked(self, body: str, before: str) -> str:
        # Ids come from the bot's own earlier body only: model text in `body` is not believed.
        ids = {(i, by) for i, by in _MARKS.findall(before)} | {(self.comment, self.delivery)}
        marks = "".join(_MARK.format(i, by) for i, by in sorted(ids))
        return _MARKS.sub("", body).rstrip("\n") + "\n" + marks
