"""Workers: claim stored deliveries, route them, run or dispatch their jobs, record results."""

from bot.worker.intake import Intake
from bot.worker.joblog import JobLogHandler
from bot.worker.loop import Process, Worker, WorkerPool, retry_delay
from bot.worker.metrics import Metrics
from bot.worker.process import (
    DISPATCHED,
    NO_CREDENTIALS,
    GitHubFor,
    JobFailure,
    WorkerDeps,
    decision_text,
    dispatch_inputs,
    process_delivery,
)

__all__ = [
    "DISPATCHED",
    "NO_CREDENTIALS",
    "GitHubFor",
    "Intake",
    "JobFailure",
    "JobLogHandler",
    "Metrics",
    "Process",
    "Worker",
    "WorkerDeps",
    "WorkerPool",
    "decision_text",
    "dispatch_inputs",
    "process_delivery",
    "retry_delay",
]
