"""DESIGN §8.1: a labelled issue becomes a validated pull request (or a clear comment why not)."""

from __future__ import annotations

import logging

from bot.agent import run_agent
from bot.errors import AgentbotError, AgentError, GitHubError, LimitsExceeded
from bot.git import Workspace
from bot.github import Comment, Issue
from bot.models import (
    AgentResult,
    AgentStatus,
    Job,
    JobResult,
    JobStatus,
    ValidationReport,
)
from bot.ports import JobEnv
from bot.report import Step, failure_comment, fix_pr_body, needs_info_comment, usage_line
from bot.roles import FIXER, ISSUE_FIXER, Role
from bot.roles.fixer import build_task as build_repair_task
from bot.roles.issue_fixer import IssueComment
from bot.roles.issue_fixer import build_task as build_fix_task
from bot.session import Session
from bot.validation import run_validation
from bot.workflows.common import (
    Progress,
    commit_scope,
    commit_type,
    job_budget,
    limit_violations,
    open_workspace,
    repo_context,
    session_slug,
    subject_line,
)

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
        self.ws: Workspace | None = None
        self.base_sha = ""
        self.fix_round = 0
        self.title = ""
        self.budget = job_budget(env, "issue_fixer")

    # --- the flow ---------------------------------------------------------------------

    def run(self) -> JobResult:
        issue = self.gh.get_issue(self.repo, self.number)
        if issue.is_pull_request:
            return self.neutral(f"#{self.number} is a pull request, not an issue")
        if issue.state != "open" or issue.locked:
            return self.neutral(
                f"issue #{self.number} is {'locked' if issue.locked else issue.state}"
            )
        comments = self.gh.list_issue_comments(self.repo, self.number)
        self.progress = Progress(
            self.env,
            self.repo,
            self.number,
            f"agentbot is working on #{self.number}",
            [Step(s) for s in STEPS],
        )
        self.progress.set(STEPS[0], "done", publish=False)
        self.progress.set(STEPS[1], "running", publish=False)
        self.progress.start([(c.id, c.body, c.user) for c in comments])

        default = self.gh.default_branch(self.repo)
        ws = self.ws = open_workspace(self.env, self.repo, f"issue-{self.number}")
        ws.fetch()
        base = f"origin/{default}"
        base_sha = self.base_sha = ws.git("rev-parse", base).strip()
        branch = ws.prepare_branch(
            f"{self.cfg.pull_request.branch_prefix}fix-issue-{self.number}", base=base
        )
        self.result = self.result.model_copy(update={"branch": branch})
        # A reused branch already holds an earlier attempt: start the fix again from the base.
        ws.reset_hard(base_sha)

        session = Session.create(
            self.env.data_dir, session_slug(self.repo, f"issue-{self.number}"), self.env.clock
        )
        agent = self.agent(ISSUE_FIXER, self.task_text(issue, comments), session)
        output = agent.output
        if output is None:
            return self.fail(f"the agent gave no valid answer: {agent.message}")
        self.result = self.result.model_copy(
            update={"summary": output.summary, "root_cause": output.root_cause}
        )
        if output.status == AgentStatus.NEEDS_INFO:
            return self.needs_info(output.question or output.summary)
        if output.status != AgentStatus.OK:
            return self.fail(f"the agent stopped with {output.status.value}: {output.summary}")
        if not ws.has_changes():
            return self.fail("the agent finished without changing any file")
        self.check_limits(base_sha)
        self.progress.set(STEPS[1], "done", publish=False)

        self.progress.set(STEPS[2], "running")
        report = run_validation(
            ws.path,
            self.cfg.validation,
            data_dir=self.env.data_dir,
            base_sha=base_sha,
            fix=True,
            fix_callback=lambda failing: self.repair(failing, session),
            clock=self.env.clock,
        )
        self.result = self.result.model_copy(update={"validation": report})
        self.check_limits(base_sha)
        files = ws.changed_files(base_sha)
        self.result = self.result.model_copy(update={"files_changed": files})
        if not report.passed:
            gate = report.failing_gate
            reason = f"validation failed at the {gate.gate_name if gate else 'test'} stage"
            if self.cfg.pull_request.draft_on_failure:
                self.commit_and_push(issue, branch, files)
                return self.open_pr(issue, branch, default, draft=True, failed=reason)
            if not self.env.dry_run:
                self.commit_and_push(issue, branch, files)  # keep the work on the branch
            return self.fail(reason)
        self.progress.set(STEPS[2], "done", publish=False)

        self.commit_and_push(issue, branch, files)
        return self.open_pr(issue, branch, default, draft=self.cfg.pull_request.draft)

    # --- steps ----------------------------------------------------------------------

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

    def agent(self, role: Role, task: str, session: Session) -> AgentResult:
        """Run one agent; its usage lands in the job's shared budget."""
        assert self.ws is not None
        llm = self.env.llm_factory(self.cfg.model_for(role.name.value))
        try:
            return run_agent(
                role=role,
                task=task,
                workspace=self.ws.path,
                llm=llm,
                budget=self.budget,
                clock=self.env.clock,
                session=session,
                context=repo_context(self.cfg),
            )
        except LimitsExceeded as exc:
            raise _Stop(self.fail(f"budget exhausted: {exc}")) from exc
        except AgentError as exc:
            raise _Stop(self.fail(f"the agent failed: {exc}")) from exc

    def repair(self, failing: ValidationReport, session: Session) -> None:
        """A Fixer round: show the failing stage's output, let the agent repair it."""
        assert self.ws is not None
        gate = failing.failing_gate
        result = gate.command_result if gate else None
        self.fix_round += 1
        task = build_repair_task(
            goal=f"Fix issue #{self.number}: {self.result.summary}",
            stage=gate.gate_name if gate else "test",
            command=" ".join(result.command) if result else "",
            output=result.output if result else "",
            round=self.fix_round,
            max_rounds=self.cfg.validation.fix_rounds,
            files_changed=self.ws.changed_files(self.base_sha),
        )
        self.agent(FIXER, task, session)

    def check_limits(self, base_sha: str) -> None:
        """Stop with an explaining failure when the change breaks a limit."""
        assert self.ws is not None
        problems = limit_violations(self.ws, base_sha, self.cfg.limits)
        if problems:
            raise _Stop(
                self.fail("the change breaks the repository's limits: " + "; ".join(problems))
            )

    def commit_and_push(self, issue: Issue, branch: str, files: list[str]) -> None:
        """One conventional commit with `Fixes #N`, pushed to our branch."""
        assert self.ws is not None
        ctype = commit_type(issue.labels)
        scope = commit_scope(files)
        head = f"{ctype}({scope})" if scope else ctype
        subject = f"{head}: {subject_line(self.result.summary or issue.title, 60)}"
        message = f"{subject}\n\n{self.result.summary}\n\nFixes #{self.number}\n"
        self.ws.commit(message)
        self.result = self.result.model_copy(update={"summary": self.result.summary or subject})
        self.title = subject
        if not self.env.dry_run:
            self.ws.push(branch, force_with_lease=True)

    def open_pr(
        self, issue: Issue, branch: str, base: str, *, draft: bool, failed: str = ""
    ) -> JobResult:
        """Open our PR, or update it when a re-run finds it; request the initiator's review."""
        assert self.progress is not None
        status = JobStatus.FAILED if failed else JobStatus.SUCCESS
        result = self.finished(status, error=failed)
        body = fix_pr_body(result)
        title = self.title or f"fix: {issue.title}"
        if self.env.dry_run:
            self.env.echo(f"[dry-run] would open PR {branch} -> {base}: {title}\n{body}")
            self.progress.finish(f"[dry-run] PR not opened. {usage_line(result)}")
            return result
        owner = self.repo.split("/")[0]
        existing = self.gh.list_pulls(self.repo, head=f"{owner}:{branch}", state="open")
        if existing:
            pr = self.gh.update_pull(self.repo, existing[0].number, title=title, body=body)
        else:
            pr = self.gh.create_pull(
                self.repo, title=title, head=branch, base=base, body=body, draft=draft
            )
            self.request_review(pr.number, pr.user)
        result = result.model_copy(update={"pr_url": pr.html_url, "pr_number": pr.number})
        if failed:
            self.progress.set(STEPS[2], "failed", failed, publish=False)
            self.progress.finish(
                f"Opened a draft PR {pr.html_url} for review: {failed}.\n\n{usage_line(result)}"
            )
            self.label(self.cfg.labels.failed)
        else:
            self.progress.set(STEPS[3], "done", pr.html_url, publish=False)
            self.progress.finish(f"Pull request: {pr.html_url}\n\n{usage_line(result)}")
        return result

    def request_review(self, number: int, author: str) -> None:
        """Ask the initiator to review; a refusal (author, not a collaborator) is only logged."""
        actor = self.job.actor
        if self.cfg.pull_request.reviewers != "initiator" or not actor or actor.endswith("[bot]"):
            return
        if actor.casefold() == author.casefold():
            return  # GitHub refuses a review request to the PR's own author
        try:
            self.gh.request_reviewers(self.repo, number, [actor])
        except GitHubError as exc:
            log.warning("could not request a review from @%s: %s", actor, exc)

    # --- outcomes -------------------------------------------------------------------

    def absorb_usage(self) -> None:
        """Copy the budget's running totals into the result."""
        self.result = self.result.model_copy(
            update={
                "usage": self.budget.usage,
                "cost_usd": self.budget.cost_usd,
                "turns": self.budget.turns,
            }
        )

    def finished(self, status: JobStatus, *, error: str = "") -> JobResult:
        """The result with its final status and end time."""
        self.absorb_usage()
        return self.result.model_copy(
            update={"status": status, "error": error, "finished_at": self.env.clock.now()}
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
        """Say why on the issue, label it, keep the branch if it has work."""
        result = self.finished(JobStatus.FAILED, error=reason)
        if self.progress is not None:
            running = next((s.title for s in self.progress.steps if s.state == "running"), None)
            if running:
                self.progress.set(running, "failed", publish=False)
            self.progress.finish(failure_comment(result))
            self.label(self.cfg.labels.failed)
        return result

    def label(self, name: str) -> None:
        """Add a label (not in dry runs)."""
        if self.env.dry_run:
            self.env.echo(f"[dry-run] would label #{self.number} {name!r}")
            return
        self.gh.add_labels(self.repo, self.number, [name])
