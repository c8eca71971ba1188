"""One pass over the stages of a set-up workspace, and the auto-fix of what the change broke.

Each stage's command is chosen (discovery.py), narrowed to the change, run between two
snapshots of the tree (whatever it changed that it may not is put back), then judged
against the base commit (judge.py). Auto-fix runs the safe fixers of the failing
format/lint stages on the changed files only; if the tests that passed before fail
after it, the fix is undone and the first report stands.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property

from bot.clock import Clock
from bot.models import (
    CommandResult,
    Diagnostic,
    GateName,
    QualityGateResult,
    TestResult,
    ValidationReport,
)
from bot.validation.baseline import Baseline, BaseTree
from bot.validation.changes import TreeGuard, line_maps, tree_files
from bot.validation.commands import how_to_declare
from bot.validation.compare import LineMap
from bot.validation.diagnostics import parse_diagnostics
from bot.validation.discovery import DISABLED, choose
from bot.validation.environment import StageEnv
from bot.validation.hunks import only_touched, read_texts
from bot.validation.judge import judge_diagnostics, judge_tests
from bot.validation.runner import clip, missing_in_output, missing_program, run_command
from bot.validation.stage import STAGES, StageSpec
from bot.validation.testfiles import NO_TESTS, has_test_files

FIXABLE = ("lint", "format")


@dataclass
class Check:
    """The stages of one validation pass over one workspace."""

    senv: StageEnv
    specs: Mapping[str, list[StageSpec]]
    flags: frozenset[str]
    changed: list[str] | None
    base: BaseTree | None
    base_asked: str | None
    guard: TreeGuard
    timeout: float
    clock: Clock
    emit: Callable[[QualityGateResult], None]
    disabled: frozenset[str] = frozenset()
    require_tests: bool = False

    @cached_property
    def chosen(self) -> dict[str, tuple[StageSpec | None, list[str]]]:
        """Stage -> the spec that runs it and the candidates passed over."""
        return {
            stage: choose(
                list(self.specs.get(stage, [])), self.senv.env, self.senv.repo, self.flags
            )
            for stage in STAGES
        }

    @cached_property
    def maps(self) -> Mapping[str, LineMap]:
        """How the change moved each changed file's lines since the base."""
        if self.base is None or self.changed is None:
            return {}
        return line_maps(self.senv.repo, self.base.sha, self.changed)

    def run(self, setup: QualityGateResult) -> ValidationReport:
        """Every stage once; the report."""
        gates = [setup]
        tests: TestResult | None = None
        new: list[str] = []
        pre: list[str] = []
        for stage in STAGES:
            gate, stage_tests, stage_new, stage_pre = self._stage(stage)
            if stage == "test":
                tests, new, pre = stage_tests, stage_new, stage_pre
            gates.append(gate)
            self.emit(gate)
        ran = [
            g
            for g in gates[1:]
            if g.command_result is not None and g.status in ("passed", "failed", "timed_out")
        ]
        failed = any(g.status in ("failed", "timed_out") for g in gates)
        return ValidationReport(
            profile=self.senv.profile.name,
            gates=gates,
            tests=tests,
            new_failures=new,
            preexisting_failures=pre,
            passed=bool(ran) and not failed,
            warnings=[] if ran else ["nothing was validated: every stage was skipped"],
            changed_files=self.changed,
        )

    def _stage(
        self, stage: str
    ) -> tuple[QualityGateResult, TestResult | None, list[str], list[str]]:
        name: GateName = stage  # type: ignore[assignment]
        spec, passed_over = self.chosen[stage]
        over = "; ".join(passed_over)
        lint = self.chosen["lint"][0]
        if (
            stage == "format"
            and lint is not None
            and lint.pre_commit
            and (spec is None or spec.source == "default")
        ):
            note = "covered by the pre-commit hooks (lint stage)"
            return QualityGateResult(gate_name=name, status="skipped", warning=note), None, [], []
        if spec is None:
            why = DISABLED if stage in self.disabled else over or self.senv.profile.note(stage)
            skipped = QualityGateResult(gate_name=name, status="skipped", warning=why)
            if stage == "test" and why != DISABLED and not has_test_files(self.senv.repo):
                skipped = self._no_tests(skipped, f"no test command found ({why})")
            return skipped, None, [], []
        gate = QualityGateResult(
            gate_name=name, status="skipped", command=spec.command, source=spec.source,
            warning="; ".join(n for n in (spec.note, f"passed over: {over}" if over else "") if n),
        )  # fmt: skip
        command = spec.resolve(self.changed)
        if command is None:
            kinds = ", ".join(spec.suffixes) or "files"
            note = f"the change has no {kinds} files this stage checks"
            return gate.model_copy(update={"warning": note}), None, [], []
        gate = gate.model_copy(update={"command": command})
        missing = missing_program(command, cwd=self.senv.repo, env=self.senv.env)
        if missing is not None:
            return self._unverified(gate, missing), None, [], []
        before = self.guard.snapshot()
        result = self._run(command, stage)
        settled = self.guard.settle(before)
        kept = result.model_copy(update={"output": clip(result.output)})
        outside = [p for p in settled.restored if self.changed is None or p not in self.changed]
        gate = gate.model_copy(update={"command_result": kept, "restored_files": outside})
        if outside:
            gate = gate.model_copy(
                update={
                    "warning": _join(
                        gate.warning, f"restored files it modified: {', '.join(outside[:10])}"
                    )
                }
            )
        if result.timed_out:
            note = f"killed after {self.timeout:g}s (process group)"
            return (
                gate.model_copy(
                    update={"status": "timed_out", "warning": _join(gate.warning, note)}
                ),
                None,
                [],
                [],
            )
        if (tool := missing_in_output(result)) is not None:
            return self._unverified(gate, tool), None, [], []
        base = self._base_run(spec)
        if stage == "test":
            judged, tests, new, pre = judge_tests(gate, spec.runner, result, base)
            if _found_none(judged, tests) and not has_test_files(self.senv.repo):
                judged = self._no_tests(gate, "the runner found none, and no file is a test")
            return self._base_note(judged), tests, new, pre
        found = parse_diagnostics(result.output, (self.senv.repo,))
        if spec.pre_commit:
            touched = [p for p in settled.restored if p not in outside]
            found += [
                Diagnostic(path=p, rule="pre-commit", message="a hook would change this file")
                for p in touched
            ]
        judged = judge_diagnostics(gate, spec, result, found, base, lambda: self.maps)
        return self._base_note(judged), None, [], []

    def _no_tests(self, gate: QualityGateResult, why: str) -> QualityGateResult:
        """No tests at all: skipped and said plainly, unverified when tests are required."""
        if not self.require_tests:
            return gate.model_copy(update={"status": "skipped", "warning": f"{NO_TESTS}: {why}"})
        note = f"{NO_TESTS} ({why}), and `validation.require_tests` is on: add a test"
        return gate.model_copy(update={"status": "unverified", "warning": note})

    def _unverified(self, gate: QualityGateResult, tool: str) -> QualityGateResult:
        """A stage whose runner setup could not provide: skipped, naming the tool and the fix."""
        note = how_to_declare(tool, self.senv.profile.name).removeprefix("unverified: ")
        return _tool_missing(gate, note).model_copy(update={"missing_tool": tool})

    def _run(self, command: str, stage: str = "") -> CommandResult:
        """A stage command in the job's sandbox (no network), writing only its own places."""
        senv = self.senv
        env = senv.env
        if stage and stage != "test" and senv.profile.name == "rust":
            # cargo check/clippy leave artefacts the test build would trip on (E0464 multiple
            # candidates for rmeta): each stage builds apart, the tests in the project's own.
            env = {**env, "CARGO_TARGET_DIR": str(senv.cache / f"target-{stage}")}
        return run_command(
            command, senv.repo, env=env, timeout=self.timeout, clock=self.clock,
            sandbox=senv.sandbox, writable=senv.writable, readable=senv.readable,
        )  # fmt: skip

    def _base_run(self, spec: StageSpec) -> Callable[[], Baseline | None]:
        def run() -> Baseline | None:
            if self.base is None:
                return None
            files = (
                None if self.changed is None else [f for f in self.changed if self.base.exists(f)]
            )
            command = spec.resolve(files)
            if command is None:  # every file it checks is new: nothing on the base to compare
                return Baseline(sha=self.base.sha, exit_code=0)
            return self.base.run(spec.stage, command, runner=spec.runner)

        return run

    def _base_note(self, gate: QualityGateResult) -> QualityGateResult:
        if gate.status != "failed" or self.base_asked is None:
            return gate
        if self.base is None or self.base.broken:
            what = self.base.sha[:12] if self.base else self.base_asked
            note = f"baseline unavailable on {what}: every problem counts as new"
            return gate.model_copy(update={"warning": _join(gate.warning, note)})
        return gate

    def autofix(self, report: ValidationReport, setup: QualityGateResult) -> ValidationReport:
        """Run the safe fixers of the failing format/lint stages on the change; re-check."""
        scope = self.changed
        if scope is None:  # no base: the stages judged the whole tree, so that is what is fixed
            scope = tree_files(self.senv.repo) if self.guard.active else []
        failing = {
            g.gate_name for g in report.gates if g.status == "failed" and g.gate_name in FIXABLE
        }
        before = self.guard.snapshot()
        # Read before any fixer runs: the change's hunks and texts as the change left them.
        pre = read_texts(self.senv.repo, scope) if self.base is not None else {}
        maps = self.maps
        fixed: set[str] = set()
        for stage in FIXABLE:  # lint first: removing an import can leave code the formatter tidies
            spec = self.chosen[stage][0]
            command = spec.fixer(scope) if spec is not None and stage in failing else None
            if command is None:
                continue
            snap = self.guard.snapshot()
            self._run(command, stage)
            fixed |= set(self.guard.settle(snap, keep=set(scope)).modified)
        fixed -= only_touched(self.senv.repo, pre, fixed, maps)
        if not fixed:
            return report
        again = self.run(setup)
        broke = _newly_failing(report, again)
        if broke:
            self.guard.restore(before.content, fixed)
            note = f"auto-fix undone: it broke {', '.join(broke[:5])}"
            return report.model_copy(update={"warnings": [*report.warnings, note]})
        before_status = {g.gate_name: g.status for g in report.gates}
        gates = [
            g.model_copy(update={"auto_fixed": True})
            if g.passed and before_status.get(g.gate_name) == "failed" and g.gate_name in FIXABLE
            else g
            for g in again.gates
        ]
        return again.model_copy(update={"gates": gates})


