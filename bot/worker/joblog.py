"""The job log: every line logged while a job runs, buffered and stored with that job."""

from __future__ import annotations

import logging
import threading
import time

from bot.logs import job_id_var
from bot.queue import JobQueue
from bot.secrets import redact


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
            line = redact(line)
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
