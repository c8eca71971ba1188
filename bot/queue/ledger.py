"""The operator's tables in the queue's database: spend per model call, repositories' caps,
and agentbot's pull requests. The SQL is shared by both backends (`?` placeholders; times
are epoch seconds from the caller's clock, so tests move time the same on both)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from bot.models.stats import PullOutcome, SpendRow

_TABLES = """
CREATE TABLE IF NOT EXISTS {p}spend (
    id {serial} PRIMARY KEY, job_id TEXT NOT NULL, repo TEXT NOT NULL, number INTEGER,
    kind TEXT NOT NULL DEFAULT '', at DOUBLE PRECISION NOT NULL, usd DOUBLE PRECISION NOT NULL
);
CREATE INDEX IF NOT EXISTS {p}spend_at ON {p}spend (at);
CREATE INDEX IF NOT EXISTS {p}spend_repo_at ON {p}spend (repo, at);
CREATE TABLE IF NOT EXISTS {p}repo_caps (
    repo TEXT PRIMARY KEY, per_day DOUBLE PRECISION, per_month DOUBLE PRECISION,
    seen_at DOUBLE PRECISION NOT NULL
);
CREATE TABLE IF NOT EXISTS {p}pulls (
    repo TEXT NOT NULL, number INTEGER NOT NULL, kind TEXT NOT NULL DEFAULT '',
    job_id TEXT NOT NULL DEFAULT '', head_ref TEXT NOT NULL DEFAULT '',
    state TEXT NOT NULL DEFAULT 'open', opened_at DOUBLE PRECISION,
    merged_at DOUBLE PRECISION, closed_at DOUBLE PRECISION,
    review_rounds INTEGER NOT NULL DEFAULT 0, human_commits INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (repo, number)
);
"""


def ledger_tables(*, postgres: bool) -> str:
    """The DDL of the operator's tables for one backend (created if missing)."""
    if postgres:
        return _TABLES.format(p="agentbot_", serial="bigserial")
    return _TABLES.format(p="", serial="INTEGER")


_PULL_COLUMNS = (
    "repo, number, kind, job_id, head_ref, state, opened_at, merged_at, closed_at,"
    " review_rounds, human_commits"
)


def _epoch(at: datetime | None) -> float | None:
    return at.timestamp() if at is not None else None


def _time(value: Any) -> datetime | None:
    return datetime.fromtimestamp(float(value), UTC) if value is not None else None


class Ledger:
    """Spend, caps and pull requests; a backend supplies `_read`, `_write` and `_prefix`."""

    _prefix = ""

    def _read(self, sql: str, args: Sequence[Any] = ()) -> list[Any]:
        """Rows of one query (`?` placeholders)."""
        raise NotImplementedError

    def _write(self, sql: str, args: Sequence[Any] = ()) -> None:
        """Run one statement in its own committed transaction (`?` placeholders)."""
        raise NotImplementedError

    def _t(self, name: str) -> str:
        return self._prefix + name

    def record_spend(
        self, job_id: str, repo: str, number: int | None, kind: str, usd: float, at: datetime
    ) -> None:
        """Add money a job spent (one model call) at `at`."""
        self._write(
            f"INSERT INTO {self._t('spend')} (job_id, repo, number, kind, at, usd)"  # noqa: S608
            " VALUES (?, ?, ?, ?, ?, ?)",
            (job_id, repo, number, kind, at.timestamp(), usd),
        )

    def spent(self, repo: str | None, since: datetime) -> float:
        """USD spent from `since` on, in `repo` or (None) everywhere."""
        where, args = ("AND repo = ?", [repo]) if repo is not None else ("", [])
        rows = self._read(
            f"SELECT coalesce(sum(usd), 0) FROM {self._t('spend')} WHERE at >= ? {where}",  # noqa: S608
            [since.timestamp(), *args],
        )
        return float(rows[0][0])

    def spend_rows(self, since: datetime) -> list[SpendRow]:
        """Every spend from `since` on, oldest first."""
        rows = self._read(
            f"SELECT job_id, repo, kind, at, usd FROM {self._t('spend')}"  # noqa: S608
            " WHERE at >= ? ORDER BY at, id",
            (since.timestamp(),),
        )
        return [SpendRow(r[0], r[1], r[2], _time(r[3]) or since, float(r[4])) for r in rows]

    def set_repo_caps(
        self, repo: str, per_day: float | None, per_month: float | None, at: datetime
    ) -> None:
        """Remember the caps a repository's config set, as last seen by a job."""
        self._write(
            f"INSERT INTO {self._t('repo_caps')} (repo, per_day, per_month, seen_at)"  # noqa: S608
            " VALUES (?, ?, ?, ?) ON CONFLICT (repo) DO UPDATE SET per_day = excluded.per_day,"
            " per_month = excluded.per_month, seen_at = excluded.seen_at",
            (repo, per_day, per_month, at.timestamp()),
        )

    def repo_caps(self) -> dict[str, tuple[float | None, float | None]]:
        """Each repository's (per day, per month) caps as last seen."""
        rows = self._read(f"SELECT repo, per_day, per_month FROM {self._t('repo_caps')}")  # noqa: S608
        return {r[0]: (r[1], r[2]) for r in rows}

    def save_pull(self, pull: PullOutcome) -> None:
        """Store a pull request's outcome (replacing what was stored for it)."""
        names = _PULL_COLUMNS.split(", ")
        sets = ", ".join(f"{n} = excluded.{n}" for n in names[2:])
        self._write(
            f"INSERT INTO {self._t('pulls')} ({_PULL_COLUMNS})"  # noqa: S608
            f" VALUES ({', '.join('?' * len(names))})"
            f" ON CONFLICT (repo, number) DO UPDATE SET {sets}",
            (
                pull.repo, pull.number, pull.kind, pull.job_id, pull.head_ref, pull.state,
                _epoch(pull.opened_at), _epoch(pull.merged_at), _epoch(pull.closed_at),
                pull.review_rounds, pull.human_commits,
            ),
        )  # fmt: skip

    def pulls(self, repo: str | None = None) -> list[PullOutcome]:
        """Stored pull requests, in `repo` or everywhere, by repository and number."""
        where, args = ("WHERE repo = ?", [repo]) if repo is not None else ("", [])
        rows = self._read(
            f"SELECT {_PULL_COLUMNS} FROM {self._t('pulls')} {where}"  # noqa: S608
            " ORDER BY repo, number",
            args,
        )
        return [
            PullOutcome(
                repo=r[0], number=r[1], kind=r[2], job_id=r[3], head_ref=r[4], state=r[5],
                opened_at=_time(r[6]), merged_at=_time(r[7]), closed_at=_time(r[8]),
                review_rounds=r[9], human_commits=r[10],
            )
            for r in rows
        ]  # fmt: skip

    def pull(self, repo: str, number: int) -> PullOutcome | None:
        """One stored pull request."""
        return next((p for p in self.pulls(repo) if p.number == number), None)
