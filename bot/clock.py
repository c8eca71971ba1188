"""The injectable clock every wait goes through (retries, pacing, leases, budgets)."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from typing import Protocol


class Clock(Protocol):
    """Monotonic time, wall time and sleeping, replaceable in tests."""

    def monotonic(self) -> float:
        """Seconds from an arbitrary start; never goes back."""
        ...

    def now(self) -> datetime:
        """Current wall time, UTC."""
        ...

    def sleep(self, seconds: float) -> None:
        """Wait this long."""
        ...


class SystemClock:
    """The real clock."""

    def monotonic(self) -> float:
        """Seconds from an arbitrary start."""
        return time.monotonic()

    def now(self) -> datetime:
        """Current wall time, UTC."""
        return datetime.now(UTC)

    def sleep(self, seconds: float) -> None:
        """Block this long."""
        if seconds > 0:
            time.sleep(seconds)


class FakeClock:
    """A clock that only moves when slept on; `sleeps` records every wait."""

    def __init__(self, start: datetime | None = None) -> None:
        self._start = start or datetime(2026, 1, 1, tzinfo=UTC)
        self._elapsed = 0.0
        self.sleeps: list[float] = []

    def monotonic(self) -> float:
        """Seconds slept so far."""
        return self._elapsed

    def now(self) -> datetime:
        """The start time plus what was slept."""

        return self._start + timedelta(seconds=self._elapsed)

    def sleep(self, seconds: float) -> None:
        """Advance instantly."""
        self.sleeps.append(seconds)
        self._elapsed += max(0.0, seconds)

    def advance(self, seconds: float) -> None:
        """Move time on without recording a sleep."""
        self._elapsed += seconds
