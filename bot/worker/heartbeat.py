"""A worker's heartbeat: one thread that renews the lease of the job the worker runs."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from bot.errors import QueueError
from bot.logs import job_id_var
from bot.queue import JobQueue
from bot.worker.joblog import JobLogHandler

log = logging.getLogger("agentbot.worker")


class Heartbeat:
    """One long-lived thread per worker that renews the lease of the job it runs."""

    def __init__(self, queue: JobQueue, worker_id: str, lease_seconds: float) -> None:
        self.queue = queue
        self.worker_id = worker_id
        self.lease_seconds = lease_seconds
        self.interval = max(lease_seconds / 3, 0.05)
        self.logs: JobLogHandler | None = None
        self._cond = threading.Condition()
        self._beating = threading.Lock()
        self._job: str | None = None
        self._turn = 0
        self._thread: threading.Thread | None = None

    @contextmanager
    def running(self, job_id: str) -> Iterator[None]:
        """Beat for `job_id` while the body runs; no beat is in flight once it returns."""
        with self._cond:
            self._job, self._turn = job_id, self._turn + 1
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, daemon=True, name="heartbeat")
                self._thread.start()
            self._cond.notify()
        try:
            yield
        finally:
            with self._cond:
                self._job, self._turn = None, self._turn + 1
                self._cond.notify()
            with self._beating:  # wait out a beat that started before the job ended
                pass

    def release(self) -> str | None:
        """Stop beating and let the running job's lease lapse now (a clean shutdown).

        Another worker may then take the job at once, not a lease later; returns its id.
        """
        with self._cond:
            job, self._job, self._turn = self._job, None, self._turn + 1
            self._cond.notify()
        with self._beating:  # a beat in flight must not renew the lease after this
            pass
        if job is not None:
            try:
                self.queue.heartbeat(job, self.worker_id, 0.0)
            except QueueError as exc:
                log.warning("could not release the lease on %s: %s", job, exc)
        return job

    def _run(self) -> None:
        while True:
            with self._cond:
                while self._job is None:
                    self._cond.wait()
                job, turn = self._job, self._turn
                # A condition wait, not the clock: it must wake the moment the job ends.
                self._cond.wait(self.interval)
                if self._turn != turn:
                    continue
                self._beating.acquire()
            try:
                self._beat(job)
            finally:
                self._beating.release()

    def _beat(self, job_id: str) -> None:
        token = job_id_var.set(job_id)
        try:
            if self.logs is not None:
                self.logs.flush_job(job_id)
            if not self.queue.heartbeat(job_id, self.worker_id, self.lease_seconds):
                log.warning("heartbeat refused: the lease on this job was lost")
                with self._cond:
                    if self._job == job_id:
                        self._job = None  # stop beating; the job goes on and learns at the end
        except QueueError as exc:
            log.warning("heartbeat failed: %s", exc)
        finally:
            job_id_var.reset(token)
