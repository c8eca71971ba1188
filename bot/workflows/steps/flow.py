"""What every agent workflow shares: its result so far, the budget, the workspace and session
once opened, the agent step, the limits check, and an early end (`Stop`).

A new workflow subclasses `Flow`, writes its steps as methods, and overrides `fail` to say
why where its users will look (fix_issue: the progress comment and a label).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from bot.agent import Conversation, FinishCheck
from bot.errors import AgentbotError, AgentError, LimitsExceeded
from bot.git import Workspace
from bot.models import AgentOutput, AgentResult, Job, JobResult, JobStatus, ValidationReport
from bot.models.agent import SessionStatusFile
from bot.ports import JobEnv
from bot.roles import FIXER, Role
from bot.roles.fixer import feedback_message, repair_task
from bot.session import Session
from bot.tdd.suite import purge_bytecode
from bot.workflows.steps.agents import job_budget, role_conversation
from bot.workflows.steps.finish_check import WorkspaceFinishCheck, remove_scratch
from bot.workflows.steps.limits import worktree_problems
from bot.workflows.steps.workenv import WorkEnv, prepare_workenv

RUN_BUDGET = "run_budget_usd"
"""Job param a refuel run sets when what it has left, not `budget.max_usd_per_job`, caps a job."""
RUN_BUDGET_ENDED = (
    "the refuel run's budget (--max-usd) ran out before this issue was done; nothing is held"
    " against the issue: the next run takes it again"
)


log = logging.getLogger("agentbot.job")


class Refused(AgentbotError):
    """The job must not run here; the user gets the message as a comment."""


class Stop(Exception):
    """Ends a flow early with a finished result."""

    def __init__(self, result: JobResult) -> None:
        super().__init__(result.error or result.summary)
        self.result = result


class Flow:
    """One run of a workflow; holds what its steps share."""

    def __init__(self, job: Job, env: JobEnv, budget_role: str) -> None:
        self.job, self.env, self.gh, self.cfg = job, env, env.github, env.config
        self.result = JobResult(job=job, status=JobStatus.FAILED, started_at=env.clock.now())
        self.budget = job_budget(env, budget_role)
        self.outputs: list[AgentOutput] = []
        self.base_sha = ""
        self._ws: Workspace | None = None
        self._session: Session | None = None
        self.workenv: WorkEnv | None = None
        self.ran_out = ""
        self.conversation: Conversation | None = None
        self.fix_check: WorkspaceFinishCheck | None = None
        """The check the main agent's `finish` passes (its scratch is removed after it)."""
        self.fix_round = 0
        """Why an agent stopped before calling `finish` (its turns or budget ran out)."""
        """The prepared environment the agents' shells run in (`prepare_environment`)."""

    @property
    def ws(self) -> Workspace:
        """The workspace, once a step opened it."""
        assert self._ws is not None, "no workspace yet"
        return self._ws

    @property
    def session(self) -> Session:
        """The session folder, once a step opened it."""
        assert self._session is not None, "no session yet"
        return self._session

    def agent(
        self,
        role: Role,
        task: str,
        *,
        finish_check: FinishCheck | None = None,
        keep_work: bool = False,
    ) -> AgentResult:
        """Run one agent in the workspace; usage lands in the budget, its answer in `outputs`.

        A spent budget or a broken agent ends the flow (`Stop`) through `fail`; with
        `keep_work`, a spent budget is noted in `ran_out` and the partial result returned,
        so the flow can still propose the work the agent did. The conversation is kept
        in `conversation`, for `resume`.
        """
        self.conversation = role_conversation(
            self.env, role, task, self.ws.path, budget=self.budget, session=self.session,
            workenv=self.workenv, finish_check=finish_check,
        )  # fmt: skip
        return self._converse(self.conversation.start, keep_work=keep_work)

    def resume(self, text: str) -> AgentResult:
        """Continue the last agent's conversation with `text` (validation's verdict)."""
        assert self.conversation is not None, "no conversation to resume"
        conversation = self.conversation
        return self._converse(lambda: conversation.resume(text), keep_work=True)

    def follow_up(self, text: str) -> AgentResult:
        """`resume` with the main agent's scratch files removed after it."""
        try:
            return self.resume(text)
        finally:
            if self.fix_check is not None:
                remove_scratch(self.ws, self.fix_check)
            self.drop_bytecode()

    def drop_bytecode(self) -> None:
        """Drop the workspace's cached bytecode before validation runs again: a file the
        agent changed within the second it was compiled, to a text of the same size, looks
        unchanged to Python, which would run the stale bytecode."""
        # The stage cache (PYTHONPYCACHEPREFIX) is forgotten by every command it runs
        # (bot.validation.runner.drop_bytecode); what the tree holds goes here.
        purge_bytecode(self.ws.path)

    def repair_round(self, failing: ValidationReport, *, goal: str) -> None:
        """A fix round: validation's verdict goes back into the last agent's conversation
        (its cached prefix intact); a cold Fixer, told the stage, the command and the
        output's head and tail, only when that conversation cannot go on."""
        if self.ran_out:
            return  # no budget left: the work is proposed as it is
        self.fix_round += 1
        rounds = self.cfg.validation.fix_rounds
        if self.conversation is not None and self.conversation.resumable:
            self.follow_up(feedback_message(failing, round=self.fix_round, max_rounds=rounds))
            return
        files = self.ws.changed_files(self.base_sha)
        task = repair_task(
            failing, goal=goal, round=self.fix_round, max_rounds=rounds, files_changed=files
        )
        check = WorkspaceFinishCheck(self.ws, self.base_sha, self.cfg.limits, require_test=False)
        try:
            self.agent(FIXER, task, finish_check=check, keep_work=True)
        finally:
            remove_scratch(self.ws, check)
            self.drop_bytecode()

    def _converse(self, step: Callable[[], AgentResult], *, keep_work: bool) -> AgentResult:
        try:
            result = step()
        except LimitsExceeded as exc:
            if exc.limit == "usd" and self.job.params.get(RUN_BUDGET):
                # The cap was what a refuel run had left, not the repository's budget.
                raise Stop(self.run_budget_ended()) from exc
            if keep_work and exc.result is not None:
                self.ran_out = str(exc)
                return exc.result
            raise Stop(self.fail(f"budget exhausted: {exc}")) from exc
        except AgentError as exc:
            raise Stop(self.fail(f"the agent failed: {exc}")) from exc
        if result.output is not None:
            self.outputs.append(result.output)
        return result

    def prepare_environment(self) -> None:
        """Set the workspace up as validation will, before the first agent (cached)."""
        self.workenv = prepare_workenv(self.env, self.ws.path, self.base_sha or None)

    def check_limits(self) -> None:
        """End the flow with an explaining failure when the change breaks a limit."""
        problems = worktree_problems(self.ws, self.base_sha, self.cfg.limits)
        if problems:
            raise Stop(self.fail(f"the change breaks the repository's limits: {problems}"))

    def finished(self, status: JobStatus, *, error: str = "") -> JobResult:
        """The result with its final status, usage and end time; the session's status.json
        says the same outcome."""
        if self._session is not None:
            self._tell_session(status, error)
        return self.result.model_copy(
            update={
                "status": status,
                "error": error,
                "usage": self.budget.usage,
                "cost_usd": self.budget.cost_usd,
                "turns": self.budget.turns,
                "finished_at": self.env.clock.now(),
            }
        )

    def _tell_session(self, status: JobStatus, error: str) -> None:
        assert self._session is not None
        try:
            current = self._session.read_status()
        except (OSError, ValueError):  # no agent ran yet: start the file
            current = SessionStatusFile(session=self._session.name)
        issues = [*current.known_issues, error] if error else current.known_issues
        update = {"job_outcome": status.value, "known_issues": issues}
        self._session.write_status(current.model_copy(update=update))

    def neutral(self, reason: str) -> JobResult:
        """Nothing to do: no writes at all."""
        return self.finished(JobStatus.NEUTRAL, error=reason)

    def run_budget_ended(self) -> JobResult:
        """A refuel run's money ran out mid-job: neutral, the issue stays eligible."""
        return self.finished(JobStatus.NEUTRAL, error=RUN_BUDGET_ENDED)

    def fail(self, reason: str) -> JobResult:
        """The failed result; subclasses also say why where their users look."""
        return self.finished(JobStatus.FAILED, error=reason)

    def run(self) -> JobResult:
        """The flow's steps, raising Stop or an error to end early (subclasses define it)."""
        raise NotImplementedError

    def outcome(self) -> JobResult:
        """`run()`, with every way it can end turned into a result the job reports."""
        try:
            return self.run()
        except Stop as stop:
            return stop.result
        except AgentbotError as exc:
            return self.fail(str(exc))
        except Exception as exc:
            # A bug of ours must still end the job visibly (comment, label), not at "running".
            log.exception("%s crashed", self.job.kind.value)
            return self.fail(f"internal error: {type(exc).__name__}: {exc}")


def refusable(
    job: Job,
    env: JobEnv,
    story: Callable[[], JobResult],
    neutral: Callable[[str], JobResult],
    stopped: Callable[[str], JobResult],
) -> JobResult:
    """A command's story: a refusal is one comment and a neutral end; an error ends it stopped."""
    try:
        return story()
    except Refused as exc:
        if job.number is not None:
            env.github.create_comment(job.repo, job.number, f"agentbot: {exc}")
        return neutral(str(exc))
    except AgentbotError as exc:
        return stopped(str(exc))
    except Exception as exc:
        # A bug of ours must still end the job visibly, not at "running".
        env.log.exception("%s crashed", job.kind.value)
        return stopped(f"internal error: {type(exc).__name__}: {exc}")
