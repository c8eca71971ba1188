"""Small pydantic models of the webhook fields routing reads; everything else is ignored.

Models are strict (GitHub sends JSON types, so `"5"` is not an issue number and `true` is
not an id): a payload that does not fit becomes an `Ignore` naming the bad field, never an
exception. Field meanings follow https://docs.github.com/en/webhooks/webhook-events-and-payloads.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

# GitHub owner and repository names: letters, digits, `-`, `_`, `.`.
REPO_PATTERN = r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$"
_REPO_RE = re.compile(REPO_PATTERN)


class Payload(BaseModel):
    """Base of the payload models: strict types, unknown fields ignored, immutable."""

    model_config = ConfigDict(strict=True, extra="ignore", frozen=True)


class User(Payload):
    """A sender, comment author or label applier."""

    login: str
    type: str = ""
    """`User`, `Bot` or `Organization`."""

    @property
    def is_bot(self) -> bool:
        """True for App and bot accounts (type `Bot` or a `[bot]` login)."""
        return self.type == "Bot" or self.login.endswith("[bot]")


class Repository(Payload):
    """The repository an event happened in."""

    full_name: str = Field(pattern=REPO_PATTERN)
    default_branch: str | None = None


class Installation(Payload):
    """The App installation that received the event (absent for plain webhooks and Actions)."""

    id: int


class Envelope(Payload):
    """Fields every routed event carries."""

    action: str | None = None
    sender: User | None = None
    repository: Repository
    installation: Installation | None = None


class Label(Payload):
    """The label an `issues.labeled` event applied."""

    name: str


class Issue(Payload):
    """An issue, or a pull request seen through the issues API (`pull_request` present)."""

    number: int = Field(gt=0)
    state: str | None = None
    locked: bool | None = None
    pull_request: dict[str, Any] | None = None

    @property
    def is_pull_request(self) -> bool:
        """Issue comments on pull requests arrive as `issue_comment` with this key set."""
        return self.pull_request is not None


class Comment(Payload):
    """An issue or pull-request conversation comment."""

    id: int | None = None
    body: str | None = None
    user: User | None = None


class IssuesEvent(Envelope):
    """`issues` (https://docs.github.com/en/webhooks/webhook-events-and-payloads#issues)."""

    issue: Issue
    label: Label | None = None
    assignee: User | None = None
    """Who `issues.assigned`/`unassigned` added or removed."""


class IssueCommentEvent(Envelope):
    """`issue_comment` (on issues and pull requests alike)."""

    issue: Issue
    comment: Comment


class Commit(Payload):
    """One pushed commit's file lists."""

    added: list[str] = Field(default_factory=list)
    modified: list[str] = Field(default_factory=list)
    removed: list[str] = Field(default_factory=list)


class Pusher(Payload):
    """Who pushed (a git identity, not always a GitHub login)."""

    name: str | None = None


class PushEvent(Envelope):
    """`push` (https://docs.github.com/en/webhooks/webhook-events-and-payloads#push)."""

    ref: str
    after: str | None = None
    deleted: bool = False
    commits: list[Commit] = Field(default_factory=list)
    head_commit: Commit | None = None
    pusher: Pusher | None = None


class ScheduleEvent(Envelope):
    """Actions' `schedule` event: the cron line that fired."""

    schedule: str | None = None


class WorkflowDispatchEvent(Envelope):
    """`workflow_dispatch`: a manual or API run with the workflow's inputs."""

    inputs: dict[str, Any] | None = None
    ref: str | None = None


P = TypeVar("P", bound=Payload)


def parse(model: type[P], payload: Mapping[str, Any]) -> P | str:
    """Validate `payload` into `model`, or return why not (`at issue.number: ...`)."""
    try:
        return model.model_validate(dict(payload))
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        where = ".".join(str(part) for part in err["loc"]) or "top level"
        return f"at {where}: {err['msg']}"


def installation_id(payload: Mapping[str, Any]) -> int | None:
    """The App installation id of a delivery, or None when absent or malformed."""
    inst = payload.get("installation") if isinstance(payload, Mapping) else None
    value = inst.get("id") if isinstance(inst, Mapping) else None
    # bool is an int subclass; `"id": true` is not an id.
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def repo_full_name(payload: Mapping[str, Any]) -> str | None:
    """`owner/name` of the delivery's repository, or None when absent or malformed."""
    repo = payload.get("repository") if isinstance(payload, Mapping) else None
    name = repo.get("full_name") if isinstance(repo, Mapping) else None
    return name if isinstance(name, str) and is_repo_name(name) else None


def is_repo_name(name: str) -> bool:
    """True for an `owner/name` GitHub could have made."""
    # `.` and `..` match the pattern but would turn API calls into other endpoints' paths.
    return _REPO_RE.fullmatch(name) is not None and not set(name.split("/")) & {".", ".."}
