"""Follow-up triggers on agentbot's own pull requests: reviews, review comments, failed CI.

A follow-up works on the pull request's branch, so only branches of ours start one: the
head branch starts with `pull_request.branch_prefix` (`agentbot/`) and lives in this
repository (never a fork named like ours). On a fork's pull request (any branch name) a
review is for its author, so only one that starts with the fix command (`/fix`, in the
review's body or the inline comment) asks agentbot; CI on a fork's branch asks nobody.
Reviews and review comments are people asking:
the bot's own replies and other bots are ignored, and the doors check the reviewer's
permission. A failed check suite or workflow run is nobody's request (the bot's own push
may have caused it): no sender rule applies, and loops are stopped by the doors' guards
instead (only the pull request's latest commit, at most `followup.max_ci_fix_attempts`
fixes), plus two payload rules here: agentbot's own check suite and its own workflow never
count.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bot.config import COMMAND_SIGILS
from bot.events.decision import Ignore
from bot.events.followup_payloads import (
    CheckSuiteEvent,
    Head,
    PullRef,
    ReviewCommentEvent,
    ReviewEvent,
    Run,
    WorkflowRun,
    WorkflowRunEvent,
)
from bot.events.payloads import Envelope
from bot.events.rules import (
    Context,
    Route,
    early,
    event_label,
    ignore,
    itself,
    job,
    norm_login,
    other_bot,
    parse_event,
)
from bot.events.triggers import match_command
from bot.models import Job, JobKind

MAX_REVIEW_BODY = 4000
"""Characters of a review's body carried in the job (it travels in dispatch inputs too)."""

FAILED = ("failure", "timed_out")
"""CI conclusions a follow-up tries to fix (not `cancelled`, `action_required`, …)."""


# --- reviews ------------------------------------------------------------------------------


def _pull_state(ev: ReviewEvent | ReviewCommentEvent) -> Ignore | None:
    pr = ev.pull_request
    if pr.state == "closed":
        return ignore(ev, f"pull request #{pr.number} is closed", number=pr.number)
    if pr.locked:
        return ignore(ev, f"pull request #{pr.number} is locked", number=pr.number)
    return None


def _fork(ev: Envelope, head: Head) -> bool:
    """True when the branch lives in another repository than the event's."""
    return head.repo is not None and head.repo.full_name not in (None, ev.repository.full_name)


def _fork_ask(text: str, ctx: Context) -> str | None:
    """The words after `/fix` when `text` starts with it, else None."""
    matched = match_command(text, ctx.config.commands, ["fix"])
    if matched is None:
        return None
    more = text.lstrip().partition("\n")[2]
    return f"{matched[1]}\n{more}".strip()


def _not_ours(ev: Envelope, head: Head, ctx: Context, number: int | None) -> Ignore | None:
    prefix = ctx.config.pull_request.branch_prefix
    if not prefix.strip() or not head.ref.startswith(prefix):
        return ignore(ev, f"branch {head.ref} is not one of agentbot's ({prefix}…)", number=number)
    if head.repo is not None and head.repo.full_name not in (None, ev.repository.full_name):
        return ignore(ev, f"branch {head.ref} is on the fork {head.repo.full_name}", number=number)
    return None


def screen_review(action: str, payload: Mapping[str, Any], bot_login: str) -> Envelope | Ignore:
    """A review requesting changes, by someone other than the bot, on an open pull request."""
    if action != "submitted":
        return early(payload, f"{event_label('pull_request_review', action)} starts nothing")
    ev = parse_event(ReviewEvent, "pull_request_review", payload)
    if isinstance(ev, Ignore):
        return ev
    for user in (ev.sender, ev.review.user):
        if guard := itself(user, bot_login, ev):
            return guard
    commands = (ev.review.body or "").lstrip().startswith(COMMAND_SIGILS)  # `/fix` on a fork
    if not _changes_requested(ev) and not commands:
        return _not_requested(ev)
    return _pull_state(ev) or ev


def _changes_requested(ev: ReviewEvent) -> bool:
    return ev.review.state.casefold() == "changes_requested"


def _not_requested(ev: ReviewEvent) -> Ignore:
    number, state = ev.pull_request.number, ev.review.state or "no state"
    return ignore(ev, f"review on #{number} is {state}, not changes requested", number=number)


def screen_review_comment(
    action: str, payload: Mapping[str, Any], bot_login: str
) -> Envelope | Ignore:
    """A new inline comment by someone other than the bot, on an open pull request."""
    if action != "created":
        return early(
            payload, f"{event_label('pull_request_review_comment', action)} starts nothing"
        )
    ev = parse_event(ReviewCommentEvent, "pull_request_review_comment", payload)
    if isinstance(ev, Ignore):
        return ev
    for user in (ev.sender, ev.comment.user):
        if guard := itself(user, bot_login, ev):
            return guard
    return _pull_state(ev) or ev


