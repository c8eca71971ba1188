"""The one use case through both doors: the same guard table, one decision per delivery,
no request for a delivery that cannot start a job, each GitHub fact asked once per job."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from bot.cli.run import action_door
from bot.clock import FakeClock
from bot.config import Settings
from bot.errors import ConfigError
from bot.events import Delivery, Ignore, settle
from bot.models import Job, JobKind, JobResult, JobStatus
from bot.ports import JobEnv
from bot.queue import JobState
from bot.queue.sqlite import SqliteQueue
from bot.wiring import worker_deps
from bot.worker import Worker, process_delivery
from bot.workflows.handlers import HANDLERS
from tests.fakes.github import FakeGitHub

REPO = "octo/app"
DATA = Path(__file__).parent / "data" / "webhooks"
ENV_NAMES = ("GITHUB_", "AGENTBOT_", "ANTHROPIC_")


def _example(event: str, action: str) -> dict[str, Any]:
    items = json.loads((DATA / f"{event}.json").read_text())
    return copy.deepcopy(next(i["payload"] for i in items if i.get("action") == action))


def _moved(p: dict[str, Any], number: int, actor: str, *, pr: bool = False) -> dict[str, Any]:
    p["repository"] = {**p["repository"], "full_name": REPO, "default_branch": "main"}
    p["issue"] = {**p["issue"], "number": number, "state": "open", "locked": False}
    p["issue"].pop("pull_request", None)
    if pr:
        p["issue"]["pull_request"] = {"url": f"https://api.github.com/repos/{REPO}/pulls/{number}"}
    p["sender"] = {**p["sender"], "login": actor, "type": "Bot" if "[bot]" in actor else "User"}
    p.pop("installation", None)
    return p


def labeled(number: int, actor: str, label: str = "agent-fix") -> tuple[str, dict[str, Any]]:
    """A real issues.labeled delivery on REPO."""
    p = _moved(_example("issues", "labeled"), number, actor)
    p["label"] = {**p["label"], "name": label}
    return "issues", p


def commented(
    number: int, actor: str, body: str, *, pr: bool = False
) -> tuple[str, dict[str, Any]]:
    """A real issue_comment.created delivery on REPO (on a pull request if `pr`)."""
    p = _moved(_example("issue_comment", "created"), number, actor, pr=pr)
    p["comment"] = {**p["comment"], "body": body, "user": dict(p["sender"])}
    return "issue_comment", p


OUR_HEAD = "c" * 40
"""The head commit of pull request #5, from agentbot's branch."""


def reviewed(number: int, actor: str) -> tuple[str, dict[str, Any]]:
    """A real pull_request_review.submitted delivery requesting changes on REPO's #number."""
    p = _example("pull_request_review", "submitted")
    p["repository"] = {**p["repository"], "full_name": REPO, "default_branch": "main"}
    user = {**p["sender"], "login": actor, "type": "User"}
    p["sender"], p["review"] = user, {**p["review"], "state": "changes_requested", "user": user}
    p["pull_request"] = {**p["pull_request"], "number": number, "state": "open"}
    head = {**p["pull_request"]["head"], "ref": "agentbot/fix-issue-1", "sha": OUR_HEAD}
    p["pull_request"]["head"] = {**head, "repo": {**head["repo"], "full_name": REPO}}
    p.pop("installation", None)
    return "pull_request_review", p


def ci_failed(number: int, sha: str) -> tuple[str, dict[str, Any]]:
    """A real check_suite.completed delivery: failed on agentbot's branch of #number."""
    p = _example("check_suite", "completed")
    p["repository"] = {**p["repository"], "full_name": REPO, "default_branch": "main"}
    suite = p["check_suite"]
    suite.update(conclusion="failure", head_branch="agentbot/fix-issue-1", head_sha=sha)
    suite["pull_requests"] = [{**suite["pull_requests"][0], "number": number}]
    suite["pull_requests"][0]["head"] = {
        **suite["pull_requests"][0]["head"],
        "ref": "agentbot/fix-issue-1",
    }
    p.pop("installation", None)
    return "check_suite", p


