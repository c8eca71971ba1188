"""DESIGN §8.4 (seeds 000 and 003): an `agent-tdd` issue becomes a PR built in TDD cycles.

The issue body is the kata (or a feature request whose bullets are the requirements). The
branch `<prefix>tdd-issue-N` is reused as it stands: the cycles already on it are read back
from their commits and the session goes on from the next one, so a run stopped by its budget
loses no committed work. Each committed cycle is pushed at once (a checkpoint); the PR is
opened or updated at the end, a draft when a limit stopped the session. An empty
repository first gets a project skeleton (`chore` commit). Decisions: docs/tdd.md.
"""

from __future__ import annotations

from bot.errors import KataParseError
from bot.guards import open_refusal
from bot.models import Job, JobResult, JobStatus, KataDescription
from bot.ports import JobEnv
from bot.report import Step, StepState, validation_table
from bot.tdd.kata import parse_kata
from bot.tdd.skeleton import detect_language, is_empty, package_name, write_skeleton
from bot.tdd.state import TddState
from bot.tdd.suite import open_suite
from bot.tdd.table import cycle_items, earlier_usage, pr_body
from bot.workflows.steps.agents import open_session
from bot.workflows.steps.flow import Flow, Stop
from bot.workflows.steps.limits import push_guard
from bot.workflows.steps.progress import Progress, label_failure
from bot.workflows.steps.pulls import open_pull, publish_pull, request_review
from bot.workflows.steps.workenv import prepare_workenv
from bot.workflows.steps.workspace import open_workspace
from bot.workflows.tdd.cycle import Engine

STEPS = ("Read the kata", "Red-green-refactor cycles", "Open the pull request")
DEFAULT_MAX_CYCLES = 20


def tdd(job: Job, env: JobEnv) -> JobResult:
    """Run a TDD session for issue `job.number`; never raises for a job failure."""
    assert job.number is not None, "tdd needs an issue number"
    return TddFlow(job, env).outcome()


