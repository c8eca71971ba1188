"""The one use case both doors call: plan(delivery) → guard → run.

`agentbot run` (the Action) and the App's worker differ only in what they hand in: how to
get a GitHub client for the delivery, how to build a job's ports, whether `execution.mode:
actions` dispatches, and their own say on a decided job (the Action's refuel inputs, the
queue's bookkeeping and one-job-per-issue hold). Everything else happens here, once:

- plan: `screen` the payload (no request at all for an event that cannot start a job),
  then one `FactCache` for the delivery, the config from the default branch, and `settle`
  (the one decision; with a broken config it is taken under the defaults, to know whether
  to tell anyone). A routing reply goes only to collaborators.
- guard: the actor's permission and the issue's state now, from the same FactCache.
- run: dispatch to Actions, or the kind's handler from `handlers` with the FactCache as
  the job's GitHub, so the workflow reads the same facts again for free, inside the job's
  check run (`bot.workflows.steps.check_run`); the job's sandbox (opened by the door's
  `make_env`) is closed when the handler returns.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace

from bot.clock import Clock, SystemClock
from bot.config import REPO_CONFIG_PATH, RepoConfig
from bot.cost import SpendMeter
from bot.deadline import job_timeout, run_with_deadline
from bot.errors import ConfigError, NoCredentials
from bot.events import Delivery, Ignore, describe, screen, settle
from bot.guards import check_job, check_permission
from bot.models import Job, JobKind, JobResult, JobStatus
from bot.outbound.text import addressing
from bot.ports import FactCache, GitHubPort, Handler, JobEnv
from bot.stats.caps import CapUse, refusal_comment

log = logging.getLogger("agentbot.job")

DISPATCHED = "dispatched to GitHub Actions"
"""How a result recorded in `actions` mode begins its summary."""


def _same(job: Job) -> Job:
    return job


def _free(job: Job) -> bool:
    return True


def _nothing_missing() -> str | None:
    return None


KnownFiles = Mapping[tuple[str, str, str | None], str | None]
"""(repo, path, ref) -> the file's text (None: absent), known without asking GitHub."""


def _no_files(delivery: Delivery) -> KnownFiles:
    return {}


def _no_link(job: Job) -> str:
    return ""


def _no_cap(job: Job, config: RepoConfig) -> CapUse | None:
    return None


def _no_meter(job: Job, config: RepoConfig) -> SpendMeter | None:
    return None


@dataclass(frozen=True)
class Plan:
    """A decided job, the config it was decided with, and the facts fetched for it."""

    job: Job
    config: RepoConfig
    github: FactCache


