"""Plan first, then approve (issue #28): the Planner proposes, `/approve` runs the fix.

A plan job does one of two things:

- **plan** (`/plan [notes]`, the `agent-plan` label, or `agent-fix`/`/fix`/assignment when
  `plan.required`): the Planner reads the issue and the code with read-only tools in a
  checkout of the default branch and posts one plan comment (`bot.plans.render_comment`).
  `/plan <notes>` revises: the newest plan and the notes go to the Planner.
- **approve** (`/approve`, by someone with `min_permission`, checked by the doors): the
  newest plan agentbot itself posted is checked, then the IssueFixer runs with it
  (`run_fix`, passed in by the handler map). An issue edited after its plan gets a reply
  asking for a new plan; a plan whose files changed on the default branch since it was
  made is made again (and awaits a new approval); no plan at all gets a reply saying how
  to ask for one.
"""

from __future__ import annotations

import logging

from bot.models import AgentStatus, Job, JobKind, JobResult, JobStatus
from bot.models.github import Issue
from bot.plans import (
    PlanData,
    from_agent,
    issue_digest,
    latest_plan,
    render_comment,
)
from bot.ports import Handler, JobEnv
from bot.roles.planner import ROLE as PLANNER
from bot.roles.planner import plan_task
from bot.workflows.steps.agents import open_session
from bot.workflows.steps.flow import Flow, Stop
from bot.workflows.steps.plan_guard import PLAN_PARAM
from bot.workflows.steps.workenv import file_tree
from bot.workflows.steps.workspace import open_workspace

log = logging.getLogger("agentbot.job")

ACTIONS_LOGIN = "github-actions[bot]"
"""Who writes agentbot's comments in the Action (its GITHUB_TOKEN) when no login is known."""


def plan(job: Job, env: JobEnv, *, run_fix: Handler | None = None) -> JobResult:
    """Post a plan for `job.number`, or run its approved plan; never raises for a job failure."""
    assert job.number is not None, "a plan job needs an issue number"
    return _PlanFlow(job, env, run_fix).outcome()


