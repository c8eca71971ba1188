"""Store deliveries in groups: one durable transaction per batch, never blocking the loop."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

from bot.queue import Delivery, JobQueue
from bot.worker import Intake


class GroupCommit:
    """Store deliveries with one durable transaction per batch, never blocking the loop.

    A commit (an fsync) costs about as much for one row as for a hundred. While one batch
    is being committed in a thread, new deliveries wait in `pending`; when it is done, they
    all go in the next transaction. A lone delivery is committed at once (no timer), a
    burst in a few fsyncs, with one thread hop per batch instead of one per request.
    """

    def __init__(self, queue: JobQueue, intake: Intake | None = None) -> None:
        self.queue = queue
        self.intake = intake
        self.pending: list[tuple[Delivery, asyncio.Future[bool]]] = []
        self.running: asyncio.Task[None] | None = None
        self.batches = 0
        # One writer thread of its own: cheaper per hop than a shared pool, and it keeps
        # one connection for all the receiver's commits.
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="group-commit")

    def store(self, delivery: Delivery) -> asyncio.Future[bool]:
        """A future that is True once `delivery` is committed, False if it was known."""
        loop = asyncio.get_running_loop()
        done: asyncio.Future[bool] = loop.create_future()
        self.pending.append((delivery, done))
        if self.running is None:
            self.running = loop.create_task(self._drain())
        return done

    async def _drain(self) -> None:
        try:
            while self.pending:
                batch, self.pending = self.pending, []
                try:
                    fresh = await asyncio.get_running_loop().run_in_executor(
                        self._writer, self.queue.enqueue_many, [d for d, _ in batch]
                    )
                except Exception as exc:  # each caller answers 503 (GitHub can redeliver)
                    for _, done in batch:
                        if not done.done():
                            done.set_exception(exc)
                    continue
                self.batches += 1
                if self.intake is not None and any(fresh):
                    self.intake.stored()
                for (_, done), is_new in zip(batch, fresh, strict=True):
                    if not done.done():
                        done.set_result(is_new)
        finally:
            self.running = None

    async def close(self) -> None:
        """Wait until everything pending is committed."""
        while self.running is not None:
            await asyncio.shield(self.running)
        self._writer.shutdown(wait=False)
