"""Sandbox overhead: what bubblewrap adds to one tool call and to one job.

Run by hand: `.venv/bin/python bench/sandbox_overhead.py [--runs 30] [--calls 25]`.
In a temporary git workspace under a data dir it times, alternately,
- one bash tool call (`Toolbox.bash`, change tracking included) with the job's sandbox
  and without one;
- one job's worth of sandbox: open the sandbox, `--calls` commands (the agent's bash calls
  and the validation stages; `true` each, so only the overhead is timed), close it,
  against the same commands run directly.
It prints the medians and the added time; targets: < 30 ms per tool call, < 1 s per job.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bot.sandbox import Sandbox, SandboxPolicy, sandbox_status
from bot.tools import Toolbox
from bot.validation.runner import run_command


def _workspace(root: Path) -> Path:
    ws = root / "data" / "workspaces" / "octo__app-issue-1"
    ws.mkdir(parents=True)
    for i in range(200):
        (ws / f"mod{i}.py").write_text(f"x = {i}\n")
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=ws, check=True)
    subprocess.run(["git", "add", "."], cwd=ws, check=True)
    subprocess.run(
        ["git", "-c", "user.name=b", "-c", "user.email=b@x", "commit", "-qm", "init"],
        cwd=ws,
        check=True,
    )
    return ws


def _timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _job(ws: Path, policy: SandboxPolicy | None, calls: int) -> None:
    """Open (or not) a sandbox, run `calls` commands through the spawn seams, close it."""
    sandbox: Sandbox | None = policy.open("setup") if policy else None
    try:
        for i in range(calls):
            if i % 5 == 0:
                run_command("true", ws, env={"PATH": "/usr/bin:/bin"}, timeout=60, sandbox=sandbox)
            else:
                Toolbox(ws, sandbox=sandbox).bash({"command": "true"})
    finally:
        if sandbox is not None:
            sandbox.close()


def main() -> None:
    """Print the medians and the overhead per tool call and per job."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--calls", type=int, default=25)
    args = parser.parse_args()
    status = sandbox_status()
    print(status.line())
    if not status.ok:
        sys.exit("no working bubblewrap here: nothing to measure")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        ws = _workspace(root)
        policy = SandboxPolicy(root=root / "data" / "sandbox", hidden=(root / "data",))
        with policy.open("setup") as sandbox:
            boxed, plain = Toolbox(ws, sandbox=sandbox), Toolbox(ws)
            call = {"command": "true"}
            for box in (boxed, plain):  # warm up
                box.bash(call)
            tool_in, tool_out = [], []
            for _ in range(args.runs):
                tool_in.append(_timed(lambda: boxed.bash(call)))
                tool_out.append(_timed(lambda: plain.bash(call)))
        job_in, job_out = [], []
        for _ in range(max(args.runs // 3, 5)):
            job_in.append(_timed(lambda: _job(ws, policy, args.calls)))
            job_out.append(_timed(lambda: _job(ws, None, args.calls)))
    tool_added = statistics.median(tool_in) - statistics.median(tool_out)
    job_added = statistics.median(job_in) - statistics.median(job_out)
    print(
        f"tool call: {statistics.median(tool_in) * 1000:.1f} ms sandboxed,"
        f" {statistics.median(tool_out) * 1000:.1f} ms direct:"
        f" +{tool_added * 1000:.1f} ms per call, median of {args.runs} (target < 30 ms)"
    )
    print(
        f"job ({args.calls} commands, sandbox opened and closed):"
        f" {statistics.median(job_in):.3f} s sandboxed, {statistics.median(job_out):.3f} s"
        f" direct: +{job_added:.3f} s per job, median of {len(job_in)} (target < 1 s)"
    )


if __name__ == "__main__":
    main()
