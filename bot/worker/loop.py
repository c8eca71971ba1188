"""Worker threads: claim -> process -> complete or fail, a heartbeat while a job runs.

Each worker runs one job at a time on the sync core. A crash (an unexpected exception) is
retried with exponential backoff; a known failure (`JobFailure`, no handler, a bad
config, a 4xx from GitHub) is final. While a job runs, every log line emitted in its
thread carries its id (`bot.logs.job_id_var`) and is appended to the job's log.
"""

from __future__ import annotations

import contextvars
import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta

from bot.clock import Clock, SystemClock
from bot.errors import ConfigError, GitHubError, QueueError
from bot.events import Ignore
from bot.jobs import NoHandler
from bot.logs import job_id_var, redactor
from bot.models import JobResult
from bot.queue import JobQueue, QueuedJob
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
    if isinstance(exc, NoHandler | ConfigError):
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
        retry_base_seconds: float = 30.0,
        retry_max_seconds: float = 1800.0,
    ) -> None:
        self.queue = queue
        self.process = process
        self.worker_id = worker_id or f"{socket.gethostname()}:{os.getpid()}"
        self.lease_seconds = lease_seconds
        self.poll_seconds = poll_seconds
        self.clock: Clock = clock or SystemClock()
        self.metrics = metrics
        self.retry_base_seconds = retry_base_seconds
        self.retry_max_seconds = retry_max_seconds

    def run(self, stop: threading.Event) -> None:
        """Work until `stop` is set; idle polls wait `poll_seconds` on the clock."""
        while not stop.is_set():
            try:
                busy = self.run_once()
            except QueueError as exc:
                log.error("queue error in worker %s: %s", self.worker_id, exc)
                busy = False
            except Exception:
                # Never let a bug kill the thread: the job's lease lapses and it is retried.
                log.exception("worker %s crashed outside a job", self.worker_id)
                busy = False
            if not busy and not stop.is_set():
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
        return True

    def _run(self, job: QueuedJob) -> None:
        log.info("claimed %s delivery (attempt %d)", job.event_name, job.attempts)
        started = self.clock.monotonic()
        outcome: JobResult | Ignore | None = None
        error: BaseException | None = None
        with self._heartbeat(job):
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
        kept = self.queue.complete(job.id, result, decision, worker_id=self.worker_id)
        what = "done" if result is not None else "ignored"
        if not kept:
            what = "lost"
            log.warning("lease lost before finishing; another worker owns the job now")
        else:
            log.info("%s: %s", what, decision)
        if self.metrics is not None:
            kind = result.job.kind.value if result is not None else ""
            self.metrics.job(kind, what, seconds, result)

    def _failed(self, job: QueuedJob, exc: BaseException, seconds: float) -> None:
        message = str(exc) or exc.__class__.__name__
        delay = retry_delay(exc, job.attempts, self.retry_base_seconds, self.retry_max_seconds)
        if delay is None or isinstance(exc, JobFailure | NoHandler | ConfigError | GitHubError):
            log.error("failed: %s", message)
        else:
            log.error("crashed: %s", message, exc_info=exc)
            message = f"{exc.__class__.__name__}: {message}"
        retry_at = self.clock.now() + timedelta(seconds=delay) if delay is not None else None
        kept = self.queue.fail(job.id, message, retry_at, worker_id=self.worker_id)
        will_retry = retry_at is not None and job.attempts < self.queue.max_attempts
        outcome = "lost" if not kept else ("failed" if will_retry else "dead")
        if kept and will_retry and retry_at is not None:
            log.info("retry %d of %d at %s", job.attempts + 1, self.queue.max_attempts, retry_at)
        if self.metrics is not None:
            self.metrics.job("", outcome, seconds, None)

    @contextmanager
    def _heartbeat(self, job: QueuedJob) -> Iterator[None]:
        """Renew the lease every third of it while the body runs."""
        done = threading.Event()
        interval = max(self.lease_seconds / 3, 0.05)

        def beat() -> None:
            # Event.wait, not the clock: the beat must stop the moment the job ends.
            while not done.wait(interval):
                try:
                    if not self.queue.heartbeat(job.id, self.worker_id, self.lease_seconds):
                        log.warning("heartbeat refused: the lease on this job was lost")
                        return
                except QueueError as exc:
                    log.warning("heartbeat failed: %s", exc)

        ctx = contextvars.copy_context()
        thread = threading.Thread(target=ctx.run, args=(beat,), daemon=True, name="heartbeat")
        thread.start()
        try:
            yield
        finally:
            done.set()
            thread.join()


class JobLogHandler(logging.Handler):
    """Append every log line emitted while a job runs (job id set) to that job's log."""

    def __init__(self, queue: JobQueue, level: int = logging.INFO) -> None:
        super().__init__(level)
        self.queue = queue
        self._busy = threading.local()

    def emit(self, record: logging.LogRecord) -> None:
        """Store the line, redacted, prefixed with time, level, logger and job id."""
        job_id = getattr(record, "job_id", "") or job_id_var.get()
        if not job_id or getattr(self._busy, "on", False):
            return
        self._busy.on = True  # a queue that logs must not recurse into itself
        try:
            stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(record.created))
            text = redactor().redact(record.getMessage())
            line = f"{stamp} {record.levelname} {record.name} [{job_id}] {text}"
            if record.exc_info and record.exc_info[1] is not None:
                line += "\n" + redactor().redact(
                    logging.Formatter().formatException(record.exc_info)
                )
            self.queue.append_log(job_id, line)
        except Exception:
            self.handleError(record)
        finally:
            self._busy.on = False


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
    ) -> None:
        base = prefix or f"{socket.gethostname()}:{os.getpid()}"
        self.workers = [
            Worker(
                queue,
                process=process,
                worker_id=f"{base}:{i}",
                lease_seconds=lease_seconds,
                poll_seconds=poll_seconds,
                clock=clock,
                metrics=metrics,
            )
            for i in range(size)
        ]
        self.queue = queue
        self.stop_event = threading.Event()
        self._threads: list[threading.Thread] = []
        self._log_handler = JobLogHandler(queue)

    def start(self) -> None:
        """Start the threads (daemons: a dying process abandons jobs to their leases)."""
        logging.getLogger().addHandler(self._log_handler)
        for w in self.workers:
            t = threading.Thread(
                target=w.run, args=(self.stop_event,), daemon=True, name=w.worker_id
            )
            t.start()
            self._threads.append(t)

    def stop(self, timeout: float | None = None) -> None:
        """Ask every worker to stop after its current job, and wait up to `timeout`."""
        self.stop_event.set()
        for t in self._threads:
            t.join(timeout)
        logging.getLogger().removeHandler(self._log_handler)
