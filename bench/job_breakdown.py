"""Where an IssueFixer job's time goes, step by step (issue #31).

Run by hand: `.venv/bin/python -m bench.job_breakdown [--repeat 5] [--files 200]`.

A full fix_issue job against the fake GitHub and a zero-latency scripted model (the same
world as `bench.fix_overhead`): each step of the story (read the issue, prepare the branch,
prepare the environment, the agent's fix, validation, the proof, publish, open the PR) is
timed by wrapping the flow's own methods; the time to the first model request is seen from
the fake model server. The first run is cold (no package cache); the medians are over the
warm runs that follow, which share one data dir as an App worker's jobs do. GitHub is held
as in production (facts memoised, writes paced on the real clock); the seconds spent only
waiting for pacing are printed apart and are part of the totals. Targets: whole job <= 8 s
of work (plus <= 3 s pacing), first model request <= 3 s.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.fix_overhead import EDIT, repo_files
from bot.clock import SystemClock
from bot.config import RepoConfig
from bot.models import Job, JobKind, JobStatus
from bot.ports.facts import FactCache
from bot.workflows.fix import story
from tests.e2e import REPO, world
from tests.fakes.anthropic import finish, reply, tool_use

# The regression test a zero-config repository's finish check asks for.
TEST = {
    "command": "create",
    "path": "tests/test_add_more.py",
    "file_text": (
        "from calc import add\n\n\ndef test_add_more() -> None:\n    assert add(1, 1) == 2\n"
    ),
}
STEPS = ("read_issue", "prepare_branch", "prepare_environment", "write_fix", "validate",
         "prove", "publish", "open_pr")  # fmt: skip


def timed(name: str, spent: dict[str, float], method: Callable[..., Any]) -> Callable[..., Any]:
    """`method`, adding its wall time to `spent[name]`."""

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return method(*args, **kwargs)
        finally:
            spent[name] += time.perf_counter() - start

    return wrapper


def one_run(tmp: Path, data: Path, count: int) -> tuple[dict[str, float], float, list[str], float]:
    """(seconds per step, seconds to the first model request, REST calls, pacing) of one job."""
    script = [
        reply(tool_use("str_replace_based_edit_tool", {"command": "view", "path": "calc.py"})),
        reply(tool_use("str_replace_based_edit_tool", EDIT)),
        reply(tool_use("str_replace_based_edit_tool", TEST)),
        reply(finish(summary="add() adds", root_cause="it subtracted")),
    ]
    spent: dict[str, float] = defaultdict(float)
    flow = story._FixFlow
    saved = {name: getattr(flow, name) for name in STEPS}
    with world(tmp, script, files=repo_files(count)) as w:
        w.gh.set_permission(REPO, "alice", "write")
        w.gh.add_issue(REPO, number=7, title="add() is wrong", labels=["agent-fix"])
        # Zero config: the repository's own stages, its own venv made by setup (cached).
        # GitHub as production holds it: facts memoised (FactCache, the default branch from
        # the payload), writes paced on the real clock, so a wait that overlaps work is free.
        client = w.gh.client(clock=SystemClock())
        github = FactCache(client, default_branches={REPO: "main"})
        env = dataclasses.replace(w.env(RepoConfig()), data_dir=data, github=github)
        first: list[float] = []
        done = threading.Event()

        def watch(start: float) -> None:
            while not done.is_set() and not w.llm.requests:
                time.sleep(0.002)
            if w.llm.requests:
                first.append(time.perf_counter() - start)

        for name in STEPS:
            setattr(flow, name, timed(name, spent, saved[name]))
        try:
            start = time.perf_counter()
            watcher = threading.Thread(target=watch, args=(start,), daemon=True)
            watcher.start()
            result = story.fix_issue(Job(kind=JobKind.FIX_ISSUE, repo=REPO, number=7,
                                         actor="alice"), env)  # fmt: skip
            spent["whole job"] = time.perf_counter() - start
            done.set()
            watcher.join()
        finally:
            for name, method in saved.items():
                setattr(flow, name, method)
        assert result.status == JobStatus.SUCCESS, result.error
        return (
            dict(spent),
            first[0] if first else float("nan"),
            [f"{c.method} {c.path} {sorted(c.query.items())}" for c in w.gh.calls],
            client.pacer.waited,
        )


def main() -> None:
    """Print the cold run and the warm medians per step."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=5, help="warm runs after the cold one")
    parser.add_argument("--calls", action="store_true", help="list the REST calls of a job")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as d:
        data = Path(d) / "data"
        runs = [one_run(Path(d) / f"run{i}", data, args.files) for i in range(args.repeat + 1)]
    cold, warm = runs[0], runs[1:]
    print(f"files: {args.files}; warm runs: {len(warm)} (one data dir, as an App worker's jobs)")
    print(f"{'step':<22}{'cold s':>9}{'warm median s':>15}")
    for name in (*STEPS, "whole job"):
        median = statistics.median(r[0].get(name, 0.0) for r in warm)
        print(f"{name:<22}{cold[0].get(name, 0.0):>9.2f}{median:>15.2f}")
    first = statistics.median(r[1] for r in warm)
    print(f"first model request: cold {cold[1]:.2f}s, warm median {first:.2f}s (target <= 3 s)")
    waited = statistics.median(r[3] for r in warm)
    print(f"REST calls per job: {len(warm[0][2])} (+1 for the check run in the Action and the App)")
    if args.calls:
        print("\n".join(f"  {call}" for call in warm[0][2]))
    print(f"waiting only for write pacing: {waited:.2f}s median (in the totals; target <= 3 s)")


if __name__ == "__main__":
    main()
