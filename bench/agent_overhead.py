"""Harness overhead of the agent loop per turn, excluding model latency and tool execution.

Run by hand: `.venv/bin/python -m bench.agent_overhead [--turns 200] [--repeat 5]`.

A zero-latency ScriptedLLM replays N turns of a cheap tool call (the editor viewing a small
file), then `finish`. For each turn the time from the reply's return to the next
`complete()` call, minus the time spent inside the tool, is the loop's own work: budget
check and record, message bookkeeping, tool dispatch, and (with a session) the transcript
lines. Reported with and without a session folder. Target: median < 5 ms per turn.

It also reports the size of the IssueFixer's first request (system prompt, tools and the
first message, as sent) for a typical issue and for a log-heavy one (a 200 kB pasted log
and a 50 kB comment), both with a 300-file map and known base failures: the caps on
untrusted input keep the second close to the first.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bot.agent import run_agent
from bot.clock import SystemClock
from bot.cost import BudgetTracker
from bot.llm import Reply
from bot.llm.anthropic import with_cache_breakpoints
from bot.models.github import Comment, Issue
from bot.roles import ISSUE_FIXER
from bot.roles.issue_fixer import issue_task
from bot.session import Session
from bot.tools import Toolbox, ToolOutcome, tool_definitions
from bot.workflows.steps.workenv import file_tree
from tests.fakes.scripted_llm import ScriptedLLM, finish, reply, tool_use


class TimedLLM(ScriptedLLM):
    """Records when each call starts and returns."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.entered: list[float] = []
        self.returned: list[float] = []

    def complete(self, **kwargs: Any) -> Reply:
        self.entered.append(time.perf_counter())
        out = super().complete(**kwargs)
        self.returned.append(time.perf_counter())
        return out


class TimedToolbox(Toolbox):
    """Records how long each tool call takes."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.spent: list[float] = []

    def run(self, name: str, input: dict[str, Any]) -> ToolOutcome:
        began = time.perf_counter()
        out = super().run(name, input)
        self.spent.append(time.perf_counter() - began)
        return out


def one_run(turns: int, workspace: Path, data_dir: Path | None) -> tuple[list[float], list[float]]:
    """Per-turn overhead and per-call tool time (seconds) of one run of `turns` tool turns."""
    view = {"command": "view", "path": "small.py"}
    script = [reply(tool_use("str_replace_based_edit_tool", view)) for _ in range(turns)]
    llm = TimedLLM([*script, reply(finish())], record=False)
    toolbox = TimedToolbox(workspace)
    clock = SystemClock()
    budget = BudgetTracker(
        model="claude-sonnet-4-5", max_turns=turns + 5, max_usd=1e9, max_minutes=60, clock=clock
    )
    session = Session.create(data_dir, "bench", clock) if data_dir is not None else None
    run_agent(
        role=ISSUE_FIXER.configured(max_turns=turns + 5),
        task="Benchmark: view small.py repeatedly.",
        workspace=workspace,
        llm=llm,
        budget=budget,
        clock=clock,
        session=session,
        toolbox=toolbox,
    )
    gaps = [llm.entered[i + 1] - llm.returned[i] for i in range(turns)]
    return [g - t for g, t in zip(gaps, toolbox.spent, strict=True)], toolbox.spent


def first_request_bytes(body: str, comments: list[str]) -> int:
    """The JSON size of the IssueFixer's first request for an issue with this text."""
    issue = Issue(number=7, title="add() is wrong", body=body, user="bob", labels=["bug"])
    notes = [
        Comment(id=i, body=c, user=f"user{i}", author_association="NONE")
        for i, c in enumerate(comments)
    ]
    files = file_tree([f"pkg/mod{i // 30}/file{i}.py" for i in range(300)] + ["README.md"])
    failing = [f"tests/test_old.py::test_case_{i}" for i in range(3)]
    task = issue_task("octo/calc", issue, notes, files=files, base_failures=failing)
    tools, system, messages = with_cache_breakpoints(
        system=ISSUE_FIXER.system_prompt(),
        messages=[{"role": "user", "content": [{"type": "text", "text": task}]}],
        tools=tool_definitions(ISSUE_FIXER.tools),
    )
    request = {"model": "m", "max_tokens": 8192, "system": system, "messages": messages}
    return len(json.dumps({**request, "tools": tools}).encode())


def first_requests() -> dict[str, int]:
    """First-request sizes (bytes) for a typical and a log-heavy issue."""
    typical = "Calling add(2, 3) returns -1 instead of 5.\n\n" + "Steps: run `calc 2 3`.\n" * 20
    log = "".join(
        f"2026-01-01 12:00:{i % 60:02d} DEBUG worker[{i}] step {i} ok\n" for i in range(4000)
    )
    heavy = typical + "\n```\n" + log[:200_000] + "\n```\n"
    return {
        "typical": first_request_bytes(typical, ["Same here.", "+1", "Also on 3.12."]),
        "log-heavy": first_request_bytes(heavy, ["Here is my log:\n" + log[:50_000], "+1"]),
    }


def describe(label: str, values: list[float]) -> str:
    ms = sorted(v * 1000 for v in values)
    p90 = ms[int(len(ms) * 0.9) - 1]
    return (
        f"{label:<34} median {statistics.median(ms):7.3f} ms   p90 {p90:7.3f} ms"
        f"   max {ms[-1]:7.3f} ms   (n={len(ms)})"
    )


def main() -> None:
    """Print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp) / "ws"
        workspace.mkdir()
        (workspace / "small.py").write_text("def add(a, b):\n    return a + b\n" * 5)
        one_run(5, workspace, None)  # warm-up: imports, schema caches
        plain: list[float] = []
        logged: list[float] = []
        tools: list[float] = []
        for _ in range(args.repeat):
            overhead, spent = one_run(args.turns, workspace, None)
            plain += overhead
            tools += spent
            logged += one_run(args.turns, workspace, Path(tmp) / "data")[0]
    print(f"agent loop overhead per turn ({args.turns} turns x {args.repeat} runs)")
    print(describe("loop, no session", plain))
    print(describe("loop + session (transcript.jsonl)", logged))
    print(describe("tool time (editor view, excluded)", tools))
    verdict = "OK" if statistics.median(logged) < 0.005 else "OVER TARGET"
    print(f"target: median < 5 ms per turn -> {verdict}")
    for label, size in first_requests().items():
        print(f"first request, {label + ' issue':<18} {size:>8,} bytes (~{size // 4:,} tokens)")


if __name__ == "__main__":
    main()
