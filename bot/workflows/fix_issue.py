"""DESIGN §8.1: a labelled issue becomes a validated pull request (or a clear comment why not).

The story, one named step each: read the issue → prepare the branch → write the fix →
validate → publish (commit, push) → open the pull request. Every write goes through
`env.github` and `env.push`, so a dry run is the same story told to recorders.
"""

from __future__ import annotations

import logging

from bot.errors import AgentbotError, AgentError, GitHubError, LimitsExceeded
from bot.git import Workspace
from bot.guards import open_refusal
from bot.models import (
    AgentOutput,
    AgentResult,
    AgentStatus,
    Job,
    JobResult,
    JobStatus,
    ValidationReport,
)
from bot.models.github import Comment, Issue
from bot.ports import JobEnv
from bot.report import (
    Step,
    failure_comment,
    fix_commit_message,
    fix_pr_body,
    needs_info_comment,
    pr_footer,
)
from bot.roles import FIXER, ISSUE_FIXER, Role
from bot.roles.fixer import build_task as build_repair_task
from bot.roles.issue_fixer import IssueComment
from bot.roles.issue_fixer import build_task as build_fix_task
from bot.session import Session
from bot.workflows.agents import (
    commit_session,
    concerns,
    job_budget,
    open_session,
    run_role,
    unmet,
    wants_review,
)
from bot.workflows.limits import limit_violations
from bot.workflows.progress import Progress
from bot.workflows.validate import validate
from bot.workflows.workspace import open_workspace

log = logging.getLogger("agentbot.job")

STEPS = ("Read the issue", "Write a fix", "Validate", "Open the pull request")


class _Stop(Exception):
    """Ends the flow early with a finished result."""

    def __init__(self, result: JobResult) -> None:
        super().__init__(result.error or result.summary)
        self.result = result


def fix_issue(job: Job, env: JobEnv) -> JobResult:
    """Run the IssueFixer flow for `job.number`; never raises for a job failure."""
    assert job.number is not None, "fix_issue needs an issue number"
    flow = _FixFlow(job, env)
    try:
        return flow.run()
    except _Stop as stop:
        return stop.result
    except AgentbotError as exc:
        return flow.fail(str(exc))
    except Exception as exc:
        # A bug of ours must still end the job visibly (comment, label), not at "running".
        log.exception("fix_issue crashed")
        return flow.fail(f"internal error: {type(exc).__name__}: {exc}")


