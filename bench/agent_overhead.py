"""Harness overhead of the agent loop per turn, excluding model latency and tool execution.

Run by hand: `.venv/bin/python -m bench.agent_overhead [--turns 200] [--repeat 5]`.

A zero-latency ScriptedLLM replays N turns of a cheap tool call (the editor viewing a small
file), then `finish`. For each turn the time from the reply's return to the next
`complete()` call, minus the time spent inside the tool, is the loop's own work: budget
check and record, message bookkeeping, tool dispatch, and (with a session) the transcript
lines. Reported with and without a session folder. Target: median < 5 ms per turn.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bot.agent import run_agent
from bot.clock import SystemClock
from bot.cost import BudgetTracker
from bot.llm import Reply
from bot.roles import ISSUE_FIXER
from bot.session import Session
from bot.tools import Toolbox, ToolOutcome
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


if __name__ == "__main__":
    main()
