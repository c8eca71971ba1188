"""DESIGN §8.1: a labelled issue becomes a validated pull request (or a clear comment why not).

The story, one named step each: read the issue → prepare the branch → prepare the
environment (validation's setup, before the agent) → write the fix (its `finish` checked
against the workspace) → validate (failures go back into the agent's own conversation) →
prove (the change's tests fail on the base, pass on the head) → publish (commit, push) →
open the pull request. An agent that runs out of turns or budget with a change gets that
change validated and opened as a draft saying why. Every write goes through
`env.github` and `env.push`, so a dry run is the same story told to recorders.
"""

# Over 300 lines: the IssueFixer story reads as one flow; its parts live beside it.

from __future__ import annotations

import logging

from bot.guards import open_refusal
from bot.models import (
    AgentStatus,
    Job,
    JobResult,
    JobStatus,
    ValidationReport,
)
from bot.models.github import Comment, Issue
from bot.outbound.structure import defuse_closing
from bot.plans import deviation_section, plan_message
from bot.ports import JobEnv
from bot.report import (
    Step,
    failure_comment,
    fix_commit_message,
    fix_pr_body,
    needs_info_comment,
    pr_footer,
    usage_line,
)
from bot.roles import ISSUE_FIXER
from bot.roles.issue_fixer import issue_task
from bot.validation.base_judge import judge_changes, judge_note
from bot.verdict_text import unverified_reason
from bot.workflows.steps.agents import (
    commit_session,
    concerns,
    open_session,
    unmet,
    wants_review,
)
from bot.workflows.steps.finish_check import WorkspaceFinishCheck, remove_scratch
from bot.workflows.steps.flow import Flow, Stop
from bot.workflows.steps.limits import push_guard
from bot.workflows.steps.plan_guard import PlanGuard, keep_to_plan
from bot.workflows.steps.progress import Progress
from bot.workflows.steps.proof import ALREADY_PASSES, UNPROVEN, Proof, prove, sent_back
from bot.workflows.steps.pulls import publish_pull, request_review
from bot.workflows.steps.validate import validate
from bot.workflows.steps.workenv import file_tree
from bot.workflows.steps.workspace import open_workspace

log = logging.getLogger("agentbot.job")

STEPS = ("Read the issue", "Write a fix", "Validate", "Open the pull request")


def fix_issue(job: Job, env: JobEnv) -> JobResult:
    """Run the IssueFixer flow for `job.number`; never raises for a job failure."""
    assert job.number is not None, "fix_issue needs an issue number"
    return _FixFlow(job, env).outcome()


