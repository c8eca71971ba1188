"""GroupCommit: deliveries arriving while a commit runs go in the next one, and a failed
commit fails its own callers only."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from pathlib import Path

import pytest

from bot.queue import Delivery
from bot.queue.sqlite import SqliteQueue
from bot.worker import Intake
from webhooks.group_commit import GroupCommit
from webhooks.payload_check import Incoming, Verdict


class GatedQueue(SqliteQueue):
    """A real queue whose first commit waits for `gate`, recording each batch's ids."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.gate = threading.Event()
        self.entered = threading.Event()
        self.batches: list[list[str]] = []
        self.fail_next = False

    def enqueue_many(self, deliveries: Sequence[Delivery], *, sync: bool = True) -> list[bool]:
        self.entered.set()
        self.gate.wait(10)
        self.batches.append([d.delivery_id for d in deliveries])
        if self.fail_next:
            self.fail_next = False
            raise OSError("disk full")
        return super().enqueue_many(deliveries)


def delivery(n: int) -> Incoming:
    return Incoming(Delivery(f"d-{n}", "ping", b"{}"))


@pytest.fixture
def queue(tmp_path: Path) -> GatedQueue:
    return GatedQueue(tmp_path / "q.db")


def test_deliveries_arriving_during_a_commit_share_the_next(queue: GatedQueue) -> None:
    intake = Intake()
    commits = GroupCommit(queue, intake)

    async def scenario() -> list[Verdict]:
        first = commits.store(delivery(0))
        await asyncio.to_thread(queue.entered.wait, 10)  # the writer holds d-0's batch
        rest = [commits.store(delivery(n)) for n in (1, 2, 3, 1)]
        queue.gate.set()
        return list(await asyncio.gather(first, *rest))

    assert asyncio.run(scenario()) == [True, True, True, True, False]
    assert queue.batches == [["d-0"], ["d-1", "d-2", "d-3", "d-1"]]
    assert commits.batches == 2
    assert intake._stored.is_set()  # an idle worker is woken


def test_a_failed_commit_fails_its_callers_and_the_writer_goes_on(queue: GatedQueue) -> None:
    commits = GroupCommit(queue)
    queue.fail_next = True
    queue.gate.set()

    async def scenario() -> Verdict:
        with pytest.raises(OSError, match="disk full"):
            await commits.store(delivery(0))
        return await commits.store(delivery(0))

    assert asyncio.run(scenario()) is True
    assert commits.batches == 1
