"""One task of a tasks.md, start to commit: agent tries, validation, the tick, the limits.

`[P]` tasks of a batch each run in their own worktree; their changes come back to the
integration branch one by one, where agentbot (never the agent) ticks the box.
"""

from __future__ import annotations

import contextvars
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from bot import treefs
from bot.agent import Conversation
from bot.errors import AgentError, GitError, LimitsExceeded, OutboundRefused
from bot.git import Workspace
from bot.models import AgentResult, AgentStatus, Job, ValidationReport
from bot.ports import JobEnv
from bot.report import task_commit_message
from bot.roles import FIXER, IMPLEMENTER, Role
from bot.roles.fixer import feedback_message
from bot.roles.implementer import build_task
from bot.session import Session
from bot.tasks_md import Task, TaskPlan, tick
from bot.untrusted import fence
from bot.workflows.implement.tasks_file import find_tasks
from bot.workflows.steps.agents import role_conversation, unmet
from bot.workflows.steps.flow import Flow
from bot.workflows.steps.limits import push_guard, refuse, worktree_problems
from bot.workflows.steps.validate import unverified_stop, validate
from bot.workflows.steps.workenv import WorkEnv, prepare_workenv

TRIES = 3


class GateUnverified(Exception):
    """The task's gate passed without testing it: the task stops, not accepted."""


@dataclass
class TaskOutcome:
    """What happened to one task."""

    task: Task
    status: Literal["done", "failed", "skipped"]
    detail: str = ""
    sha: str = ""


