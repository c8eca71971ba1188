"""The cycles of one TDD session on a workspace (DESIGN §8.4): the runner judges every phase.

Per cycle: the Supervisor picks a requirement → RED (the Tester's one new test must fail
for the right reason; a rejected test is discarded, the Supervisor answers the verdict,
the Tester tries again) → GREEN (the Implementer's code must make the suite and the gate
pass without touching a test file) → one `feat` commit → REFACTOR (one refactoring kept
only while green and the tests unchanged; reverted otherwise) → state saved. Each phase has
`TRIES` attempts. A spent budget ends the session after the last committed cycle; the
branch's trailers let the next run go on from there.
"""

# Over 300 lines: one cycle's RED, GREEN and REFACTOR phases share their state and read as one loop.

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from bot.agent import Conversation
from bot.cost import BudgetTracker
from bot.errors import AgentbotError, AgentError, LimitsExceeded
from bot.git import Workspace
from bot.git.changes import changed_paths
from bot.models import AgentResult, AgentStatus, KataDescription, TDDPhase, ValidationReport
from bot.ports import JobEnv
from bot.roles import Role, tdd_implementer, tdd_refactorer, tdd_supervisor, tdd_tester
from bot.roles.tdd_brief import CycleBrief
from bot.session import Session
from bot.tdd import state as tdd_state
from bot.tdd.skeleton import project_modules
from bot.tdd.state import CycleRecord, TddState
from bot.tdd.suite import Suite
from bot.tdd.table import feat_message, refactor_message
from bot.tdd.verdict import Verdict, excerpt, judge_green, judge_red
from bot.validation import run_validation
from bot.workflows.steps.agents import role_conversation
from bot.workflows.steps.validate import unverified_stop
from bot.workflows.steps.workenv import WorkEnv
from bot.workflows.tdd import files
from bot.workflows.tdd.journal import Journal

TRIES = 3


class CycleFailed(AgentbotError):
    """A phase used up its tries; the session stops after the last committed cycle."""


