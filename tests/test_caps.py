"""Spend caps over time on the App: jobs until the daily cap, the next refused with one
comment, the running one stopped at the cap, a reset the next UTC day, refuel stopping."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.config import RepoConfig
from bot.errors import ConfigError, LimitsExceeded
from bot.llm import AnthropicLLM
from bot.models import Job, JobKind, JobStatus
from bot.queue import JobQueue, JobRecord, JobState, open_queue
from bot.queue.sqlite import SqliteQueue
from bot.stats.caps import Cap, caps, period_end, period_start, reached
from bot.worker import Worker, WorkerDeps, process_delivery
from bot.worker.spend import SpendCaps
from bot.workflows.fix.story import fix_issue
from bot.workflows.handlers import HANDLERS
from bot.workflows.refuel.story import refuel
from tests.e2e import FIX_EDIT, REPO, TEST_EDIT, World, fast_validation_yaml, world
from tests.fakes.anthropic import Step, finish, reply, tool_use, usage
from tests.fakes.gitrepo import server_url
from tests.test_queue_contract import queue_url
from tests.test_worker import labeled as app_labeled

__all__ = ["queue_url"]  # the fixture: each scenario on SQLite and on PostgreSQL

CALL = usage(100_000, 0)
"""One model call of the script: 100k input tokens of claude-sonnet-4-6, $0.30."""


def fix_calls() -> list[Step]:
    """A whole fix in three $0.30 calls: view, edit with a test, finish."""
    view = {"command": "view", "path": "calc.py"}
    return [
        reply(tool_use("str_replace_based_edit_tool", view), usage=CALL),
        reply(
            tool_use("str_replace_based_edit_tool", FIX_EDIT),
            tool_use("str_replace_based_edit_tool", TEST_EDIT),
            usage=CALL,
        ),
        reply(
            finish(summary="add() now adds", artifacts={"files_changed": ["calc.py"]}), usage=CALL
        ),
    ]


def labeled(number: int) -> dict[str, object]:
    """A real issues.labeled payload for REPO#number by alice."""
    p = app_labeled(number)
    p["repository"] = {**p["repository"], "full_name": REPO, "name": REPO.split("/")[1]}
    return p


def test_days_and_months_are_utc_calendar_periods() -> None:
    now = datetime(2026, 12, 31, 23, 59, tzinfo=UTC)
    assert period_start("day", now) == datetime(2026, 12, 31, tzinfo=UTC)
    assert period_end("day", now) == datetime(2027, 1, 1, tzinfo=UTC)
    assert period_start("month", now) == datetime(2026, 12, 1, tzinfo=UTC)
    assert period_end("month", now) == datetime(2027, 1, 1, tzinfo=UTC)
    assert period_end("month", datetime(2026, 2, 28, 12, tzinfo=UTC)) == datetime(
        2026, 3, 1, tzinfo=UTC
    )


def test_the_first_reached_cap_names_itself_and_its_reset() -> None:
    found = caps("o/r", repo_day=None, repo_month=10.0, day=2.0, month=None)
    assert found == [Cap("o/r", "month", 10.0), Cap("", "day", 2.0)]
    spent = {"o/r": 1.0, None: 2.0}
    use = reached(found, lambda repo, since: spent[repo], datetime(2026, 5, 4, 9, tzinfo=UTC))
    assert use is not None and use.cap == Cap("", "day", 2.0)
    assert "AGENTBOT_MAX_USD_PER_DAY" in use.message()
    assert "resets at 2026-05-05 00:00 UTC" in use.message()
    spent[None] = 1.99
    assert reached(found, lambda repo, since: spent[repo], datetime(2026, 5, 4, tzinfo=UTC)) is None


@pytest.mark.parametrize(
    "yaml", ["budget: {max_usd_per_day: 0}", "budget: {max_usd_per_month: ten}"]
)
def test_a_bad_repository_cap_names_its_key(yaml: str) -> None:
    with pytest.raises(ConfigError, match=r"budget\.max_usd_per_(day|month)"):
        RepoConfig.from_text(yaml)


@dataclass
class App:
    """A worker over a real SQLite queue, the real handlers, fake GitHub and model."""

    w: World
    queue: JobQueue
    worker: Worker
    sent: int = 0

    def label(self, number: int) -> JobRecord:
        self.sent += 1
        delivery = f"d{self.sent}"
        self.queue.enqueue(delivery, "issues", json.dumps(labeled(number)).encode())
        assert self.worker.run_once()
        job = self.queue.get(delivery)
        assert job is not None
        return job

    def comments(self, number: int) -> list[str]:
        return [c.body for c in self.w.gh.comments_on(REPO, number)]


