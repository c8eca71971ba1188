"""The handler registry: which workflow runs a job of each kind.

Built-in kinds resolve lazily to `bot.workflows.<kind>.<kind>` (e.g.
`bot.workflows.fix_issue.fix_issue`) the first time a job of that kind runs, so a workflow
registers simply by existing and importing the registry stays cheap. `register` adds or
replaces a handler explicitly (tests, plug-ins). A kind with neither is `NoHandler`, which
the worker records as a failed job ("no handler for kind X"), never silently.
"""

from __future__ import annotations

import importlib
import threading

from bot.errors import AgentbotError
from bot.models import JobKind
from bot.ports import Handler

HANDLERS: dict[JobKind, Handler] = {}
"""Handlers registered so far (built-ins appear here once loaded)."""

_LOCK = threading.Lock()


class NoHandler(AgentbotError):
    """No workflow is registered for a job kind."""

    def __init__(self, kind: JobKind) -> None:
        super().__init__(f"no handler for kind {kind.value}")
        self.kind = kind


def register(kind: JobKind, handler: Handler) -> None:
    """Make `handler` run jobs of `kind` (replacing any earlier one)."""
    with _LOCK:
        HANDLERS[JobKind(kind)] = handler


def unregister(kind: JobKind) -> None:
    """Forget the handler of `kind` (tests)."""
    with _LOCK:
        HANDLERS.pop(JobKind(kind), None)


def _builtin(kind: JobKind) -> Handler | None:
    """`bot.workflows.<kind>.<kind>` if that module and function exist."""
    module_name = f"bot.workflows.{kind.value}"
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        # Only "this workflow is not written yet" means no handler; a broken import inside
        # an existing workflow is a bug and must surface as the job's error.
        if exc.name == module_name:
            return None
        raise
    handler = getattr(module, kind.value, None)
    return handler if callable(handler) else None


def get_handler(kind: JobKind) -> Handler:
    """The handler for `kind`, loading the built-in one on first use; NoHandler if none."""
    kind = JobKind(kind)
    with _LOCK:
        found = HANDLERS.get(kind)
    if found is not None:
        return found
    loaded = _builtin(kind)
    if loaded is None:
        raise NoHandler(kind)
    with _LOCK:
        return HANDLERS.setdefault(kind, loaded)
