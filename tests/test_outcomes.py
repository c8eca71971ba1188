"""agentbot's pull requests followed to their end: from webhook deliveries through the
workers, and from the API alone (`agentbot stats --backfill`), giving the same figures."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.clock import FakeClock
from bot.models import Job, JobKind, JobResult, JobStatus, ValidationReport
from bot.ports import JobEnv
from bot.queue.sqlite import SqliteQueue
from bot.stats.outcomes import observe
from bot.worker import Worker, WorkerDeps, process_delivery
from tests.fakes.github import FakeGitHub
from tests.test_worker import REPO, labeled

DATA = Path(__file__).parent / "data" / "webhooks"
AGENTBOT = str(Path(sys.executable).with_name("agentbot"))
BOT = "agentbot[bot]"
COSTS = {1: 0.4, 2: 0.6, 3: 0.5, 4: 0.25}
"""Issue -> what the job that opened its pull request cost."""


def _examples(event: str) -> list[dict[str, Any]]:
    return [dict(e["payload"], **({"action": e["action"]} if e.get("action") else {}))
            for e in json.loads((DATA / f"{event}.json").read_text())]  # fmt: skip


def _first(event: str, action: str | None = None) -> dict[str, Any]:
    for p in _examples(event):
        if action is None or p.get("action") == action:
            p = copy.deepcopy(p)
            p["repository"] = {**p["repository"], "full_name": REPO}
            return p
    raise LookupError(event)


def pull_event(action: str, number: int, head: str, *, author: str = BOT, merged: bool = False):  # type: ignore[no-untyped-def]
    p = _first("pull_request", "opened" if action == "opened" else "closed")
    p["action"] = action
    pr = p["pull_request"]
    pr.update(number=number, merged=merged, head={**pr["head"], "ref": head})
    pr["user"] = {**pr["user"], "login": author, "type": "Bot" if author == BOT else "User"}
    pr["created_at"] = "2026-01-01T10:00:00Z"
    pr["merged_at"] = "2026-01-01T16:00:00Z" if merged else None
    pr["closed_at"] = "2026-01-01T16:00:00Z" if action == "closed" else None
    return p


def review_event(number: int, reviewer: str) -> dict[str, Any]:
    p = _first("pull_request_review", "submitted")
    p["pull_request"] = {**p["pull_request"], "number": number}
    p["review"] = {**p["review"], "user": {"login": reviewer, "type": "User"}}
    return p


def push_event(branch: str, sender: str, commits: int) -> dict[str, Any]:
    p = _first("push")
    p["ref"] = f"refs/heads/{branch}"
    kind = "Bot" if sender == BOT else "User"
    p["sender"] = {**p["sender"], "login": sender, "type": kind}
    p["commits"] = [{"id": f"{i:040x}", "message": "tweak"} for i in range(commits)]
    return p


def test_every_vendored_payload_gets_an_answer() -> None:
    for event in ("pull_request", "pull_request_review", "push", "issues"):
        for payload in _examples(event):
            observe(event, payload)  # never raises
    assert observe("pull_request", {"action": "closed"}) is None
    merged = observe("pull_request", pull_event("closed", 5, "agentbot/fix-issue-1", merged=True))
    assert merged is not None and getattr(merged, "action", "") == "merged"


class Opener:
    """A stand-in for the workflows: opens the issue's pull request at a known cost."""

    def __init__(self, pulls: dict[int, int]) -> None:
        self.pulls = pulls

    def __call__(self, job: Job, env: JobEnv) -> JobResult:
        assert job.number is not None
        n = job.number
        env.clock.sleep(30 * n)  # jobs of 30, 60, 90 and 120 seconds
        report = ValidationReport(profile="python", passed=n != 4)
        return JobResult(
            job=job, status=JobStatus.SUCCESS, cost_usd=COSTS[n], pr_number=self.pulls[n],
            branch=f"agentbot/fix-issue-{n}", validation=report,
        )  # fmt: skip


@pytest.fixture
def gh() -> Iterator[FakeGitHub]:
    with FakeGitHub() as fake:
        fake.add_repo(REPO)
        fake.set_permission(REPO, "alice", "write")
        for n in COSTS:
            fake.add_issue(REPO, number=n, title=f"bug {n}", labels=["agent-fix"])
        yield fake


def open_pulls(gh: FakeGitHub) -> dict[int, int]:
    """agentbot's pull requests for issues 1-4 and a person's; issue -> PR number."""
    pulls = {n: gh.add_pull(REPO, head=f"agentbot/fix-issue-{n}", user=BOT).number for n in COSTS}
    gh.add_pull(REPO, head="alice-work", user="alice")
    return pulls