def settle_review(event: Envelope, ctx: Context) -> Job | Ignore:
    """A follow-up on our branch for the reviewer (the doors check their permission)."""
    assert isinstance(event, ReviewEvent | ReviewCommentEvent)
    pr = event.pull_request
    if isinstance(event, ReviewEvent):
        author, trigger, thing_id = event.review.user or event.sender, "review", event.review.id
    else:
        author, trigger, thing_id = event.comment.user or event.sender, "review_comment", None
        thing_id = event.comment.id
    for user in (event.sender, author):
        if guard := other_bot(user, ctx.config, event):
            return guard
    text = (event.review.body if isinstance(event, ReviewEvent) else event.comment.body) or ""
    fork = _fork(event, pr.head)
    asked = _fork_ask(text, ctx) if fork else text.strip()
    if asked is None:
        fix = ctx.config.commands.fix
        why = f"{trigger} on the fork's pull request #{pr.number} does not start with {fix}"
        return ignore(event, why, number=pr.number)
    if not fork and (guard := _not_ours(event, pr.head, ctx, pr.number)):
        return guard
    if not fork and isinstance(event, ReviewEvent) and not _changes_requested(event):
        return _not_requested(event)
    if not ctx.config.followup.reviews:
        return ignore(event, "follow-ups on reviews are off (followup.reviews)", number=pr.number)
    if author is None:
        return ignore(event, f"{trigger} on #{pr.number} names no author", number=pr.number)
    params: dict[str, Any] = {"trigger": trigger}
    if isinstance(event, ReviewEvent) and asked:
        # A review without inline comments asks in its body; capped, fenced where used.
        params["review_body"] = asked[:MAX_REVIEW_BODY]
    if thing_id is not None:
        params[f"{trigger}_id"] = thing_id
    if pr.head.sha:
        params["sha"] = pr.head.sha
    return job(
        event,
        ctx,
        JobKind.FOLLOW_UP,
        author.login,
        number=pr.number,
        ref=pr.head.ref,
        params=params,
    )


# --- failed CI ----------------------------------------------------------------------------


def _run_of(ev: Envelope) -> tuple[Run, str]:
    if isinstance(ev, CheckSuiteEvent):
        return ev.check_suite, "check_suite"
    assert isinstance(ev, WorkflowRunEvent)
    return ev.workflow_run, "workflow_run"


def screen_ci(action: str, payload: Mapping[str, Any], bot_login: str) -> Envelope | Ignore:
    """A check suite or workflow run that completed with a failure on a named branch."""
    event_name = "check_suite" if "check_suite" in payload else "workflow_run"
    if action != "completed":
        return early(payload, f"{event_label(event_name, action)} starts nothing")
    model = CheckSuiteEvent if event_name == "check_suite" else WorkflowRunEvent
    ev = parse_event(model, event_name, payload)
    if isinstance(ev, Ignore):
        return ev
    run, _ = _run_of(ev)
    if run.conclusion not in FAILED:
        return ignore(ev, f"{event_name} concluded {run.conclusion or 'nothing'}, not a failure")
    if not run.head_branch or not run.head_sha:
        return ignore(ev, f"{event_name} names no branch and commit")
    if isinstance(ev, CheckSuiteEvent) and ev.check_suite.app and ev.check_suite.app.slug:
        slug = ev.check_suite.app.slug
        if bot_login.strip() and norm_login(slug) == norm_login(bot_login):
            return ignore(ev, "agentbot's own check suite failed; ignored to avoid loops")
    return ev


def settle_ci(event: Envelope, ctx: Context) -> Job | Ignore:
    """A CI follow-up on our branch's pull request, for the failing commit."""
    run, event_name = _run_of(event)
    assert run.head_branch and run.head_sha
    if isinstance(event, WorkflowRunEvent):
        path = event.workflow_run.path or (event.workflow.path if event.workflow else None) or ""
        workflow = ctx.config.execution.workflow
        if path and path.rsplit("/", 1)[-1] == workflow:
            return ignore(event, f"agentbot's own workflow {workflow} failed; ignored")
    if guard := _not_ours(event, Head(ref=run.head_branch), ctx, None):
        return guard
    head_repo = event.workflow_run.head_repository if isinstance(event, WorkflowRunEvent) else None
    if head_repo is not None and head_repo.full_name not in (None, event.repository.full_name):
        return ignore(event, f"{event_name} ran on the fork {head_repo.full_name}; ignored")
    mine = [p for p in run.pull_requests if p.head is None or p.head.ref == run.head_branch]
    # A pull request from a fork names its head repository apart from the base one.
    prs = [p.number for p in mine if not _foreign(p)]
    if len(prs) < len(mine) and not prs:
        return ignore(event, f"{event_name} on {run.head_branch} is a fork's branch; ignored")
    if not prs:
        return ignore(event, f"{event_name} on {run.head_branch} belongs to no pull request")
    params: dict[str, Any] = {"trigger": "ci", "sha": run.head_sha, "ci_event": event_name}
    if run.id is not None:
        params["ci_run_id"] = run.id
    if isinstance(run, WorkflowRun) and run.name:
        params["ci_name"] = run.name
    return job(event, ctx, JobKind.FOLLOW_UP, "", number=prs[0], ref=run.head_branch, params=params)


def _foreign(pull: PullRef) -> bool:
    """True for a CI run's pull request whose head repository is not its base's."""
    if pull.head is None or pull.base is None or pull.head.repo is None or pull.base.repo is None:
        return False
    head, base = pull.head.repo, pull.base.repo
    return (head.id, head.url) != (base.id, base.url)


FOLLOWUP_ROUTES: dict[str, Route] = {
    "pull_request_review": Route(screen_review, settle_review),
    "pull_request_review_comment": Route(screen_review_comment, settle_review),
    "check_suite": Route(screen_ci, settle_ci),
    "workflow_run": Route(screen_ci, settle_ci),
}
"""Merged into `bot.events.routes.ROUTES`."""