def starred() -> tuple[str, dict[str, Any]]:
    """A real star.created delivery on REPO."""
    p = _example("star", "created")
    p["repository"] = {**p["repository"], "full_name": REPO, "default_branch": "main"}
    return "star", p


class Recorder:
    """A handler that records the jobs it ran."""

    def __init__(self) -> None:
        self.jobs: list[Job] = []

    def __call__(self, job: Job, env: JobEnv) -> JobResult:
        self.jobs.append(job)
        return JobResult(job=job, status=JobStatus.SUCCESS, summary="ran")


@dataclass
class World:
    """The fake GitHub with a repository, issues #1-#3, pull requests #4 and #5 (agentbot's),
    and its people."""

    gh: FakeGitHub
    tmp: Path
    handler: Recorder

    def settings(self) -> Settings:
        return Settings(
            github_token=SecretStr("ghs_" + "t" * 36),
            github_api_url=self.gh.url,
            anthropic_api_key=SecretStr("sk-ant-test"),  # checked before a job runs
            data_dir=self.tmp / "data",
        )


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    import os

    for name in [n for n in os.environ if n.startswith(ENV_NAMES)]:
        monkeypatch.delenv(name)
    with FakeGitHub() as gh:
        gh.add_repo(REPO)
        for number in (1, 2, 3):
            gh.add_issue(REPO, number=number, title=f"Bug {number}")
        gh.add_pull(REPO, head="feature", title="A feature")
        gh.add_pull(REPO, head="agentbot/fix-issue-1", title="fix: bug 1", head_sha=OUR_HEAD)
        gh.issue(REPO, 2).state = "closed"  # the payloads still say open
        gh.issue(REPO, 3).locked = True
        for login, role in [("wendy", "write"), ("rita", "read"), ("tom", "triage")]:
            gh.set_permission(REPO, login, role)
        yield World(gh, tmp_path, Recorder())


# --- the doors ------------------------------------------------------------------------------

Outcome = JobResult | Ignore | str
"""What a door made of a delivery; a str is the error it failed with."""
Door = Callable[[World, str, dict[str, Any]], Outcome]


def through_the_action(w: World, event: str, payload: dict[str, Any]) -> Outcome:
    """`agentbot run`'s door, built as the command builds it, with the test's handler map."""
    handlers = dict.fromkeys(HANDLERS, w.handler)
    door = action_door(w.settings(), handlers, checkout=w.tmp, dry_run=False, inputs={})
    try:
        return door.handle(Delivery(event, payload))
    except ConfigError as exc:  # the command turns it into exit 2
        return str(exc)


def through_the_app(w: World, event: str, payload: dict[str, Any]) -> Outcome:
    """The App's door: stored, claimed by a worker, with deps built as `serve` builds them."""
    runs = len(list(w.tmp.glob("queue-*.db")))  # a fresh queue per delivery
    queue = SqliteQueue(w.tmp / f"queue-{runs}.db", clock=FakeClock())
    try:
        deps = worker_deps(w.settings(), queue, dict.fromkeys(HANDLERS, w.handler))
        outcomes: list[Outcome] = []

        def process(record: Any) -> JobResult | Ignore:
            outcomes.append(process_delivery(record, deps))
            return outcomes[-1]  # type: ignore[return-value]

        queue.enqueue("d-1", event, json.dumps(payload).encode())
        Worker(queue, process=process, worker_id="w").run_once()
        rec = queue.get("d-1")
        assert rec is not None
        return rec.error if rec.state is JobState.DEAD else outcomes[0]
    finally:
        queue.close()


DOORS = [pytest.param(through_the_action, id="action"), pytest.param(through_the_app, id="app")]


# --- one table of guard cases, through each door ------------------------------------------------