@contextmanager
def app(
    tmp_path: Path, url: str, script: list[Step], yaml: str, *, per_day: float | None = None
) -> Iterator[App]:
    with world(tmp_path, script, repo_yaml=fast_validation_yaml(yaml)) as w:
        w.clock.advance(9 * 3600)  # 2026-01-01 09:00 UTC
        for n in (1, 2, 3):
            w.gh.add_issue(REPO, number=n, title=f"add() is wrong ({n})", labels=["agent-fix"])
        w.gh.set_permission(REPO, "alice", "write")
        queue = open_queue(url, clock=w.clock)
        client = w.gh.client(clock=w.clock)
        deps = WorkerDeps(
            queue=queue,
            github_for=lambda inst, repo: client,
            handlers=HANDLERS,
            llm_factory=lambda model: AnthropicLLM(
                model=model, api_key="sk-test", base_url=w.llm.base_url, clock=w.clock
            ),
            data_dir=tmp_path / "data",
            server_url=server_url(tmp_path / "server"),
            clock=w.clock,
            max_usd_per_day=per_day,
        )
        worker = Worker(queue, process=lambda job: process_delivery(job, deps), clock=w.clock)
        try:
            yield App(w, queue, worker)
        finally:
            queue.close()


@pytest.mark.slow
def test_jobs_until_the_daily_cap_then_one_refusal_and_a_reset_the_next_day(
    tmp_path: Path, queue_url: str
) -> None:
    # Job 1 spends $0.90; job 2 spends $0.30 more, crossing the $1.00 cap, and stops before
    # its next call; job 3 is refused with one comment; the next UTC day it runs.
    script = [*fix_calls(), fix_calls()[0], *fix_calls()]
    with app(tmp_path, queue_url, script, "budget:\n  max_usd_per_day: 1.0\n") as a:
        first = a.label(1)
        assert first.result is not None and first.result.status == JobStatus.SUCCESS
        assert first.result.cost_usd == pytest.approx(0.9)

        second = a.label(2)
        assert second.result is not None and second.result.status == JobStatus.FAILED
        assert "octo/calc's daily spend cap is reached" in second.result.error
        assert second.result.cost_usd == pytest.approx(0.3)
        assert len(a.w.llm.requests) == 4  # no call after the cap was crossed
        assert a.queue.spent(REPO, datetime(2026, 1, 1, tzinfo=UTC)) == pytest.approx(1.2)

        third = a.label(3)
        assert third.state == JobState.IGNORED and "daily spend cap" in third.decision
        refusals = [c for c in a.comments(3) if "spend cap" in c]
        assert len(refusals) == 1
        assert "$1.20 of $1.00" in refusals[0]
        assert "budget.max_usd_per_day" in refusals[0]
        assert "resets at 2026-01-02 00:00 UTC" in refusals[0]
        assert len(a.w.llm.requests) == 4  # refused before any model call

        a.w.clock.advance(15 * 3600)  # 2026-01-02 00:00 UTC: a new day
        again = a.label(3)
        assert again.result is not None and again.result.status == JobStatus.SUCCESS
        assert len([c for c in a.comments(3) if "spend cap" in c]) == 1


@pytest.mark.slow
def test_the_installation_cap_counts_every_repository(tmp_path: Path, queue_url: str) -> None:
    with app(tmp_path, queue_url, fix_calls(), "", per_day=0.5) as a:
        a.queue.record_spend("other", "acme/else", 1, "fix_issue", 0.5, a.w.clock.now())
        refused = a.label(1)
        assert refused.state == JobState.IGNORED
        (comment,) = [c for c in a.comments(1) if "spend cap" in c]
        assert "the installation's daily spend cap" in comment
        assert "AGENTBOT_MAX_USD_PER_DAY" in comment
        assert a.w.llm.requests == []


@pytest.mark.slow
def test_refuel_stops_at_the_cap(tmp_path: Path) -> None:
    with world(tmp_path, [*fix_calls(), *fix_calls()]) as w:
        for n in (1, 2, 3):
            w.gh.add_issue(REPO, number=n, title=f"add() is wrong ({n})", labels=["agent-fix"])
        queue = SqliteQueue(tmp_path / "q.db", clock=w.clock)
        cfg = w.env().config
        capped = cfg.model_copy(
            update={"budget": cfg.budget.model_copy(update={"max_usd_per_month": 0.7})}
        )
        job = Job(kind=JobKind.REFUEL, repo=REPO, params={"limit": 3}, delivery_id="r1")
        meter = SpendCaps(queue, w.clock).meter(job, capped)
        env = w.env(capped)
        env.meter = meter
        result = refuel(job, env, run_fix=fix_issue)
        statuses = [(i["id"], i["status"]) for i in result.items]
        # #1's fix crosses $0.70 on its third call; #2 and #3 are skipped at the cap.
        assert statuses == [("#1", "success"), ("#2", "skipped"), ("#3", "skipped")]
        assert "monthly spend cap is reached" in str(result.items[1]["detail"])
        assert len(w.llm.requests) == 3
        assert queue.spent(None, datetime(2026, 1, 1, tzinfo=UTC)) == pytest.approx(0.9)
        with pytest.raises(LimitsExceeded):
            meter.check()
        queue.close()


def test_serve_hands_the_installation_caps_to_its_workers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bot.config import load_settings
    from bot.wiring import worker_deps

    monkeypatch.setenv("AGENTBOT_MAX_USD_PER_DAY", "7.5")
    monkeypatch.setenv("AGENTBOT_MAX_USD_PER_MONTH", "100")
    monkeypatch.setenv("AGENTBOT_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("AGENTBOT_SANDBOX", "none")
    queue = SqliteQueue(tmp_path / "q.db")
    caps = worker_deps(load_settings(), queue, HANDLERS).spend_caps()
    queue.close()
    assert (caps.per_day, caps.per_month) == (7.5, 100.0)
