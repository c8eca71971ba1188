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
        self.rejected: dict[str, int] = {}
        """Refused deliveries by outcome (`bad_signature`, `bad_request`…), for the jobs page."""
        if queue is not None:
            self.registry.register(_QueueStates(queue))

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