GUARD_CASES = [
    # (id, delivery, runs, comments posted (a fragment each), reason fragment)
    ("writer-fixes-an-issue", commented(1, "wendy", "/fix"), True, [], ""),
    ("labeller-with-write", labeled(1, "wendy"), True, [], ""),
    ("reader-fixes-an-issue", commented(1, "rita", "/fix"), False, [], "rita has read"),
    ("triager-is-told", commented(1, "tom", "/fix"), False, ["needs `write`"], "tom has triage"),
    ("reader-labels", labeled(1, "rita"), False, [], "rita has read"),
    # /fix on a pull request is a follow-up: the permission first, then whose branch it is.
    ("reader-fixes-a-pr", commented(4, "rita", "/fix", pr=True), False, [], "rita has read"),
    (
        "writer-fixes-a-pr",
        commented(4, "wendy", "/fix", pr=True),
        False,
        ["/implement"],
        "/fix on pull",
    ),
    ("closed-issue", labeled(2, "wendy"), False, [], "issue #2 is closed"),
    ("locked-issue", commented(3, "wendy", "/fix"), False, [], "issue #3 is locked"),
    ("foreign-bot", commented(1, "ci[bot]", "/fix"), False, [], "not in allowed_bots"),
    ("labeller-starts-tdd", labeled(1, "wendy", "agent-tdd"), True, [], ""),
    ("plain-comment", commented(1, "wendy", "thanks!"), False, [], "not an agentbot command"),
    ("star", starred(), False, [], "star.created does not trigger"),
    # Follow-ups on agentbot's own pull request #5.
    ("writer-reviews-our-pr", reviewed(5, "wendy"), True, [], ""),
    ("reader-reviews-our-pr", reviewed(5, "rita"), False, [], "rita has read"),
    ("writer-fixes-our-pr", commented(5, "wendy", "/fix rename it", pr=True), True, [], ""),
    ("ci-fails-on-our-pr", ci_failed(5, OUR_HEAD), True, [], ""),
    ("ci-fails-on-an-old-commit", ci_failed(5, "d" * 40), False, [], "latest commit"),
]


@pytest.mark.parametrize("door", DOORS)
@pytest.mark.parametrize(
    ("delivery", "runs", "comments", "reason"),
    [pytest.param(*case[1:], id=case[0]) for case in GUARD_CASES],
)
def test_both_doors_guard_alike(
    world: World,
    door: Door,
    delivery: tuple[str, dict[str, Any]],
    runs: bool,
    comments: list[str],
    reason: str,
) -> None:
    event, payload = delivery
    outcome = door(world, event, copy.deepcopy(payload))
    assert bool(world.handler.jobs) == runs
    if runs:
        assert isinstance(outcome, JobResult)
    else:
        assert isinstance(outcome, Ignore) and reason in outcome.reason, outcome
    posted = [c.json["body"] for c in world.gh.calls_to("POST", r".*/comments")]
    assert len(posted) == len(comments), posted
    for body, fragment in zip(posted, comments, strict=True):
        assert fragment in body


@pytest.mark.parametrize("door", DOORS)
@pytest.mark.parametrize(
    "delivery",
    [
        pytest.param(starred(), id="wrong-event"),
        pytest.param(commented(1, "wendy", "thanks, looks good"), id="plain-comment"),
        pytest.param(commented(1, "wendy", "<!-- agentbot:progress -->"), id="our-progress"),
        pytest.param(("issues", {**labeled(1, "wendy")[1], "action": "opened"}), id="wrong-action"),
    ],
)
def test_a_delivery_that_cannot_start_a_job_makes_no_request(
    world: World, door: Door, delivery: tuple[str, dict[str, Any]]
) -> None:
    event, payload = delivery
    assert isinstance(door(world, event, payload), Ignore)
    assert world.gh.calls == []


