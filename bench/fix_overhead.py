"""IssueFixer overhead: start to PR opened, minus validation, and REST calls per job.

Run by hand: `.venv/bin/python -m bench.fix_overhead [--files 2000] [--repeat 5]`.

A generated repository of ~2,000 files (a package of small modules, one buggy function and
its failing test) sits in a bare remote; the fake GitHub server and a zero-latency scripted
Anthropic server stand in for github.com and the model. Each run is a full fix_issue job:
clone, branch, agent (3 turns through the real SDK), validation, commit, push, PR.
Validation time (`ValidationReport.duration_seconds`) is subtracted; GitHub write pacing
(>= 1 s between writes, a deliberate wait) runs on a fake clock and is reported apart.
Targets: median overhead < 3 s, REST calls per job <= 12 (plus 2 the worker spends on the
config file and the permission guard).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import bot.workflows.fix.story as fix_module
from bot.models import Job, JobKind, JobStatus, ValidationReport
from bot.validation import run_validation
from bot.workflows.fix.story import fix_issue
from tests.e2e import BUGGY_FILES, REPO, world
from tests.fakes.anthropic import finish, reply, tool_use

EDIT = {"command": "str_replace", "path": "calc.py", "old_str": "a - b", "new_str": "a + b"}


def repo_files(count: int) -> dict[str, str]:
    """`count` files: BUGGY_FILES plus a package of small modules."""
    files = dict(BUGGY_FILES)
    for i in range(count - len(files)):
        files[f"pkg/sub{i // 100}/mod{i}.py"] = f"VALUE_{i} = {i}\n"
    return files


def one_run(tmp: Path, count: int) -> tuple[float, float, int, float]:
    """(total seconds, validation seconds, REST calls, pacing seconds) of one job."""
    script = [
        reply(tool_use("str_replace_based_edit_tool", {"command": "view", "path": "calc.py"})),
        reply(tool_use("str_replace_based_edit_tool", EDIT)),
        reply(finish(summary="add() adds", root_cause="it subtracted")),
    ]
    with world(tmp, script, files=repo_files(count)) as w:
        w.gh.set_permission(REPO, "alice", "write")
        w.gh.add_issue(REPO, number=7, title="add() is wrong", labels=["agent-fix"])
        env = w.env()
        spent: list[float] = []

        def timed_validation(*args: Any, **kwargs: Any) -> ValidationReport:
            t0 = time.perf_counter()
            try:
                return run_validation(*args, **kwargs)
            finally:
                spent.append(time.perf_counter() - t0)

        fix_module.run_validation = timed_validation  # type: ignore[attr-defined]
        try:
            start = time.perf_counter()
            job = Job(kind=JobKind.FIX_ISSUE, repo=REPO, number=7, actor="alice")
            result = fix_issue(job, env)
            total = time.perf_counter() - start
        finally:
            fix_module.run_validation = run_validation  # type: ignore[attr-defined]
        assert result.status == JobStatus.SUCCESS, result.error
        return total, sum(spent), len(w.gh.calls), sum(w.clock.sleeps)


def main() -> None:
    """Print the medians."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    runs = []
    for i in range(args.repeat):
        with tempfile.TemporaryDirectory() as d:
            runs.append(one_run(Path(d), args.files))
        total, val, calls, paced = runs[-1]
        print(
            f"run {i + 1}: total {total:.2f}s validation {val:.2f}s overhead {total - val:.2f}s"
            f" REST calls {calls} pacing (fake clock) {paced:.0f}s"
        )
    overhead = statistics.median(t - v for t, v, _, _ in runs)
    print(f"files: {args.files}")
    print(f"median total: {statistics.median(t for t, _, _, _ in runs):.2f}s")
    print(f"median validation: {statistics.median(v for _, v, _, _ in runs):.2f}s")
    print(f"median overhead (total - validation): {overhead:.2f}s (target < 3 s)")
    print(f"REST calls per job: {runs[0][2]} (+2 in the worker: config, permission; target <= 12)")
    print(f"write pacing waited (fake clock, not in the totals): {runs[0][3]:.0f}s")


if __name__ == "__main__":
    main()