def run_jobs(
    tmp: Path, gh: FakeGitHub, pulls: dict[int, int], events: list[tuple[str, Any]]
) -> Path:
    """Label issues 1-4 (each job opens its PR), then deliver `events`; the data dir."""
    data = tmp / "data"
    clock = FakeClock()
    queue = SqliteQueue(data / "agentbot.db", clock=clock)
    client = gh.client()
    opener = Opener(pulls)
    deps = WorkerDeps(
        queue=queue, github_for=lambda inst, repo: client,
        handlers={JobKind.FIX_ISSUE: opener}, data_dir=tmp, clock=clock,
    )  # fmt: skip
    worker = Worker(queue, process=lambda job: process_delivery(job, deps), clock=clock)
    deliveries = [("issues", labeled(n)) for n in COSTS] + events
    for i, (name, payload) in enumerate(deliveries):
        queue.enqueue(f"d{i}", name, json.dumps(payload).encode())
        assert worker.run_once()
        clock.advance(60)
    queue.close()
    return data


def stats(data: Path, gh: FakeGitHub, *args: str) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "AGENTBOT_"))}
    env.update(AGENTBOT_DATA_DIR=str(data), GITHUB_TOKEN="ghp_stats000000", GITHUB_API_URL=gh.url)
    done = subprocess.run(
        [AGENTBOT, "stats", "--json", *args], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))


def _check(f: dict[str, Any], pulls: dict[int, int]) -> None:
    assert (f["merged"], f["closed"], f["open"], f["zero_touch"]) == (2, 1, 1, 1)
    assert f["jobs"] == 4 and f["cost_usd"] == pytest.approx(1.75)
    assert f["cost_per_merged_pr_usd"] == pytest.approx(1.75 / 2)
    assert f["cost_per_job_usd"] == pytest.approx(1.75 / 4)
    assert f["success_rate"] == 1.0 and f["unverified_rate"] == pytest.approx(0.25)
    fix = f["by_kind"]["fix_issue"]
    assert (fix["merged"], fix["closed"], fix["open"]) == (2, 1, 1)
    assert f["by_repo"][REPO]["cost_per_merged_pr_usd"] == pytest.approx(0.875)
    rows = {p["number"]: p for p in f["pull_requests"]}
    assert set(rows) == set(pulls.values())  # the person's pull request is not followed
    touched = rows[pulls[2]]
    assert touched["human_commits"] == 1 and touched["review_rounds"] == 1
    assert not touched["zero_touch"] and rows[pulls[1]]["zero_touch"]
    assert touched["cost_usd"] == pytest.approx(0.6)


def _events(pulls: dict[int, int]) -> list[tuple[str, Any]]:
    one, two, three = pulls[1], pulls[2], pulls[3]
    return [
        ("pull_request", pull_event("opened", one, "agentbot/fix-issue-1")),
        ("push", push_event("agentbot/fix-issue-2", BOT, 2)),  # ours: not a person's
        ("push", push_event("agentbot/fix-issue-2", "alice", 1)),
        ("pull_request_review", review_event(two, "carol")),
        ("pull_request_review", review_event(two, "ci-helper[bot]")),
        ("pull_request", pull_event("closed", one, "agentbot/fix-issue-1", merged=True)),
        ("pull_request", pull_event("closed", two, "agentbot/fix-issue-2", merged=True)),
        ("pull_request", pull_event("closed", three, "agentbot/fix-issue-3")),
        ("pull_request", pull_event("reopened", three, "agentbot/fix-issue-3")),
        ("pull_request", pull_event("closed", three, "agentbot/fix-issue-3")),
        ("pull_request", pull_event("closed", 99, "alice-work", author="alice", merged=True)),
    ]


@pytest.mark.slow
def test_outcomes_from_deliveries_and_from_the_api_alone_agree(
    gh: FakeGitHub, tmp_path: Path
) -> None:
    pulls = open_pulls(gh)
    from_events = stats(run_jobs(tmp_path / "events", gh, pulls, _events(pulls)), gh)
    _check(from_events, pulls)
    first = next(p for p in from_events["pull_requests"] if p["number"] == pulls[1])
    assert first["hours_to_merge"] == 6.0  # opened 10:00, merged 16:00 (the payloads' times)

    # The same end state on GitHub, and a queue that saw no pull request event at all.
    store = gh
    for n, state in ((1, "merged"), (2, "merged"), (3, "closed")):
        issue = store.repos[REPO].issues[pulls[n]]
        issue.state = "closed"
        issue.closed_at = issue.updated_at
        assert issue.pull is not None
        issue.pull.merged = state == "merged"
    two = store.repos[REPO].issues[pulls[2]].pull
    assert two is not None
    two.commits = [("a" * 40, BOT), ("b" * 40, BOT), ("c" * 40, "alice")]
    two.reviews = [("carol", "CHANGES_REQUESTED"), ("ci-helper[bot]", "COMMENTED")]
    bare = run_jobs(tmp_path / "api", gh, pulls, [])
    before = stats(bare, gh)
    assert before["merged"] == 0 and before["open"] == 4  # only what the jobs recorded
    _check(stats(bare, gh, "--backfill", "--repo", REPO), pulls)
