"""DESIGN §8.2: work a Spec Kit tasks.md, one validated commit per task, `[x]` ticked as it goes."""

from __future__ import annotations

import contextvars
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from bot.errors import AgentbotError, AgentError, GitError, LimitsExceeded, OutboundRefused
from bot.git import Workspace
from bot.models import (
    AgentResult,
    AgentStatus,
    Job,
    JobResult,
    JobStatus,
    ValidationReport,
)
from bot.ports import JobEnv
from bot.report import checklist_body, implement_pr_title, task_commit_message
from bot.roles import FIXER, IMPLEMENTER, Role
from bot.roles.implementer import build_task
from bot.session import Session
from bot.tasks_md import Task, TaskPlan, blockers, parse_tasks, tick
from bot.untrusted import fence
from bot.workflows.agents import concerns, open_session, run_role, unmet
from bot.workflows.flow import Flow, Refused
from bot.workflows.limits import push_guard, refuse, worktree_problems
from bot.workflows.pulls import publish_pull, same_repo_pull
from bot.workflows.tasks_file import design_docs, find_tasks
from bot.workflows.tasks_file import selection as tasks_selection
from bot.workflows.validate import validate
from bot.workflows.workspace import open_workspace

TRIES = 3


@dataclass
class TaskOutcome:
    """What happened to one task."""

    task: Task
    status: str  # done | failed | skipped
    detail: str = ""
    sha: str = ""


