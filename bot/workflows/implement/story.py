"""DESIGN §8.2: work a Spec Kit tasks.md, one validated commit per task, `[x]` ticked as it goes."""

from __future__ import annotations

from bot.errors import AgentbotError
from bot.git import Workspace
from bot.models import Job, JobResult, JobStatus, ValidationReport
from bot.models.github import PullRequest
from bot.ports import JobEnv
from bot.report import checklist_body, implement_pr_title, usage_line
from bot.session import Session
from bot.tasks_md import Task, TaskPlan, blockers, parse_tasks
from bot.workflows.implement.tasks import TRIES, TaskOutcome, TaskWork
from bot.workflows.implement.tasks_file import design_docs, find_tasks
from bot.workflows.implement.tasks_file import selection as tasks_selection
from bot.workflows.steps.agents import concerns, open_session
from bot.workflows.steps.flow import refusable
from bot.workflows.steps.limits import push_guard
from bot.workflows.steps.progress import TaskBoard, label_failure
from bot.workflows.steps.pulls import open_pull, publish_pull, same_repo_pull
from bot.workflows.steps.workspace import open_workspace

__all__ = ["TRIES", "ImplementRun", "TaskOutcome", "implement"]


class ImplementRun(TaskWork):
    """One run of the Implementer over a tasks file on one branch."""

    def __init__(self, job: Job, env: JobEnv) -> None:
        super().__init__(job, env)
        self.pr_number: int | None = None
        self.board: TaskBoard | None = None
        self.opened = False  # this run opened the PR at its first checkpoint

    # --- entry -----------------------------------------------------------------------

    def run(self) -> JobResult:
        """Resolve the branch, then work the plan batch by batch."""
        branch, pr_number = self.resolve_branch()
        ws = open_workspace(self.env, self.job.repo, f"implement-{branch.replace('/', '-')}")
        ws.fetch()
        ws.switch(branch, at=f"origin/{branch}")
        # Every task's commit is judged on its own (lines included) before any push.
        ws.push_guard = self.guard = push_guard(
            ws.head_sha(), self.cfg.limits, per_commit_lines=True
        )
        tasks_path = self.tasks_path = find_tasks(ws, str(self.job.params.get("tasks_path") or ""))
        plan = self.plan = parse_tasks((ws.path / tasks_path).read_text(encoding="utf-8"))
        self.documents = design_docs(ws, tasks_path)  # as the branch has them at the start
        selection = tasks_selection(plan, self.job.params)
        session = open_session(self.env, self.job.repo, f"implement-{branch}")
        self.result = self.result.model_copy(update={"branch": branch})

        batches = plan.batches(only=selection)
        self.pr_number = (
            pr_number if pr_number is not None else open_pull(self.gh, self.job.repo, branch)
        )
        if batches and self.pr_number is not None:
            self.open_board(batches)
        for index, batch in enumerate(batches, 1):
            self.run_batch(ws, branch, plan, selection, session, batch, (index, len(batches)))
        return self.finish(branch, plan)

    def run_batch(
        self,
        ws: Workspace,
        branch: str,
        plan: TaskPlan,
        selection: set[str] | None,
        session: Session,
        batch: list[Task],
        place: tuple[int, int],
    ) -> None:
        """Run what of `batch` can run, push the checkpoint, and bring the board up to date."""
        runnable = []
        for t in batch:
            if why := self.blocked(plan, t, selection):
                self.outcomes[t.id] = TaskOutcome(t, "skipped", why)
            else:
                runnable.append(t)
        if runnable:
            if self.board:
                self.board.batch(*place, [t.id for t in runnable], self.budget.cost_usd)
            if len(runnable) == 1:
                self.run_serial(ws, self.tasks_path, runnable[0], session)
            else:
                self.run_parallel(ws, self.tasks_path, runnable, session)
            self.env.push(ws, branch)  # checkpoint: a crash loses at most this batch
            if self.pr_number is None and not self.opened and self.done():
                # The first pushed work opens the PR, so the board has a place to live
                # (a dry run's recorded PR has no number: no board, finish records again).
                self.opened = True
                self.pr_number = self.publish(branch, plan).number or None
                if self.pr_number is not None:
                    self.open_board(plan.batches(only=selection))
        if self.board:
            outcomes = {t.id: self.outcomes[t.id] for t in batch}
            self.board.settle(
                {tid: (o.status, o.detail) for tid, o in outcomes.items()}, self.budget.cost_usd
            )

    def task_ended(self, outcome: TaskOutcome) -> None:
        """Show a `[P]` task's end at once; the batch's settle adds its commit."""
        if self.board:
            detail = "validated; committed when its batch ends" if outcome.status == "done" else ""
            self.board.settle(
                {outcome.task.id: (outcome.status, detail or outcome.detail)},
                self.budget.cost_usd,
            )

    def open_board(self, batches: list[list[Task]]) -> None:
        """The sticky progress comment on the PR, listing the tasks this run works on."""
        assert self.pr_number is not None
        self.board = TaskBoard.open(
            self.gh,
            self.job.repo,
            self.pr_number,
            tasks_path=self.tasks_path,
            tasks=[t for b in batches for t in b],
            existing=self.gh.list_issue_comments(self.job.repo, self.pr_number),
        )

    def done(self) -> list[TaskOutcome]:
        """The tasks done so far."""
        return [o for o in self.outcomes.values() if o.status == "done"]

    def resolve_branch(self) -> tuple[str, int | None]:
        """The branch to work on: the PR's head (same repo only) or the pushed ref."""
        if self.job.number is not None:
            pr = same_repo_pull(self.gh, self.job.repo, self.job.number, "/implement")
            return pr.head_ref, pr.number
        if not self.job.ref:
            raise AgentbotError("an implement job needs a pull request number or a branch")
        return self.job.ref.removeprefix("refs/heads/"), None

    def blocked(self, plan: TaskPlan, task: Task, selection: set[str] | None) -> str:
        """Why `task` cannot run: a dependency left out unticked, or one that did not get done."""
        if missing := blockers(plan, task.id, selection):
            return f"depends on {', '.join(missing)}, not done (tick it or select it too)"
        bad = [tid for tid, o in self.outcomes.items() if o.status != "done"]
        upstream = [b for b in bad if task.id in plan.dependents(b)]
        if upstream:
            return f"depends on {', '.join(sorted(upstream))}, which did not get done"
        return ""

    # --- results ----------------------------------------------------------------------

    def finished(self, status: JobStatus, *, error: str = "") -> JobResult:
        """The result; a failure also labels the issue or pull request `labels.failed`."""
        result = super().finished(status, error=error)
        if status == JobStatus.FAILED:
            label_failure(
                self.gh, self.job.repo, self.job.number or self.pr_number, self.cfg.labels.failed
            )
        return result

    def stopped(self, reason: str) -> JobResult:
        """The run broke off: a failed result, and the board (if up) says why."""
        result = self.fail(reason)
        if self.board:
            self.board.finish(f"Stopped: {reason[:500]}")
        return result

    def last_gate(self, ordered: list[TaskOutcome]) -> ValidationReport | None:
        """The gate of the last task done, in file order."""
        done = [o.task.id for o in ordered if o.status == "done" and o.task.id in self.reports]
        return self.reports[done[-1]] if done else None

    def tested(self, outcome: TaskOutcome) -> str:
        """A done task's commit and its gate's test count (`abc123 · tests 4/4 passed`)."""
        report = self.reports.get(outcome.task.id)
        t = report.tests if report is not None else None
        return outcome.sha[:12] + (f" · tests {t.passed_count}/{t.test_count} passed" if t else "")

    def finish(self, branch: str, plan: TaskPlan) -> JobResult:
        """Open or update the PR with the checklist; report every task; the board's last word."""
        ordered = sorted(self.outcomes.values(), key=lambda o: o.task.line)
        items = [
            {"id": o.task.id, "status": o.status, "detail": o.detail[:300] or self.tested(o)}
            for o in ordered
        ]
        failed = [o for o in self.outcomes.values() if o.status == "failed"]
        done = self.done()
        flagged = concerns(self.outputs)
        # A selected task stopped by a dependency is not done either: the job did not finish.
        status = JobStatus.SUCCESS if len(done) == len(items) else JobStatus.FAILED
        if not self.outcomes:
            status = JobStatus.NEUTRAL
        self.result = self.result.model_copy(
            update={
                "items": items,
                "summary": f"{len(done)} tasks done, {len(failed)} failed,"
                f" {len(items) - len(done) - len(failed)} skipped",
                "security_concerns": flagged,
                # The last done task's gate is the branch's head as the gate saw it.
                "validation": self.last_gate(ordered),
            }
        )
        error = "; ".join(
            f"{o.task.id}: {o.detail[:200]}" for o in self.outcomes.values() if o.status != "done"
        )
        result = self.finished(status, error=error)
        if not self.outcomes and self.job.number is not None:
            # Someone asked on the PR: answer, rather than leave them waiting for nothing.
            self.gh.create_comment(
                self.job.repo,
                self.job.number,
                f"agentbot: nothing to do: every selected task in `{self.tasks_path}` is ticked.",
            )
        if not self.outcomes or (not done and self.pr_number is None):
            return result  # nothing ran (every box ticked): the PR stays as it is
        pr = self.publish(branch, plan)
        result = result.model_copy(update={"pr_url": pr.html_url, "pr_number": pr.number})
        if self.board:
            self.board.finish(f"{result.summary}.\n\n{usage_line(result)}")
        return result

    def publish(self, branch: str, plan: TaskPlan) -> PullRequest:
        """Open the PR (or update its body) with the task checklist as it stands."""
        states = {tid: (o.status, o.detail) for tid, o in self.outcomes.items()}
        flagged = concerns(self.outputs)
        pr, _ = publish_pull(
            self.env,
            self.job.repo,
            head=branch,
            title=implement_pr_title(branch),
            body=checklist_body(plan, states, tries=TRIES, concerns=flagged),
            number=self.pr_number,
            retitle=False,
            concerns=flagged,
        )
        return pr


def implement(job: Job, env: JobEnv) -> JobResult:
    """Job handler: run the Implementer; a refusal becomes a comment, errors a failed result."""
    run = ImplementRun(job, env)
    return refusable(job, env, run.run, run.neutral, run.stopped)