class _PlanFlow(Flow):
    """One plan job."""

    def __init__(self, job: Job, env: JobEnv, run_fix: Handler | None) -> None:
        super().__init__(job, env, "planner")
        self.repo, self.number = job.repo, job.number or 0
        self.run_fix = run_fix
        self.mine = {env.bot_login or ACTIONS_LOGIN}

    def run(self) -> JobResult:
        issue = self.gh.get_issue(self.repo, self.number)
        if issue.is_pull_request or issue.state != "open" or issue.locked:
            raise Stop(self.neutral(f"#{self.number} is not an open, unlocked issue"))
        comments = self.gh.list_issue_comments(self.repo, self.number)
        current = latest_plan(((c.user, c.body) for c in comments), self.mine)
        if self.job.params.get("trigger") == "approve":
            return self.approve(issue, current)
        notes = str(self.job.params.get("notes") or "")
        return self.propose(issue, current, notes=notes)

    # --- plan -------------------------------------------------------------------------------

    def propose(self, issue: Issue, previous: PlanData | None, *, notes: str = "") -> JobResult:
        """The Planner's plan, posted as one comment (the previous plan and notes revise it)."""
        default = self.gh.default_branch(self.repo)
        ws = self._ws = open_workspace(self.env, self.repo, f"plan-{self.number}")
        ws.fetch()
        self.base_sha = ws.rev(f"origin/{default}")
        # Our own clone is cleaned; the Action's checkout keeps what the workflow put there.
        ws.reset_hard(self.base_sha, clean=self.env.checkout is None)
        self.prepare_environment()
        self._session = open_session(self.env, self.repo, f"plan-{self.number}")
        comments = self.gh.list_issue_comments(self.repo, self.number)
        task = plan_task(
            self.repo,
            issue,
            comments,
            files=file_tree(ws.tracked_files()),
            notes=notes,
            previous=previous.approach if previous is not None else "",
        )
        agent = self.agent(PLANNER, task)
        if ws.has_changes():
            # Only without a sandbox can the Planner's bash write; nothing it wrote is kept.
            log.warning("the Planner changed the workspace; its changes are discarded")
            ws.reset_hard(self.base_sha, clean=self.env.checkout is None)
        output = agent.output
        if output is None:
            raise Stop(self.fail(f"the Planner gave no valid answer: {agent.message}"))
        if output.status == AgentStatus.NEEDS_INFO:
            question = (output.question or output.summary).replace("\n", "\n> ")
            self.say(f"agentbot needs more information before it can plan this:\n\n> {question}")
            return self.finished(JobStatus.NEEDS_INFO)
        if output.status != AgentStatus.OK:
            raise Stop(
                self.fail(f"the Planner stopped with {output.status.value}: {output.summary}")
            )
        digest = issue_digest(issue.title, issue.body)
        made = from_agent(output.data, digest=digest, base_sha=self.base_sha)
        if isinstance(made, str):
            raise Stop(self.fail(f"the Planner's plan is not usable: {made}"))
        cmds = self.cfg.commands
        posted = self.say(render_comment(made, approve=cmds.approve, revise=cmds.plan, notes=notes))
        self.result = self.result.model_copy(
            update={"summary": f"plan posted: {posted}", "files_changed": []}
        )
        return self.finished(JobStatus.SUCCESS)

    # --- approve ----------------------------------------------------------------------------

    def approve(self, issue: Issue, current: PlanData | None) -> JobResult:
        """Run the approved plan with the IssueFixer, once it is checked to still hold."""
        cmds = self.cfg.commands
        if current is None:
            self.say(f"There is no plan to approve on #{self.number} yet: comment `{cmds.plan}`.")
            return self.neutral("no plan to approve")
        if current.issue_digest != issue_digest(issue.title, issue.body):
            self.say(
                f"The issue was edited after this plan was made, so the plan may no longer fit"
                f" it. Comment `{cmds.plan}` for a new plan, then `{cmds.approve}` it."
            )
            return self.neutral("the issue was edited after its plan")
        if moved := self.moved_files(current):
            log.info("planned files changed on the default branch: %s", ", ".join(moved))
            names = ", ".join(f"`{p}`" for p in moved)
            return self.propose(
                issue, current, notes=f"The default branch changed {names} since the last plan."
            )
        if self.run_fix is None:
            raise Stop(self.fail("agentbot cannot run fix_issue jobs here"))
        params = {**self.job.params, PLAN_PARAM: current.model_dump(mode="json")}
        fix = self.job.model_copy(update={"kind": JobKind.FIX_ISSUE, "params": params})
        return self.run_fix(fix, self.env)

    def moved_files(self, plan: PlanData) -> list[str]:
        """The planned files the default branch changed since the plan was made."""
        default = self.gh.default_branch(self.repo)
        ws = self._ws = open_workspace(self.env, self.repo, f"plan-{self.number}")
        ws.fetch()
        head = ws.rev(f"origin/{default}")
        if head == plan.base_sha:
            return []
        if not plan.base_sha or not ws.succeeds("cat-file", "-e", f"{plan.base_sha}^{{commit}}"):
            return list(plan.files)  # the plan's commit is gone (a force push): all moved
        listed = [*plan.files, *plan.tests]
        out = ws.git("diff", "--name-only", "--no-renames", plan.base_sha, head, "--", *listed)
        return [p for p in out.splitlines() if p]

    # --- outcomes ---------------------------------------------------------------------------

    def say(self, body: str) -> str:
        """Post one comment on the issue; its address."""
        return self.gh.create_comment(self.repo, self.number, body).html_url

    def fail(self, reason: str) -> JobResult:
        """Say why on the issue; no label (a plan job changes nothing to retry around)."""
        result = self.finished(JobStatus.FAILED, error=reason)
        self.say(f"agentbot could not plan this: {reason}")
        return result
