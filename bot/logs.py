"""Logging setup: JSON lines or rich text, the job id on every line, secrets redacted."""

from __future__ import annotations

import contextvars
import json
import logging
from collections.abc import Iterable

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
