"""Follow-ups on agentbot's own pull requests (DESIGN §13): review threads, `/fix`, failed CI.

The story: check out the pull request's branch as it is now (people's commits included),
then answer each item (an open review thread, the `/fix` instructions, or the failing CI
run) with the agent, the limits and the gate; a passing change becomes one commit pushed
on the same branch (a plain push: a branch someone moved meanwhile is refused, never
overwritten), a change that fails the gate is dropped, and either way the item gets a
reply (in its thread, or on the pull request) with the commit and the gate result. A
thread is resolved only when its commit passed. The pull request body lists the
follow-ups, and counts CI fixes (`followup.max_ci_fix_attempts`, enforced by the guards).
"""

from __future__ import annotations

import logging

from bot.errors import AgentbotError
from bot.followup.markers import ci_attempts, with_ci_marker
from bot.followup.tasks import ci_task, instructions_task, thread_task
from bot.followup.threads import (
    REPLY_MARKER,
    Outcome,
    Thread,
    reply_text,
    with_summary,
)
from bot.instructions import HIDDEN_FROM_DIFFS
from bot.models import AgentStatus, Job, JobResult, JobStatus, ValidationReport
from bot.models.github import PullRequest
from bot.ports import JobEnv
from bot.report import subject_line, validation_table
from bot.roles import FIXER, ISSUE_FIXER
from bot.roles.fixer import repair_task
from bot.validation.sources import ci_workflows
from bot.workflows.follow_up.reviews import ReviewReading
from bot.workflows.steps.agents import open_session
from bot.workflows.steps.flow import Stop
from bot.workflows.steps.fork_delivery import Branch, check_out, deliver
from bot.workflows.steps.limits import push_guard, worktree_problems
from bot.workflows.steps.progress import label_failure
from bot.workflows.steps.proof import prove
from bot.workflows.steps.validate import unverified_stop, validate
from bot.workflows.steps.workspace import open_workspace

log = logging.getLogger("agentbot.job")


def follow_up(job: Job, env: JobEnv) -> JobResult:
    """Answer review feedback, `/fix` or failed CI on pull request `job.number`."""
    assert job.number is not None, "a follow-up needs a pull request number"
    return _FollowUp(job, env).outcome()


def nothing_to_do(job: Job, env: JobEnv) -> str | None:
    """Why a follow-up has nothing to do (a redelivered review, answered), from reads only;
    the door then writes nothing, not even a check run. None when there is work."""
    found = _FollowUp(job, env).pending() if job.number is not None else None
    return found if isinstance(found, str) else None


follow_up.nothing_to_do = nothing_to_do  # type: ignore[attr-defined]


