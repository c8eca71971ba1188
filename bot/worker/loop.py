"""Worker threads: claim -> process -> complete or fail, a heartbeat while a job runs.

Each worker runs one job at a time on the sync core. A crash (an unexpected exception) is
retried with exponential backoff; a known failure (`JobFailure`, a bad config or no
credentials, a 4xx from GitHub) is final. While a job runs, every log line emitted in its
thread carries its id (`bot.logs.job_id_var`) and is appended to the job's log.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections.abc import Callable
from datetime import timedelta

from bot.clock import Clock, SystemClock
from bot.errors import ConfigError, GitHubError, QueueError
from bot.events import Ignore
from bot.logs import OncePerSecond, job_id_var
from bot.models import JobResult
from bot.queue import JobQueue, QueuedJob
from bot.worker.heartbeat import Heartbeat
from bot.worker.intake import Intake
from bot.worker.joblog import JobLogHandler
from bot.worker.metrics import Metrics
from bot.worker.process import JobFailure, decision_text

log = logging.getLogger("agentbot.worker")

Process = Callable[[QueuedJob], "JobResult | Ignore | None"]
"""What a worker does with a claimed job (None: nothing to record but 'ignored')."""


def retry_delay(exc: BaseException, attempts: int, base: float, cap: float) -> float | None:
    """Seconds until the next attempt, or None when retrying cannot help."""
    backoff = min(cap, base * 2.0 ** max(0, attempts - 1))
    if isinstance(exc, JobFailure):
        return exc.retry_after
    if isinstance(exc, ConfigError):
        return None
    if isinstance(exc, GitHubError):
        if exc.retry_after is not None:
            return max(exc.retry_after, base)
        if exc.status is None or exc.status >= 500 or exc.status == 429:
            return backoff
        return None  # 4xx: the request itself is wrong (gone, forbidden, invalid)
    return backoff  # a crash: maybe transient, retried until attempts run out


class Worker:
    """One worker: claims jobs from `queue` and runs `process` on them."""

    def __init__(
        self,
        queue: JobQueue,
        *,
        process: Process,
        worker_id: str | None = None,
        lease_seconds: float = 300.0,
        poll_seconds: float = 1.0,
        clock: Clock | None = None,
        metrics: Metrics | None = None,
        logs: JobLogHandler | None = None,
        retry_base_seconds: float = 30.0,
        retry_max_seconds: float = 1800.0,
        intake: Intake | None = None,
        repeats: OncePerSecond | None = None,
    ) -> None:
        self.queue = queue
        self.intake = intake
        self.process = process
        self.worker_id = worker_id or f"{socket.gethostname()}:{os.getpid()}"
        self.lease_seconds = lease_seconds
        self.poll_seconds = poll_seconds
        self.clock: Clock = clock or SystemClock()
        self.metrics = metrics
        self.logs = logs
        self.retry_base_seconds = retry_base_seconds
        self.retry_max_seconds = retry_max_seconds
        self._heartbeat = Heartbeat(queue, self.worker_id, lease_seconds)
        self._heartbeat.logs = logs
        self.repeats = repeats or OncePerSecond(self.clock.monotonic)
        """How this worker's failures outside a job are logged (a pool's workers share one)."""

    def run(self, stop: threading.Event) -> None:
        """Work until `stop` is set; idle polls wait `poll_seconds` (or a stored delivery)."""
        while not stop.is_set():
            if self.intake is not None:
                self.intake.give_way(self.clock, stop)
                if stop.is_set():
                    break
            try:
                busy = self.run_once()
            except QueueError as exc:
                self.repeats.log(
                    log, logging.ERROR, "queue error in worker %s: %s", self.worker_id, exc
                )
                busy = False
            except Exception as exc:
                # Never let a bug kill the thread: the job's lease lapses and it is retried.
                # It may come back at each poll: one line a second, its traceback once.
                self.repeats.log(
                    log,
                    logging.ERROR,
                    "worker %s crashed outside a job: %s: %s",
                    self.worker_id,
                    type(exc).__name__,
                    exc,
                    error=exc,
                )
                busy = False
            if not busy and not stop.is_set():
                if self.intake is not None:
                    self.intake.wait_for_work(self.poll_seconds)
                else:
                    self.clock.sleep(self.poll_seconds)

    def run_once(self) -> bool:
        """Claim and finish at most one job; False when none was due."""
        job = self.queue.claim(self.worker_id, self.lease_seconds)
        if job is None:
            return False
        token = job_id_var.set(job.id)
        try:
            self._run(job)
        finally:
            job_id_var.reset(token)
            if self.logs is not None:
                self.logs.flush_job(job.id)  # whatever was logged after the result
        return True

    def release_lease(self) -> str | None:
        """Give up the lease of the job this worker runs (it will not be finished here)."""
        return self._heartbeat.release()

    def _lines(self, job: QueuedJob) -> list[str]:
        return self.logs.take(job.id) if self.logs is not None else []

    def _run(self, job: QueuedJob) -> None:
        log.info("claimed %s delivery (attempt %d)", job.event_name, job.attempts)
        started = self.clock.monotonic()
        outcome: JobResult | Ignore | None = None
        error: BaseException | None = None
        with self._heartbeat.running(job.id):
            try:
                outcome = self.process(job)
            except Exception as exc:
                error = exc
        seconds = self.clock.monotonic() - started
        if error is not None:
            self._failed(job, error, seconds)
            return
        decision = decision_text(outcome)
        result = outcome if isinstance(outcome, JobResult) else None
        what = "done" if result is not None else "ignored"
        log.info("finished: %s", decision)
        kept = self.queue.complete(
            job.id, result, decision, worker_id=self.worker_id, log=self._lines(job)
        )
        if not kept:
            what = "lost"
            log.warning("lease lost before finishing; another worker owns the job now")
        if self.metrics is not None:
            kind = result.job.kind.value if result is not None else ""
            self.metrics.job(kind, what, seconds, result)

    def _failed(self, job: QueuedJob, exc: BaseException, seconds: float) -> None:
        message = str(exc) or exc.__class__.__name__
        delay = retry_delay(exc, job.attempts, self.retry_base_seconds, self.retry_max_seconds)
        if delay is None or isinstance(exc, JobFailure | ConfigError | GitHubError):
            log.error("failed: %s", message)
        else:
            log.error("crashed: %s", message, exc_info=exc)
            message = f"{exc.__class__.__name__}: {message}"
        retry_at = self.clock.now() + timedelta(seconds=delay) if delay is not None else None
        will_retry = retry_at is not None and job.attempts < self.queue.max_attempts
        if will_retry and retry_at is not None:
            log.info("retry %d of %d at %s", job.attempts + 1, self.queue.max_attempts, retry_at)
        kept = self.queue.fail(
            job.id, message, retry_at, worker_id=self.worker_id, log=self._lines(job)
        )
        outcome = "lost" if not kept else ("failed" if will_retry else "dead")
        if not kept:
            log.warning("lease lost before recording the failure")
        if self.metrics is not None:
            self.metrics.job("", outcome, seconds, None)


class WorkerPool:
    """N worker threads on one queue, and the job-log handler on the root logger."""

    def __init__(
        self,
        queue: JobQueue,
        process: Process,
        *,
        size: int,
        lease_seconds: float = 300.0,
        poll_seconds: float = 1.0,
        clock: Clock | None = None,
        metrics: Metrics | None = None,
        prefix: str | None = None,
        intake: Intake | None = None,
    ) -> None:
        base = prefix or f"{socket.gethostname()}:{os.getpid()}"
        self.log_handler = JobLogHandler(queue)
        repeats = OncePerSecond((clock or SystemClock()).monotonic)  # a queue down: one line
        self.workers = [
            Worker(
                queue,
                process=process,
                worker_id=f"{base}:{i}",
                lease_seconds=lease_seconds,
                poll_seconds=poll_seconds,
                clock=clock,
                metrics=metrics,
                logs=self.log_handler,
                intake=intake,
                repeats=repeats,
            )
            for i in range(size)
        ]
        self.queue = queue
        self.intake = intake
        self.stop_event = threading.Event()
        self._threads: list[threading.Thread] = []

    def start(self) -> None:
        """Start the threads (daemons: a dying process abandons jobs to their leases)."""
        logging.getLogger().addHandler(self.log_handler)
        for w in self.workers:
            t = threading.Thread(
                target=w.run, args=(self.stop_event,), daemon=True, name=w.worker_id
            )
            t.start()
            self._threads.append(t)

    def stop(self, timeout: float | None = None) -> None:
        """Ask every worker to stop after its current job and wait up to `timeout` in all;
        a job still running then has its lease released, so it is taken over at once."""
        self.stop_event.set()
        if self.intake is not None:
            self.intake.stored()  # wake the idle ones now, not at their next poll
        deadline = None if timeout is None else time.monotonic() + timeout
        for t in self._threads:  # one deadline for all, not `timeout` per thread
            t.join(None if deadline is None else max(0.0, deadline - time.monotonic()))
        for w, t in zip(self.workers, self._threads, strict=False):
            if t.is_alive():  # still on a job this process will not finish: hand it over
                job = w.release_lease()
                if job is not None:
                    log.warning("stopping: released %s; another worker takes it over now", job)
        logging.getLogger().removeHandler(self.log_handler)
