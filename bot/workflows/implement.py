"""DESIGN §8.2: work a Spec Kit tasks.md, one validated commit per task, `[x]` ticked as it goes."""

from __future__ import annotations

import contextvars
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from bot.errors import AgentbotError, AgentError, GitError, LimitsExceeded
from bot.git import Workspace
from bot.models import (
    AgentOutput,
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
from bot.tasks_md import Task, TaskPlan, parse_tasks, tick
from bot.untrusted import fence
from bot.workflows.agents import concerns, job_budget, open_session, run_role, unmet
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


class ImplementRun:
    """One run of the Implementer over a tasks file on one branch."""

    def __init__(self, job: Job, env: JobEnv) -> None:
        self.job, self.env, self.cfg, self.gh = job, env, env.config, env.github
        self.lock = threading.Lock()  # guards the budget and the job log across [P] threads
        self.budget = job_budget(env, "implementer")
        self.outcomes: dict[str, TaskOutcome] = {}
        self.outputs: list[AgentOutput] = []
        self.tasks_path = ""
        self.plan: TaskPlan | None = None
        self.result = JobResult(job=job, status=JobStatus.FAILED, started_at=env.clock.now())

    # --- entry -----------------------------------------------------------------------

    def run(self) -> JobResult:
        """Resolve the branch, then work the plan batch by batch."""
        branch, pr_number = self.resolve_branch()
        ws = open_workspace(self.env, self.job.repo, f"implement-{branch.replace('/', '-')}")
        ws.fetch()
        ws.switch(branch, at=f"origin/{branch}")
        tasks_path = self.tasks_path = self.find_tasks(ws)
        plan = self.plan = parse_tasks((ws.path / tasks_path).read_text(encoding="utf-8"))
        selection = self.selection(plan)
        session = open_session(self.env, self.job.repo, f"implement-{branch}")
        self.result = self.result.model_copy(update={"branch": branch})

        for batch in plan.batches(only=selection):
            runnable = [t for t in batch if not self.blocked_by_failure(plan, t)]
            for t in batch:
                if t not in runnable:
                    self.outcomes[t.id] = TaskOutcome(t, "skipped", "a task it depends on failed")
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
            pr = self.gh.get_pull(self.job.repo, self.job.number)
            if pr.head_repo != self.job.repo:
                raise _Refused(
                    f"`/implement` runs only on branches of {self.job.repo}; this pull request"
                    f" comes from {pr.head_repo or 'a deleted fork'}, and agentbot does not push to"
                    " forks or run their code with this repository's credentials."
                )
            return pr.head_ref, pr.number
        if not self.job.ref:
            raise AgentbotError("an implement job needs a pull request number or a branch")
        return self.job.ref.removeprefix("refs/heads/"), None

    def find_tasks(self, ws: Workspace) -> str:
        """The tasks file named by the job, else the only `tasks.md` in the tree."""
        named = str(self.job.params.get("tasks_path") or "")
        if named:
            if not (ws.path / named).is_file():
                raise AgentbotError(f"tasks file {named!r} not found on the branch")
            self.inside(ws, named)
            return named
        found = sorted(p for p in ws.tracked_files() if p == "tasks.md" or p.endswith("/tasks.md"))
        if not found:
            raise AgentbotError(
                "no tasks.md on the branch; name one: `/implement path/to/tasks.md`"
            )
        if found:
            self.inside(ws, found[0])
        if len(found) > 1:
            raise AgentbotError(
                f"several tasks.md files ({', '.join(found)}); name one: `/implement {found[0]}`"
            )
        return found[0]

    @staticmethod
    def inside(ws: Workspace, path: str) -> None:
        """Refuse a tasks file that resolves outside the workspace (a symlink, `..`)."""
        if not (ws.path / path).resolve().is_relative_to(ws.path.resolve()):
            raise _Refused(f"{path} points outside the repository; agentbot will not follow it")

    def selection(self, plan: TaskPlan) -> set[str] | None:
        """`--task` / `--phase` narrowing, or everything."""
        task, phase = self.job.params.get("task"), self.job.params.get("phase")
        if not task and not phase:
            return None
        return plan.select(tasks=[str(task)] if task else [], phases=[int(phase)] if phase else [])

    def blocked_by_failure(self, plan: TaskPlan, task: Task) -> bool:
        """True when a task this one depends on failed or was skipped."""
        bad = {tid for tid, o in self.outcomes.items() if o.status != "done"}
        return any(task.id in plan.dependents(b) for b in bad)

    # --- running tasks ---------------------------------------------------------------

    def run_serial(self, ws: Workspace, tasks_path: str, task: Task, session: Session) -> None:
        """One task in the main workspace; committed with its tick."""
        start = ws.head_sha()
        outcome = self.attempt(ws, task, session, start)
        if outcome.status == "done":
            outcome.sha = self.commit_task(ws, tasks_path, task)
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
                        outcome = TaskOutcome(
                            t, "failed", "its changes conflict with another [P] task's"
                        )
                    else:
                        outcome.sha = self.commit_task(ws, tasks_path, t)
                self.outcomes[t.id] = outcome
        finally:
            for path in (tr.path for tr in trees.values()):
                ws.remove_worktree(path)
            for t in batch:
                ws.delete_branch(f"agentbot-wt/{t.id}")

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
        )
        res = self.agent(IMPLEMENTER, text, ws, session)
        if res.output is None or res.output.status != AgentStatus.OK:
            return f"the agent stopped: {res.message}"
        if problem := unmet(res.output):
            return problem
        if not ws.has_changes():
            return "the agent changed no file"
        report = validate(
            self.env, ws, start, lambda failing: self.repair(ws, task, failing, session)
        )
        if not report.passed:
            gate = report.failing_gate
            out = gate.command_result.output[-2000:] if gate and gate.command_result else ""
            return f"validation failed at {gate.gate_name if gate else 'test'}: {out}"
        return ""

    def repair(
        self, ws: Workspace, task: Task, failing: ValidationReport, session: Session
    ) -> None:
        """A Fixer round for a task's failing validation."""
        gate = failing.failing_gate
        out = gate.command_result.output[-6000:] if gate and gate.command_result else ""
        self.agent(
            FIXER,
            f"Validation fails after task {task.id}. Repair it minimally.\n\n"
            + fence(out, label="validation output"),
            ws,
            session,
        )

    def agent(self, role: Role, text: str, ws: Workspace, session: Session) -> AgentResult:
        """Run an agent on one workspace; all agents of the run share one budget."""
        result = run_role(self.env, role, text, ws.path, budget=self.budget, session=session)
        if result.output is not None:
            with self.lock:
                self.outputs.append(result.output)
        return result

    def commit_task(self, ws: Workspace, tasks_path: str, task: Task) -> str:
        """Tick the task's checkbox and commit it together with the task's changes."""
        file = ws.path / tasks_path
        file.write_bytes(tick(file.read_bytes().decode("utf-8"), task.id).encode("utf-8"))
        return ws.commit(task_commit_message(task.id, task.description))

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
        status = JobStatus.SUCCESS if not failed else JobStatus.FAILED
        if not self.outcomes:
            status = JobStatus.NEUTRAL
        result = self.result.model_copy(
            update={
                "status": status,
                "items": items,
                "summary": f"{len(done)} tasks done, {len(failed)} failed,"
                f" {len(items) - len(done) - len(failed)} skipped",
                "error": "; ".join(f"{o.task.id}: {o.detail[:200]}" for o in failed),
                "security_concerns": flagged,
                "usage": self.budget.usage,
                "cost_usd": self.budget.cost_usd,
                "turns": self.budget.turns,
                "finished_at": self.env.clock.now(),
            }
        )
        if not done and pr_number is None:
            return result
        pr_number = pr_number or self.open_pull(branch)
        repo = self.job.repo
        if pr_number is None:
            pr = self.gh.create_pull(
                repo,
                title=implement_pr_title(branch),
                head=branch,
                base=self.gh.default_branch(repo),
                body=body,
                draft=bool(flagged),
            )
        else:
            pr = self.gh.update_pull(repo, pr_number, body=body)
        if flagged:
            self.gh.add_labels(repo, pr.number, [self.cfg.labels.security_review])
        return result.model_copy(update={"pr_url": pr.html_url, "pr_number": pr.number})

    def open_pull(self, branch: str) -> int | None:
        """The number of the open pull request from `branch`, if there is one."""
        owner = self.job.repo.split("/")[0]
        existing = self.gh.list_pulls(self.job.repo, head=f"{owner}:{branch}", state="open")
        return existing[0].number if existing else None


class _Refused(AgentbotError):
    """The job must not run; the user gets the message as a comment."""


def implement(job: Job, env: JobEnv) -> JobResult:
    """Job handler: run the Implementer; a refusal becomes a comment, errors a failed result."""
    run = ImplementRun(job, env)
    try:
        return run.run()
    except _Refused as exc:
        if job.number is not None:
            env.github.create_comment(job.repo, job.number, f"agentbot: {exc}")
        return run.result.model_copy(
            update={"status": JobStatus.NEUTRAL, "error": str(exc), "finished_at": env.clock.now()}
        )
    except AgentbotError as exc:
        return run.result.model_copy(
            update={"status": JobStatus.FAILED, "error": str(exc), "finished_at": env.clock.now()}
        )
    except Exception as exc:
        env.log.exception("implement crashed")
        error = f"internal error: {type(exc).__name__}: {exc}"
        return run.result.model_copy(
            update={"status": JobStatus.FAILED, "error": error, "finished_at": env.clock.now()}
        )
