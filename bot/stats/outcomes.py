"""Following agentbot's pull requests to their end, from webhook payloads or from the API.

Decisions written down here:
- A pull request is agentbot's when its author is the bot (`bot_login`, or any `[bot]`
  account when the login is unknown) and its head branch starts with `agentbot/`, or when
  a job of ours recorded it (implement and /cover push to a person's pull request).
- A review round is one review a person submitted (approved, changes requested or
  commented); reviews by bots do not count.
- Commits by people are those a person pushed to the branch (`push` events whose sender is
  not a bot), or, from the API, the commits after agentbot's first whose author is not a
  bot. "Zero-touch" is merged with none.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from bot.models.github import PullCommit, PullRequest, PullReview
from bot.models.stats import PullOutcome

PREFIX = "agentbot/"
_KINDS = (("fix-issue-", "fix_issue"), ("tdd-issue-", "tdd"))


def kind_of_branch(head_ref: str) -> str:
    """The job kind that names a branch this way (`agentbot/fix-issue-7` -> fix_issue)."""
    rest = head_ref.removeprefix(PREFIX)
    return next((kind for start, kind in _KINDS if rest.startswith(start)), "")


def is_bot(login: str, bot_login: str = "") -> bool:
    """True for agentbot's own login, or any App account when it is not known."""
    return login == bot_login if bot_login else login.endswith("[bot]")


def ours(author: str, head_ref: str, bot_login: str = "") -> bool:
    """Whether a pull request is one agentbot opened."""
    return is_bot(author, bot_login) and head_ref.startswith(PREFIX)


# --- webhook payloads, parsed once into the fields we read ----------------------------------


class _In(BaseModel):
    model_config = ConfigDict(extra="ignore")


class _User(_In):
    login: str = ""
    type: str = "User"


class _Repo(_In):
    full_name: str


class _Head(_In):
    ref: str = ""


class _Pull(_In):
    number: int
    user: _User | None = None
    head: _Head = _Head()
    merged: bool | None = None
    merged_at: datetime | None = None
    closed_at: datetime | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None


class _PullPayload(_In):
    action: str
    repository: _Repo
    pull_request: _Pull


class _Review(_In):
    user: _User | None = None
    state: str = ""


class _ReviewPayload(_PullPayload):
    review: _Review


class _PushPayload(_In):
    ref: str
    repository: _Repo
    sender: _User | None = None
    commits: list[dict[str, Any]] = []


@dataclass(frozen=True)
class PullSeen:
    """A pull request opened, closed (maybe merged) or reopened."""

    repo: str
    number: int
    action: str
    author: str
    head_ref: str
    at: datetime | None


@dataclass(frozen=True)
class ReviewSeen:
    """A review submitted on a pull request."""

    repo: str
    number: int
    reviewer: str


@dataclass(frozen=True)
class PushSeen:
    """Commits pushed to a branch by someone (`by_bot`: an App account)."""

    repo: str
    head_ref: str
    commits: int
    by_bot: bool
    sender: str


Seen = PullSeen | ReviewSeen | PushSeen


def observe(event_name: str, payload: Mapping[str, Any]) -> Seen | None:
    """What a delivery tells about pull requests; None when nothing (or it is malformed)."""
    try:
        if event_name == "pull_request":
            p = _PullPayload.model_validate(payload)
            pr = p.pull_request
            action = "merged" if p.action == "closed" and (pr.merged or pr.merged_at) else p.action
            if action not in ("opened", "closed", "merged", "reopened"):
                return None
            at = {"merged": pr.merged_at, "closed": pr.closed_at, "opened": pr.created_at}
            author = pr.user.login if pr.user else ""
            when = at.get(action, pr.updated_at)
            return PullSeen(p.repository.full_name, pr.number, action, author, pr.head.ref, when)
        if event_name == "pull_request_review":
            r = _ReviewPayload.model_validate(payload)
            if r.action != "submitted":
                return None
            who = r.review.user.login if r.review.user else ""
            return ReviewSeen(r.repository.full_name, r.pull_request.number, who)
        if event_name == "push":
            push = _PushPayload.model_validate(payload)
            if not push.ref.startswith("refs/heads/") or not push.commits:
                return None
            sender = push.sender or _User()
            return PushSeen(
                push.repository.full_name,
                push.ref.removeprefix("refs/heads/"),
                len(push.commits),
                sender.type == "Bot",
                sender.login,
            )
    except ValidationError:
        return None
    return None


def apply(pull: PullOutcome | None, seen: Seen, bot_login: str = "") -> PullOutcome | None:
    """The pull request's outcome after `seen`; None when it is not one we follow."""
    if isinstance(seen, PullSeen):
        if pull is None:
            if not ours(seen.author, seen.head_ref, bot_login):
                return None
            pull = PullOutcome(
                repo=seen.repo, number=seen.number, kind=kind_of_branch(seen.head_ref),
                head_ref=seen.head_ref, opened_at=seen.at if seen.action == "opened" else None,
            )  # fmt: skip
        if seen.action == "merged":
            return pull.model_copy(update={"state": "merged", "merged_at": seen.at})
        if seen.action == "closed":
            return pull.model_copy(update={"state": "closed", "closed_at": seen.at})
        if seen.action == "reopened":
            return pull.model_copy(update={"state": "open", "closed_at": None})
        # GitHub's time of opening beats the one the job that opened it recorded.
        return pull.model_copy(update={"opened_at": seen.at or pull.opened_at})
    if pull is None:
        return None
    if isinstance(seen, ReviewSeen):
        if not seen.reviewer or is_bot(seen.reviewer, bot_login) or seen.reviewer.endswith("[bot]"):
            return pull
        return pull.model_copy(update={"review_rounds": pull.review_rounds + 1})
    if seen.by_bot or is_bot(seen.sender, bot_login):
        return pull
    return pull.model_copy(update={"human_commits": pull.human_commits + seen.commits})


def from_api(
    repo: str,
    pr: PullRequest,
    reviews: Sequence[PullReview],
    commits: Sequence[PullCommit],
    *,
    bot_login: str = "",
    known: PullOutcome | None = None,
) -> PullOutcome:
    """A pull request's outcome read through the API (the backfill); what a job recorded
    (its kind and job) is kept."""
    people = [r for r in reviews if r.user and not r.user.endswith("[bot]")]
    people = [r for r in people if not is_bot(r.user, bot_login) and r.state != "PENDING"]
    first_ours = next((i for i, c in enumerate(commits) if is_bot(c.author, bot_login)), None)
    after = commits[first_ours + 1 :] if first_ours is not None else commits
    human = [c for c in after if not c.author.endswith("[bot]") and not is_bot(c.author, bot_login)]
    state = "merged" if pr.merged else "closed" if pr.state == "closed" else "open"
    return PullOutcome(
        repo=repo,
        number=pr.number,
        kind=(known.kind if known and known.kind else kind_of_branch(pr.head_ref)),
        job_id=known.job_id if known else "",
        head_ref=pr.head_ref,
        state=state,
        opened_at=pr.created_at,
        merged_at=pr.merged_at if state == "merged" else None,
        closed_at=pr.closed_at if state == "closed" else None,
        review_rounds=len(people),
        human_commits=len(human),
    )