class TddFlow(Flow):
    """One TDD session for one issue."""

    def __init__(self, job: Job, env: JobEnv) -> None:
        super().__init__(job, env, "tester")
        self.repo, self.number = job.repo, job.number or 0
        self.progress: Progress | None = None
        self.branch = ""
        self.had_failed = False
        """The issue carried `labels.failed` (an earlier run stopped): a finished run lifts it."""

    def run(self) -> JobResult:
        kata = self.read_kata()
        self.prepare_branch()
        language = str(self.job.params.get("language") or "")
        if is_empty(self.ws.path):
            language = language or "python"
            write_skeleton(self.ws.path, language, kata.title)
            self.ws.commit(f"chore: {language} project skeleton for TDD")
        language = language or detect_language(self.ws.path)
        self._session = open_session(self.env, self.repo, f"tdd-{self.number}")
        suite = open_suite(
            self.ws.path,
            self.cfg.validation,
            data_dir=self.env.data_dir,
            clock=self.env.clock,
            sandbox=self.env.sandbox,
        )
        engine = Engine(
            env=self.env,
            ws=self.ws,
            kata=kata,
            language=language,
            scope=package_name(kata.title).replace("_", "-"),
            base_sha=self.base_sha,
            suite=suite,
            budget=self.budget,
            session=self.session,
            max_cycles=int(self.job.params.get("max_cycles") or DEFAULT_MAX_CYCLES),
            on_cycle=self.checkpoint,
            workenv=prepare_workenv(self.env, self.ws.path),
        )
        self.step(STEPS[1], "running")
        state = engine.run()
        self.result = self.result.model_copy(update={"validation": engine.gate})
        return self.open_pr(kata, state)

    # --- steps ----------------------------------------------------------------------------

    def read_kata(self) -> KataDescription:
        """The issue as a kata; a kata that does not parse is answered with how to fix it."""
        issue = self.gh.get_issue(self.repo, self.number)
        if issue.is_pull_request:
            raise Stop(self.neutral(f"#{self.number} is a pull request, not an issue"))
        self.had_failed = self.cfg.labels.failed in issue.labels
        if refusal := open_refusal(issue):
            raise Stop(self.neutral(refusal.reason))
        try:
            kata = parse_kata(issue.body or "", f"issue #{self.number}", title=issue.title)
        except KataParseError as exc:
            self.gh.create_comment(
                self.repo, self.number, f"agentbot cannot start a TDD session: {exc}"
            )
            raise Stop(self.neutral(f"kata: {exc}")) from exc
        self.progress = Progress(
            self.gh, self.repo, self.number, f"agentbot TDD session for #{self.number}",
            [Step(s) for s in STEPS],
        )  # fmt: skip
        self.progress.set(
            STEPS[0], "done", f"{len(kata.requirements)} requirement(s)", publish=False
        )
        self.progress.start(self.gh.list_issue_comments(self.repo, self.number))
        return kata

    def prepare_branch(self) -> None:
        """Our branch, reused as it stands (its cycles are the session's state)."""
        default = self.gh.default_branch(self.repo)
        ws = self._ws = open_workspace(self.env, self.repo, f"tdd-{self.number}")
        ws.fetch()
        self.base_sha = ws.rev(f"origin/{default}")
        ws.push_guard = push_guard(self.base_sha, self.cfg.limits)
        self.branch = ws.prepare_branch(
            f"{self.cfg.pull_request.branch_prefix}tdd-issue-{self.number}",
            base=f"origin/{default}",
        )
        self.result = self.result.model_copy(update={"branch": self.branch})

    def open_pr(self, kata: KataDescription, state: TddState) -> JobResult:
        """Push, open or update the PR (a draft when stopped early), finish the comment."""
        if not state.cycles:
            raise Stop(self.fail(f"no cycle was completed: {state.stopped or 'nothing to do'}"))
        self.env.push(self.ws, self.branch)
        # A resumed session: its pull request says what the earlier runs cost.
        number = open_pull(self.gh, self.repo, self.branch)
        cost, turns = earlier_usage(self.gh.get_pull(self.repo, number).body) if number else (0, 0)
        body = pr_body(
            state,
            issue=self.number,
            cost_usd=cost + self.budget.cost_usd,
            turns=turns + self.budget.turns,
            gate=validation_table(self.result.validation) if self.result.validation else "",
        )
        stopped = state.stopped and not state.done
        pr, new = publish_pull(
            self.env, self.repo, head=self.branch, title=f"feat: {kata.title} (TDD)", body=body,
            number=number, draft=bool(stopped) or self.cfg.pull_request.draft,
        )  # fmt: skip
        if new:
            request_review(self.env, self.repo, pr, self.job.actor, needed=False)
        elif not stopped and not self.cfg.pull_request.draft and pr.draft:
            # A resumed session that finished: its draft (from a stop) is ready now.
            self.gh.mark_ready(self.repo, pr.number)
        items = cycle_items(state)
        summary = f"{len(state.cycles)} of {len(kata.requirements)} requirement(s) in TDD cycles"
        self.result = self.result.model_copy(
            update={"pr_url": pr.html_url, "pr_number": pr.number, "items": items,
                    "summary": summary}
        )  # fmt: skip
        self.step(STEPS[1], "failed" if stopped else "done", state.stopped)
        self.step(STEPS[2], "done", pr.html_url)
        if self.progress is not None:
            self.progress.finish(body)
        return self.finished(JobStatus.FAILED if stopped else JobStatus.SUCCESS,
                             error=state.stopped if stopped else "")  # fmt: skip

    # --- helpers ----------------------------------------------------------------------------

    def step(
        self, title: str, state: StepState, detail: str = "", *, publish: bool = False
    ) -> None:
        """Set a step of the progress comment."""
        if self.progress is not None:
            self.progress.set(title, state, detail, publish=publish)

    def checkpoint(self, state: TddState) -> None:
        """A committed cycle: pushed at once, and the progress comment says how far."""
        self.env.push(self.ws, self.branch)
        done = f"{len(state.cycles)} of {len(state.requirements)} requirement(s)"
        self.step(STEPS[1], "running", done, publish=True)

    def finished(self, status: JobStatus, *, error: str = "") -> JobResult:
        """The result; a failure also labels the issue or pull request `labels.failed`."""
        result = super().finished(status, error=error)
        if status == JobStatus.FAILED:
            label_failure(self.gh, self.job.repo, self.number, self.cfg.labels.failed)
        elif status == JobStatus.SUCCESS and self.had_failed:
            self.gh.remove_label(self.repo, self.number, self.cfg.labels.failed)
        return result

    def fail(self, reason: str) -> JobResult:
        """Say why on the issue and label it; the branch keeps any pushed cycles."""
        result = self.finished(JobStatus.FAILED, error=reason)
        if self.progress is not None:
            if running := self.progress.running():
                self.progress.set(running, "failed", publish=False)
            self.progress.finish(f"**The TDD session failed:** {reason}")

        return result
