"""Spend caps over time: which cap a spend reaches and when it resets (UTC days, months).

A day is a UTC calendar day and a month a UTC calendar month, read from the clock the caller
passes (the system clock in production). A cap is reached when what was spent in its period
is at least its limit; a job that would start then is refused, and a running job stops
before its next model call (the call that crosses the cap is the last one it makes).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Literal

Period = Literal["day", "month"]

INSTALLATION = ""
"""The scope of the installation's caps (every repository together)."""


@dataclass(frozen=True)
class Cap:
    """One limit: `limit` USD per `period` for a repository, or the installation ("")."""

    repo: str
    period: Period
    limit: float

    @property
    def setting(self) -> str:
        """Where the cap is set, as its users write it."""
        if self.repo == INSTALLATION:
            return f"AGENTBOT_MAX_USD_PER_{self.period.upper()}"
        return f"budget.max_usd_per_{self.period} in {self.repo}'s .github/agentbot.yml"

    @property
    def name(self) -> str:
        """`the installation's daily cap`, `octo/calc's monthly cap`."""
        who = "the installation's" if self.repo == INSTALLATION else f"{self.repo}'s"
        return f"{who} {'daily' if self.period == 'day' else 'monthly'} spend cap"


def period_start(period: Period, now: datetime) -> datetime:
    """The UTC start of the day or month `now` is in."""
    at = now.astimezone(UTC)
    day = at.replace(hour=0, minute=0, second=0, microsecond=0)
    return day if period == "day" else day.replace(day=1)


def period_end(period: Period, now: datetime) -> datetime:
    """When the period `now` is in ends: the next UTC midnight, or the next month's first."""
    start = period_start(period, now)
    if period == "day":
        return start + timedelta(days=1)
    return (start + timedelta(days=32)).replace(day=1)


def caps(
    repo: str,
    *,
    repo_day: float | None,
    repo_month: float | None,
    day: float | None,
    month: float | None,
) -> list[Cap]:
    """Every cap set for a job in `repo`: the repository's, then the installation's."""
    given: list[tuple[str, Period, float | None]] = [
        (repo, "day", repo_day),
        (repo, "month", repo_month),
        (INSTALLATION, "day", day),
        (INSTALLATION, "month", month),
    ]
    return [Cap(r, p, limit) for r, p, limit in given if limit is not None]


@dataclass(frozen=True)
class CapUse:
    """What was spent against one cap in the current period."""

    cap: Cap
    spent: float
    start: datetime
    resets: datetime

    @property
    def reached(self) -> bool:
        """True when nothing more may be spent in this period."""
        return self.spent >= self.cap.limit

    @property
    def left(self) -> float:
        """USD left in this period (0 once reached)."""
        return max(0.0, self.cap.limit - self.spent)

    def message(self) -> str:
        """One line saying which cap is reached and when it resets."""
        return (
            f"{self.cap.name} is reached: ${self.spent:.2f} of ${self.cap.limit:.2f} spent since"
            f" {self.start:%Y-%m-%d %H:%M} UTC ({self.cap.setting}); it resets at"
            f" {self.resets:%Y-%m-%d %H:%M} UTC"
        )


Spent = Callable[[str | None, datetime], float]
"""(repository or None for all, since) -> USD spent from then on."""


def uses(found: list[Cap], spent: Spent, now: datetime) -> list[CapUse]:
    """Each cap with what was spent against it in the period `now` is in."""
    out = []
    for cap in found:
        start = period_start(cap.period, now)
        used = spent(cap.repo or None, start)
        out.append(CapUse(cap, used, start, period_end(cap.period, now)))
    return out


def reached(found: list[Cap], spent: Spent, now: datetime) -> CapUse | None:
    """The first cap that is reached now, or None when every cap has room."""
    return next((u for u in uses(found, spent, now) if u.reached), None)


def refusal_comment(use: CapUse, what: str) -> str:
    """The one comment on a job refused at a cap: which cap, and when it resets."""
    return (
        f"agentbot did not start {what}: {use.message()}.\n\n"
        "Ask again once it has reset, or ask the bot's operator to raise the cap."
    )