@dataclass
class UseCase:
    """plan → guard → run for one door (see the module docstring)."""

    github_for: Callable[[Delivery], GitHubPort] | None
    """A client acting for the delivery's repository; None when no credentials exist."""
    handlers: Mapping[JobKind, Handler]
    """The built kinds and their workflows: only these kinds are routed."""
    make_env: Callable[[GitHubPort, RepoConfig], JobEnv]
    """The ports of one job, around the job's GitHub client."""
    bot_login: str = ""
    dispatches: bool = False
    """Honour `execution.mode: actions` (the App); the Action is already in Actions."""
    decided: Callable[[Job], Job] = _same
    """The door's say on a decided job (its inputs, its bookkeeping)."""
    hold: Callable[[Job], bool] = _free
    """Take the job's key (one running job per issue); False: another job holds it."""
    config_path: str = REPO_CONFIG_PATH
    """Where the repository keeps its config (the Action's `--config`)."""
    clock: Clock = field(default_factory=SystemClock)
    missing_credentials: Callable[[], str | None] = _nothing_missing
    """What a job run here lacks (the LLM key…), checked before its handler writes anything."""
    known_files: Callable[[Delivery], KnownFiles] = _no_files
    """Files the door holds at the default branch's commit (the Action's checkout), so
    routing a delivery that starts nothing asks GitHub nothing."""
    tell_missing: bool = False
    """Say so in one comment on the issue (the App: its operator's error is not in a log
    the asker can read); otherwise only the raised ConfigError tells."""
    job_link: Callable[[Job], str] = _no_link
    """Where people follow a job (the App's job page, the Action's workflow run): the
    check run links there."""
    capped: Callable[[Job, RepoConfig], CapUse | None] = _no_cap
    """The spend cap reached now for a job that would run here (the App's caps over time)."""
    meter: Callable[[Job, RepoConfig], SpendMeter | None] = _no_meter
    """What counts a running job's spend against those caps."""
    job_timeout: float = field(default_factory=job_timeout)  # seconds (bot.deadline)
    assignee: str = ""
    """The Action's `assignee` input: assigning an issue to this login starts work, as
    `assignee:` in the repository's config does (the config wins when it names one)."""

    def handle(self, delivery: Delivery) -> JobResult | Ignore:
        """Plan, guard and run one delivery; Ignore when it starts nothing."""
        planned = self.plan(delivery)
        if isinstance(planned, Ignore):
            return planned
        # What the job writes may @mention the person who asked, and no one else.
        with addressing(planned.job.actor):
            refused = self.guard(planned)
            if refused is not None:
                return refused
            return self.run(planned)

    # --- plan ------------------------------------------------------------------------------

    def plan(self, delivery: Delivery) -> Plan | Ignore:
        """The job this delivery asks for, or why none; a bad config raises ConfigError."""
        screened = screen(delivery, bot_login=self.bot_login)
        if isinstance(screened, Ignore):
            return screened
        repo = delivery.repo
        if repo is None:
            return Ignore(reason=f"{delivery.event_name} delivery names no valid repository")
        if self.github_for is None:
            raise NoCredentials()
        branches = {repo: delivery.default_branch} if delivery.default_branch else {}
        github = FactCache(
            self.github_for(delivery), default_branches=branches, files=self.known_files(delivery)
        )
        try:
            config, broken = github.config(repo, self.config_path), None
        except ConfigError as exc:
            config, broken = RepoConfig(), exc
        if self.assignee and not config.assignee:
            config = config.model_copy(update={"assignee": self.assignee})
        decision = settle(screened, config, kinds=self.handlers, bot_login=self.bot_login)
        if broken is not None:
            return self._broken(broken, decision, github)
        if isinstance(decision, Ignore):
            self._reply(github, decision, config)
            return decision
        job = self.decided(decision.model_copy(update={"delivery_id": delivery.delivery_id}))
        log.info("decided: %s", describe(job))
        return Plan(job=job, config=config, github=github)

    def _reply(self, github: GitHubPort, ignore: Ignore, config: RepoConfig) -> None:
        """Post routing's reply (a command on the wrong kind of thread) to collaborators only."""
        if not (ignore.reply and ignore.repo and ignore.number is not None and ignore.actor):
            return
        if check_permission(github, ignore.repo, ignore.actor, config, what="this") is None:
            github.create_comment(ignore.repo, ignore.number, ignore.reply)

    def _broken(self, exc: ConfigError, would: Job | Ignore, github: GitHubPort) -> Ignore:
        """An invalid config fails the job it stops, with one comment; other events stay quiet.

        Whether the event is a trigger was judged under the defaults, so a broken file is
        reported when someone asks for work, not on every comment in the repository.
        """
        if isinstance(would, Ignore):
            return Ignore(reason=f"{exc} (and the event starts no job under the defaults either)")
        self.decided(would)
        if would.number is not None:
            defaults = RepoConfig()
            if check_permission(github, would.repo, would.actor, defaults, what="this") is None:
                branch = github.default_branch(would.repo)
                github.create_comment(
                    would.repo,
                    would.number,
                    f"agentbot cannot start: `{self.config_path}` on `{branch}` is invalid:"
                    f" {exc}\n\nFix the file on the default branch and ask again.",
                )
        raise ConfigError(f"invalid {self.config_path}: {exc}")

    # --- guard -----------------------------------------------------------------------------

    def guard(self, plan: Plan) -> Ignore | None:
        """The API guards (permission, open issue), then the one-job-per-issue hold."""
        job = plan.job
        refusal = check_job(plan.github, job, plan.config)
        if refusal is not None:
            if refusal.comment and job.number is not None:
                plan.github.create_comment(job.repo, job.number, refusal.comment)
            return Ignore(reason=refusal.reason, repo=job.repo, number=job.number, actor=job.actor)
        if not (self.dispatches and plan.config.execution.mode == "actions"):
            cap = self.capped(job, plan.config)
            if cap is not None:
                if job.number is not None:
                    what = f"{job.kind.value} on #{job.number}"
                    plan.github.create_comment(job.repo, job.number, refusal_comment(cap, what))
                return Ignore(reason=cap.message(), repo=job.repo, number=job.number)
        if not self.hold(job):
            return Ignore(
                reason=f"a job for {job.key} is already running", repo=job.repo, number=job.number
            )
        return None

    # --- run -------------------------------------------------------------------------------

    def run(self, plan: Plan) -> JobResult:
        """Dispatch the job to Actions (App, `actions` mode) or run its handler here."""
        if self.dispatches and plan.config.execution.mode == "actions":
            return self.dispatch(plan)
        self._check_credentials(plan)
        log.info("running %s here", plan.job.kind.value)
        # Imported here: `agentbot --help` and the receiver must not load the workflows.
        from bot.workflows.steps.answered import Answering, answered, command_comment
        from bot.workflows.steps.check_run import run_checked

        job = plan.job
        env = self.make_env(plan.github, plan.config)
        meter = self.meter(job, plan.config)
        if meter is not None:
            env = replace(env, meter=meter)
        if self.bot_login and not env.bot_login:
            env = replace(env, bot_login=self.bot_login)
        handler = self.handlers[job.kind]
        asked_by = command_comment(job)
        if asked_by is not None:
            env = replace(env, github=Answering(env.github, job, asked_by))
        # A handler may tell from reads alone that a delivery was seen before (a redelivered
        # review, answered): then no check run, no write, no model request.
        idle = getattr(handler, "nothing_to_do", None)
        try:
            reason = answered(job, env.github, env.bot_login, plan.config.labels.failed)
            reason = reason or (idle(job, env) if idle is not None else None)
            if reason:
                log.info("nothing to do: %s", reason)
                return JobResult(job=job, status=JobStatus.NEUTRAL, error=reason)
            # Through the job's own GitHub: a dry run records its check run, never sends it.
            seconds, link = self.job_timeout, self.job_link(job)
            work = lambda: run_with_deadline(job, env, seconds, lambda e: handler(job, e))  # noqa: E731
            return run_checked(env.github, job, link, work)
        finally:
            if env.sandbox is not None:
                env.sandbox.close()  # nothing the job started outlives it

    def _check_credentials(self, plan: Plan) -> None:
        """Fail the job before its first write when this process lacks a credential."""
        problem = self.missing_credentials()
        if problem is None:
            return
        job = plan.job
        if self.tell_missing and job.number is not None:
            plan.github.create_comment(
                job.repo,
                job.number,
                f"agentbot cannot run this job: {problem}. This is a setting of the bot's"
                " installation, not of this repository; ask its operator, then ask again.",
            )
        raise ConfigError(problem)

    def dispatch(self, plan: Plan) -> JobResult:
        """`actions` mode: start the repo's agentbot workflow for this job; nothing runs here."""
        job, started = plan.job, self.clock.now()
        workflow = plan.config.execution.workflow
        branch = plan.github.default_branch(job.repo)
        plan.github.dispatch_workflow(job.repo, workflow, ref=branch, inputs=dispatch_inputs(job))
        log.info("dispatched %s to workflow %s on %s", job.kind.value, workflow, branch)
        return JobResult(
            job=job,
            status=JobStatus.SUCCESS,
            summary=f"{DISPATCHED}: workflow {workflow} on {branch}",
            started_at=started,
            finished_at=self.clock.now(),
        )


def dispatch_inputs(job: Job) -> dict[str, str]:
    """The `workflow_dispatch` inputs that name a job (all strings, as GitHub wants)."""
    return {
        "kind": job.kind.value,
        "number": "" if job.number is None else str(job.number),
        "ref": job.ref,
        "actor": job.actor,
        "delivery_id": job.delivery_id,
        "params": json.dumps(job.params, sort_keys=True, default=str),
    }