class TaskWork(Flow):
    """Running tasks on a workspace: the part of an Implementer run that works one task."""

    def __init__(self, job: Job, env: JobEnv) -> None:
        super().__init__(job, env, "implementer")
        self.lock = threading.Lock()  # guards the budget and the job log across [P] threads
        self.outcomes: dict[str, TaskOutcome] = {}
        self.reports: dict[str, ValidationReport] = {}
        """Each task's passing gate, by task id: its test counts go into the report."""
        self.tasks_path = ""
        self.workenvs: dict[Path, WorkEnv] = {}
        self.conversations: dict[Path, Conversation] = {}
        """Each workspace's last agent conversation: a fix round continues it."""
        self.fix_rounds: dict[Path, int] = {}
        self.reported = threading.Lock()  # one board write at a time from the [P] threads
        self.plan: TaskPlan | None = None
        self.documents: list[tuple[str, str]] = []
        self.guard = push_guard("", self.cfg.limits, per_commit_lines=True)
        """Set once the branch is checked out: judges every task commit and every push."""

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
                        contextvars.copy_context().run, self.attempt_and_tell, trees[t.id], t,
                        session, start,
                    )
                    for t in batch
                }  # fmt: skip
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

    def attempt_and_tell(
        self, ws: Workspace, task: Task, session: Session, start: str
    ) -> TaskOutcome:
        """A `[P]` task's attempt, reported as soon as it ends (not when its batch does)."""
        outcome = self.attempt(ws, task, session, start)
        with self.reported:
            self.task_ended(outcome)
        return outcome

    def task_ended(self, outcome: TaskOutcome) -> None:
        """A `[P]` task's attempt ended; the story shows it (its commit follows the batch)."""

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
            except GateUnverified as exc:  # another try cannot install a missing runner
                detail = str(exc)
                break
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
        if stop := unverified_stop(report):
            raise GateUnverified(stop)
        self.keep_tasks_file(ws, task, start)  # a Fixer round may have ticked it
        self.reports[task.id] = report
        return ""

    def keep_tasks_file(self, ws: Workspace, task: Task, start: str) -> None:
        """Undo the agent's edits to tasks.md: agentbot alone ticks boxes, on the branch.

        Agents tick their own box despite the prompt; two adjacent `[P]` ticks made in two
        worktrees then conflict when the second task's changes come back (issue #16).
        """
        try:
            if ws.git("diff", "--name-only", start, "--", self.tasks_path).strip():
                self.log(f"task {task.id}: its edits to {self.tasks_path} were dropped")
                ws.git("checkout", start, "--", self.tasks_path)
        except GitError as exc:  # e.g. its folder turned into a link: this try failed
            raise AgentError(f"{self.tasks_path} could not be restored: {exc}") from exc

    def repair(
        self, ws: Workspace, task: Task, failing: ValidationReport, session: Session
    ) -> None:
        """A fix round for a task's failing validation: back into the agent's own conversation
        (as the IssueFixer's); a cold Fixer only when that conversation cannot go on."""
        with self.lock:
            talk = self.conversations.get(ws.path)
            rounds = self.fix_rounds[ws.path] = self.fix_rounds.get(ws.path, 0) + 1
        if talk is not None and talk.resumable:
            most = self.cfg.validation.fix_rounds
            self.converse(talk, feedback_message(failing, round=rounds, max_rounds=most))
            return
        gate = failing.failing_gate
        out = gate.command_result.output[-6000:] if gate and gate.command_result else ""
        task_text = f"Validation fails after task {task.id}. Repair it minimally.\n\n"
        self.agent_in(ws, FIXER, task_text + fence(out, label="validation output"), session)

    def agent_in(self, ws: Workspace, role: Role, text: str, session: Session) -> AgentResult:
        """Run an agent on one workspace (a [P] task's own); all share the run's budget. Its
        conversation is kept per workspace, for the fix rounds of that task."""
        # In the prepared environment, as the IssueFixer's agent: deps installed, validation's
        # commands named (prepared once per workspace; a [P] task's worktree is its own).
        talk = role_conversation(
            self.env, role, text, ws.path, budget=self.budget, session=session,
            workenv=self.workenv_of(ws),
        )  # fmt: skip
        with self.lock:
            self.conversations[ws.path] = talk
            if role is not FIXER:  # a new task's rounds count from 1
                self.fix_rounds[ws.path] = 0
        return self.converse(talk, None)

    def converse(self, talk: Conversation, text: str | None) -> AgentResult:
        """Start `talk` (text None) or continue it with `text`; its answer is kept."""
        result = talk.start() if text is None else talk.resume(text)
        if result.output is not None:
            with self.lock:
                self.outputs.append(result.output)
        return result

    def workenv_of(self, ws: Workspace) -> WorkEnv:
        """The workspace's prepared environment (set up once per workspace, cached)."""
        with self.lock:
            ready = self.workenvs.get(ws.path)
        if ready is None:
            ready = prepare_workenv(self.env, ws.path)
            with self.lock:
                self.workenvs[ws.path] = ready
        return ready

    def commit_task(
        self, ws: Workspace, tasks_path: str, task: Task, outcome: TaskOutcome
    ) -> TaskOutcome:
        """Tick the task's checkbox and commit it with the task's changes; the commit is
        judged as it would be pushed, and dropped (the task failed) if it breaks a limit."""
        find_tasks(ws, tasks_path)  # the agent may have made it a symlink to a file outside
        before = ws.head_sha()
        try:  # never through a link an agent or a test left (bot.treefs)
            text = treefs.read_text(ws.path, tasks_path)
        except OSError as exc:
            ws.reset_hard(before, clean=True)
            return TaskOutcome(task, "failed", f"{tasks_path} could not be ticked: {exc}")
        treefs.write_bytes(ws.path, tasks_path, tick(text, task.id).encode("utf-8"))
        sha = ws.commit(task_commit_message(task.id, task.description))
        try:
            refuse(self.guard.violations(ws, sha, base=before))
        except OutboundRefused as exc:
            ws.reset_hard(before, clean=True)
            return TaskOutcome(task, "failed", str(exc))
        outcome.sha = sha
        return outcome

    def log(self, line: str) -> None:
        """A job log line (thread-safe)."""
        with self.lock:
            self.env.log.info(line)
