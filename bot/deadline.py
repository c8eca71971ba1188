"""A job's hard deadline, `AGENTBOT_JOB_TIMEOUT` seconds (default 3600).

Jobs run in worker threads, which cannot be killed, so the deadline is cooperative with one
hard edge: when it passes, the job's sandbox is closed (every command it started is killed,
and no new one starts) and every later model request is refused, so the agent loop stops at
its next turn. The job then ends failed with reason "deadline": its issue or pull request
gets the failure label and one comment naming the deadline and the setting.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from bot.errors import AgentbotError, ConfigError
from bot.llm.port import LLM, Reply
from bot.models import Job, JobResult, JobStatus
from bot.models.github import Comment
from bot.ports import JobEnv
from bot.ports.github import GitHubPort, GitHubProxy

log = logging.getLogger("agentbot.job")

SETTING = "AGENTBOT_JOB_TIMEOUT"
DEFAULT_SECONDS = 3600.0
REASON = "deadline"


class DeadlinePassed(AgentbotError):
    """The job ran past its deadline; raised at its next model request."""


def job_timeout(env: Mapping[str, str] | None = None) -> float:
    """The per-job deadline in seconds, from `AGENTBOT_JOB_TIMEOUT`; bad input: ConfigError."""
    raw = (os.environ if env is None else env).get(SETTING, "").strip()
    if not raw:
        return DEFAULT_SECONDS
    try:
        seconds = float(raw)
    except ValueError:
        seconds = -1.0
    if not 0 < seconds < 10**9:
        raise ConfigError(
            f"{SETTING} must be a number of seconds above 0 (got {raw[:40]!r}); "
            f"unset it for the default, {DEFAULT_SECONDS:.0f}"
        )
    return seconds


class Deadline:
    """One job's deadline: a timer that, when it fires, closes the sandbox and stops models."""

    def __init__(self, seconds: float, on_expiry: Callable[[], None] = lambda: None) -> None:
        self.seconds = seconds
        self.passed = threading.Event()
        self._on_expiry = on_expiry
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True

    def __enter__(self) -> Deadline:
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._timer.cancel()

    def _expire(self) -> None:
        self.passed.set()
        log.error("the job passed its deadline (%s=%.0f); stopping it", SETTING, self.seconds)
        self._on_expiry()

    def check(self) -> None:
        """Raise DeadlinePassed once the deadline has passed."""
        if self.passed.is_set():
            raise DeadlinePassed(f"the job passed its deadline ({self.describe()})")

    def describe(self) -> str:
        """`AGENTBOT_JOB_TIMEOUT=3600 s`, for messages."""
        return f"{SETTING}={self.seconds:g} s"

    def models(self, factory: Callable[[str], LLM]) -> Callable[[str], LLM]:
        """`factory`, its models refusing every request once the deadline has passed."""
        return lambda model: _Stopping(factory(model), self)


class _Stopping:
    """An LLM that checks the deadline before each request (the agent loop's turns)."""

    def __init__(self, inner: LLM, deadline: Deadline) -> None:
        self.inner, self.deadline = inner, deadline
        self.provider, self.model = inner.provider, inner.model

    def complete(self, **kwargs: Any) -> Reply:
        self.deadline.check()
        return self.inner.complete(**kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def run_with_deadline(
    job: Job, env: JobEnv, seconds: float, run: Callable[[JobEnv], JobResult]
) -> JobResult:
    """`run(env)` under a deadline; past it, the job is failed with reason "deadline"."""
    sandbox = env.sandbox
    with Deadline(seconds, sandbox.close if sandbox is not None else lambda: None) as deadline:
        told = _Telling(env.github, job, deadline)
        env = replace(env, llm_factory=deadline.models(env.llm_factory), github=told)
        try:
            result = run(env)
        except Exception:
            if not deadline.passed.is_set():
                raise
            result = JobResult(job=job, status=JobStatus.FAILED)
    if not deadline.passed.is_set():
        return result
    _tell(job, env, deadline, comment=not told.said)
    return result.model_copy(update={"status": JobStatus.FAILED, "error": REASON})


class _Telling(GitHubProxy):
    """`inner`, noting whether the job itself said on its thread that the deadline passed."""

    def __init__(self, inner: GitHubPort, job: Job, deadline: Deadline) -> None:
        super().__init__(inner)
        self.thread, self.deadline, self.said = (job.repo, job.number), deadline, False

    def create_comment(self, repo: str, number: int, body: str) -> Comment:
        """Forwarded, noted."""
        self._note(repo, number, body)
        return self.inner.create_comment(repo, number, body)

    def update_comment(self, repo: str, comment_id: int, body: str) -> Comment:
        """Forwarded, noted (an edit is on the job's own comment)."""
        self._note(repo, self.thread[1], body)
        return self.inner.update_comment(repo, comment_id, body)

    def _note(self, repo: str, number: int | None, body: str) -> None:
        # Only a text naming the setting counts: a command the deadline killed may make the
        # job report some other failure, which would leave people guessing.
        if self.deadline.passed.is_set() and (repo, number) == self.thread and SETTING in body:
            self.said = True


def _tell(job: Job, env: JobEnv, deadline: Deadline, *, comment: bool) -> None:
    """The failure label, and one comment naming the deadline and its setting unless the
    job's own failure text on its thread already did."""
    if job.number is None:
        return
    try:
        env.github.add_labels(job.repo, job.number, [env.config.labels.failed])
        if not comment:
            return
        env.github.create_comment(
            job.repo,
            job.number,
            f"agentbot stopped this job: it ran past its deadline of {deadline.seconds:g}"
            f" seconds (the `{SETTING}` setting of the bot's installation); the commands"
            " it was running were killed and nothing more was pushed.",
        )
    except AgentbotError as exc:
        log.warning("could not tell %s#%s about the deadline: %s", job.repo, job.number, exc)
