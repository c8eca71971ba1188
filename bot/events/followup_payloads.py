"""Payload models of the follow-up events (reviews, review comments, check suites, workflow
runs): only the fields routing reads, strict as in `bot.events.payloads`."""

from __future__ import annotations

from pydantic import Field

from bot.events.payloads import Envelope, Payload, User


class RepoRef(Payload):
    """The repository of a branch (check suites name it without `full_name`, by id and url)."""

    full_name: str | None = None
    id: int | None = None
    url: str | None = None


class Head(Payload):
    """A pull request's head branch."""

    ref: str
    sha: str = ""
    repo: RepoRef | None = None


class PullRequest(Payload):
    """The pull request a review event is about."""

    number: int = Field(gt=0)
    state: str | None = None
    locked: bool | None = None
    head: Head


class Review(Payload):
    """A submitted review."""

    id: int | None = None
    state: str = ""
    body: str | None = None
    user: User | None = None


class ReviewComment(Payload):
    """An inline review comment."""

    id: int | None = None
    body: str | None = None
    user: User | None = None
    in_reply_to_id: int | None = None


class ReviewEvent(Envelope):
    """`pull_request_review`."""

    review: Review
    pull_request: PullRequest


class ReviewCommentEvent(Envelope):
    """`pull_request_review_comment`."""

    comment: ReviewComment
    pull_request: PullRequest


class PullRef(Payload):
    """A pull request a CI run belongs to."""

    number: int = Field(gt=0)
    head: Head | None = None
    base: Head | None = None


class App(Payload):
    """The App whose check suite it is."""

    slug: str | None = None


class Run(Payload):
    """What check suites and workflow runs share."""

    id: int | None = None
    head_branch: str | None = None
    head_sha: str | None = None
    conclusion: str | None = None
    pull_requests: list[PullRef] = Field(default_factory=list)


class CheckSuite(Run):
    """A check suite (`check_suite.completed`)."""

    app: App | None = None


class WorkflowRun(Run):
    """A workflow run (`workflow_run.completed`)."""

    name: str | None = None
    path: str | None = None
    head_repository: RepoRef | None = None


class CheckSuiteEvent(Envelope):
    """`check_suite`."""

    check_suite: CheckSuite


class Workflow(Payload):
    """The workflow a run belongs to (older payloads name its path only here)."""

    path: str | None = None


class WorkflowRunEvent(Envelope):
    """`workflow_run`."""

    workflow_run: WorkflowRun
    workflow: Workflow | None = None
