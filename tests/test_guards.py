"""The API guards: permission ranks and who is told, fresh issue state, their order."""

from __future__ import annotations

import pytest

from bot.config import RepoConfig
from bot.followup.markers import ci_attempts, ci_marker
from bot.guards import check_job, check_open, check_permission, is_allowed_bot
from bot.models import Job, JobKind
from bot.models.github import Issue, PullRequest


class Recording:
    """A GuardGitHub that answers from tables and records what was asked."""

    def __init__(
        self, roles: dict[str, str], issue: Issue | None = None, pull: PullRequest | None = None
    ) -> None:
        self.roles = roles
        self.issue = issue or Issue(number=1, title="t")
        self.pull = pull or PullRequest(number=1)
        self.asked: list[str] = []

    def permission(self, repo: str, username: str) -> str:
        self.asked.append(f"permission {username}")
        return self.roles.get(username, "none")

    def get_issue(self, repo: str, number: int) -> Issue:
        self.asked.append(f"issue {number}")
        return self.issue

    def get_pull(self, repo: str, number: int) -> PullRequest:
        self.asked.append(f"pull {number}")
        return self.pull


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


# --- follow-ups on agentbot's own pull requests ----------------------------------------------

OURS = PullRequest(number=1, head_ref="agentbot/fix-issue-7", head_repo="o/r", head_sha="b" * 40)
PR_ISSUE = Issue(number=1, title="t", is_pull_request=True)


def follow_up(trigger: str, actor: str = "", **params: object) -> Job:
    return Job(
        kind=JobKind.FOLLOW_UP,
        repo="o/r",
        number=1,
        actor=actor,
        params={"trigger": trigger, **params},
    )


@pytest.mark.parametrize(
    ("pull", "reason", "told"),
    [
        (OURS, None, False),
        (OURS.model_copy(update={"head_ref": "feature"}), "not one of agentbot's", True),
        # A fork's pull request is worked on when someone with the permission asks (#27).
        (OURS.model_copy(update={"head_repo": "fork/r"}), None, False),
        (OURS.model_copy(update={"head_repo": "fork/r", "head_ref": "feature"}), None, False),
    ],
)
def test_fix_command_follows_up_only_on_our_branches(
    pull: PullRequest, reason: str | None, told: bool
) -> None:
    gh = Recording({"w": "write"}, PR_ISSUE, pull)
    refusal = check_job(gh, follow_up("fix_command", "w"), RepoConfig())
    assert (refusal is None) == (reason is None)
    if refusal is not None:
        assert reason is not None and reason in refusal.reason
        assert bool(refusal.comment) == told and "/implement" in refusal.comment


def test_a_forks_author_without_the_permission_is_refused_and_not_told() -> None:
    fork = OURS.model_copy(update={"head_repo": "contrib/r", "user": "contrib"})
    gh = Recording({"contrib": "read"}, PR_ISSUE, fork)
    refusal = check_job(gh, follow_up("fix_command", "contrib"), RepoConfig())
    assert refusal is not None and "contrib has read" in refusal.reason and not refusal.comment


def test_ci_on_a_forks_branch_named_like_ours_is_refused() -> None:
    fork = OURS.model_copy(update={"head_repo": "contrib/r"})
    gh = Recording({}, PR_ISSUE, fork)
    refusal = check_job(gh, follow_up("ci", sha="b" * 40), RepoConfig())
    assert refusal is not None and "from a fork" in refusal.reason


def test_a_read_only_reviewer_is_refused_before_the_branch_is_looked_at() -> None:
    gh = Recording({"r": "read"}, PR_ISSUE, OURS)
    refusal = check_job(gh, follow_up("review", "r"), RepoConfig())
    assert refusal is not None and "r has read" in refusal.reason and not refusal.comment
    assert gh.asked == ["permission r"]


@pytest.mark.parametrize(
    ("sha", "body", "cap", "reason", "stopped"),
    [
        ("b" * 40, "", 2, None, False),
        ("b" * 40, ci_marker(1, ["a" * 40]), 2, None, False),
        ("a" * 40, "", 2, "not on the pull request's latest commit", False),
        ("b" * 40, ci_marker(1, ["b" * 40]), 2, "already made", False),
        ("b" * 40, "text\n" + ci_marker(2, ["a" * 40, "c" * 40]), 2, "used up", True),
        ("b" * 40, "", 0, "used up", True),
    ],
)
def test_ci_fixes_are_for_the_latest_commit_and_capped(
    sha: str, body: str, cap: int, reason: str | None, stopped: bool
) -> None:
    cfg = RepoConfig.model_validate({"followup": {"max_ci_fix_attempts": cap}})
    gh = Recording({}, PR_ISSUE, OURS.model_copy(update={"body": body}))
    refusal = check_job(gh, follow_up("ci", sha=sha), cfg)
    assert (refusal is None) == (reason is None)
    if refusal is not None:
        assert reason is not None and reason in refusal.reason
        assert ("stopped after" in refusal.comment) == stopped


def test_the_ci_marker_round_trips() -> None:
    assert ci_attempts("") == (0, [])
    assert ci_attempts("x\n" + ci_marker(2, ["a" * 40, "b" * 40])) == (2, ["a" * 40, "b" * 40])
    # Only a whole line counts: text someone wrote around a copy of it does not.
    assert ci_attempts("x " + ci_marker(2, ["a" * 40])) == (0, [])


@pytest.mark.parametrize("role", ["read", "triage"])
def test_an_approval_by_a_reader_gets_one_polite_reply(role: str) -> None:
    job = Job(kind=JobKind.PLAN, repo="o/r", number=1, actor="u", params={"trigger": "approve"})
    refusal = check_job(Recording({"u": role}), job, RepoConfig())
    assert refusal is not None and refusal.comment.startswith("@u ")
    assert "the approved plan" in refusal.comment and "`write`" in refusal.comment
    # Without a role at all (a private repository's outsider) nothing is said.
    assert check_job(Recording({"u": "none"}), job, RepoConfig()).comment == ""  # type: ignore[union-attr]
    # Other triggers keep the quiet rule for readers.
    plan = job.model_copy(update={"params": {"trigger": "plan_command"}})
    said = check_job(Recording({"u": role}), plan, RepoConfig()).comment  # type: ignore[union-attr]
    assert bool(said) == (role == "triage")


def test_an_assignment_job_runs_only_while_still_assigned() -> None:
    job = Job(
        kind=JobKind.FIX_ISSUE,
        repo="o/r",
        number=1,
        actor="u",
        params={"trigger": "assigned", "assignee": "agentbot[bot]"},
    )
    still = Recording({"u": "write"}, issue=Issue(number=1, title="t", assignees=["AgentBot[bot]"]))
    assert check_job(still, job, RepoConfig()) is None
    gone = Recording({"u": "write"}, issue=Issue(number=1, title="t", assignees=["someone"]))
    refusal = check_job(gone, job, RepoConfig())
    assert refusal is not None and "unassigned" in refusal.reason and refusal.comment == ""
