"""The App's door: one stored delivery through the use case, with the queue's bookkeeping.

Routing happens here, not in the receiver, so a routing bug never loses a delivery: the
raw delivery stays in the queue and the failure is on the job. The steps are the use
case's (`bot.usecase`); the App adds the installation's client, `execution.mode: actions`
dispatch, the jobs page's annotations and one running job per issue.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from bot.clock import Clock, SystemClock
from bot.config import RepoConfig
from bot.errors import AgentbotError, NoCredentials
from bot.events import Delivery, Ignore, describe
from bot.llm import LLM
from bot.models import Job, JobKind, JobResult
from bot.ports import GitHubFor, GitHubPort, Handler, JobEnv
from bot.queue import JobQueue, QueuedJob
from bot.sandbox import SandboxPolicy
from bot.usecase import DISPATCHED, UseCase, dispatch_inputs
from bot.worker.outcomes import follow, opened
from bot.worker.spend import SpendCaps

log = logging.getLogger("agentbot.worker")

NO_CREDENTIALS = str(NoCredentials())

__all__ = [
    "DISPATCHED",
    "NO_CREDENTIALS",
    "GitHubFor",
    "JobFailure",
    "WorkerDeps",
    "decision_text",
    "dispatch_inputs",
    "process_delivery",
]


class JobFailure(AgentbotError):
    """A job failed in a known way; retried only when `retry_after` says when."""

    def __init__(self, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


def _no_llm(model: str) -> LLM:
    raise JobFailure(f"no LLM configured for model {model}")


@dataclass
class WorkerDeps:
    """What processing a delivery needs; built by `bot.wiring`, by fakes in tests."""

    queue: JobQueue
    github_for: GitHubFor | None
    """None when no credentials are configured: routed jobs then fail saying so."""
    handlers: Mapping[JobKind, Handler]
    """The handler map (`bot.workflows.handlers.HANDLERS` in production)."""
    llm_factory: Callable[[str], LLM] = _no_llm
    data_dir: Path = Path(".agentbot")
    server_url: str = "https://github.com"
    bot_login: str = ""
    """The App's own login (`name[bot]`), so its own events never start work."""
    clock: Clock = field(default_factory=SystemClock)
    sandbox: SandboxPolicy | None = None
    """How local jobs are confined, one sandbox each (`bot.wiring` always sets it); a job
    it cannot confine fails with SandboxUnavailable, a ConfigError: dead, not retried."""
    missing_credentials: Callable[[], str | None] = lambda: None
    """What this process lacks to run a job (`bot.wiring.missing_credentials`): such a job
    fails with one comment on its issue, before anything else is written."""
    max_usd_per_day: float | None = None
    """The installation's spend cap per UTC day (AGENTBOT_MAX_USD_PER_DAY)."""
    max_usd_per_month: float | None = None
    """The installation's spend cap per UTC month (AGENTBOT_MAX_USD_PER_MONTH)."""

    def spend_caps(self) -> SpendCaps:
        """The caps over time, counted in this queue."""
        return SpendCaps(self.queue, self.clock, self.max_usd_per_day, self.max_usd_per_month)

    def usecase(self) -> UseCase:
        """The use case with the App's door: installation clients, dispatch, the queue."""
        caps = self.spend_caps()
        return UseCase(
            capped=caps.refusal,
            meter=caps.meter,
            github_for=self._client if self.github_for is not None else None,
            handlers=self.handlers,
            make_env=self._env,
            bot_login=self.bot_login,
            dispatches=True,
            decided=self._annotate,
            hold=lambda job: self.queue.acquire_key(job.key, job.delivery_id),
            clock=self.clock,
            missing_credentials=self.missing_credentials,
            tell_missing=True,
        )

    def _client(self, delivery: Delivery) -> GitHubPort:
        assert self.github_for is not None and delivery.repo is not None
        return self.github_for(delivery.installation_id, delivery.repo)

    def _env(self, github: GitHubPort, config: RepoConfig) -> JobEnv:
        return JobEnv(
            github=github,
            config=config,
            llm_factory=self.llm_factory,
            data_dir=self.data_dir,
            server_url=self.server_url,
            clock=self.clock,
            echo=lambda text: log.info("%s", text),
            sandbox=self.sandbox.open(config.sandbox.network) if self.sandbox else None,
        )

    def _annotate(self, job: Job) -> Job:
        """The jobs page shows repo, number and kind as soon as they are known."""
        self.queue.annotate(job.delivery_id, repo=job.repo, number=job.number, kind=job.kind.value)
        return job


def process_delivery(record: QueuedJob, deps: WorkerDeps) -> JobResult | Ignore:
    """Route one stored delivery and run (or dispatch) its job; raise when it failed."""
    follow(deps.queue, record.event_name, record.payload, deps.bot_login)
    delivery = Delivery.from_json(record.event_name, record.payload, record.id)
    if isinstance(delivery, Ignore):
        return delivery
    if delivery.repo or delivery.number is not None:
        # The jobs page names the repo and issue/PR from the payload, whatever comes next.
        deps.queue.annotate(record.id, repo=delivery.repo or "", number=delivery.number)
    outcome = deps.usecase().handle(delivery)
    if isinstance(outcome, JobResult) and not outcome.summary.startswith(DISPATCHED):
        opened(deps.queue, outcome, deps.clock)
    return outcome


def decision_text(outcome: JobResult | Ignore | None) -> str:
    """The one-line decision recorded on the job."""
    if outcome is None:
        return "ignored"
    if isinstance(outcome, Ignore):
        return f"ignored: {outcome.reason}"
    verb = "dispatched" if outcome.summary.startswith(DISPATCHED) else "ran"
    return f"{verb} {describe(outcome.job)}"
