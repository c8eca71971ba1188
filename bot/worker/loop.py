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
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta

from bot.clock import Clock, SystemClock
from bot.errors import ConfigError, GitHubError, QueueError
from bot.events import Ignore
from bot.logs import job_id_var, redactor
from bot.models import JobResult
from bot.queue import JobQueue, QueuedJob
from bot.worker.intake import Intake as Intake  # also imported from here by bot.cli.serve
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


class JobLogHandler(logging.Handler):
    """Collect every log line emitted while a job runs (job id set) for that job's log.

    Lines are buffered per job and written in one transaction: with the job's result, at
    each heartbeat, or once the oldest buffered line is `flush_seconds` old, so the jobs
    page follows a long job closely without a write per line.
    """

    def __init__(
        self, queue: JobQueue, level: int = logging.INFO, flush_seconds: float = 1.0
    ) -> None:
        super().__init__(level)
        self.queue = queue
        self.flush_seconds = flush_seconds
        self._lines: dict[str, list[str]] = {}
        self._since: dict[str, float] = {}
        self._buffers_lock = threading.Lock()
        self._busy = threading.local()

    def emit(self, record: logging.LogRecord) -> None:
        """Buffer the line, redacted, prefixed with time, level, logger and job id."""
        job_id = getattr(record, "job_id", "") or job_id_var.get()
        if not job_id or getattr(self._busy, "on", False):
            return
        try:
            stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(record.created))
            line = f"{stamp} {record.levelname} {record.name} [{job_id}] {record.getMessage()}"
            if record.exc_info and record.exc_info[1] is not None:
                line += "\n" + logging.Formatter().formatException(record.exc_info)
            line = redactor().redact(line)
            now = time.monotonic()
            with self._buffers_lock:
                lines = self._lines.setdefault(job_id, [])
                if not lines:
                    self._since[job_id] = now
                lines.append(line)
                due = now - self._since[job_id] >= self.flush_seconds
            if due:
                self.flush_job(job_id)
        except Exception:
            self.handleError(record)

    def take(self, job_id: str) -> list[str]:
        """The job's buffered lines, removed from the buffer."""
        with self._buffers_lock:
            self._since.pop(job_id, None)
            return self._lines.pop(job_id, [])

    def flush_job(self, job_id: str) -> None:
        """Write the job's buffered lines now."""
        lines = self.take(job_id)
        if not lines:
            return
        self._busy.on = True  # a queue that logs must not recurse into itself
        try:
            self.queue.append_logs(job_id, lines)
        finally:
            self._busy.on = False


class _Heartbeat:
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
        self._heartbeat = _Heartbeat(queue, self.worker_id, lease_seconds)
        self._heartbeat.logs = logs

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
                log.error("queue error in worker %s: %s", self.worker_id, exc)
                busy = False
            except Exception:
                # Never let a bug kill the thread: the job's lease lapses and it is retried.
                log.exception("worker %s crashed outside a job", self.worker_id)
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
        """Ask every worker to stop after its current job, and wait up to `timeout`."""
        self.stop_event.set()
        if self.intake is not None:
            self.intake.stored()  # wake the idle ones now, not at their next poll
        for t in self._threads:
            t.join(timeout)
        logging.getLogger().removeHandler(self.log_handler)
