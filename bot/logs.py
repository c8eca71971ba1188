"""Logging setup: JSON lines or rich text, job ids, secrets redacted, repeats held back."""

from __future__ import annotations

import contextvars
import json
import logging
import threading
import time
from collections.abc import Callable, Iterable

from bot.secrets import redact, register

job_id_var: contextvars.ContextVar[str] = contextvars.ContextVar("agentbot_job_id", default="")


class RedactFilter(logging.Filter):
    """Replace every registered secret (and anything shaped like a token) with `***`."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Render the message once, redacted, and attach the job id."""
        record.msg = redact(record.getMessage())
        record.args = None
        if record.exc_info and record.exc_info[1] is not None:
            record.exc_text = redact(logging.Formatter().formatException(record.exc_info))
            record.exc_info = None
        record.job_id = job_id_var.get()
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object per line, for `serve` and `worker`."""

    def format(self, record: logging.LogRecord) -> str:
        """Render a record as JSON."""
        data = {
            "ts": self.formatTime(record, "%Y-%m-%dT%H:%M:%S"),
            "level": record.levelname,
            "logger": record.name,
            "job_id": getattr(record, "job_id", "") or job_id_var.get(),
            "msg": record.getMessage(),
        }
        if record.exc_text:
            data["exc"] = record.exc_text
        return json.dumps(data)


def setup_logging(
    *, json_lines: bool, level: int = logging.INFO, secrets: Iterable[str] = ()
) -> None:
    """Configure the root logger once; called by the entry points only."""
    for value in secrets:
        register(value)
    handler: logging.Handler
    if json_lines:
        handler = logging.StreamHandler()
        handler.setFormatter(JsonFormatter())
    else:
        from rich.console import Console
        from rich.logging import RichHandler

        # Logs go to stderr, so stdout stays for results (JSON, the one-line outcome).
        handler = RichHandler(
            console=Console(stderr=True), show_path=False, markup=False, rich_tracebacks=False
        )
    handler.addFilter(RedactFilter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    # Every REST and LLM call would be an INFO line; our own lines say what matters.
    for noisy in ("httpx", "httpcore", "httpx2", "anthropic", "openai", "uvicorn.access"):
        logging.getLogger(noisy).setLevel(max(level, logging.WARNING))


class OncePerSecond(logging.Filter):
    """Let a repeated line through once a second, with how many were left out."""

    # Its traceback only the first time: a failure that keeps coming is one line a second.

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self.clock = clock
        self.seen: dict[tuple[str, str, str], tuple[float, int]] = {}
        self._lock = threading.Lock()

    def filter(self, record: logging.LogRecord) -> bool:
        """False for a repeat within a second of the last line like it."""
        error = record.exc_info[1] if record.exc_info else None
        # Lines alike by their text before the arguments, and by the kind of error they carry.
        key = (record.name, str(record.msg).split("\n", 1)[0], type(error).__name__)
        with self._lock:
            now = self.clock()
            again = key in self.seen
            last, dropped = self.seen.get(key, (float("-inf"), 0))
            if now - last < 1.0:
                self.seen[key] = (last, dropped + 1)
                return False
            if len(self.seen) >= 1000:  # lines with ever-new text must not grow this for ever
                self.seen.clear()
            self.seen[key] = (now, 0)
        if again:  # its traceback was logged the first time
            record.exc_info, record.exc_text, record.stack_info = None, None, None
        if dropped:
            record.msg = f"{record.msg} ({dropped} more like it in the last {now - last:.0f} s)"
        return True

    def log(
        self,
        logger: logging.Logger,
        level: int,
        msg: str,
        *args: object,
        error: BaseException | None = None,
    ) -> None:
        """Log one line, with `error`'s traceback, through this filter alone."""
        # Not installed on `logger`: its other lines (a job's, say) are never held back.
        if not logger.isEnabledFor(level):
            return
        exc_info = (type(error), error, error.__traceback__) if error is not None else None
        record = logger.makeRecord(logger.name, level, "", 0, msg, args, exc_info)
        if self.filter(record):
            logger.handle(record)