class _FixFlow(Flow):
    """One run of the IssueFixer flow."""

    def __init__(self, job: Job, env: JobEnv) -> None:
        super().__init__(job, env, "issue_fixer")
        self.repo, self.number = job.repo, job.number or 0
        self.progress: Progress | None = None
        self.comments: list[Comment] = []
        self.title = self.branch = ""
        self.new_branch = False
        self.proof: Proof | None = None
        # An approved plan (`/approve`): its budget, and the files the change may touch.
        self.planned = PlanGuard.of(job, self.cfg)
        if self.planned is not None:
            self.planned.limit(self.budget, self.cfg)

    # --- the story ----------------------------------------------------------------------

    def run(self) -> JobResult:
        issue = self.read_issue()
        self.prepare_branch()
        self.prepare_environment()
        self.write_fix(issue)
        if self.planned is not None and not self.ran_out:
            keep_to_plan(self, self.planned)
        report = self.validate()
        if self.ran_out:
            return self.stopped_early(issue, report)
        if not report.passed:
            return self.validation_failed(issue, report)
        unverified = unverified_reason(report)
        if not unverified:  # a proof needs tests that run
            self.prove(issue)
        # A change to how it is judged was judged with the base's files: people see it.
        judged = judge_changes(self.ws.path, self.base_sha)
        self.publish(issue)
        draft = self.cfg.pull_request.draft or bool(unverified) or bool(judged)
        return self.open_pr(
            issue, draft=draft, unverified=unverified, judged=judged, unproven=self.unproven()
        )

    # --- steps ----------------------------------------------------------------------------

    def read_issue(self) -> Issue:
        """The issue and its comments; the progress comment goes up (nothing if not fixable)."""
        issue = self.gh.get_issue(self.repo, self.number)
        if issue.is_pull_request:
            raise Stop(self.neutral(f"#{self.number} is a pull request, not an issue"))
        if refusal := open_refusal(issue):
            raise Stop(self.neutral(refusal.reason))
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
        self.base_sha = ws.rev(f"origin/{default}")
        ws.push_guard = push_guard(self.base_sha, self.cfg.limits)
        self.branch = ws.prepare_branch(
            f"{self.cfg.pull_request.branch_prefix}fix-issue-{self.number}",
            base=f"origin/{default}",
        )
        # Its lease is "" when origin had no such branch: then no pull request comes from it.
        self.new_branch = ws.leases.get(self.branch) == ""
        # A reused branch already holds an earlier attempt: start the fix again from the base.
        ws.reset_hard(self.base_sha)

    def write_fix(self, issue: Issue) -> None:
        """The IssueFixer agent; its answer is checked against the gates and the limits."""
        self._session = open_session(self.env, self.repo, f"issue-{self.number}")
        failing = self.workenv.base_failures if self.workenv else []
        files = file_tree(self.ws.tracked_files())
        notes = plan_message(self.planned.plan) if self.planned is not None else ""
        task = issue_task(
            self.repo, issue, self.comments, files=files, base_failures=failing, notes=notes
        )
        check = self.fix_check = WorkspaceFinishCheck(
            self.ws, self.base_sha, self.cfg.limits, require_test=True
        )
        try:
            agent = self.agent(
                ISSUE_FIXER,
                task,
                finish_check=check,
                keep_work=True,
            )
        finally:
            remove_scratch(self.ws, check)
        output = agent.output
        if output is None and self.ran_out:
            if not self.ws.has_changes():
                raise Stop(self.fail(f"budget exhausted: {self.ran_out}"))
            self.check_limits()
            self.result = self.result.model_copy(
                update={
                    "summary": f"**Unfinished:** the agent stopped before calling `finish`"
                    f" ({self.ran_out}); this draft holds the change it had made, for a"
                    " person to review and complete"
                }
            )
            assert self.progress is not None
            self.progress.set(STEPS[1], "failed", "stopped at its limit", publish=False)
            return
        if output is None:
            raise Stop(self.fail(f"the agent gave no valid answer: {agent.message}"))
        self.result = self.result.model_copy(
            update={"summary": output.summary, "root_cause": output.root_cause}
        )
        if output.status == AgentStatus.NEEDS_INFO:
            raise Stop(self.needs_info(output.question or output.summary))
        if output.status != AgentStatus.OK:
            raise Stop(self.fail(f"the agent stopped with {output.status.value}: {output.summary}"))
        if problem := unmet(output):
            raise Stop(self.fail(problem))
        if not self.ws.has_changes():
            raise Stop(self.fail("the agent finished without changing any file"))
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
        if report.passed and report.unverified:
            self.progress.set(STEPS[2], "skipped", "unverified: the tests could not run")
        elif report.passed:
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

    def prove(self, issue: Issue) -> ValidationReport:
        """The runner's proof of the regression test; a test that already passes on the base
        goes back to the agent once (then validation again), and stays `unproven` after."""
        self.proof = prove(self.ws, self.base_sha, self.workenv, clock=self.env.clock)
        report = self.result.validation
        assert report is not None
        if self.proof.status != ALREADY_PASSES or self.conversation is None:
            return report
        if not self.conversation.resumable or self.ran_out:
            return report
        log.info("regression test passes on the base: sent back to the agent once")
        self.follow_up(sent_back(self.proof))
        if self.ran_out:
            return report
        report = self.validate()
        if not report.passed:
            raise Stop(self.validation_failed(issue, report))
        self.proof = prove(self.ws, self.base_sha, self.workenv, clock=self.env.clock)
        return report

    def unproven(self) -> str:
        """Why the change is not proven (empty when it is, or when no proof ran)."""
        if self.proof is None or self.proof.status not in (ALREADY_PASSES, UNPROVEN):
            return ""
        # Out of turns here means during the send-back: the agent ran the rest before it.
        if self.ran_out:
            return "the agent, sent back for a test that fails on the base, did not finish"
        return "the change's tests were not shown to fail on the base commit"

    def stopped_early(self, issue: Issue, report: ValidationReport) -> JobResult:
        """The agent ran out of turns or budget with a change: propose it as a draft."""
        reason = "the agent ran out of turns or budget before finishing"
        if not report.passed:
            gate = report.failing_gate
            reason += f", and validation failed at the {gate.gate_name if gate else 'test'} stage"
        self.publish(issue)
        return self.open_pr(issue, draft=True, failed=reason)

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
        # Only now is there work on the branch for a failure comment to point at.
        self.result = self.result.model_copy(update={"branch": self.branch})

    def open_pr(
        self,
        issue: Issue,
        *,
        draft: bool,
        failed: str = "",
        unverified: str = "",
        judged: list[str] | None = None,
        unproven: str = "",
    ) -> JobResult:
        """Open our PR, or update it when a re-run finds it; ask for the reviews it needs.

        A change whose tests could not run (`unverified`), or that edits the files that judge
        it (`judged`), is a draft labelled `labels.unverified`, and the job ends
        `unverified`, never `success`.
        """
        assert self.progress is not None
        flagged = concerns(self.outputs)
        self.result = self.result.model_copy(update={"security_concerns": flagged})
        unsure = "; ".join(r for r in (unverified, judge_note(judged) if judged else "") if r)
        doubt = "; ".join(r for r in (unsure, unproven) if r)
        # Unproven (the gate passed, the proof did not) is told apart from unverified.
        status = JobStatus.SUCCESS
        if failed:
            status = JobStatus.FAILED
        elif unsure:
            status = JobStatus.UNVERIFIED
        elif unproven:
            status = JobStatus.UNPROVEN
        result = self.finished(status, error=failed or doubt)
        beyond = self.planned.beyond(self.ws, self.base_sha) if self.planned is not None else []
        pr, new = publish_pull(
            self.env,
            self.repo,
            head=self.branch,
            title=self.title or f"fix: {issue.title}",
            body=fix_pr_body(result)
            # File names and test ids are the change's text: they close nothing either.
            + defuse_closing(
                (f"\n{self.proof.section()}\n" if self.proof else "")
                + (f"\n{deviation_section(beyond)}" if beyond else "")
                + (f"\n**Unverified:** {judge_note(judged)}.\n" if judged else "")
            ),
            draft=draft or bool(beyond) or bool(doubt),
            concerns=flagged,
            new_head=self.new_branch,
        )
        if new:
            request_review(
                self.env, self.repo, pr, self.job.actor, needed=wants_review(self.outputs)
            )
        result = result.model_copy(update={"pr_url": pr.html_url, "pr_number": pr.number})
        if doubt:
            self.gh.add_labels(self.repo, pr.number, [self.cfg.labels.unverified])
        if failed:
            self.progress.set(STEPS[2], "failed", failed, publish=False)
            self.progress.finish(pr_footer(result, failed=failed))
            self.label(self.cfg.labels.failed)
        else:
            self.progress.set(STEPS[3], "done", pr.html_url, publish=False)
            self.progress.finish(pr_footer(result))
        return result

    # --- helpers ----------------------------------------------------------------------------

    def repair(self, failing: ValidationReport) -> None:
        """A fix round (see `Flow.repair_round`)."""
        self.repair_round(failing, goal=f"Fix issue #{self.number}: {self.result.summary}")

    def label(self, name: str) -> None:
        """Add a label to the issue."""
        self.gh.add_labels(self.repo, self.number, [name])

    # --- outcomes ---------------------------------------------------------------------------

    def needs_info(self, question: str) -> JobResult:
        """Ask the user; label the issue so refuel skips it until answered."""
        result = self.finished(JobStatus.NEEDS_INFO)
        if self.progress is not None:
            self.progress.set(STEPS[1], "skipped", "needs more information", publish=False)
            self.progress.finish(needs_info_comment(question, self.job.actor))
        self.label(self.cfg.labels.needs_info)
        return result

    def run_budget_ended(self) -> JobResult:
        """Say the refuel run's budget ended; no failure label, so the issue stays eligible."""
        result = super().run_budget_ended()
        if self.progress is not None:
            if running := self.progress.running():
                self.progress.set(
                    running, "skipped", "the refuel run's budget ended", publish=False
                )
            self.progress.finish(f"agentbot stopped: {result.error}.\n\n{usage_line(result)}\n")
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