@dataclass
class Engine:
    """One session's cycles on `ws` (already on its branch)."""

    env: JobEnv
    ws: Workspace
    kata: KataDescription
    language: str
    scope: str
    base_sha: str
    suite: Suite
    budget: BudgetTracker
    session: Session
    max_cycles: int
    resume_from: str | None = None
    """Cycles are read back from `resume_from..HEAD` (None: `base_sha..HEAD`; "": all of HEAD)."""
    on_cycle: Callable[[TddState], None] = lambda _: None
    """Called after each committed cycle (the GitHub flow pushes there)."""
    workenv: WorkEnv | None = None
    """The prepared environment the agents' shells run in (as the IssueFixer's)."""
    state: TddState = field(init=False)
    journal: Journal = field(init=False)
    floor: int = field(init=False, default=0)
    """Tests the cycle's RED run counted: fewer at GREEN or REFACTOR is no green."""
    gate: ValidationReport | None = field(init=False, default=None)
    """The last gate that passed: the branch's head as the report shows it."""

    def __post_init__(self) -> None:
        self.state = TddState(title=self.kata.title, requirements=self.kata.requirements)
        self.journal = Journal(self.session, self.env.clock)

    # --- the session ----------------------------------------------------------------------

    def run(self) -> TddState:
        """Resume from the branch's trailers, then cycle until done or stopped."""
        start = self.base_sha if self.resume_from is None else self.resume_from
        span = f"{start}..HEAD" if start else "HEAD"
        log = self.ws.git("log", "--reverse", "--format=%H%x00%B%x01", span)
        pairs = [tuple(e.strip("\n").split("\0", 1)) for e in log.split("\x01") if "\0" in e]
        # A cycle is test and code: a commit that changed nothing is no cycle, whatever its
        # trailer says (agents cannot commit, `head_guard`; this holds for pushed ones too).
        names = self.ws.git("log", "--format=%x02%H", "--name-only", span)
        changed = {e.split()[0] for e in names.split("\x02") if len(e.split()) > 1}
        history = tdd_state.from_history([(p[0], p[1]) for p in pairs if p[0] in changed])
        self.state.cycles, number = tdd_state.resume(history, self.kata.requirements)
        first = self.suite.run()
        if not first.green and first.total:
            raise AgentbotError(
                f"the suite fails before cycle {number}; TDD starts from a"
                f" green suite:\n{excerpt(first.output, 1500)}"
            )
        try:
            while self.state.remaining() and not self.state.done:
                if len(self.state.cycles) >= self.max_cycles:
                    self.state.stopped = f"the session's limit of {self.max_cycles} cycle(s)"
                    break
                if self.cycle(number, before=first.total):
                    number += 1
                first = self.suite.run()
            else:
                self.state.done = True
        except LimitsExceeded as exc:
            files.discard(self.ws)
            self.state.stopped = f"budget exhausted ({exc})"
        except CycleFailed as exc:
            files.discard(self.ws)
            self.state.stopped = str(exc)
        self.journal.save(self.state)
        return self.state

    def cycle(self, number: int, *, before: int) -> bool:
        """Supervisor, RED, GREEN, commit, REFACTOR: one cycle; False when none was needed."""
        spent = self.budget.cost_usd
        pick = self.supervise_pick(number)
        if pick is None:
            return False
        record = CycleRecord(
            cycle=number, requirement=pick, requirement_text=self.kata.requirements[pick - 1]
        )
        red = self.red(record, before)
        record.phase = TDDPhase.IMPLEMENTING
        self.green(record, red)
        record.cost_usd = round(self.budget.cost_usd - spent, 6)
        record.commit = self.ws.commit(feat_message(self.scope, record))
        record.phase = TDDPhase.REFACTORING
        self.state.cycles.append(record)
        self.refactor(record)
        record.phase = TDDPhase.COMPLETE
        self.journal.save(self.state)
        self.on_cycle(self.state)
        return True

    # --- phases ---------------------------------------------------------------------------

    def supervise_pick(self, number: int) -> int | None:
        """The requirement the Supervisor picks (None: it declared the session done)."""
        remaining = self.state.remaining()
        brief = self.brief(number, 0)
        res = self.agent(tdd_supervisor.ROLE, tdd_supervisor.pick_task(brief, remaining))
        data = res.output.data if res.output is not None else {}
        if data.get("done") is True:
            self.state.done = True
            left = ", ".join(map(str, remaining))
            self.state.stopped = f"the Supervisor declared the session done ({left} not covered)"
            return None
        wanted = data.get("requirement")
        if isinstance(wanted, int) and wanted in remaining:
            return wanted
        self.journal.note("supervisor", number, f"picked {wanted!r}, not a remaining requirement")
        return remaining[0]

    def red(self, record: CycleRecord, before: int) -> str:
        """The Tester's test, judged; returns the red run's output excerpt."""
        verdict, hint = "", ""
        project = project_modules(self.ws.path, self.language)
        for attempt in range(1, TRIES + 1):
            record.tester_attempts = attempt
            brief = self.brief(record.cycle, record.requirement)
            task = tdd_tester.build_task(brief, attempt=attempt, verdict=verdict, hint=hint)
            res = self.agent(tdd_tester.ROLE, task)
            outside = [p for p in changed_paths(self.ws) if not files.is_test(p)]
            if outside:
                files.discard(self.ws, outside)
                self.journal.note(
                    "tester", record.cycle, f"changes outside tests undone: {outside}"
                )
            run = self.suite.run()
            judged = judge_red(self.language, run, before, project)
            self.journal.verdict("red", record, attempt, judged)
            if judged.ok:
                self.floor = max(run.total, before + 1)
                record.red_reason = judged.reason
                record.test_files = [p for p in changed_paths(self.ws) if files.is_test(p)]
                named = res.output.data.get("test") if res.output is not None else None
                failing = run.counts.failed_tests if run.counts else []
                record.test = str(
                    named or (failing[0] if failing else ", ".join(record.test_files))
                )
                return judged.detail
            record.verdicts.append(f"test attempt {attempt}: {judged.reason}")
            files.discard(self.ws)
            verdict = judged.tell()
            if attempt < TRIES:
                hint = self.supervise_verdict(record, judged, attempt)
        raise CycleFailed(
            f"cycle {record.cycle}: no test failed for the right reason in {TRIES} tries"
            f" (last: {record.verdicts[-1].split(': ', 1)[-1]})"
        )

    def supervise_verdict(self, record: CycleRecord, judged: Verdict, attempt: int) -> str:
        """The Supervisor's answer to a rejected test: advice for the Tester's next try."""
        brief = self.brief(record.cycle, record.requirement)
        task = tdd_supervisor.verdict_task(brief, judged.tell(), attempt, TRIES)
        res = self.agent(tdd_supervisor.ROLE, task)
        hint = res.output.data.get("hint") if res.output is not None else None
        return str(hint or "")

    def green(self, record: CycleRecord, red: str) -> None:
        """The Implementer's code, judged: suite green, gate passed, tests untouched."""
        tests = files.snapshot(self.ws)
        verdict = ""
        talk: Conversation | None = None
        for attempt in range(1, TRIES + 1):
            record.implementer_attempts = attempt
            if talk is not None and talk.resumable:
                # As the IssueFixer's repair rounds: the runner's verdict goes back into the
                # same conversation (its code and reasoning still in view, its cache warm).
                self.agent(tdd_implementer.ROLE, retry_message(verdict, attempt), talk)
            else:
                brief = self.brief(record.cycle, record.requirement)
                task = tdd_implementer.build_task(brief, red=red, attempt=attempt, verdict=verdict)
                talk = self.conversation(tdd_implementer.ROLE, task)
                self.agent(tdd_implementer.ROLE, task, talk)
            judged = self.judge_change(tests)
            self.journal.verdict("green", record, attempt, judged)
            if judged.ok:
                return
            record.verdicts.append(f"code attempt {attempt}: {judged.reason}")
            verdict = judged.tell()
        raise CycleFailed(
            f"cycle {record.cycle}: the code did not pass in {TRIES} tries"
            f" (last: {record.verdicts[-1].split(': ', 1)[-1]})"
        )

    def refactor(self, record: CycleRecord) -> None:
        """At most one refactoring, kept only green with the tests unchanged; else reverted."""
        tests = files.snapshot(self.ws)
        verdict = ""
        for attempt in range(1, TRIES + 1):
            record.refactor_attempts = attempt
            brief = self.brief(record.cycle, record.requirement)
            res = self.agent(
                tdd_refactorer.ROLE,
                tdd_refactorer.build_task(brief, attempt=attempt, verdict=verdict),
            )
            if not changed_paths(self.ws):
                return
            judged = self.judge_change(tests)
            self.journal.verdict("refactor", record, attempt, judged)
            if judged.ok:
                what = res.output.data.get("refactoring") if res.output is not None else None
                what = str(what or (res.output.summary if res.output else "")) or "tidy up"
                self.ws.commit(refactor_message(self.scope, record.cycle, what))
                record.refactorings.append(what.splitlines()[0])
                return
            record.verdicts.append(f"refactoring attempt {attempt} reverted: {judged.reason}")
            files.discard(self.ws)
            verdict = judged.tell()

    # --- judging --------------------------------------------------------------------------

    def judge_change(self, tests: files.Snapshot) -> Verdict:
        """Tests untouched, suite green, gate passed (a refused test edit is undone)."""
        touched = files.test_changes(self.ws, tests)
        if touched:
            files.restore(self.ws, tests, touched)
            names = ", ".join(f"`{p}`" for p in touched)
            return Verdict(
                False,
                f"refused: test files may not change, nor the test runner's configuration"
                f" ({names} restored)",
            )
        judged = judge_green(self.suite.run(), self.floor)
        if not judged.ok:
            return judged
        self.suite.purge()  # the gate's test stage must not read bytecode of an older text
        report = run_validation(
            self.ws.path,
            self.env.config.validation,
            data_dir=self.env.data_dir,
            base_sha=self.base_sha,
            fix=True,
            clock=self.env.clock,
            sandbox=self.env.sandbox,
        )
        if stop := unverified_stop(report):  # another attempt cannot install a missing tool
            raise CycleFailed(stop)
        if report.passed:
            self.gate = report
            return Verdict(True, "green and the gate passed")
        gate = report.failing_gate
        name = gate.gate_name if gate else "validation"
        out = gate.command_result.output if gate and gate.command_result else ""
        found = ", ".join((gate.new_issues or gate.issues_found)[:5]) if gate else ""
        return Verdict(False, f"the {name} gate failed" + (f": {found}" if found else ""),
                       excerpt(out))  # fmt: skip

    # --- plumbing -------------------------------------------------------------------------

    def conversation(self, role: Role, task: str) -> Conversation:
        """A new agent conversation in the prepared environment, on the job's budget."""
        return role_conversation(
            self.env, role, task, self.ws.path, budget=self.budget, session=self.session,
            workenv=self.workenv,
        )  # fmt: skip

    def agent(self, role: Role, task: str, talk: Conversation | None = None) -> AgentResult:
        """One agent run on the job's budget (LimitsExceeded ends the session): `talk`
        started, or continued with `task` when it already ran; a new conversation if None."""
        talk = talk or self.conversation(role, task)
        try:
            res = talk.resume(task) if talk.resumable else talk.start()
        except LimitsExceeded:
            self.budget.check()  # the job's budget spent: raised again, the session stops
            raise CycleFailed(f"the {role.name.value} agent used all its turns") from None
        except AgentError as exc:
            raise CycleFailed(f"the {role.name.value} agent failed: {exc}") from exc
        out = res.output
        if out is None or out.status != AgentStatus.OK:
            said = f"{out.status.value}: {out.summary}" if out else res.message
            raise CycleFailed(f"the {role.name.value} agent stopped with {said}")
        return res

    def brief(self, cycle: int, requirement: int) -> CycleBrief:
        """What every role is told now."""
        done = [f"{c.cycle}: requirement {c.requirement} by `{c.test}`" for c in self.state.cycles]
        return CycleBrief(
            kata=self.kata,
            cycle=cycle,
            requirement=requirement,
            language=self.language,
            test_command=self.suite.command,
            test_files=files.test_files(self.ws),
            done=done,
        )


def retry_message(verdict: str, attempt: int) -> str:
    """The runner's verdict on the last code, sent back into the Implementer's conversation."""
    return (
        f"The runner rejected that code (attempt {attempt - 1} of {TRIES}):\n\n{verdict}\n\n"
        "Change the code (never a test file) so that the suite and the gate pass, then call"
        " finish again."
    )
