"""The operator's tables behave alike on SQLite and PostgreSQL: spend, caps, pull outcomes."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from bot.models.stats import PullOutcome
from bot.queue import JobQueue, open_queue
from tests.test_queue_contract import queue_url

__all__ = ["queue_url"]  # the fixture, one fresh queue per backend

T0 = datetime(2026, 3, 31, 23, 30, tzinfo=UTC)


@pytest.fixture
def q(queue_url: str) -> Iterator[JobQueue]:
    queue = open_queue(queue_url)
    yield queue
    queue.close()


def test_spend_is_summed_per_repository_and_from_a_time_on(q: JobQueue) -> None:
    q.record_spend("d1", "o/a", 7, "fix_issue", 1.25, T0)
    q.record_spend("d1", "o/a", 7, "fix_issue", 0.5, T0 + timedelta(minutes=40))
    q.record_spend("d2", "o/b", 3, "implement", 2.0, T0 + timedelta(minutes=50))
    assert q.spent("o/a", T0) == pytest.approx(1.75)
    assert q.spent(None, T0) == pytest.approx(3.75)
    assert q.spent(None, T0 + timedelta(minutes=31)) == pytest.approx(2.5)
    assert q.spent("o/c", T0) == 0
    rows = q.spend_rows(T0 + timedelta(minutes=1))
    assert [(r.job_id, r.repo, r.kind, r.usd) for r in rows] == [
        ("d1", "o/a", "fix_issue", 0.5),
        ("d2", "o/b", "implement", 2.0),
    ]
    assert rows[0].at == T0 + timedelta(minutes=40)


def test_repository_caps_are_remembered_last_seen_wins(q: JobQueue) -> None:
    q.set_repo_caps("o/a", 5.0, None, T0)
    q.set_repo_caps("o/b", None, 100.0, T0)
    q.set_repo_caps("o/a", 6.0, 50.0, T0 + timedelta(hours=1))
    assert q.repo_caps() == {"o/a": (6.0, 50.0), "o/b": (None, 100.0)}


def test_pull_outcomes_round_trip_and_update(q: JobQueue) -> None:
    pr = PullOutcome(repo="o/a", number=12, kind="fix_issue", job_id="d1", head_ref="agentbot/x")
    q.save_pull(pr.model_copy(update={"opened_at": T0}))
    q.save_pull(PullOutcome(repo="o/b", number=1, state="closed", closed_at=T0))
    merged = pr.model_copy(
        update={"opened_at": T0, "state": "merged", "merged_at": T0 + timedelta(hours=2),
                "review_rounds": 2, "human_commits": 1}
    )  # fmt: skip
    q.save_pull(merged)
    assert q.pull("o/a", 12) == merged
    assert [(p.repo, p.number, p.state) for p in q.pulls()] == [
        ("o/a", 12, "merged"),
        ("o/b", 1, "closed"),
    ]
    assert q.pulls("o/b")[0].closed_at == T0
    assert q.pull("o/a", 13) is None
