"""What the store process does with a batch on a SQLite queue: check, spool, answer, move.

The receiver gets its verdicts once the new deliveries are in the spool (`webhooks.spool`,
durable); a thread of its own moves them into the queue right after, in one transaction
for whatever has gathered. A delivery id is "known" if the queue holds it or it waits in
the spool.

The moves commit without waiting for the disk (SQLite's `synchronous=NORMAL`: a killed
process loses nothing, a power cut may lose the last commits), because the spool still
holds every delivery they carry. Once the spool is past `SYNC_SHARE` of its room and the
queue holds all of it, the queue's log is synced (`SqliteQueue.sync`) and only then is the
spool written from its start again; a clean stop syncs before it removes the spool. One
WAL sync per few hundred deliveries instead of one per commit (the payload file is still
synced per commit, before the rows: `bot.queue.payload_file`). A failed sync is final: the
spool is never written over again and is kept at the stop, to be replayed at the next
start. Should the spool's room run out (the queue refuses writes, falls far behind, or
could not be synced), a batch waits up to `CATCH_UP_SECONDS` for the mover to empty it,
else it is refused (503: GitHub can redeliver).
"""

from __future__ import annotations

import logging
import queue as stdlib_queue
import threading
from collections.abc import Sequence

from bot.errors import QueueError
from bot.queue import Delivery
from bot.queue.sqlite import SqliteQueue
from webhooks.payload_check import Incoming, Verdict, check_batch, merged
from webhooks.spool import Spool, recover

log = logging.getLogger("agentbot.webhooks")

CATCH_UP_SECONDS = 5.0
"""How long a batch waits for the queue to hold the whole spool once its room is used."""
RECOVER_SECONDS = 10.0
"""While idle, the mover replays spools whose process died this often (another serve on the
same queue, or a store process of this one that died while nothing arrived)."""
RETRY_SECONDS = 1.0
"""Pause before the mover tries a failed transaction again (the spool keeps the batch)."""
SYNC_SHARE = 0.25
"""How full the spool gets before the queue is synced and the spool written from its start."""


class SpooledStore:
    """Check, spool and answer; a mover thread commits to the queue (module docstring)."""

    def __init__(self, queue: SqliteQueue, spool: Spool) -> None:
        self.queue = queue
        self.spool = spool
        self.pending: set[str] = set()
        """Ids spooled and not yet committed to the queue (none: the queue holds the spool)."""
        self._lock = threading.Lock()
        self._caught_up = threading.Condition(self._lock)
        self._backlog: stdlib_queue.SimpleQueue[list[Delivery] | None] = stdlib_queue.SimpleQueue()
        self._stopping = threading.Event()
        self._batches = self._moved = 0
        self._sync_failed = False
        self._mover = threading.Thread(target=self._move, name="spool-mover", daemon=True)
        self._mover.start()

    def store(self, items: Sequence[Incoming]) -> list[Verdict]:
        """The batch's verdicts, once its new deliveries are durable in the spool."""
        verdicts, good = check_batch(items)
        ids = [d.delivery_id for d in good]
        with self._lock:
            if self.spool.full:
                self._wait_for_queue()
            known = self.pending.intersection(ids)
        # After `pending`: the mover commits before it forgets an id, so none slips between.
        known |= self.queue.known_ids([i for i in ids if i not in known])
        fresh: list[bool] = []
        new: list[Delivery] = []
        for d in good:
            is_new = d.delivery_id not in known
            known.add(d.delivery_id)  # the same id twice in one batch: the second is known
            fresh.append(is_new)
            if is_new:
                new.append(d)
        if new:
            with self._lock:
                self.spool.append(new)
                self.pending.update(d.delivery_id for d in new)
                self._batches += 1
            self._backlog.put(new)
        return merged(verdicts, fresh)

    def _wait_for_queue(self) -> None:
        """With the lock held: wait until the mover has emptied the spool."""
        self._backlog.put([])  # wake the mover: an empty spool may only wait for a sync
        if self._caught_up.wait_for(lambda: not self.spool.full, CATCH_UP_SECONDS):
            return
        if self._sync_failed:
            raise QueueError(
                f"the spool {self.spool.path} is full and the queue could not be synced (see"
                " the log): fix the disk, then restart serve"
            )
        raise QueueError(
            f"the queue is {len(self.pending)} deliveries behind the spool {self.spool.path}"
        )

    def settle(self, timeout: float = 5.0) -> bool:
        """Wait until the mover has handled every batch stored so far; False on timeout."""
        with self._lock:
            return self._caught_up.wait_for(lambda: self._moved == self._batches, timeout)

    def close(self) -> None:
        """Commit what waits, sync, then remove the spool (kept, for the next start, if not
        all of it could be committed and synced)."""
        self._stopping.set()
        self._backlog.put(None)
        self._mover.join()
        self.spool.close(remove=not self.pending and self._synced())
        self.queue.close()

    def _move(self) -> None:
        """Commit spooled batches to the queue, all that have gathered at once."""
        last = False
        while not last:
            batches: list[list[Delivery]] = []
            try:
                item = self._backlog.get(timeout=RECOVER_SECONDS)
            except stdlib_queue.Empty:
                self._recover()
                continue
            while item is not None:
                batches.append(item)
                try:
                    item = self._backlog.get_nowait()
                except stdlib_queue.Empty:
                    break
            last = item is None
            deliveries = [d for b in batches for d in b]  # [] only to wake the mover
            if deliveries and not self._commit(deliveries):
                return  # stopping with the queue refusing: the spool stays for the next start
            with self._lock:
                for batch in batches:
                    self.pending.difference_update(d.delivery_id for d in batch)
                due = not self.pending and self.spool.size >= SYNC_SHARE * self.spool.room
            # Synced outside the lock: the receiver goes on spooling meanwhile.
            if due and self._synced():
                with self._lock:
                    if not self.pending:  # else a batch came meanwhile: next round
                        self.spool.empty()
            with self._lock:
                self._moved += sum(1 for batch in batches if batch)
                self._caught_up.notify_all()

    def _recover(self) -> None:
        try:
            moved = recover(self.queue, self.queue.path)
        except Exception as exc:  # a repeat is one line (store_child): say why in it
            log.exception("could not replay a spool left by a process that died: %s", exc)
            return
        if moved:
            log.warning("moved %d deliveries from a dead process's spool to the queue", moved)

    def _synced(self) -> bool:
        """Sync the queue's committed moves to disk; False (said once) if it cannot."""
        if self._sync_failed:
            return False
        try:
            self.queue.sync()
        except (OSError, QueueError):
            self._sync_failed = True
            log.exception(
                "could not sync the queue: the spool %s keeps every delivery and is replayed"
                " at the next start; deliveries are refused once it is full",
                self.spool.path,
            )
            return False
        return True

    def _commit(self, deliveries: list[Delivery]) -> bool:
        """Commit, retrying while the queue refuses; False if asked to stop meanwhile."""
        while True:
            try:
                self.queue.enqueue_many(deliveries, sync=False)
                return True
            except Exception as exc:
                # The deliveries are safe in the spool; say so (why: a repeat is one line)
                # and try again.
                log.exception(
                    "could not move %d spooled deliveries to the queue (the spool keeps them;"
                    " trying again): %s",
                    len(deliveries),
                    exc,
                )
                if self._stopping.wait(RETRY_SECONDS):
                    return False
