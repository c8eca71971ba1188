"""Guards the worker applies to a decided job before any work (DESIGN §3).

`decide()` already refused bots and closed/locked issues as the payload saw them; these
guards ask the API, because a payload can be stale and `author_association` is not a
permission:

- the actor's role, from the collaborator-permission endpoint, must be at least
  `min_permission` (an actor in `allowed_bots`, or none at all for a schedule, skips this);
- the issue or pull request must still be open and unlocked;
- a follow-up runs on agentbot's own branches, and on a fork's pull request when a person
  asked (never for its CI); a fork's branch named like ours (`agentbot/…`) is not ours.

Refusals are quiet by design, with two exceptions: a permission refusal posts one short
comment when the actor is a collaborator (triage or better), who would otherwise wonder
why nothing happened; and a `/approve` by anyone who can read the repository gets one
polite reply (an approval that silently does nothing looks like a broken bot; it is one
comment per `/approve`). Everyone else gets no reply, so an outsider cannot make the
bot write. Closed and locked issues get no comment. Every refusal is recorded on the job.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from bot.config import PERMISSION_RANK, RepoConfig
from bot.followup.markers import ci_attempts, is_ours
from bot.models import Job, JobKind
from bot.models.github import Issue, PullRequest

TELL_FROM = "triage"
"""The weakest role that is told, by a comment, why its request was refused."""


class GuardGitHub(Protocol):
    """The GitHub calls the guards make."""

    def permission(self, repo: str, username: str) -> str:
        """The user's role on the repository."""
        ...

    def get_issue(self, repo: str, number: int) -> Issue:
        """An issue or pull request as it is now."""
        ...

    def get_pull(self, repo: str, number: int) -> PullRequest:
        """A pull request as it is now."""
        ...


@dataclass(frozen=True)
class Refusal:
    """Why a guard stopped a job, and the comment to post (empty: post nothing)."""

    reason: str
    comment: str = ""


def _rank(role: str) -> int:
    return PERMISSION_RANK.get(role, 0)


def _norm(login: str) -> str:
    return login.strip().casefold().removesuffix("[bot]")


def is_allowed_bot(actor: str, config: RepoConfig) -> bool:
    """True when the actor is one of the repository's `allowed_bots`."""
    return bool(actor) and _norm(actor) in {_norm(b) for b in config.allowed_bots}


def check_permission(
    github: GuardGitHub,
    repo: str,
    actor: str,
    config: RepoConfig,
    *,
    what: str,
    tell_from: str = TELL_FROM,
) -> Refusal | None:
    """Refuse unless `actor` has at least `config.min_permission` on `repo`."""
    if not actor or is_allowed_bot(actor, config):
        return None
    role = github.permission(repo, actor)
    needed = config.min_permission
    if _rank(role) >= _rank(needed):
        return None
    reason = f"{actor} has {role} permission on {repo}; {what} needs {needed}"
    comment = ""
    if _rank(role) >= _rank(tell_from):
        comment = (
            f"@{actor} agentbot did not start {what}: it needs `{needed}` permission"
            f" on this repository, and you have `{role}`."
        )
    return Refusal(reason=reason, comment=comment)


def check_open(github: GuardGitHub, repo: str, number: int) -> Refusal | None:
    """Refuse when the issue or pull request is closed or locked now."""
    return open_refusal(github.get_issue(repo, number))


def open_refusal(issue: Issue) -> Refusal | None:
    """Why work on `issue` must not start (closed or locked), or None."""
    what = "pull request" if issue.is_pull_request else "issue"
    if issue.state != "open":
        return Refusal(reason=f"{what} #{issue.number} is {issue.state}")
    if issue.locked:
        return Refusal(reason=f"{what} #{issue.number} is locked")
    return None


def check_job(github: GuardGitHub, job: Job, config: RepoConfig) -> Refusal | None:
    """All API guards for a decided job, cheapest refusal first."""
    trigger = job.params.get("trigger")
    if trigger == "approve":
        refusal = check_permission(
            github, job.repo, job.actor, config, what="the approved plan", tell_from="read"
        )
    else:
        refusal = check_permission(github, job.repo, job.actor, config, what=job.kind.value)
    if refusal is None and job.number is not None:
        refusal = check_open(github, job.repo, job.number)
    if refusal is None and trigger == "assigned" and job.number is not None:
        refusal = check_assigned(github.get_issue(job.repo, job.number), job)
    if refusal is None and job.kind == JobKind.FOLLOW_UP and job.number is not None:
        refusal = check_follow_up(github.get_pull(job.repo, job.number), job, config)
    return refusal


def check_assigned(issue: Issue, job: Job) -> Refusal | None:
    """An assignment's job runs only while the issue is still assigned to agentbot."""
    login = _norm(str(job.params.get("assignee") or ""))
    if login and login in {_norm(a) for a in issue.assignees}:
        return None
    return Refusal(reason=f"#{issue.number} was unassigned from {login} before the job started")


# --- follow-ups ---------------------------------------------------------------------------


def check_follow_up(pr: PullRequest, job: Job, config: RepoConfig) -> Refusal | None:
    """Follow-ups only on our branches; a CI fix only for the latest commit, and capped."""
    trigger = job.params.get("trigger")
    if pr.from_fork(job.repo):
        # A fork's pull request (whatever its branch is called): a person with the permission
        # may ask (the permission guard ran first); a failing CI there asks nobody.
        if trigger == "ci":
            return Refusal(reason=f"CI on pull request #{pr.number} from a fork starts nothing")
        return None
    if not is_ours(pr, job.repo, config):
        comment = ""
        if trigger == "fix_command":
            comment = (
                f"`{config.commands.fix}` works on issues, and on agentbot's own pull requests"
                f" (branches `{config.pull_request.branch_prefix}…`). On this pull request, use"
                f" `{config.commands.implement} [tasks.md]` to implement a task list or"
                f" `{config.commands.cover}` to add tests."
            )
        reason = f"{config.commands.fix} on pull request #{pr.number}, whose branch"
        reason += f" {pr.head_ref or '(deleted)'} is not one of agentbot's"
        return Refusal(reason=reason, comment=comment)
    if trigger != "ci":
        return None
    sha = str(job.params.get("sha") or "")
    if sha != pr.head_sha:
        return Refusal(
            reason=f"CI failed on {sha[:12]}, not on the pull request's latest commit"
            f" {pr.head_sha[:12]}; a newer run decides"
        )
    attempts, shas = ci_attempts(pr.body)
    if sha in shas:
        return Refusal(reason=f"a CI fix for {sha[:12]} was already made")
    cap = config.followup.max_ci_fix_attempts
    if attempts >= cap:
        return Refusal(
            reason=f"CI fix attempts used up ({attempts} of {cap})",
            comment=(
                f"agentbot stopped after {attempts} attempts to fix the failing CI on this pull"
                f" request (`followup.max_ci_fix_attempts: {cap}`); the failure on"
                f" {sha[:12]} needs a person."
            ),
        )
    return None
