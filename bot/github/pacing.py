"""Write pacing: GitHub's secondary rate limits punish bursts of content-creating requests."""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager

from bot.clock import Clock

# https://docs.github.com/en/rest/using-the-rest-api/best-practices-for-using-the-rest-api#pause-between-mutative-requests
# https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api#about-secondary-rate-limits
WRITE_METHODS = frozenset({"POST", "PATCH", "PUT", "DELETE"})


class WritePacer:
    """Serializes writes: at least `min_interval` apart, at most `per_window` per rolling window."""

    def __init__(
        self,
        clock: Clock,
        *,
        min_interval: float = 1.0,
        per_window: int = 80,
        window: float = 60.0,
    ) -> None:
        self._clock = clock
        self._min_interval = min_interval
        self._per_window = per_window
        self._window = window
        self._lock = threading.Lock()
        self._sent: deque[float] = deque(maxlen=per_window)
        self.waited = 0.0
        """Total seconds writes were held back (for benchmarks)."""

    def delay(self) -> float:
        """Seconds the next write must still wait (0 when it may go now)."""
        if not self._sent:
            return 0.0
        now = self._clock.monotonic()
        wait = self._sent[-1] + self._min_interval - now
        if len(self._sent) == self._per_window:
            wait = max(wait, self._sent[0] + self._window - now)
        return max(0.0, wait)

    @contextmanager
    def slot(self) -> Iterator[None]:
        """Hold the installation's write lock, wait for a free slot, then let one write go."""
        with self._lock:
            wait = self.delay()
            if wait > 0:
                self.waited += wait
                self._clock.sleep(wait)
            self._sent.append(self._clock.monotonic())
            yield
