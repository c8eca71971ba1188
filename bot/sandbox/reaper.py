"""Run a command, then kill every process it left behind: the no-sandbox fallback's reaper.

`python -I -S reaper.py ARGV...` makes itself a child subreaper (PR_SET_CHILD_SUBREAPER),
so a process that detaches (`setsid`, a double fork) is re-parented to it rather than to
init. When the command exits, or the reaper gets SIGTERM, SIGINT or SIGHUP, it kills all of
them and exits with the command's status. Only the standard library: it runs without site.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
from pathlib import Path

PR_SET_CHILD_SUBREAPER = 36


def parents() -> dict[int, tuple[int, str]]:
    """Every process's parent pid and state letter, read from /proc."""
    found: dict[int, tuple[int, str]] = {}
    try:
        entries = list(Path("/proc").iterdir())
    except OSError:
        return found
    for entry in entries:
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text(encoding="ascii", errors="replace")
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[-1].split()
        if len(fields) > 1 and fields[1].isdigit():
            found[int(entry.name)] = (int(fields[1]), fields[0])
    return found


def children() -> list[int]:
    """The pids whose parent is this process (zombies included)."""
    me = os.getpid()
    return [pid for pid, (parent, _) in parents().items() if parent == me]


def tree(roots: list[int]) -> list[int]:
    """`roots` and all their living descendants (zombies left out), `setsid` ones included."""
    table = parents()
    found = [pid for pid in roots if pid in table and table[pid][1] != "Z"]
    for pid in found:  # grows while it is walked: breadth first
        found += [c for c, (parent, state) in table.items() if parent == pid and state != "Z"]
    return found


def reap_all() -> None:
    """Kill every descendant (they re-parent to us as their parents die) and collect them."""
    while kids := children():
        for pid in kids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        for pid in kids:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)


def main(argv: list[str]) -> int:
    """Run `argv` as a child and return its exit code once nothing of it is left."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    child = os.fork()
    if child == 0:
        try:
            os.execvp(argv[0], argv)  # noqa: S606 (the command, as the caller gave it)
        except OSError as exc:
            os.write(2, f"{argv[0]}: {exc.strerror}\n".encode())
        os._exit(127)

    def stop(signum: int, _frame: object) -> None:
        reap_all()
        os._exit(128 + signum)

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, stop)
    _, status = os.waitpid(child, 0)
    code = os.waitstatus_to_exitcode(status)
    reap_all()
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