class _FixFlow:
    """One run of the flow; holds what the steps share."""

    def __init__(self, job: Job, env: JobEnv) -> None:
        self.job, self.env, self.gh, self.cfg = job, env, env.github, env.config
        self.repo, self.number = job.repo, job.number or 0
        self.result = JobResult(job=job, status=JobStatus.FAILED, started_at=env.clock.now())
        self.progress: Progress | None = None
        self.budget = job_budget(env, "issue_fixer")
        self.outputs: list[AgentOutput] = []
        self.fix_round = 0
        self.title = ""
        self._ws: Workspace | None = None
        self._session: Session | None = None
        self.comments: list[Comment] = []
        self.base_sha = self.base = self.branch = ""

    @property
    def ws(self) -> Workspace:
        """The workspace, once the branch is prepared."""
        assert self._ws is not None, "the workspace is opened by prepare_branch"
        return self._ws

    @property
    def session(self) -> Session:
        """The session folder, once the agent step has started."""
        assert self._session is not None, "the session is opened by write_fix"
        return self._session

    # --- the story ----------------------------------------------------------------------

    def run(self) -> JobResult:
        issue = self.read_issue()
        self.prepare_branch()
        self.write_fix(issue)
        report = self.validate()
        if not report.passed:
            return self.validation_failed(issue, report)
        self.publish(issue)
        return self.open_pr(issue, draft=self.cfg.pull_request.draft)

    # --- steps ----------------------------------------------------------------------------

    def read_issue(self) -> Issue:
        """The issue and its comments; the progress comment goes up (nothing if not fixable)."""
        issue = self.gh.get_issue(self.repo, self.number)
        if issue.is_pull_request:
            raise _Stop(self.neutral(f"#{self.number} is a pull request, not an issue"))
        if refusal := open_refusal(issue):
            raise _Stop(self.neutral(refusal.reason))
        comments = self.gh.list_issue_comments(self.repo, self.number)
        self.progress = Progress(
            self.gh,
            self.repo,
            self.number,
            f"agentbot is working on #{self.number}",
            [Step(s) for s in STEPS],
        )
        self.progress.set(STEPS[0], "done", publish=False)
        self.progress.set(STEPS[1], "running", publish=False)
        self.progress.start(comments)
        self.comments = comments
        return issue

    def prepare_branch(self) -> None:
        """Workspace at the default branch, our branch on it, reset to the base."""
        default = self.gh.default_branch(self.repo)
        ws = self._ws = open_workspace(self.env, self.repo, f"issue-{self.number}")
        ws.fetch()
        self.base = default
        self.base_sha = ws.rev(f"origin/{default}")
        self.branch = ws.prepare_branch(
            f"{self.cfg.pull_request.branch_prefix}fix-issue-{self.number}",
            base=f"origin/{default}",
        )
        self.result = self.result.model_copy(update={"branch": self.branch})
        # A reused branch already holds an earlier attempt: start the fix again from the base.
        ws.reset_hard(self.base_sha)

    def write_fix(self, issue: Issue) -> None:
        """The IssueFixer agent; its answer is checked against the gates and the limits."""
        self._session = open_session(self.env, self.repo, f"issue-{self.number}")
        agent = self.agent(ISSUE_FIXER, self.task_text(issue, self.comments))
        output = agent.output
        if output is None:
            raise _Stop(self.fail(f"the agent gave no valid answer: {agent.message}"))
        self.result = self.result.model_copy(
            update={"summary": output.summary, "root_cause": output.root_cause}
        )
        if output.status == AgentStatus.NEEDS_INFO:
            raise _Stop(self.needs_info(output.question or output.summary))
        if output.status != AgentStatus.OK:
            raise _Stop(
                self.fail(f"the agent stopped with {output.status.value}: {output.summary}")
            )
        if problem := unmet(output):
            raise _Stop(self.fail(problem))
        if not self.ws.has_changes():
            raise _Stop(self.fail("the agent finished without changing any file"))
        self.check_limits()
        assert self.progress is not None
        self.progress.set(STEPS[1], "done", publish=False)

    def validate(self) -> ValidationReport:
        """The repository's validation, with Fixer rounds; the limits hold after them too."""
        assert self.progress is not None
        self.progress.set(STEPS[2], "running")
        report = validate(self.env, self.ws, self.base_sha, self.repair)
        self.result = self.result.model_copy(update={"validation": report})
        self.check_limits()
        files = self.ws.changed_files(self.base_sha)
        self.result = self.result.model_copy(update={"files_changed": files})
        if report.passed:
            self.progress.set(STEPS[2], "done", publish=False)
        return report

    def validation_failed(self, issue: Issue, report: ValidationReport) -> JobResult:
        """Keep the work on the branch; a draft PR when configured, else a failure comment."""
        gate = report.failing_gate
        reason = f"validation failed at the {gate.gate_name if gate else 'test'} stage"
        self.publish(issue)
        if self.cfg.pull_request.draft_on_failure:
            return self.open_pr(issue, draft=True, failed=reason)
        return self.fail(reason)

    def publish(self, issue: Issue) -> None:
        """One conventional commit with `Fixes #N` (and the session, if asked), pushed."""
        message = fix_commit_message(
            number=self.number,
            summary=self.result.summary,
            title=issue.title,
            labels=issue.labels,
            files=self.result.files_changed,
        )
        self.ws.commit(message)
        self.title = message.splitlines()[0]
        self.result = self.result.model_copy(update={"summary": self.result.summary or self.title})
        if self.cfg.commit_session_artifacts:
            commit_session(self.ws, self.session)
        self.env.push(self.ws, self.branch)

    def open_pr(self, issue: Issue, *, draft: bool, failed: str = "") -> JobResult:
        """Open our PR, or update it when a re-run finds it; ask for the reviews it needs."""
        assert self.progress is not None
        flagged = concerns(self.outputs)
        self.result = self.result.model_copy(update={"security_concerns": flagged})
        result = self.finished(JobStatus.FAILED if failed else JobStatus.SUCCESS, error=failed)
        body = fix_pr_body(result)
        title = self.title or f"fix: {issue.title}"
        owner = self.repo.split("/")[0]
        existing = self.gh.list_pulls(self.repo, head=f"{owner}:{self.branch}", state="open")
        if existing:
            pr = self.gh.update_pull(self.repo, existing[0].number, title=title, body=body)
        else:
            pr = self.gh.create_pull(
                self.repo,
                title=title,
                head=self.branch,
                base=self.base,
                body=body,
                draft=draft or bool(flagged),
            )
            self.request_review(pr.number, pr.user)
        result = result.model_copy(update={"pr_url": pr.html_url, "pr_number": pr.number})
        if flagged:
            self.gh.add_labels(self.repo, pr.number, [self.cfg.labels.security_review])
        if failed:
            self.progress.set(STEPS[2], "failed", failed, publish=False)
            self.progress.finish(pr_footer(result, failed=failed))
            self.label(self.cfg.labels.failed)
        else:
            self.progress.set(STEPS[3], "done", pr.html_url, publish=False)
            self.progress.finish(pr_footer(result))
        return result

    # --- helpers ----------------------------------------------------------------------------

    def task_text(self, issue: Issue, comments: list[Comment]) -> str:
        """The IssueFixer's task: the issue and its human comments, fenced as data."""
        human = [
            IssueComment(author=c.user, body=c.body)
            for c in comments
            if not c.body.startswith("<!-- agentbot") and not c.user.endswith("[bot]")
        ]
        return build_fix_task(
            repo=self.repo,
            number=issue.number,
            title=issue.title,
            body=issue.body,
            author=issue.user,
            labels=issue.labels,
            comments=human,
        )

    def agent(self, role: Role, task: str) -> AgentResult:
        """Run one agent; its usage lands in the job's budget, its answer in `outputs`."""
        try:
            result = run_role(
                self.env, role, task, self.ws.path, budget=self.budget, session=self.session
            )
        except LimitsExceeded as exc:
            raise _Stop(self.fail(f"budget exhausted: {exc}")) from exc
        except AgentError as exc:
            raise _Stop(self.fail(f"the agent failed: {exc}")) from exc
        if result.output is not None:
            self.outputs.append(result.output)
        return result

    def repair(self, failing: ValidationReport) -> None:
        """A Fixer round: show the failing stage's output, let the agent repair it."""
        gate = failing.failing_gate
        command = gate.command_result if gate else None
        self.fix_round += 1
        task = build_repair_task(
            goal=f"Fix issue #{self.number}: {self.result.summary}",
            stage=gate.gate_name if gate else "test",
            command=" ".join(command.command) if command else "",
            output=command.output if command else "",
            round=self.fix_round,
            max_rounds=self.cfg.validation.fix_rounds,
            files_changed=self.ws.changed_files(self.base_sha),
        )
        self.agent(FIXER, task)

    def check_limits(self) -> None:
        """Stop with an explaining failure when the change breaks a limit."""
        problems = limit_violations(self.ws, self.base_sha, self.cfg.limits)
        if problems:
            raise _Stop(
                self.fail("the change breaks the repository's limits: " + "; ".join(problems))
            )

    def request_review(self, number: int, author: str) -> None:
        """Ask the initiator to review (always when an agent asked for one); refusals are logged."""
        actor = self.job.actor
        wanted = self.cfg.pull_request.reviewers == "initiator" or wants_review(self.outputs)
        if not wanted or not actor or actor.endswith("[bot]"):
            return
        if actor.casefold() == author.casefold():
            return  # GitHub refuses a review request to the PR's own author
        try:
            self.gh.request_reviewers(self.repo, number, [actor])
        except GitHubError as exc:
            log.warning("could not request a review from @%s: %s", actor, exc)

    def label(self, name: str) -> None:
        """Add a label to the issue."""
        self.gh.add_labels(self.repo, self.number, [name])

    # --- outcomes ---------------------------------------------------------------------------

    def finished(self, status: JobStatus, *, error: str = "") -> JobResult:
        """The result with its final status, usage and end time."""
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

    def neutral(self, reason: str) -> JobResult:
        """Nothing to do: no writes at all."""
        return self.finished(JobStatus.NEUTRAL, error=reason)

    def needs_info(self, question: str) -> JobResult:
        """Ask the user; label the issue so refuel skips it until answered."""
        result = self.finished(JobStatus.NEEDS_INFO)
        if self.progress is not None:
            self.progress.set(STEPS[1], "skipped", "needs more information", publish=False)
            self.progress.finish(needs_info_comment(question, self.job.actor))
        self.label(self.cfg.labels.needs_info)
        return result

    def fail(self, reason: str) -> JobResult:
        """Say why on the issue and label it; the branch keeps any pushed work."""
        result = self.finished(JobStatus.FAILED, error=reason)
        if self.progress is not None:
            if running := self.progress.running():
                self.progress.set(running, "failed", publish=False)
            self.progress.finish(failure_comment(result))
            self.label(self.cfg.labels.failed)
        return result
