"""Prometheus metrics of one server: a registry per instance, never the global one."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from bot.errors import QueueError
from bot.models import JobResult
from bot.queue import JobQueue

# Jobs last from well under a second (ignored events) to tens of minutes (agent runs).
DURATION_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1200, 1800, 3600)


class _QueueStates(Collector):
    """`agentbot_jobs{state}`, read from the queue at scrape time (so it is true across
    processes and restarts, not just what this process saw)."""

    def __init__(self, queue: JobQueue) -> None:
        self.queue = queue

    def collect(self) -> Iterator[Metric]:
        """One gauge sample per state; none if the queue cannot be read."""
        family = GaugeMetricFamily("agentbot_jobs", "Jobs in the queue by state", labels=["state"])
        try:
            counts = self.queue.counts()
        except QueueError:
            return
        for state, n in counts.items():
            family.add_metric([state.value], n)
        yield family


class _Stats(Collector):
    """The operator's figures (`agentbot stats`), read from the queue at scrape time."""

    def __init__(self, queue: JobQueue, day_cap: float | None, month_cap: float | None) -> None:
        self.queue, self.caps = queue, {"day": day_cap, "month": month_cap}

    def collect(self) -> Iterator[Metric]:
        """Gauges of outcomes, rates and costs per kind, spend and caps, queue and durations."""
        from bot.clock import SystemClock
        from bot.stats.caps import period_start
        from bot.worker.outcomes import load_stats

        try:
            f = load_stats(self.queue)
            now = SystemClock().now()
            spent = {p: self.queue.spent(None, period_start(p, now)) for p in ("day", "month")}
        except QueueError:
            return
        g = GaugeMetricFamily
        pulls = g("agentbot_pull_requests", "agentbot's pull requests", labels=["kind", "state"])
        zero = g("agentbot_zero_touch_merges", "Merged with no commit by a person", labels=["kind"])
        per_pr = g(
            "agentbot_cost_per_merged_pr_usd", "All jobs' cost per merged PR", labels=["kind"]
        )
        per_job = g("agentbot_cost_per_job_usd", "Cost per job that ran", labels=["kind"])
        rates = g("agentbot_job_rate", "Success and unverified rates", labels=["kind", "rate"])
        for kind, k in f["by_kind"].items():
            for state in ("merged", "closed", "open"):
                pulls.add_metric([kind, state], k[state])
            zero.add_metric([kind], k["zero_touch"])
            for family, key in ((per_pr, "cost_per_merged_pr_usd"), (per_job, "cost_per_job_usd")):
                if k[key] is not None:
                    family.add_metric([kind], k[key])
            for rate in ("success", "unverified"):
                if k[f"{rate}_rate"] is not None:
                    rates.add_metric([kind, rate], k[f"{rate}_rate"])
        yield from (pulls, zero, per_pr, per_job, rates)
        spend = g("agentbot_spend_usd", "Spent in the current UTC period", labels=["period"])
        caps = g("agentbot_spend_cap_usd", "The installation's spend caps", labels=["period"])
        for period, usd in spent.items():
            spend.add_metric([period], usd)
            cap = self.caps[period]
            if cap is not None:
                caps.add_metric([period], cap)
        yield from (spend, caps)
        yield g("agentbot_queue_depth", "Jobs waiting (queued or retry due)", f["queue_depth"])
        durations = g("agentbot_job_duration_quantile_seconds", "Job durations", labels=["q"])
        for q in ("p50", "p95"):
            if f[f"duration_{q}_seconds"] is not None:
                durations.add_metric([q], f[f"duration_{q}_seconds"])
        yield durations


REJECTED = frozenset({"bad_signature", "bad_request", "bad_json", "too_large"})
"""Delivery outcomes that refused the delivery: nothing was stored."""


class Metrics:
    """Deliveries, job outcomes and durations, LLM tokens and cost."""

    def __init__(self, queue: JobQueue | None = None) -> None:
        self.registry = CollectorRegistry()
        self.deliveries = Counter(
            "agentbot_webhook_deliveries",
            "Webhook deliveries received, by event and outcome",
            ["event", "outcome"],
            registry=self.registry,
        )
        self.jobs = Counter(
            "agentbot_jobs_processed",
            "Jobs processed by this process's workers, by kind and outcome",
            ["kind", "outcome"],
            registry=self.registry,
        )
        self.job_duration = Histogram(
            "agentbot_job_duration_seconds",
            "Wall time of a job in a worker, by kind and outcome",
            ["kind", "outcome"],
            buckets=DURATION_BUCKETS,
            registry=self.registry,
        )
        self.llm_tokens = Counter(
            "agentbot_llm_tokens",
            "LLM tokens used by jobs, by type",
            ["type"],
            registry=self.registry,
        )
        self.llm_cost = Counter(
            "agentbot_llm_cost_usd", "LLM cost of jobs in USD", registry=self.registry
        )
        self._delivery_children: dict[tuple[str, str], Any] = {}
        self._stats = False
        self.rejected: dict[str, int] = {}
        """Refused deliveries by outcome (`bad_signature`, `bad_request`…), for the jobs page."""
        if queue is not None:
            self.registry.register(_QueueStates(queue))

    def watch_stats(
        self, queue: JobQueue, *, day_cap: float | None = None, month_cap: float | None = None
    ) -> None:
        """Also expose the operator's figures (outcomes, costs, spend against the caps)."""
        if not self._stats:
            self.registry.register(_Stats(queue, day_cap, month_cap))
            self._stats = True

    def delivery(self, event: str, outcome: str) -> None:
        """Count one delivery (`queued`, `duplicate`, `bad_signature`, ...)."""
        child = self._delivery_children.get((event, outcome))
        if child is None:  # labels() costs more than the increment; the receiver is hot
            child = self.deliveries.labels(event=event, outcome=outcome)
            self._delivery_children[(event, outcome)] = child
        child.inc()
        if outcome in REJECTED:
            self.rejected[outcome] = self.rejected.get(outcome, 0) + 1

    def job(self, kind: str, outcome: str, seconds: float, result: JobResult | None) -> None:
        """Record one processed job and what its LLM calls used."""
        self.jobs.labels(kind=kind, outcome=outcome).inc()
        self.job_duration.labels(kind=kind, outcome=outcome).observe(seconds)
        if result is not None:
            usage = result.usage
            for kind_, n in (
                ("input", usage.input_tokens),
                ("output", usage.output_tokens),
                ("cache_write", usage.cache_creation_input_tokens),
                ("cache_read", usage.cache_read_input_tokens),
            ):
                if n:
                    self.llm_tokens.labels(type=kind_).inc(n)
            if result.cost_usd > 0:
                self.llm_cost.inc(result.cost_usd)

    def render(self) -> bytes:
        """The text exposition format."""
        return generate_latest(self.registry)
