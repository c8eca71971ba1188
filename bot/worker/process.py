"""One stored delivery to one outcome: parse, load config, decide, guard, run or dispatch.

Routing happens here, not in the receiver, so a routing bug never loses a delivery: the
raw delivery stays in the queue and the failure is on the job.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bot.clock import Clock, SystemClock
from bot.config import REPO_CONFIG_PATH, RepoConfig
from bot.errors import AgentbotError, ConfigError
from bot.events import Ignore, decide, describe, installation_id, repo_full_name
from bot.github import GitHub
from bot.guards import check_job, check_permission
from bot.jobs import get_handler
from bot.llm import LLM
from bot.models import Job, JobKind, JobResult, JobStatus
from bot.ports import Handler, JobEnv
from bot.queue import JobQueue, QueuedJob

log = logging.getLogger("agentbot.worker")

ROUTED_EVENTS = frozenset({"issues", "issue_comment", "push", "schedule", "workflow_dispatch"})
"""Events whose decision depends on the repository's config (DESIGN §3). Any other event
is ignored without a GitHub call: no config can make it a trigger."""

DISPATCHED = "dispatched to GitHub Actions"
"""How a result recorded in `actions` mode begins its summary."""

NO_CREDENTIALS = (
    "no GitHub credentials configured: set GITHUB_TOKEN, or GITHUB_APP_ID and"
    " GITHUB_APP_PRIVATE_KEY (or GITHUB_APP_PRIVATE_KEY_PATH), and restart"
)

GitHubFor = Callable[[int | None, str], GitHub]
"""(installation id from the delivery, `owner/name`) -> a client acting for it."""


class JobFailure(AgentbotError):
    """A job failed in a known way; retried only when `retry_after` says when."""

    def __init__(self, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


def _no_llm(model: str) -> LLM:
    raise JobFailure(f"no LLM configured for model {model}")


@dataclass
class WorkerDeps:
    """What processing a delivery needs; built by the entry point, by fakes in tests."""

    queue: JobQueue
    github_for: GitHubFor | None
    """None when no credentials are configured: routed jobs then fail saying so."""
    llm_factory: Callable[[str], LLM] = _no_llm
    data_dir: Path = Path(".agentbot")
    server_url: str = "https://github.com"
    bot_login: str = ""
    """The App's own login (`name[bot]`), so its own events never start work."""
    clock: Clock = field(default_factory=SystemClock)
    get_handler: Callable[[JobKind], Handler] = get_handler


def _payload(record: QueuedJob) -> dict[str, Any] | Ignore:
    try:
        payload = json.loads(record.payload)
    except ValueError:
        return Ignore(reason="the stored payload is not JSON")
    if not isinstance(payload, dict):
        return Ignore(reason=f"{record.event_name} payload is not a JSON object")
    return payload


def load_config(
    github: GitHub, repo: str, default_branch: str, path: str = REPO_CONFIG_PATH
) -> RepoConfig:
    """The repository's `.github/agentbot.yml` from its default branch (absent: defaults).

    Never from a PR branch: a pull request must not change the bot's rules (DESIGN §4).
    """
    text = github.get_file(repo, path, ref=default_branch)
    if text is None:
        return RepoConfig()
    return RepoConfig.from_text(text, source=f"{path} on {default_branch}")


