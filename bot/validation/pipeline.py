"""The validation pipeline: setup, then format -> lint -> typecheck -> test, with fix rounds.

Every stage runs, even after an earlier one failed, so a report (and the Fixer reading
it) sees every problem at once. The gate passes only if no stage failed or timed out
and at least one stage really ran: a skipped stage (disabled, tool missing, nothing to
check) is never counted as passed, and a pipeline that checked nothing fails.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path

from bot.clock import Clock, SystemClock
from bot.config import ValidationConfig
from bot.models import (
    CommandResult,
    GateName,
    GateStatus,
    QualityGateResult,
    TestResult,
    ValidationReport,
)
from bot.sandbox import Sandbox
from bot.validation.baseline import Baseline, resolve_commit, run_baseline
from bot.validation.environment import StageEnv, build_stage_env, run_setup
from bot.validation.parsers import infer_runner, parse_test_counts, says_no_tests
from bot.validation.profiles import Profile, detect_profile
from bot.validation.runner import clip, missing_in_output, missing_program, run_command

FixCallback = Callable[[ValidationReport], None]
"""Edits the workspace given the failing report (a Fixer agent); the pipeline then re-runs."""
StageCallback = Callable[[QualityGateResult], None]

DISABLED = "disabled in config"
STAGES: tuple[GateName, ...] = ("format", "lint", "typecheck", "test")
FIXABLE = ("format", "lint")


def run_validation(
    repo: Path,
    config: ValidationConfig,
    *,
    data_dir: Path,
    base_sha: str | None = None,
    fix: bool = False,
    fix_callback: FixCallback | None = None,
    clock: Clock | None = None,
    env: Mapping[str, str] | None = None,
    on_stage: StageCallback | None = None,
    sandbox: Sandbox | None = None,
) -> ValidationReport:
    """Validate the workspace at `repo`; with `fix`, run the fixers and the fix rounds first.

    `base_sha` turns on the baseline: test failures that also happen on that commit are
    `preexisting_failures` and do not fail the gate; the others are `new_failures`.
    `env` is the environment stages inherit (default: this process's), allowlisted;
    `sandbox` is the job's, where every stage (setup included) runs.
    """
    repo, data_dir = repo.resolve(), data_dir.resolve()
    if data_dir.is_relative_to(repo):
        # The default data dir (./.agentbot) sits in the checkout: keep its venvs and
        # worktrees out of git and of the tools that honour .gitignore.
        data_dir.mkdir(parents=True, exist_ok=True)
        ignore = data_dir / ".gitignore"
        if not ignore.exists():
            ignore.write_text("*\n")
    pipeline = _Pipeline(
        repo,
        config,
        data_dir=data_dir,
        base_sha=base_sha,
        clock=clock or SystemClock(),
        env=os.environ if env is None else env,
        on_stage=on_stage,
        sandbox=sandbox,
    )
    start = pipeline.clock.monotonic()
    report = pipeline.check(autofix=fix)
    rounds = 0
    if fix and fix_callback is not None:
        while not report.passed and rounds < config.fix_rounds:
            fix_callback(report)
            rounds += 1
            report = pipeline.check(autofix=True)
    return report.model_copy(
        update={
            "fix_rounds_used": rounds,
            "duration_seconds": round(pipeline.clock.monotonic() - start, 3),
        }
    )


class _Pipeline:
    """One workspace's stages; `check` runs them all once and returns the report."""

    def __init__(
        self,
        repo: Path,
        config: ValidationConfig,
        *,
        data_dir: Path,
        base_sha: str | None,
        clock: Clock,
        env: Mapping[str, str],
        on_stage: StageCallback | None,
        sandbox: Sandbox | None = None,
    ) -> None:
        self.repo, self.config, self.data_dir, self.clock = repo, config, data_dir, clock
        self.base_sha, self.base_env, self.on_stage = base_sha, env, on_stage
        self.sandbox = sandbox
        self.baseline: Baseline | None = None

    def command(self, profile: Profile, stage: str) -> tuple[str | None, str]:
        """The command a stage runs and, when none, why."""
        value: str | None = getattr(self.config, stage)
        if value is None:
            return None, DISABLED
        if value == "default":
            return profile.command(stage), profile.note(stage)
        return value, ""

    def check(self, *, autofix: bool) -> ValidationReport:
        """Setup (if due) and every stage; with `autofix`, fixers run on failing format/lint."""
        # Detected on every check: a fix round may have added a dependency file.
        profile = detect_profile(self.repo)
        setup_cmd, why = self.command(profile, "setup")
        senv = build_stage_env(
            self.repo,
            profile,
            self.data_dir,
            self.base_env,
            use_venv=setup_cmd is not None,
            sandbox=self.sandbox,
        )
        setup = run_setup(
            senv, setup_cmd, why_none=why, timeout=self.config.timeout_seconds, clock=self.clock
        )
        self._emit(setup)
        report = self._stages(profile, senv, setup)
        if autofix and not report.passed and self._run_fixers(profile, senv, report):
            before = {g.gate_name: g.status for g in report.gates}
            report = self._stages(profile, senv, setup)
            gates = [
                g.model_copy(update={"auto_fixed": True})
                if g.passed and before.get(g.gate_name) == "failed" and g.gate_name in FIXABLE
                else g
                for g in report.gates
            ]
            report = report.model_copy(update={"gates": gates})
        return report

    def _stages(
        self, profile: Profile, senv: StageEnv, setup: QualityGateResult
    ) -> ValidationReport:
        gates = [setup]
        tests: TestResult | None = None
        new: list[str] = []
        pre: list[str] = []
        for stage in STAGES:
            gate, stage_tests, stage_new, stage_pre = self._stage(profile, senv, stage, setup)
            if stage == "test":
                tests, new, pre = stage_tests, stage_new, stage_pre
            gates.append(gate)
            self._emit(gate)
        ran = [g for g in gates[1:] if g.command_result is not None and g.status != "skipped"]
        failed = any(g.status in ("failed", "timed_out") for g in gates)
        return ValidationReport(
            profile=profile.name,
            gates=gates,
            tests=tests,
            new_failures=new,
            preexisting_failures=pre,
            passed=bool(ran) and not failed,
            warnings=[] if ran else ["nothing was validated: every stage was skipped"],
        )

    def _stage(
        self, profile: Profile, senv: StageEnv, name: GateName, setup: QualityGateResult
    ) -> tuple[QualityGateResult, TestResult | None, list[str], list[str]]:
        stage = name
        command, why = self.command(profile, stage)
        if command is None:
            return QualityGateResult(gate_name=name, status="skipped", warning=why), None, [], []
        if setup.status in ("failed", "timed_out"):
            skipped = QualityGateResult(gate_name=name, status="skipped", warning="setup failed")
            return skipped, None, [], []
        missing = missing_program(command, cwd=self.repo, env=senv.env)
        if missing is not None:
            warning = f"tool missing: `{missing}` is not installed (not on PATH)"
            return (
                QualityGateResult(gate_name=name, status="skipped", warning=warning),
                None,
                [],
                [],
            )
        timeout = self.config.timeout_seconds
        result = run_command(
            command,
            self.repo,
            env=senv.env,
            timeout=timeout,
            clock=self.clock,
            sandbox=senv.sandbox,
            writable=senv.writable,
        )
        kept = result.model_copy(update={"output": clip(result.output)})
        if result.timed_out:
            gate = QualityGateResult(
                gate_name=name, status="timed_out", command_result=kept,
                warning=f"killed after {timeout}s (process group)",
            )  # fmt: skip
            return gate, None, [], []
        if (tool := missing_in_output(result)) is not None:
            warning = f"tool missing: `{tool}` is not installed"
            gate = QualityGateResult(
                gate_name=name, status="skipped", command_result=kept, warning=warning
            )
            return gate, None, [], []
        if stage == "test":
            return self._test_gate(profile, senv, command, result, kept)
        status: GateStatus = "passed" if result.success else "failed"
        return QualityGateResult(gate_name=name, status=status, command_result=kept), None, [], []

    def _test_gate(
        self,
        profile: Profile,
        senv: StageEnv,
        command: str,
        result: CommandResult,
        kept: CommandResult,
    ) -> tuple[QualityGateResult, TestResult | None, list[str], list[str]]:
        runner = infer_runner(command, profile.parser)
        counted = parse_test_counts(runner, result.output)
        tests = (
            counted.model_copy(
                update={
                    "passed": result.success and counted.failed_count == 0,
                    "duration_seconds": result.duration_seconds,
                }
            )
            if counted is not None
            else None
        )
        failing = tests.failed_tests if tests else []
        zero = tests is not None and tests.test_count == 0 and not failing
        if (zero and result.success) or ((zero or tests is None) and says_no_tests(result.output)):
            skipped = f" ({tests.skipped_count} skipped)" if tests and tests.skipped_count else ""
            gate = QualityGateResult(
                gate_name="test", status="passed", command_result=kept,
                warning=f"no tests: the test runner found no test to run{skipped}",
            )  # fmt: skip
            return gate, tests, [], []
        if result.success and not failing:
            warning = "" if tests else f"test counts not recognised ({runner} output)"
            gate = QualityGateResult(
                gate_name="test", status="passed", command_result=kept, warning=warning
            )
            return gate, tests, [], []
        gate = QualityGateResult(
            gate_name="test", status="failed", command_result=kept, issues_found=failing
        )
        if self.base_sha is None or not failing:
            return gate, tests, [], []
        base = self._baseline(senv, command, runner)
        if base is None or base.tests is None:
            what = self.base_sha if base is None else f"{base.sha[:12]} (tests not counted)"
            warning = f"baseline unavailable on {what}: every failure counts as new"
            return gate.model_copy(update={"warning": warning}), tests, failing, []
        new = [t for t in failing if t not in base.failing]
        pre = [t for t in failing if t in base.failing]
        if not new:
            warning = (
                f"{len(pre)} failing test(s) also fail on the base commit {base.sha[:12]};"
                " not introduced by this change"
            )
            gate = gate.model_copy(update={"status": "passed", "warning": warning})
        return gate, tests, new, pre

    def _baseline(self, senv: StageEnv, command: str, runner: str) -> Baseline | None:
        if self.baseline is None and self.base_sha is not None:
            sha = resolve_commit(self.repo, self.base_sha)
            if sha is None:
                return None
            self.baseline = run_baseline(
                senv,
                sha,
                command=command,
                runner=runner,
                timeout=self.config.timeout_seconds,
                clock=self.clock,
            )
        return self.baseline

    def _run_fixers(self, profile: Profile, senv: StageEnv, report: ValidationReport) -> bool:
        """Run the format/lint fixers of the failing stages the profile knows; True if any ran."""
        ran = False
        failing = {g.gate_name for g in report.gates if g.status == "failed"}
        # Lint fixes first: removing an import can leave code the formatter then tidies.
        # The files were formatted before, so the formatter then touches only what lint fixed.
        for name in ("lint", "format"):
            if name not in failing and not (name == "format" and ran):
                continue
            # A configured command has no known fixer: only the profile's own pairs are safe.
            fixer = profile.fixer(name)
            if getattr(self.config, name) != "default" or fixer is None:
                continue
            run_command(
                fixer,
                self.repo,
                env=senv.env,
                timeout=self.config.timeout_seconds,
                clock=self.clock,
                sandbox=senv.sandbox,
                writable=senv.writable,
            )
            ran = True
        return ran

    def _emit(self, gate: QualityGateResult) -> None:
        if self.on_stage is not None:
            self.on_stage(gate)


def resolve_base(repo: Path, ref: str) -> str | None:
    """The commit SHA a base ref names in `repo` (for `--base`), or None."""
    return resolve_commit(repo, ref)
