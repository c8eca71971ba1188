"""The API guards: permission ranks and who is told, fresh issue state, their order."""

from __future__ import annotations

import pytest

from bot.config import RepoConfig
from bot.guards import check_job, check_open, check_permission, is_allowed_bot
from bot.models import Job, JobKind
from bot.models.github import Issue


class Recording:
    """A GuardGitHub that answers from tables and records what was asked."""

    def __init__(self, roles: dict[str, str], issue: Issue | None = None) -> None:
        self.roles = roles
        self.issue = issue or Issue(number=1, title="t")
        self.asked: list[str] = []

    def permission(self, repo: str, username: str) -> str:
        self.asked.append(f"permission {username}")
        return self.roles.get(username, "none")

    def get_issue(self, repo: str, number: int) -> Issue:
        self.asked.append(f"issue {number}")
        return self.issue


ROLES = ["none", "read", "triage", "write", "maintain", "admin"]


@pytest.mark.parametrize("needed", ROLES[1:])
@pytest.mark.parametrize("role", ROLES)
def test_permission_rank(needed: str, role: str) -> None:
    cfg = RepoConfig.model_validate({"min_permission": needed})
    refusal = check_permission(Recording({"u": role}), "o/r", "u", cfg, what="fix_issue")
    assert (refusal is None) == (ROLES.index(role) >= ROLES.index(needed))
    if refusal is not None:
        assert refusal.reason == f"u has {role} permission on o/r; fix_issue needs {needed}"
        # collaborators are told, outsiders are not
        assert bool(refusal.comment) == (ROLES.index(role) >= ROLES.index("triage"))
        if refusal.comment:
            assert refusal.comment.startswith("@u ") and f"`{needed}`" in refusal.comment


def test_allowed_bots_and_schedules_skip_the_permission_call() -> None:
    gh = Recording({})
    cfg = RepoConfig(allowed_bots=["renovate[bot]"])
    assert is_allowed_bot("Renovate", cfg) and is_allowed_bot("renovate[bot]", cfg)
    assert not is_allowed_bot("dependabot[bot]", cfg) and not is_allowed_bot("", cfg)
    assert check_permission(gh, "o/r", "renovate[bot]", cfg, what="x") is None
    assert check_permission(gh, "o/r", "", cfg, what="x") is None
    assert gh.asked == []


@pytest.mark.parametrize(
    ("state", "locked", "pr", "reason"),
    [
        ("open", False, False, None),
        ("closed", False, False, "issue #1 is closed"),
        ("open", True, False, "issue #1 is locked"),
        ("closed", False, True, "pull request #1 is closed"),
    ],
)
def test_issue_state_is_read_fresh(state: str, locked: bool, pr: bool, reason: str | None) -> None:
    issue = Issue(number=1, title="t", state=state, locked=locked, is_pull_request=pr)
    refusal = check_open(Recording({}, issue), "o/r", 1)
    assert (refusal.reason if refusal else None) == reason
    assert refusal is None or refusal.comment == ""  # never a comment on a closed issue


def test_check_job_asks_permission_first_and_stops_there() -> None:
    closed = Issue(number=5, title="t", state="closed")
    job = Job(kind=JobKind.FIX_ISSUE, repo="o/r", number=5, actor="eve")
    gh = Recording({"eve": "read"}, closed)
    refusal = check_job(gh, job, RepoConfig())
    assert refusal is not None and "eve has read" in refusal.reason
    assert gh.asked == ["permission eve"]
    gh = Recording({"eve": "write"}, closed)
    refusal = check_job(gh, job, RepoConfig())
    assert refusal is not None and refusal.reason == "issue #5 is closed"
    assert gh.asked == ["permission eve", "issue 5"]
    push = Job(kind=JobKind.IMPLEMENT, repo="o/r", ref="feature", actor="eve")
    gh = Recording({"eve": "write"})
    assert check_job(gh, push, RepoConfig()) is None
    assert gh.asked == ["permission eve"]  # no issue to look at
