"""What the operator's view costs: the cap check before each model call, and building the
figures and the dashboard over a large queue.

Run by hand: `.venv/bin/python -m bench.operator_view [--jobs 5000] [--calls 2000]`.

On a SQLite queue in a temporary folder it records `--calls` model calls for one job and
times the meter's `check()` + `add()` (what each model call of a capped job adds), then
stores `--jobs` finished jobs with results and a pull request each, and times
`load_stats` (what `agentbot stats`, `/metrics` and the dashboard read) and the whole
dashboard page.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from bot.clock import SystemClock
from bot.config import RepoConfig
from bot.models import Job, JobKind, JobResult, JobStatus
from bot.models.stats import PullOutcome
from bot.queue.sqlite import SqliteQueue
from bot.worker.outcomes import load_stats
from bot.worker.spend import SpendCaps
from webhooks.dashboard import render_dashboard


def main() -> None:
    """Print the figures."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, default=5000)
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        queue = SqliteQueue(Path(tmp) / "q.db")
        clock = SystemClock()
        cfg = RepoConfig.from_text("budget: {max_usd_per_day: 1000000, max_usd_per_month: 1e7}")
        job = Job(kind=JobKind.FIX_ISSUE, repo="o/r", number=1, delivery_id="bench")
        meter = SpendCaps(queue, clock, per_day=1e6, per_month=1e7).meter(job, cfg)
        per_call = []
        for _ in range(args.calls):
            t = time.perf_counter()
            meter.check()
            meter.add(0.01)
            per_call.append(time.perf_counter() - t)
        for i in range(args.jobs):
            d = f"d{i}"
            queue.enqueue(d, "issues", b"{}", repo="o/r")
            queue.claim("w", 60)
            queue.annotate(d, repo="o/r", number=i, kind="fix_issue")
            j = Job(kind=JobKind.FIX_ISSUE, repo="o/r", number=i, delivery_id=d)
            queue.complete(d, JobResult(job=j, status=JobStatus.SUCCESS, cost_usd=0.5,
                                        pr_number=10_000 + i), "ran")  # fmt: skip
            state = ("merged", "closed", "open")[i % 3]
            queue.save_pull(PullOutcome(repo="o/r", number=10_000 + i, kind="fix_issue",
                                        job_id=d, state=state))  # fmt: skip
        t = time.perf_counter()
        figures = load_stats(queue)
        stats_s = time.perf_counter() - t
        t = time.perf_counter()
        page = render_dashboard(queue, day_cap=10.0)
        page_s = time.perf_counter() - t
        queue.close()
    print(f"cap check + record per model call ({args.calls} calls, {args.calls} rows spent):")
    print(f"  median {statistics.median(per_call) * 1000:.2f} ms,"
          f" p95 {sorted(per_call)[int(len(per_call) * 0.95)] * 1000:.2f} ms")  # fmt: skip
    print(f"load_stats over {args.jobs} jobs and pull requests: {stats_s * 1000:.0f} ms"
          f" ({figures['merged']} merged)")  # fmt: skip
    print(f"dashboard page: {page_s * 1000:.0f} ms, {len(page) / 1024:.0f} kB")


if __name__ == "__main__":
    main()