class _FollowUp(ReviewReading):
    """One follow-up job on one of our pull requests."""

    def __init__(self, job: Job, env: JobEnv) -> None:
        super().__init__(job, env, "issue_fixer")
        self.repo, self.number = job.repo, job.number or 0
        self.outcomes: list[Outcome] = []
        self.goal = ""
        self.fix_round = 0
        self.pr = PullRequest(number=self.number)
        self.ci_count: tuple[int, list[str]] | None = None
        self.start_sha = ""
        self.thread_ids: dict[int, str] = {}
        """Review thread node ids by first comment id (empty without GraphQL)."""
        self.permitted: dict[str, bool] = {}
        """Whether a login may ask for work, asked once per login in a job."""
        self.branch: Branch | None = None
        self.suggested: set[str] = set()
        """Reviews of suggestions made for a fork (their URLs stand for commits)."""
        self.review_has_comments = False
        """The delivered review brought inline comments (its body is then no request)."""

    def run(self) -> JobResult:
        found = self.pending()
        if isinstance(found, str):
            raise Stop(self.neutral(found))
        threads, asked = found
        trigger = self.job.params.get("trigger")
        self.checkout()
        if trigger == "ci":
            self.fix_ci()
        elif trigger == "fix_command":
            self.fix_command(str(self.job.params.get("instructions") or ""))
        elif not threads:
            # Changes requested in the review's body alone: carried out like `/fix`.
            self.fix_command(asked, what="review")
        else:
            for thread in threads:
                self.answer(thread)
        return self.conclude()

    # --- steps ----------------------------------------------------------------------------

    def checkout(self) -> None:
        """The branch as it is on origin; the gate and the limits judge from its fork point."""
        default = self.gh.default_branch(self.repo)
        ws = self._ws = open_workspace(self.env, self.repo, f"pr-{self.number}")
        self.branch = check_out(self.env, ws, self.repo, self.pr)
        self.base_sha = ws.git("merge-base", f"origin/{default}", "HEAD").strip()
        # The limits judge what this job pushes (people's commits already on the branch are
        # theirs); the gate judges the whole branch against its fork point.
        self.start_sha = ws.head_sha()
        ws.push_guard = push_guard(self.start_sha, self.cfg.limits)
        self._session = open_session(self.env, self.repo, f"pr-{self.number}")
        self.result = self.result.model_copy(update={"branch": self.pr.head_ref})

    def answer(self, thread: Thread) -> None:
        """One thread: one commit (or an explanation), a reply, resolved when it passed."""
        root = thread.root
        where = f"{root.path}:{root.line}" if root.line else root.path
        self.goal = f"address the review comment on {where}"
        task = thread_task(self.repo, self.pr, self.diff(), self.base_sha, thread)
        outcome = self.attempt(f"thread on `{where}`", task, "fix(review)")
        resolved = None
        if outcome.commit and outcome.commit not in self.suggested:
            thread_id = self.thread_ids.get(root.id, "")
            resolved = bool(thread_id) and self.gh.resolve_review_thread(self.repo, thread_id)
        self.gh.reply_to_review_comment(
            self.repo, self.number, root.id, reply_text(outcome, resolved=resolved)
        )
        self.outcomes.append(outcome)

    def fix_command(self, text: str, *, what: str = "") -> None:
        """`/fix <instructions>` (or a review's body): one change, a comment on the PR."""
        self.goal = f"carry out: {text[:200]}"
        task = instructions_task(self.repo, self.pr, self.diff(), self.base_sha, text)
        outcome = self.attempt(what or f"`{self.cfg.commands.fix}`", task, "fix")
        text = reply_text(outcome)
        if what == "review":
            text = f"{self.review_marker()}\n{text}"
        self.gh.create_comment(self.repo, self.number, text)
        self.outcomes.append(outcome)

    def fix_ci(self) -> None:
        """The failing CI run: reproduce with the repository's commands, fix, count it."""
        sha = str(self.job.params.get("sha") or "")
        name = str(self.job.params.get("ci_name") or self.job.params.get("ci_event") or "CI")
        self.goal = f"make CI pass again ({name} failed on {sha[:12]})"
        task = ci_task(
            self.repo,
            self.pr,
            self.diff(),
            self.base_sha,
            f"{name} failed on commit {sha}",
            self.ci_commands(),
        )
        outcome = self.attempt("CI", task, "fix(ci)")
        attempts, shas = ci_attempts(self.pr.body)
        cap = self.cfg.followup.max_ci_fix_attempts
        self.ci_count = (attempts + 1, [*shas, sha])
        head = f"CI fix attempt {attempts + 1} of {cap} for {name} on {sha[:12]}."
        self.gh.create_comment(
            self.repo, self.number, reply_text(outcome).replace(REPLY_MARKER, head, 1)
        )
        self.outcomes.append(outcome)

    def ci_commands(self) -> list[str]:
        """What reproduces CI here: the configured stages, then the CI workflows' plain steps
        (the gate's own discovery, which the validation after the fix runs anyway)."""
        v = self.cfg.validation
        configured = [c for c in (v.format, v.lint, v.typecheck, v.test) if c and c != "default"]
        folder = self.ws.path / ".github" / "workflows"
        # Read by the bot itself: a workflow file that is a link (committed on the branch)
        # could point at a host file, so then none are read.
        linked = any(p.is_symlink() for p in (folder.parent, folder, *folder.glob("*.y*ml")))
        found = [] if linked else [s.command for s in ci_workflows(self.ws.path).values()]
        return list(dict.fromkeys([*configured, *found]))

    # --- one item -------------------------------------------------------------------------

    def attempt(self, what: str, task: str, commit_type: str) -> Outcome:
        """Agent → limits → gate → one commit pushed; anything short of it is undone."""
        before = self.ws.head_sha()
        output = self.agent(ISSUE_FIXER, task).output
        if output is None:
            return self.undo(before, Outcome(what, note="the agent gave no valid answer"))
        if output.status != AgentStatus.OK or not self.ws.has_changes():
            note = output.question or output.summary
            return self.undo(before, Outcome(what, note=note))
        if problems := worktree_problems(self.ws, self.start_sha, self.cfg.limits):
            return self.undo(before, Outcome(what, gate="refused by the limits", note=problems))
        report = validate(self.env, self.ws, self.base_sha, self.repair)
        self.result = self.result.model_copy(update={"validation": report})
        if not report.passed:
            gate = report.failing_gate
            failed = f"failed at {gate.gate_name if gate else 'test'}"
            return self.undo(before, Outcome(what, gate=failed, note=output.summary))
        message = subject_line(f"{commit_type}: {output.summary}")
        sha = self.ws.commit(f"{message}\n\nFollow-up on #{self.number}.\n")
        assert self.branch is not None
        told = validation_table(report)
        if self.pr.from_fork(self.repo):  # a review carries the runner's proof too
            self.prepare_environment()
            told += "\n\n" + prove(self.ws, before, self.workenv, clock=self.env.clock).section()
        got = deliver(self.env, self.ws, self.branch, report=told)
        if got.how == "review":
            sha = got.url or "a review"
            self.suggested.add(sha)
        if stop := unverified_stop(report):  # pushed as the IssueFixer's draft is, and marked
            self.gh.add_labels(self.repo, self.number, [self.cfg.labels.unverified])
            self.gh.mark_draft(self.repo, self.number)
            return Outcome(what, commit=sha, gate="unverified", note=f"{output.summary}\n\n{stop}")
        return Outcome(what, commit=sha, gate="passed", note=output.summary)

    def undo(self, before: str, outcome: Outcome) -> Outcome:
        """Drop what the agent changed for this item."""
        self.ws.reset_hard(before, clean=True)
        return outcome

    def repair(self, failing: ValidationReport) -> None:
        """A Fixer round on the failing stage."""
        self.fix_round += 1
        task = repair_task(
            failing,
            goal=self.goal,
            round=self.fix_round,
            max_rounds=self.cfg.validation.fix_rounds,
            files_changed=self.ws.changed_files(self.base_sha),
        )
        self.agent(FIXER, task)

    def diff(self) -> str:
        """The branch's change so far, without its own agent instruction files."""
        return self.ws.git("diff", "--no-color", "-M", self.base_sha, "--", ".", *HIDDEN_FROM_DIFFS)

    # --- outcomes -------------------------------------------------------------------------

    def conclude(self) -> JobResult:
        """The pull request body's follow-up section (and CI count), and the job's status."""
        if not self.pr.from_fork(self.repo):  # a contributor's description stays theirs
            current = self.gh.get_pull(self.repo, self.number).body
            body = with_summary(current, self.outcomes)
            if count := self.ci_count:
                body = with_ci_marker(body, *count)
            self.gh.update_pull(self.repo, self.number, body=body)
        commits = [o.commit for o in self.outcomes if o.commit]
        failed = [o for o in self.outcomes if o.gate and not o.commit]
        status = JobStatus.FAILED if failed else JobStatus.SUCCESS
        if not failed and any(o.gate == "unverified" for o in self.outcomes):
            status = JobStatus.UNVERIFIED
        if not commits and not failed:
            status = JobStatus.NEUTRAL
        summary = f"{len(commits)} commit(s) for {len(self.outcomes)} follow-up item(s)"
        self.result = self.result.model_copy(
            update={"summary": summary, "pr_url": self.pr.html_url, "pr_number": self.number}
        )
        error = f"{len(failed)} item(s) did not pass the gate" if failed else ""
        return self.finished(status, error=error)

    def finished(self, status: JobStatus, *, error: str = "") -> JobResult:
        """The result; a failure also labels the issue or pull request `labels.failed`."""
        result = super().finished(status, error=error)
        if status == JobStatus.FAILED:
            label_failure(self.gh, self.job.repo, self.number, self.cfg.labels.failed)
        return result

    def fail(self, reason: str) -> JobResult:
        """Say why on the pull request."""
        result = self.finished(JobStatus.FAILED, error=reason)
        try:
            self.gh.create_comment(
                self.repo, self.number, f"{REPLY_MARKER}\n\nagentbot's follow-up failed: {reason}"
            )
        except AgentbotError as exc:
            log.warning("could not report the failure: %s", exc)
        return result