class ImplementRun(Flow):
    """One run of the Implementer over a tasks file on one branch."""

    def __init__(self, job: Job, env: JobEnv) -> None:
        super().__init__(job, env, "implementer")
        self.lock = threading.Lock()  # guards the budget and the job log across [P] threads
        self.outcomes: dict[str, TaskOutcome] = {}
        self.tasks_path = ""
        self.plan: TaskPlan | None = None
        self.documents: list[tuple[str, str]] = []
        self.guard = push_guard("", self.cfg.limits, per_commit_lines=True)
        """Set once the branch is checked out: judges every task commit and every push."""

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

        for batch in plan.batches(only=selection):
            runnable = []
            for t in batch:
                if why := self.blocked(plan, t, selection):
                    self.outcomes[t.id] = TaskOutcome(t, "skipped", why)
                else:
                    runnable.append(t)
            if not runnable:
                continue
            if len(runnable) == 1:
                self.run_serial(ws, tasks_path, runnable[0], session)
            else:
                self.run_parallel(ws, tasks_path, runnable, session)
            self.env.push(ws, branch)  # checkpoint: a crash loses at most this batch
        return self.finish(branch, pr_number, plan)

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

    # --- running tasks ---------------------------------------------------------------

    def run_serial(self, ws: Workspace, tasks_path: str, task: Task, session: Session) -> None:
        """One task in the main workspace; committed with its tick."""
        start = ws.head_sha()
        outcome = self.attempt(ws, task, session, start)
        if outcome.status == "done":
            outcome = self.commit_task(ws, tasks_path, task, outcome)
        self.outcomes[task.id] = outcome

    def run_parallel(
        self, ws: Workspace, tasks_path: str, batch: list[Task], session: Session
    ) -> None:
        """`[P]` tasks each in their own worktree at once; their changes brought back one by one."""
        start = ws.head_sha()
        trees: dict[str, Workspace] = {}
        for t in batch:
            path = ws.path.parent / f"{ws.path.name}-wt-{t.id}"
            trees[t.id] = ws.add_worktree(path, branch=f"agentbot-wt/{t.id}", start=start)
        cap = self.cfg.execution.max_parallel_tasks
        try:
            with ThreadPoolExecutor(max_workers=min(cap, len(batch))) as pool:
                # Each thread gets a copy of this context, so its log lines keep the job id.
                futures = {
                    t.id: pool.submit(
                        contextvars.copy_context().run, self.attempt, trees[t.id], t, session, start
                    )
                    for t in batch
                }
                outcomes = {tid: f.result() for tid, f in futures.items()}
            for t in batch:  # file order keeps history deterministic
                outcome = outcomes[t.id]
                if outcome.status == "done":
                    tree = trees[t.id]
                    tree.commit(f"wip({t.id})")
                    try:
                        ws.apply_changes(tree.head_sha())
                    except GitError:
                        # Two [P] tasks touched the same lines: this one fails, the rest go on.
                        outcome = TaskOutcome(t, "failed", self.conflict(ws, tree, start))
                    else:
                        outcome = self.commit_task(ws, tasks_path, t, outcome)
                self.outcomes[t.id] = outcome
        finally:
            for path in (tr.path for tr in trees.values()):
                ws.remove_worktree(path)
            for t in batch:
                ws.delete_branch(f"agentbot-wt/{t.id}")

    def conflict(self, ws: Workspace, tree: Workspace, start: str) -> str:
        """Why a `[P]` task's changes could not come back: the files both sides changed."""
        both = sorted(set(tree.changed_files(start)) & set(ws.changed_files(start)))
        where = f" in {', '.join(both)}" if both else ""
        return (
            f"its changes conflict{where} with another [P] task's, committed first;"
            " the task list marks them parallel but they edit the same lines"
            " (drop the [P] or re-run the task)"
        )

    def attempt(self, ws: Workspace, task: Task, session: Session, start: str) -> TaskOutcome:
        """Up to TRIES agent runs + validation; the tree is reset between tries."""
        t0 = self.env.clock.monotonic()
        self.log(f"task {task.id} started t={t0:.3f} in {ws.path.name}")
        detail = ""
        for attempt in range(1, TRIES + 1):
            ws.reset_hard(start, clean=True)
            try:
                detail = self.try_once(ws, task, session, start, detail, attempt)
            except LimitsExceeded as exc:
                detail = f"budget exhausted: {exc}"
                break
            except AgentError as exc:
                detail = str(exc)
            if not detail:
                self.keep_tasks_file(ws, task, start)  # a Fixer round may have ticked it
                self.log(
                    f"task {task.id} finished t={self.env.clock.monotonic():.3f} (try {attempt})"
                )
                return TaskOutcome(task, "done")
            self.log(f"task {task.id} try {attempt} failed: {detail}")
        self.log(f"task {task.id} failed t={self.env.clock.monotonic():.3f}")
        ws.reset_hard(start)
        return TaskOutcome(task, "failed", detail)

    def try_once(
        self, ws: Workspace, task: Task, session: Session, start: str, last_error: str, attempt: int
    ) -> str:
        """One agent run and validation; returns "" on success, else why it failed."""
        text = build_task(
            task_id=task.id,
            description=task.description,
            tasks_path=self.tasks_path,
            phase=self.plan.phases[task.phase].title if self.plan else "",
            done=sorted(tid for tid, o in self.outcomes.items() if o.status == "done"),
            attempt=attempt,
            last_error=last_error[-4000:],
            documents=self.documents,
        )
        res = self.agent_in(ws, IMPLEMENTER, text, session)
        if res.output is None or res.output.status != AgentStatus.OK:
            return f"the agent stopped: {res.message}"
        if problem := unmet(res.output):
            return problem
        self.keep_tasks_file(ws, task, start)
        if not ws.has_changes():
            return "the agent changed no file"
        if problems := worktree_problems(ws, start, self.cfg.limits):
            return f"the change breaks the limits: {problems}"
        report = validate(
            self.env, ws, start, lambda failing: self.repair(ws, task, failing, session)
        )
        if not report.passed:
            gate = report.failing_gate
            out = gate.command_result.output[-2000:] if gate and gate.command_result else ""
            return f"validation failed at {gate.gate_name if gate else 'test'}: {out}"
        return ""

    def keep_tasks_file(self, ws: Workspace, task: Task, start: str) -> None:
        """Undo the agent's edits to tasks.md: agentbot alone ticks boxes, on the branch.

        Agents tick their own box despite the prompt; two adjacent `[P]` ticks made in two
        worktrees then conflict when the second task's changes come back (issue #16).
        """
        if ws.git("diff", "--name-only", start, "--", self.tasks_path).strip():
            self.log(f"task {task.id}: its edits to {self.tasks_path} were dropped")
            ws.git("checkout", start, "--", self.tasks_path)

    def repair(
        self, ws: Workspace, task: Task, failing: ValidationReport, session: Session
    ) -> None:
        """A Fixer round for a task's failing validation."""
        gate = failing.failing_gate
        out = gate.command_result.output[-6000:] if gate and gate.command_result else ""
        task_text = f"Validation fails after task {task.id}. Repair it minimally.\n\n"
        self.agent_in(ws, FIXER, task_text + fence(out, label="validation output"), session)

    def agent_in(self, ws: Workspace, role: Role, text: str, session: Session) -> AgentResult:
        """Run an agent on one workspace (a [P] task's own); all share the run's budget."""
        result = run_role(self.env, role, text, ws.path, budget=self.budget, session=session)
        if result.output is not None:
            with self.lock:
                self.outputs.append(result.output)
        return result

    def commit_task(
        self, ws: Workspace, tasks_path: str, task: Task, outcome: TaskOutcome
    ) -> TaskOutcome:
        """Tick the task's checkbox and commit it with the task's changes; the commit is
        judged as it would be pushed, and dropped (the task failed) if it breaks a limit."""
        find_tasks(ws, tasks_path)  # the agent may have made it a symlink to a file outside
        before = ws.head_sha()
        file = ws.path / tasks_path
        file.write_bytes(tick(file.read_bytes().decode("utf-8"), task.id).encode("utf-8"))
        sha = ws.commit(task_commit_message(task.id, task.description))
        try:
            refuse(self.guard.violations(ws, sha, base=before))
        except OutboundRefused as exc:
            ws.reset_hard(before, clean=True)
            return TaskOutcome(task, "failed", str(exc))
        outcome.sha = sha
        return outcome

    # --- results ----------------------------------------------------------------------

    def log(self, line: str) -> None:
        """A job log line (thread-safe)."""
        with self.lock:
            self.env.log.info(line)

    def finish(self, branch: str, pr_number: int | None, plan: TaskPlan) -> JobResult:
        """Open or update the PR with the checklist; report every task."""
        items = [
            {"id": o.task.id, "status": o.status, "detail": o.detail[:300] or o.sha[:12]}
            for o in sorted(self.outcomes.values(), key=lambda o: o.task.line)
        ]
        failed = [o for o in self.outcomes.values() if o.status == "failed"]
        done = [o for o in self.outcomes.values() if o.status == "done"]
        flagged = concerns(self.outputs)
        states = {tid: (o.status, o.detail) for tid, o in self.outcomes.items()}
        body = checklist_body(plan, states, tries=TRIES, concerns=flagged)
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
            }
        )
        error = "; ".join(
            f"{o.task.id}: {o.detail[:200]}" for o in self.outcomes.values() if o.status != "done"
        )
        result = self.finished(status, error=error)
        if not done and pr_number is None:
            return result
        pr, _ = publish_pull(
            self.env,
            self.job.repo,
            head=branch,
            title=implement_pr_title(branch),
            body=body,
            number=pr_number,
            retitle=False,
            concerns=flagged,
        )
        return result.model_copy(update={"pr_url": pr.html_url, "pr_number": pr.number})


def implement(job: Job, env: JobEnv) -> JobResult:
    """Job handler: run the Implementer; a refusal becomes a comment, errors a failed result."""
    run = ImplementRun(job, env)
    try:
        return run.run()
    except Refused as exc:
        if job.number is not None:
            env.github.create_comment(job.repo, job.number, f"agentbot: {exc}")
        return run.neutral(str(exc))
    except AgentbotError as exc:
        return run.fail(str(exc))
    except Exception as exc:
        env.log.exception("implement crashed")
        return run.fail(f"internal error: {type(exc).__name__}: {exc}")
