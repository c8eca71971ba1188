"""The bash tool: one fresh `bash -c` per call in the workspace, with a timeout and a cap.

Each call is a new shell whose working directory is the workspace: `cd` and variables do
not carry over to the next call (chain commands with `&&`), and `restart` is accepted as a
no-op. The shell leads its own process group; on timeout the whole group is killed
(SIGKILL), and when the command returns any process it left running in the background is
killed too, so nothing outlives the call. Output (stdout and stderr, interleaved) is read
as it comes and only its head and tail are kept, so a command printing gigabytes costs
little memory.

With a job's sandbox (bot.sandbox) the command runs there: the workspace is its only
writable tree, HOME and /tmp are the job's, its environment an allowlist, and the network
off unless `sandbox.network: all`. Without one it runs as the bot's user.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from bot.sandbox import Sandbox
from bot.tools.base import cap_text, cut_marker

SHELL_DEFAULTS: dict[str, str] = {
    "GIT_TERMINAL_PROMPT": "0",  # a git prompt would hang until the timeout
    "GIT_PAGER": "cat",
    "PAGER": "cat",
    # Plain, quiet output: progress bars and colour codes waste the model's context.
    "CI": "true",
    "NO_COLOR": "1",
    "TQDM_DISABLE": "1",
    "PIP_PROGRESS_BAR": "off",
    # pip installs into the project's venv or nowhere: never into a system interpreter.
    "PIP_REQUIRE_VIRTUALENV": "1",
}
"""Set for every command so nothing waits for a terminal or draws for one."""

_CHUNK = 65_536


@dataclass(frozen=True)
class ShellEnv:
    """A prepared environment for the agent's shell (the project's venv, its caches).

    `env` is used as given (it is already allowlisted, with the project's tools first on
    PATH); `writable` and `readable` are what the sandbox adds to the workspace.
    """

    env: Mapping[str, str]
    writable: tuple[Path, ...] = ()
    readable: tuple[Path, ...] = ()


class _Capture:
    """Keeps the first and the last `limit` bytes of a stream and counts the rest."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def drain(self, stream: IO[bytes]) -> None:
        fd = stream.fileno()
        while chunk := os.read(fd, _CHUNK):
            self.feed(chunk)

    def feed(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.limit - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            if len(self.tail) > self.limit:
                del self.tail[: len(self.tail) - self.limit]

    def text(self, cap: int) -> str:
        dropped = self.total - len(self.head) - len(self.tail)
        if dropped == 0:
            return cap_text(bytes(self.head + self.tail).decode(errors="replace"), cap)
        half = max((cap - 160) // 2, 1)
        head = self.head.decode(errors="replace")[:half]
        tail = self.tail.decode(errors="replace")[-half:]
        cut = self.total - len(head.encode()) - len(tail.encode())
        return head + cut_marker(cut, self.total, "bytes") + tail


@dataclass(frozen=True)
class BashRun:
    """One command's outcome."""

    output: str
    exit_code: int
    timed_out: bool
    total_bytes: int


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):  # already gone
        os.killpg(pgid, signal.SIGKILL)


def run_bash(
    command: str,
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout: float,
    cap: int,
    sandbox: Sandbox | None = None,
    writable: Sequence[Path] = (),
    readable: Sequence[Path] = (),
    read_only: bool = False,
) -> BashRun:
    """Run `bash -c command` in `cwd` (in `sandbox`, with `cwd` and `writable` writable and
    `readable` visible; `cwd` only readable when `read_only`); kill its process group on
    timeout and on return."""
    argv = ["bash", "-c", command]
    if sandbox is not None:
        proc = sandbox.popen(
            argv,
            cwd=cwd,
            env=env,
            writable=list(writable) if read_only else [cwd, *writable],
            readable=[cwd, *readable] if read_only else readable,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
    else:
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # own process group: killpg reaches every child
        )
    assert proc.stdout is not None
    capture = _Capture(cap)
    reader = threading.Thread(target=capture.drain, args=(proc.stdout,), daemon=True)
    reader.start()
    fired = threading.Event()

    def on_timeout() -> None:
        fired.set()
        _kill_group(proc.pid)

    # A timer, not wait(timeout=): that polls and notices the end up to 50 ms late.
    timer = threading.Timer(timeout, on_timeout)
    timer.daemon = True
    timer.start()
    try:
        exit_code = proc.wait()
    finally:
        timer.cancel()
        timer.join()  # no kill may come after the group id could be reused
        _kill_group(proc.pid)  # background jobs die with the call
    timed_out = fired.is_set()
    # A process that left the group (setsid) may still hold the pipe; don't wait for it.
    reader.join(timeout=5.0)
    if not reader.is_alive():
        proc.stdout.close()
    return BashRun(capture.text(cap), exit_code, timed_out, capture.total)


def format_run(run: BashRun, timeout: float) -> str:
    """The text the model sees for one command."""
    parts = [run.output.rstrip("\n") or "(no output)"]
    if run.timed_out:
        parts.append(
            f"[timed out after {timeout:g} s: the command and its child processes were killed;"
            " narrow it (fewer tests, a smaller input) and run it again]"
        )
    elif run.exit_code != 0:
        parts.append(f"[exit code {run.exit_code}]")
    return "\n".join(parts)