def process_delivery(record: QueuedJob, deps: WorkerDeps) -> JobResult | Ignore:
    """Route one stored delivery and run (or dispatch) its job; raise when it failed."""
    payload = _payload(record)
    if isinstance(payload, Ignore):
        return payload
    event = record.event_name
    if event not in ROUTED_EVENTS:
        early = decide(event, payload, RepoConfig(), bot_login=deps.bot_login)
        return early if isinstance(early, Ignore) else Ignore(reason=f"{event} is not routed")
    repo = repo_full_name(payload)
    if repo is None:
        return Ignore(reason=f"{event} delivery names no valid repository")
    if deps.github_for is None:
        raise JobFailure(NO_CREDENTIALS)
    github = deps.github_for(installation_id(payload), repo)
    branch = _default_branch(payload) or github.default_branch(repo)
    try:
        config = load_config(github, repo, branch)
    except ConfigError as exc:
        return _bad_config(exc, record, payload, github, deps, branch)
    decision = decide(event, payload, config, bot_login=deps.bot_login, default_branch=branch)
    if isinstance(decision, Ignore):
        _reply(github, decision, config)
        return decision
    job = decision.model_copy(update={"delivery_id": record.delivery_id})
    deps.queue.annotate(record.id, repo=job.repo, number=job.number, kind=job.kind.value)
    log.info("decided: %s", describe(job))
    refusal = check_job(github, job, config)
    if refusal is not None:
        if refusal.comment and job.number is not None:
            github.create_comment(job.repo, job.number, refusal.comment)
        return Ignore(reason=refusal.reason, repo=job.repo, number=job.number, actor=job.actor)
    if not deps.queue.acquire_key(job.key, record.id):
        return Ignore(
            reason=f"a job for {job.key} is already running", repo=job.repo, number=job.number
        )
    if config.execution.mode == "actions":
        return dispatch(github, job, config, branch, deps.clock)
    handler = deps.get_handler(job.kind)
    env = JobEnv(
        github=github,
        config=config,
        llm_factory=deps.llm_factory,
        data_dir=deps.data_dir,
        server_url=deps.server_url,
        clock=deps.clock,
        echo=lambda text: log.info("%s", text),
    )
    log.info("running %s locally", job.kind.value)
    return handler(job, env)


def _default_branch(payload: dict[str, Any]) -> str | None:
    repo = payload.get("repository")
    branch = repo.get("default_branch") if isinstance(repo, dict) else None
    return branch if isinstance(branch, str) and branch else None


def _reply(github: GitHub, ignore: Ignore, config: RepoConfig) -> None:
    """Post routing's reply (a command used on the wrong kind...) to collaborators only."""
    if not (ignore.reply and ignore.repo and ignore.number is not None and ignore.actor):
        return
    if check_permission(github, ignore.repo, ignore.actor, config, what="this") is None:
        github.create_comment(ignore.repo, ignore.number, ignore.reply)


def _bad_config(
    exc: ConfigError,
    record: QueuedJob,
    payload: dict[str, Any],
    github: GitHub,
    deps: WorkerDeps,
    branch: str,
) -> Ignore:
    """An invalid config fails the jobs it stops, with one comment; other events stay quiet.

    Whether the event is a trigger is judged with the default config, so a broken file is
    reported when someone asks for work, not on every comment in the repository.
    """
    would = decide(
        record.event_name, payload, RepoConfig(), bot_login=deps.bot_login, default_branch=branch
    )
    if isinstance(would, Ignore):
        return Ignore(reason=f"{exc} (and the event starts no job under the defaults either)")
    message = f"invalid {REPO_CONFIG_PATH}: {exc}"
    if would.number is not None:
        deps.queue.annotate(record.id, number=would.number, kind=would.kind.value)
        if check_permission(github, would.repo, would.actor, RepoConfig(), what="this") is None:
            github.create_comment(
                would.repo,
                would.number,
                f"agentbot cannot start: `{REPO_CONFIG_PATH}` on `{branch}` is invalid:"
                f" {exc}\n\nFix the file on the default branch and ask again.",
            )
    raise JobFailure(message)


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


def dispatch(github: GitHub, job: Job, config: RepoConfig, branch: str, clock: Clock) -> JobResult:
    """`actions` mode: start the repo's agentbot workflow for this job; nothing runs here."""
    started = clock.now()
    workflow = config.execution.workflow
    github.dispatch_workflow(job.repo, workflow, ref=branch, inputs=dispatch_inputs(job))
    log.info("dispatched %s to workflow %s on %s", job.kind.value, workflow, branch)
    return JobResult(
        job=job,
        status=JobStatus.SUCCESS,
        summary=f"{DISPATCHED}: workflow {workflow} on {branch}",
        started_at=started,
        finished_at=clock.now(),
    )


def decision_text(outcome: JobResult | Ignore | None) -> str:
    """The one-line decision recorded on the job."""
    if outcome is None:
        return "ignored"
    if isinstance(outcome, Ignore):
        return f"ignored: {outcome.reason}"
    verb = "dispatched" if outcome.summary.startswith(DISPATCHED) else "ran"
    return f"{verb} {describe(outcome.job)}"
