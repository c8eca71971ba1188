"""What the fake records (every call) and what it is told to do (scripted faults)."""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any

from tests.fakes.github import payloads as P
from tests.fakes.github.routing import DOCS


@dataclass(frozen=True)
class Call:
    """One request the fake received, and what it answered."""

    method: str
    path: str
    """Percent-decoded path, e.g. `/repos/o/r/issues/1/labels/good first issue`."""
    query: dict[str, str]
    json: Any
    status: int
    at: float
    """clock.monotonic() of the injected clock, else time.monotonic()."""
    headers: dict[str, str] = field(repr=False)
    """Request headers, lower-case names (Authorization included: this is a test double)."""


@dataclass
class Fault:
    """A scripted failure: the next `times` matching calls get this answer (None: forever)."""

    method: str
    path_regex: re.Pattern[str]
    status: int
    headers: dict[str, str]
    body: Any
    times: int | None


class Recorder:
    """Call records and fault scripts of FakeGitHub (its `lock` guards both)."""

    lock: threading.RLock

    def _init_records(self) -> None:
        self._calls: list[Call] = []
        self._faults: list[Fault] = []

    # --- records and faults ----------------------------------------------------------------

    @property
    def calls(self) -> list[Call]:
        """Every call so far, in order."""
        with self.lock:
            return list(self._calls)

    def calls_to(self, method: str, path_regex: str) -> list[Call]:
        """Calls with this method ("*" for any) whose path fully matches `path_regex`."""
        pattern = re.compile(path_regex)
        return [
            c
            for c in self.calls
            if method in ("*", c.method) and pattern.fullmatch(c.path) is not None
        ]

    def writes(self) -> list[Call]:
        """Every non-GET call."""
        return [c for c in self.calls if c.method != "GET"]

    def reset_calls(self) -> None:
        """Forget the calls recorded so far (state is kept)."""
        with self.lock:
            self._calls.clear()

    def fail_next(
        self,
        method: str,
        path_regex: str,
        status: int,
        headers: dict[str, str] | None = None,
        body: Any = None,
        times: int | None = 1,
    ) -> None:
        """Answer the next `times` calls matching (method or "*", full-match path regex) with
        `status`, `headers` and `body` (default GitHub's error shape); `times=None`: forever."""
        if body is None:
            body = P.error(HTTPStatus(status).phrase, DOCS, status=str(status))
        with self.lock:
            self._faults.append(
                Fault(method, re.compile(path_regex), status, dict(headers or {}), body, times)
            )

    def clear_faults(self) -> None:
        """Drop scripted failures that did not fire yet."""
        with self.lock:
            self._faults.clear()

    def _take_fault(self, method: str, path: str) -> Fault | None:
        for fault in self._faults:
            if fault.method in ("*", method) and fault.path_regex.fullmatch(path):
                if fault.times is not None:
                    fault.times -= 1
                    if fault.times <= 0:
                        self._faults.remove(fault)
                return fault
        return None