@pytest.mark.parametrize("door", DOORS)
def test_one_decision_per_delivery(
    world: World, door: Door, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`settle` runs once per delivery, also when a broken config makes it decide twice today."""
    settled: list[int] = []

    def counting(*args: Any, **kwargs: Any) -> Job | Ignore:
        settled.append(1)
        return settle(*args, **kwargs)

    monkeypatch.setattr("bot.usecase.settle", counting)
    assert isinstance(door(world, *labeled(1, "wendy")), JobResult)
    assert len(settled) == 1
    world.gh.set_file(REPO, ".github/agentbot.yml", "budget: {max_usd_per_jobb: 1}\n")
    outcome = door(world, *labeled(1, "wendy"))
    assert isinstance(outcome, str) and "max_usd_per_jobb" in outcome
    assert len(settled) == 2
    (told,) = world.gh.calls_to("POST", rf"/repos/{REPO}/issues/1/comments")
    assert "max_usd_per_jobb" in told.json["body"]


def test_app_mode_records_the_kind_before_it_runs(world: World) -> None:
    assert isinstance(through_the_app(world, *labeled(1, "wendy")), JobResult)
    (job,) = world.handler.jobs
    assert (job.kind, job.number, job.delivery_id) == (JobKind.FIX_ISSUE, 1, "d-1")


@pytest.mark.slow
def test_a_fix_in_app_mode_asks_each_fact_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The App's whole path for a real fix: every GET is a different question."""
    import os

    from tests.e2e import REPO as CALC
    from tests.e2e import fast_validation_yaml
    from tests.e2e import world as e2e_world
    from tests.fakes.gitrepo import server_url
    from tests.test_fix_issue import fix_script

    for name in [n for n in os.environ if n.startswith(ENV_NAMES)]:
        monkeypatch.delenv(name)
    with e2e_world(tmp_path, fix_script(), repo_yaml=fast_validation_yaml()) as w:
        w.gh.set_permission(CALC, "alice", "write")
        w.gh.add_issue(CALC, number=7, title="add() is wrong", labels=["agent-fix"], user="bob")
        settings = Settings(
            github_token=SecretStr("ghs_" + "t" * 36),
            github_api_url=w.gh.url,
            github_server_url=server_url(tmp_path / "server"),
            anthropic_api_key=SecretStr("sk-ant-test"),
            anthropic_base_url=w.llm.base_url,
            data_dir=tmp_path / "data",
        )
        queue = SqliteQueue(tmp_path / "queue.db", clock=FakeClock())
        try:
            deps = worker_deps(settings, queue, HANDLERS)
            event, payload = labeled(7, "alice")
            payload["repository"]["full_name"] = CALC
            queue.enqueue("d-7", event, json.dumps(payload).encode())
            Worker(queue, process=lambda r: process_delivery(r, deps), worker_id="w").run_once()
            rec = queue.get("d-7")
            assert rec is not None and rec.result is not None, rec and rec.error
            assert rec.result.status is JobStatus.SUCCESS, rec.result.error
        finally:
            queue.close()
        calls = [f"{c.method} {c.path} {sorted(c.query.items())}" for c in w.gh.calls]
        reads = [c for c in calls if c.startswith("GET ")]
        assert len(reads) == len(set(reads)), "\n".join(calls)
        # 10, and 3 for the check run on the pull request it opened (read head, create, finish)
        assert len(calls) <= 10, "\n".join(calls)


def test_the_action_reads_the_config_path_it_is_given(world: World) -> None:
    world.gh.set_file(REPO, ".github/bot.yml", "labels: {fix: 'bot:fix'}\n")
    handlers = dict.fromkeys(HANDLERS, world.handler)
    door = action_door(
        world.settings(),
        handlers,
        checkout=world.tmp,
        dry_run=False,
        inputs={},
        config_path=".github/bot.yml",
    )
    assert isinstance(door.handle(Delivery(*labeled(1, "wendy", "bot:fix"))), JobResult)
    fetched = world.gh.calls_to("GET", rf"/repos/{REPO}/contents/.*")
    assert [c.path for c in fetched] == [f"/repos/{REPO}/contents/.github/bot.yml"]
