"""DESIGN §8.5 (seed 002): tests for what a pull request changed, proven to test something.

Discovery (no LLM): the functions and methods the PR added or changed, from its diff on
the syntax trees, each with a complexity zone; new red-zone code stops the run
(`red_zone_new_code`) unless `--force`. Then dependency waves, callees first; in each
wave the methods' analyzer and test architect run in parallel (they only read), then
each method's test writer and reviewer, one method at a time (they edit and run the
shared test files). Changed-line coverage is measured before and after, each new test
must fail on a mutant of its method or is dropped, and the tests go to the PR branch as
one commit `test(<scope>): cover <methods>` that touches test files only. The progress
comment ends with the table. Decisions where the issue was silent are in docs/cover.md.
"""

# Over 300 lines: the /cover story reads as one flow; its parts live beside it.

from __future__ import annotations

import contextvars
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from bot.cover.coverage import changed_coverage
from bot.cover.discovery import ChangedMethod, call_graph, red_new, select
from bot.cover.metadata import CoverMetadata, merge, pack, unpack
from bot.cover.table import MethodReport, cover_table, red_zone_message
from bot.cover.waves import waves
from bot.errors import AgentbotError, CoverStageError
from bot.git import Workspace
from bot.models import Job, JobResult, JobStatus
from bot.ports import JobEnv
from bot.report import Step, StepState
from bot.workflows.cover.context import CoverContext, TestsUnverified, open_context
from bot.workflows.cover.repo import changed_methods, measure
from bot.workflows.cover.result import items as result_items
from bot.workflows.cover.result import nothing_message, squash
from bot.workflows.cover.stages import MethodStages
from bot.workflows.steps.flow import Flow, Refused, refusable
from bot.workflows.steps.fork_delivery import Branch, Delivered, check_out, deliver
from bot.workflows.steps.limits import push_guard
from bot.workflows.steps.progress import Progress, label_failure
from bot.workflows.steps.workspace import open_workspace

COMMAND = "/cover"


