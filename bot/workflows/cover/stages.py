"""The four stages of one method in /cover: analyzer → test architect → test writer → reviewer.

Each stage checks its predecessor's marker, is skipped as cached while its marker holds
(the method's text unchanged and, for the writer and reviewer, its tests still in the
files), skips with a reason when the stage before it skipped (skip = success), and
otherwise works and writes its marker. A failure raises CoverStageError naming the stage:
the pipeline stops (seed 002 fail-fast, no retry). The analyzer, architect and writer are
agents; the reviewer is agentbot itself: it runs the tests on the pull request's head,
then against mutants of the method, and drops each new test no mutant makes fail.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable
from pathlib import Path

from pydantic import ValidationError as PydanticValidationError

from bot import treefs
from bot.cover.discovery import ChangedMethod
from bot.cover.languages import language_for
from bot.cover.metadata import Analysis, CoverMetadata, Stage, Structure, WrittenTests
from bot.cover.runners import SuiteRunner
from bot.cover.table import MethodReport
from bot.errors import AgentError, CoverStageError
from bot.models import AgentResult, AgentStatus
from bot.outbound.paths import TEST_PATH
from bot.roles import cover_analyst, test_architect, test_writer
from bot.roles.cover_brief import MethodBrief
from bot.workflows.cover.context import CoverContext
from bot.workflows.cover.review import review
from bot.workflows.steps.agents import unmet


class MethodStages:
    """One method's stages, its metadata file and its row of the report."""

    def __init__(
        self, ctx: CoverContext, method: ChangedMethod, meta: CoverMetadata, report: MethodReport
    ) -> None:
        self.ctx, self.method, self.meta, self.report = ctx, method, meta, report
        self.runner: SuiteRunner = ctx.runners[method.language]

    # --- the protocol ---------------------------------------------------------------------

    def plan(self) -> None:
        """Analyzer and test architect: read-only, so a wave's methods may plan at once."""
        self._stage("analyzer", self._analyze)
        self._stage("test_architect", self._architect)

    def write_and_review(self) -> None:
        """Test writer and reviewer: they edit and run the shared test files, one at a time."""
        self._stage("test_writer", self._write)
        self._stage("reviewer", self._review)

    def _stage(self, stage: Stage, work: Callable[[], str]) -> None:
        self.meta.require(stage)
        previous = self.meta.skipped(_before(stage))
        if self.meta.completed(stage) and self._cache_holds(stage):
            skipped = self.meta.skipped(stage)
            self.report.stages[stage] = f"skipped: {skipped}" if skipped else "cached"
            self._restore_report()
            return
        try:
            reason = f"{_before(stage)} skipped ({previous})" if previous else work()
        except CoverStageError as exc:
            # The writer's edits live only in this workspace until the reviewer commits
            # them: a failed review means writing them again next time.
            redo: Stage = "test_writer" if stage == "reviewer" else stage
            self.meta.record_error(stage, exc.reason, redo_from=redo)
            self.ctx.store.save(self.meta)
            self.report.stages[stage] = f"failed: {exc.reason}"
            raise
        self.meta.complete(stage, skip_reason=reason)
        self.ctx.store.save(self.meta)
        self.report.stages[stage] = f"skipped: {reason}" if reason else "done"

    def _cache_holds(self, stage: Stage) -> bool:
        """Analysis and plan hold while the text does; tests must also still be in their files."""
        tests = self.meta.tests
        if stage in ("analyzer", "test_architect") or self.meta.skipped(stage):
            return True
        if tests is None:
            return False
        texts = "".join(_read(self.ctx.ws_path, f) for f in tests.files)
        return all(title in texts for title in tests.titles)

    def _restore_report(self, *, reviewed: bool = False) -> None:
        """The report's tests and mutants from the metadata (cached, or just reviewed)."""
        tests = self.meta.tests
        if tests is not None and (reviewed or self.meta.completed("reviewer")):
            self.report.tests, self.report.dropped = list(tests.added), list(tests.dropped)
            self.report.mutants, self.report.killed = tests.mutants, tests.killed

    def _fail(self, stage: Stage, reason: str) -> CoverStageError:
        return CoverStageError(stage, self.method.id, reason)

    # --- agents ---------------------------------------------------------------------------

    def _agent(self, stage: Stage, result: Callable[[], AgentResult]) -> AgentResult:
        try:
            res = result()
        except AgentError as exc:
            if exc.result is not None:
                self.report.cost_usd += exc.result.cost_usd
            raise self._fail(stage, f"the agent stopped: {exc}") from exc
        self.report.cost_usd += res.cost_usd
        if res.output is None or res.output.status != AgentStatus.OK:
            raise self._fail(stage, f"the agent did not finish OK: {res.message}")
        return res

    def _read_only(self, stage: Stage, res: AgentResult) -> None:
        if res.files_modified:
            self.ctx.discard_changes()
            changed = ", ".join(str(p) for p in res.files_modified)
            raise self._fail(stage, f"it changed files ({changed}) but may only read")

    def brief(self) -> MethodBrief:
        """The method as the agents are told about it."""
        fn = self.method.function
        lines = _read(self.ctx.ws_path, self.method.path).splitlines()
        return MethodBrief(
            method_id=self.method.id,
            path=self.method.path,
            qualname=fn.qualname,
            language=self.method.language,
            mode=self.method.mode,
            zone=self.method.zone,
            start_line=fn.start_line,
            end_line=fn.end_line,
            source="\n".join(lines[fn.start_line - 1 : fn.end_line]),
            changed=self.method.changed,
            runner=self.runner.name,
            test_files=self.ctx.test_files,
        )

    def _analyze(self) -> str:
        task = cover_analyst.build_task(self.brief())
        res = self._agent("analyzer", lambda: self.ctx.agent(cover_analyst.ROLE, task))
        self._read_only("analyzer", res)
        data = res.output.data if res.output else {}
        if data.get("testable") is False:
            return f"nothing testable: {data.get('reason') or res.message}"
        try:
            self.meta.analysis = Analysis.model_validate(
                {k: data.get(k, []) for k in ("behaviors", "edge_cases", "existing_tests")}
            )
        except PydanticValidationError as exc:
            raise self._fail("analyzer", f"its data is not an analysis: {exc}") from exc
        if not self.meta.analysis.behaviors:
            return "nothing testable: the analysis found no observable behaviour"
        return ""

    def _architect(self) -> str:
        analysis = self.meta.analysis or Analysis()
        task = test_architect.build_task(
            self.brief(),
            behaviors=analysis.behaviors,
            edge_cases=analysis.edge_cases,
            existing=analysis.existing_tests,
        )
        res = self._agent("test_architect", lambda: self.ctx.agent(test_architect.ROLE, task))
        self._read_only("test_architect", res)
        try:
            plan = Structure.model_validate(res.output.data if res.output else {})
        except PydanticValidationError as exc:
            raise self._fail("test_architect", f"its data is not a test plan: {exc}") from exc
        path = posixpath.normpath(plan.test_file.strip().lstrip("./"))
        if path.startswith(("/", "..")) or not TEST_PATH.search(path) or language_for(path) is None:
            raise self._fail("test_architect", f"`{plan.test_file}` is not a test file path")
        self.meta.structure = plan.model_copy(update={"test_file": path})
        return ""

    def _write(self) -> str:
        plan = self.meta.structure or Structure(test_file="")
        existing = (
            self._ids([plan.test_file]) if (self.ctx.ws_path / plan.test_file).is_file() else []
        )
        untracked = set(self.ctx.untracked())
        analysis = self.meta.analysis or Analysis()
        task = test_writer.build_task(
            self.brief(),
            test_file=plan.test_file,
            cases=[f"`{c.name}`: {c.checks}" if c.checks else f"`{c.name}`" for c in plan.cases],
            fixtures=plan.fixtures,
            behaviors=analysis.behaviors,
        )
        res = self._agent("test_writer", lambda: self.ctx.agent(test_writer.ROLE, task))
        if res.output is not None and (problem := unmet(res.output)):
            raise self._fail("test_writer", problem)  # seed 004: OK with its own gate unmet
        changed = self.ctx.changed_paths()
        outside = [p for p in changed if not _is_test(p)]
        if outside:
            self.ctx.discard_changes(outside, created=set(self.ctx.untracked()) - untracked)
            self.ctx.warn(f"{self.method.id}: the test writer's changes to {outside} were undone")
        files = [p for p in changed if _is_test(p)]
        if not files:
            raise self._fail("test_writer", "it changed no test file")
        self.meta.tests = WrittenTests(test_file=plan.test_file, files=files, existing=existing)
        return ""

    # --- the reviewer ---------------------------------------------------------------------

    def _ids(self, files: list[str]) -> list[str]:
        return sorted({t.id for t in self.runner.run(files).tests})

    def _review(self) -> str:
        tests = self.meta.tests or WrittenTests()
        done = review(self.ctx, self.method, self.runner, tests)
        self.meta.tests = tests.model_copy(
            update={
                "files": done.files,
                "added": [t.id for t in done.kept],
                "titles": [t.title for t in done.kept],
                "dropped": [t.id for t in done.dropped],
                "mutants": done.mutants,
                "killed": done.killed,
            }
        )
        self._restore_report(reviewed=True)
        self.ctx.checkpoint(done.files, self.method.function.qualname)
        return ""


def _before(stage: Stage) -> Stage:
    order: tuple[Stage, ...] = (
        "discovery",
        "analyzer",
        "test_architect",
        "test_writer",
        "reviewer",
    )
    return order[max(order.index(stage) - 1, 0)]


def _is_test(path: str) -> bool:
    return bool(TEST_PATH.search(path)) and "__pycache__" not in path


def _read(root: Path, rel: str) -> str:
    # Never through a link: the repository's tests ran just before and may have left one.
    try:
        return treefs.read_bytes(root, rel).decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return ""
