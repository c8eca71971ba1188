"""How an in-process receiver and the embedded workers beside it share one GIL."""

from __future__ import annotations

import threading
import time

from bot.clock import Clock


class Intake:
    """What an in-process receiver tells the embedded workers beside it.

    They share one GIL: CPU a worker spends routing a job is CPU the receiver cannot spend
    acknowledging deliveries. So while deliveries are in flight, a worker about to claim
    gives way (for at most `max_defer_seconds` per job, so a steady stream slows the
    workers down but never stops them), and a stored delivery wakes an idle worker at once
    instead of at its next poll. A 202 matters more than a head start on a job: GitHub
    gives a delivery 10 s, a job takes seconds to minutes anyway.
    """

    SETTLE_SECONDS = 0.5
    """After a store, how long idle workers look again every `check_seconds`."""

    def __init__(self, max_defer_seconds: float = 1.0, check_seconds: float = 0.01) -> None:
        self.max_defer_seconds = max_defer_seconds
        self.check_seconds = check_seconds
        self.in_flight = 0
        """Deliveries being received; written by the receiver's event loop only."""
        self._stored = threading.Event()
        self._stored_at = float("-inf")

    def arrived(self) -> None:
        """A delivery is being received."""
        self.in_flight += 1

    def answered(self) -> None:
        """A delivery was answered."""
        self.in_flight -= 1

    def stored(self) -> None:
        """New deliveries were made durable: wake an idle worker."""
        self._stored_at = time.monotonic()
        self._stored.set()

    def wait_for_work(self, seconds: float) -> None:
        """Wait until a delivery is stored (since the last wake-up) or `seconds` pass."""
        # serve's store process answers once a delivery is in its spool and moves it into
        # the queue a moment later: a worker woken before that finds nothing to claim, so
        # for a short while after a store it looks again soon instead of after `seconds`.
        if time.monotonic() - self._stored_at < self.SETTLE_SECONDS:
            seconds = min(seconds, self.check_seconds)
        # An event, not the clock: the point is to wake the moment a job is stored.
        if self._stored.wait(seconds):
            self._stored.clear()

    def give_way(self, clock: Clock, stop: threading.Event) -> None:
        """Wait while deliveries are in flight, at most `max_defer_seconds`."""
        deadline = clock.monotonic() + self.max_defer_seconds
        while self.in_flight > 0 and not stop.is_set() and clock.monotonic() < deadline:
            clock.sleep(self.check_seconds)