def _newly_failing(before: ValidationReport, after: ValidationReport) -> list[str]:
    """Tests failing after an auto-fix that did not before (the test gate, if it went red)."""
    old = set(before.tests.failed_tests) if before.tests else set()
    new = [t for t in (after.tests.failed_tests if after.tests else []) if t not in old]
    test_before = next((g.status for g in before.gates if g.gate_name == "test"), None)
    test_after = next((g.status for g in after.gates if g.gate_name == "test"), None)
    if not new and test_before == "passed" and test_after != "passed":
        return ["the test stage"]
    return new


def _found_none(gate: QualityGateResult, tests: TestResult | None) -> bool:
    """An unverified test gate whose runner ran and counted no test at all."""
    return (
        gate.status == "unverified"
        and (tests is None or tests.test_count == 0)
        and ("found no test to run" in gate.warning or "counts not recognised" in gate.warning)
    )


def _tool_missing(gate: QualityGateResult, note: str) -> QualityGateResult:
    """A stage whose tool is missing: skipped, but the test stage is unverified (no test ran)."""
    if gate.gate_name == "test":
        note = f"unverified: no test ran: {note}"
        return gate.model_copy(
            update={"status": "unverified", "warning": _join(gate.warning, note)}
        )
    return gate.model_copy(update={"warning": _join(gate.warning, note)})


def _join(*notes: str) -> str:
    return "; ".join(n for n in notes if n)