class CoverRun(Flow):
    """One /cover run on one branch."""

    def __init__(self, job: Job, env: JobEnv) -> None:
        super().__init__(job, env, "test_writer")
        self.reports: dict[str, MethodReport] = {}
        self.all_found: list[ChangedMethod] = []
        """Every changed method, before the job's targets narrow them."""
        self.progress: Progress | None = None
        self.pr_branch: Branch | None = None
        """The pull request's branch (a fork's too); None for a branch run."""
        self.delivered = Delivered("pushed")
        self.carried: list[CoverMetadata] = []
        """Metadata the last report carried (the cache, wherever the job runs)."""
        self.cache = ""
        """This run's metadata as the report's hidden marker."""

    def run(self) -> JobResult:
        """Resolve the branch, discover, then work the waves and commit the tests."""
        branch, base_ref, pr_url = self.resolve()
        self.result = self.result.model_copy(update={"branch": branch, "pr_url": pr_url})
        ws = open_workspace(self.env, self.job.repo, f"cover-{branch.replace('/', '-')}")
        if self.job.number is not None:
            pr = self.gh.get_pull(self.job.repo, self.job.number)
            self.pr_branch = check_out(self.env, ws, self.job.repo, pr)
        else:
            ws.fetch()
            ws.switch(branch, at=f"origin/{branch}")
        base = ws.git("merge-base", f"origin/{base_ref}", "HEAD").strip()
        methods = self.discover(ws, base)
        # Nothing to do, or a stop before any work: a short reply, the last report stays.
        if not methods:
            targets = [str(t) for t in self.job.params.get("targets") or []]
            return self.end(JobStatus.NEUTRAL, nothing_message(targets, self.all_found))
        reds = red_new(methods)
        if reds and not self.job.params.get("force"):
            named = [
                (m.function.qualname, m.path, m.function.loc, m.function.branches + 1) for m in reds
            ]
            return self.end(
                JobStatus.NEUTRAL,
                red_zone_message(named, COMMAND),
                error="red_zone_new_code: " + ", ".join(m.id for m in reds),
            )
        self.start_progress(f"{len(methods)} method(s)")
        return self.work(ws, branch, methods)

    # --- resolving and discovering -------------------------------------------------------

    def resolve(self) -> tuple[str, str, str]:
        """(branch, base branch, PR url): the PR's (same repo only), or the job's ref."""
        if self.job.number is not None:
            # A fork's too (issue #27): its code runs only in the sandbox, its change comes back
            # as a push where allowed, else as a review (bot.workflows.steps.fork_delivery).
            pr = self.gh.get_pull(self.job.repo, self.job.number)
            if not pr.head_repo:
                raise Refused(
                    f"`{COMMAND}` has nothing to work on: the pull request's fork was deleted."
                )
            return (
                pr.head_ref,
                pr.base_ref or self.gh.default_branch(self.job.repo),
                pr.html_url,
            )
        if not self.job.ref:
            raise AgentbotError("a cover job needs a pull request number or a branch")
        base = str(self.job.params.get("base") or "") or self.gh.default_branch(self.job.repo)
        return self.job.ref.removeprefix("refs/heads/"), base, ""

    def discover(self, ws: Workspace, base: str) -> list[ChangedMethod]:
        """The changed methods the job selects (all of them when it names none)."""
        self.all_found = changed_methods(ws, base)
        return select(self.all_found, [str(t) for t in self.job.params.get("targets") or []])

    # --- the pipeline ---------------------------------------------------------------------

    def work(self, ws: Workspace, branch: str, methods: list[ChangedMethod]) -> JobResult:
        """Measure, work the waves, measure again, commit."""
        start = ws.head_sha()
        # What leaves is judged from the PR's head: only our commit, never the PR's own code.
        ws.push_guard = push_guard(start, self.cfg.limits)
        try:
            ctx = open_context(
                self.env, ws, self.job.repo, branch, {m.language for m in methods}, self.budget
            )
        except TestsUnverified as exc:  # tests that cannot run would be accepted unverified
            return self.end(
                JobStatus.UNVERIFIED, f"**Stopped (unverified)**: {exc}", error=str(exc)
            )
        # The data folder may be new (an Action's runner): the PR's report brings the cache.
        ctx.store.seed(self.carried)
        for m in methods:
            self.reports[m.id] = MethodReport(m.id, m.function.qualname, m.zone, m.mode)
            if m.language not in ctx.runners:
                self.reports[m.id].stages["discovery"] = (
                    f"skipped: no {m.language} test runner /cover knows in this repository"
                )
        runnable = [m for m in methods if m.language in ctx.runners]
        untracked = set(ctx.untracked())
        before, measured = measure(ctx, runnable)
        self.step("Measure coverage before", "done")
        failure: CoverStageError | None = None
        graph = call_graph(runnable)
        by_id = {m.id: m for m in runnable}
        for number, wave in enumerate(waves(graph, [m.id for m in runnable]), 1):
            title = f"Wave {number}: " + ", ".join(by_id[i].function.qualname for i in wave)
            self.progress_add(title)
            failure = self.run_wave(ctx, [by_id[i] for i in wave])
            self.step(title, "failed" if failure else "done", failure.stage if failure else "")
            if failure:
                # The failed method's unfinished test edits go: they are neither measured
                # nor committed.
                ctx.discard_changes(created=set(ctx.untracked()) - untracked)
                break
        after, measured_after = measure(ctx, runnable)
        for m in (m for m in runnable if m.language in measured & measured_after):
            report = self.reports[m.id]
            report.before = changed_coverage(before, m.path, m.changed, fallback=after)
            report.after = changed_coverage(after, m.path, m.changed, fallback=before)
        sha = self.commit(ws, branch, start, runnable)
        return self.finish(ctx, failure, sha)

    def run_wave(self, ctx: CoverContext, wave: list[ChangedMethod]) -> CoverStageError | None:
        """Plan the wave's methods at once, then write and review them one by one."""
        stages = [MethodStages(ctx, m, ctx.store.discover(m), self.reports[m.id]) for m in wave]
        for s in stages:
            s.report.stages["discovery"] = "done"
        cap = min(self.cfg.execution.max_parallel_tasks, len(stages))
        with ThreadPoolExecutor(max_workers=cap) as pool:
            futures = [pool.submit(contextvars.copy_context().run, s.plan) for s in stages]
            errors = [f.exception() for f in futures]
        for err in errors:
            if isinstance(err, CoverStageError):
                return err
            if err is not None:
                raise err
        for s in stages:
            try:
                s.write_and_review()
            except CoverStageError as exc:
                return exc
        return None

    # --- the result -----------------------------------------------------------------------

    def commit(self, ws: Workspace, branch: str, start: str, methods: list[ChangedMethod]) -> str:
        """Squash the methods' checkpoints into one `test(...)` commit and push it."""
        covered = [self.reports[m.id].qualname for m in methods if self.reports[m.id].tests]
        sha = squash(ws, start, [m.path for m in methods], covered)
        if sha:
            self.step("Commit and push", "running")
            # The PR's branch is not ours: the push is a plain fast-forward, never forced.
            if self.pr_branch is None:
                self.env.push(ws, branch)
            else:
                report = cover_table(list(self.reports.values()))
                self.delivered = deliver(self.env, ws, self.pr_branch, report=report)
        return sha

    def finish(self, ctx: CoverContext, failure: CoverStageError | None, sha: str) -> JobResult:
        """The final comment (table, warnings, cost) and the job's result."""
        reports = list(self.reports.values())
        kept = sum(len(r.tests) for r in reports)
        if failure is not None:
            status, error = JobStatus.FAILED, str(failure)
        else:
            status, error = (JobStatus.SUCCESS if kept else JobStatus.NEUTRAL), ""
        lines = []
        if sha and self.delivered.how == "review":
            lines.append(f"Suggested {kept} new test(s) in a review: {self.delivered.url}")
        elif sha:
            lines.append(f"Pushed `{sha[:12]}` with {kept} new test(s) to `{self.result.branch}`.")
        elif kept:
            lines.append(
                f"Nothing new to commit: the {kept} test(s) below are already on"
                f" `{self.result.branch}` (unchanged methods are cached)."
            )
        else:
            lines.append("No test was committed.")
        stopped = ""
        if failure is not None:
            stopped = (
                f"**Stopped: the {failure.stage} stage failed** for `{failure.method}`:"
                f" {failure.reason}"
            )
            lines.append(stopped)
        lines.append(cover_table(reports))
        if ctx.warnings:
            lines.append("Notes:\n" + "\n".join(f"- {w}" for w in ctx.warnings))
        lines.append(f"Cost ${self.budget.cost_usd:.4f} · {self.budget.turns} turns")
        self.step("Commit and push", "done" if sha else "skipped")
        summary = f"{kept} test(s) for {len(reports)} method(s)" + (
            f", committed as {sha[:12]}" if sha else ", nothing committed"
        )
        self.cache = pack(merge(self.carried, (ctx.store.load(m.slug) for m in self.all_found)))
        return self.end(
            status,
            "\n\n".join(lines),
            error=error,
            items=result_items(reports),
            summary=summary,
            short=f"{stopped}\n\nNothing was committed." if stopped and not sha else "",
        )

    def end(
        self,
        status: JobStatus,
        message: str,
        *,
        error: str = "",
        items: list[dict[str, Any]] | None = None,
        summary: str = "",
        short: str = "",
    ) -> JobResult:
        """Finish the report with `message`; or reply (`short`, else `message`) and keep the
        last good report: a failure that committed nothing, an end before the work started."""
        number = self.job.number
        if self.progress is None:
            if number is not None:
                self.gh.create_comment(self.job.repo, number, f"agentbot: {message}")
        elif status == JobStatus.FAILED and (short or not items) and self.progress.restore():
            self.gh.create_comment(self.job.repo, self.progress.number, short or message)
        else:
            self.progress.finish(message + (f"\n\n{self.cache}" if self.cache else ""))
        self.result = self.result.model_copy(
            update={"summary": summary or message, "items": items or []}
        )
        return self.finished(status, error=error)

    def finished(self, status: JobStatus, *, error: str = "") -> JobResult:
        """The result; a failure also labels the issue or pull request `labels.failed`."""
        result = super().finished(status, error=error)
        if status == JobStatus.FAILED:
            label_failure(self.gh, self.job.repo, self.job.number, self.cfg.labels.failed)
        return result

    # --- progress comment -----------------------------------------------------------------

    def start_progress(self, found: str) -> None:
        """The report comment on the pull request, once there is work (none for a branch run).

        It takes over the last report; the metadata that report carries seeds the cache.
        """
        if self.job.number is None:
            return
        steps = [
            Step("Discover changed methods", "done", found),
            Step("Measure coverage before", "running"),
            Step("Commit and push"),
        ]
        self.progress = Progress(self.gh, self.job.repo, self.job.number, "agentbot /cover", steps)
        self.progress.start(self.gh.list_issue_comments(self.job.repo, self.job.number))
        self.carried = unpack(self.progress.previous)

    def step(self, title: str, state: StepState, detail: str = "") -> None:
        """Set a step of the progress comment."""
        if self.progress is not None:
            self.progress.set(title, state, detail)

    def progress_add(self, title: str) -> None:
        """A running step before "Commit and push" (a wave)."""
        if self.progress is not None:
            self.progress.steps.insert(len(self.progress.steps) - 1, Step(title, "running"))


def cover(job: Job, env: JobEnv) -> JobResult:
    """Job handler: a refusal becomes a comment, a failure the progress comment's end."""
    run = CoverRun(job, env)

    def failed(error: str) -> JobResult:
        return run.end(JobStatus.FAILED, f"**/cover failed:** {error}", error=error)

    return refusable(job, env, run.run, run.neutral, failed)
