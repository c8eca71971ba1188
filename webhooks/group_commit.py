"""Store deliveries in groups: one durable transaction per batch, never blocking the loop."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Protocol

from bot.queue import JobQueue
from bot.worker import Intake
from webhooks.payload_check import Incoming, Verdict, store_checked


class Store(Protocol):
    """Where a batch goes: checked, and committed durably before `store_many` returns."""

    async def store_many(self, items: Sequence[Incoming]) -> list[Verdict]:
        """Check and commit the batch (`payload_check.store_checked`): a verdict each."""

    async def close(self) -> None:
        """Release what the store holds, once nothing is in flight."""


class ThreadStore:
    """Commit in a thread of this process (tests, and embedding; `serve` uses a process)."""

    def __init__(self, queue: JobQueue) -> None:
        self.queue = queue
        # One writer thread of its own: cheaper per hop than a shared pool, and it keeps
        # one connection for all the receiver's commits.
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="group-commit")

    async def store_many(self, items: Sequence[Incoming]) -> list[Verdict]:
        """Check and commit the batch on the writer thread."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._writer, store_checked, self.queue, items)

    async def close(self) -> None:
        """Let the writer thread end."""
        self._writer.shutdown(wait=False)


class GroupCommit:
    """Store deliveries with one durable transaction per batch, never blocking the loop.

    A commit (an fsync) costs about as much for one row as for a hundred. While the store
    commits one batch (in its thread or process), new deliveries wait in `pending`; when
    it is done, they all go in the next transaction. A lone delivery is committed at once
    (no timer), a burst in a few fsyncs, with one hop per batch instead of one per request.
    """

    def __init__(
        self, queue: JobQueue, intake: Intake | None = None, store: Store | None = None
    ) -> None:
        self.queue = queue
        self.intake = intake
        self.store_to: Store = store or ThreadStore(queue)
        self.pending: list[tuple[Incoming, asyncio.Future[Verdict]]] = []
        self.running: asyncio.Task[None] | None = None
        self.batches = 0

    def store(self, item: Incoming) -> asyncio.Future[Verdict]:
        """A future of the delivery's verdict: True once committed, False if it was known,
        a string if its body is refused."""
        loop = asyncio.get_running_loop()
        done: asyncio.Future[Verdict] = loop.create_future()
        self.pending.append((item, done))
        if self.running is None:
            self.running = loop.create_task(self._drain())
        return done

    async def _drain(self) -> None:
        try:
            while self.pending:
                batch, self.pending = self.pending, []
                try:
                    fresh = await self.store_to.store_many([d for d, _ in batch])
                except Exception as exc:  # each caller answers 503 (GitHub can redeliver)
                    for _, done in batch:
                        if not done.done():
                            done.set_exception(exc)
                    continue
                self.batches += 1
                if self.intake is not None and any(v is True for v in fresh):
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
        await self.store_to.close()
