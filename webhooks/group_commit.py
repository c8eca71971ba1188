"""Store deliveries in groups: one durable transaction per batch, never blocking the loop."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Sequence

from bot.queue import Delivery, JobQueue
from bot.worker import Intake

_Waiter = tuple[Delivery, asyncio.Future[bool]]
_Settled = list[tuple[asyncio.Future[bool], bool | Exception]]


class GroupCommit:
    """Store deliveries with one durable transaction per batch, never blocking the loop.

    A commit (an fsync) costs about as much for one row as for a hundred. A writer thread of
    its own commits whatever is pending, then at once whatever arrived meanwhile: a lone
    delivery is committed at once (no timer), a burst in a few fsyncs. The writer takes the
    next batch itself and answers each batch with one call into the loop, so no loop turn
    stands between two commits (a busy loop delayed each commit by one to two turns).
    """

    def __init__(self, queue: JobQueue, intake: Intake | None = None) -> None:
        self.queue = queue
        self.intake = intake
        self.batches = 0
        """Batches committed (written by the writer thread only)."""
        self._pending: list[_Waiter] = []
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._idle = False
        self._closing = False
        self._thread: threading.Thread | None = None

    def store(self, delivery: Delivery) -> asyncio.Future[bool]:
        """A future that is True once `delivery` is committed, False if it was known."""
        done: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        with self._lock:
            self._pending.append((delivery, done))
            if self._thread is None:
                # One connection for all the receiver's commits: the writer's own.
                self._thread = threading.Thread(
                    target=self._write, name="group-commit", daemon=True
                )
                self._thread.start()
            elif self._idle:
                self._wake.notify()
        return done

    def _write(self) -> None:
        """The writer thread: commit what is pending until closed with nothing left."""
        while True:
            with self._lock:
                while not self._pending and not self._closing:
                    self._idle = True
                    self._wake.wait()
                self._idle = False
                batch, self._pending = self._pending, []
                if not batch:  # closed: a later store starts a new writer
                    self._thread = None
                    self._closing = False
                    return
            fresh: list[bool] | Exception
            try:
                fresh = self.queue.enqueue_many([d for d, _ in batch])
                if len(fresh) != len(batch):
                    raise RuntimeError(f"the queue answered {len(fresh)} of {len(batch)}")
            except Exception as exc:  # each caller answers 503 (GitHub can redeliver)
                fresh = exc
            else:
                self.batches += 1
                if self.intake is not None and any(fresh):
                    self.intake.stored()
            _answer(batch, fresh)

    async def close(self) -> None:
        """Wait until everything pending is committed (a later `store` starts a new writer)."""
        with self._lock:
            thread = self._thread
            if thread is None:
                return
            self._closing = True
            self._wake.notify()
        await asyncio.to_thread(thread.join)


def _answer(batch: Sequence[_Waiter], fresh: list[bool] | Exception) -> None:
    """Settle the batch's futures, one call into each loop they belong to."""
    by_loop: dict[asyncio.AbstractEventLoop, _Settled] = {}
    for i, (_, done) in enumerate(batch):
        result = fresh if isinstance(fresh, Exception) else fresh[i]
        by_loop.setdefault(done.get_loop(), []).append((done, result))
    for loop, settled in by_loop.items():
        # A closed loop raises: nobody is waiting for these any more.
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(_settle, settled)


def _settle(settled: _Settled) -> None:
    """On the loop: hand each waiting caller its answer."""
    for done, result in settled:
        if done.done():  # the caller went away
            continue
        if isinstance(result, Exception):
            done.set_exception(result)
        else:
            done.set_result(result)
