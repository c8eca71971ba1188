"""The validation pipeline: setup, then format -> lint -> typecheck -> test, with fix rounds.

Every stage runs, even after an earlier one failed, so a report (and the Fixer reading
it) sees every problem at once. The gate passes only if no stage failed or timed out
and at least one stage really ran: a skipped stage (disabled, tool missing, nothing to
check) is never counted as passed, and a pipeline that checked nothing fails. With a
base commit, stages are scoped to the change and judged against the base (judge.py);
a tree guard puts back whatever a stage changed outside what it may change.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from bot.clock import Clock, SystemClock
from bot.config import ValidationConfig
from bot.models import QualityGateResult, ValidationReport
from bot.sandbox import Sandbox
from bot.validation.base_judge import judge_note, judged_by_base
from bot.validation.baseline import BaseTree, resolve_commit
from bot.validation.changes import LITTER, TreeGuard, changed_files, exclude
from bot.validation.check import Check
from bot.validation.clean_head import confirm
from bot.validation.discovery import candidates
from bot.validation.environment import StageEnv, build_stage_env
from bot.validation.install import INSTALLER_VAR, plan_setup, run_setup
from bot.validation.profiles import detect_profile
from bot.validation.stage import STAGES, StageSpec

FixCallback = Callable[[ValidationReport], None]
"""Edits the workspace given the failing report (a Fixer agent); the pipeline then re-runs."""
StageCallback = Callable[[QualityGateResult], None]


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
    commands_from: Path | None = None,
) -> ValidationReport:
    """Validate the workspace at `repo`; with `fix`, run the fixers and the fix rounds first.

    `base_sha` turns on the baseline and scopes the stages to the change: problems that
    also happen on that commit are pre-existing and do not fail the gate. Without it the
    whole checkout is checked and every problem counts. `env` is the environment stages
    inherit (default: this process's), allowlisted; `sandbox` is the job's, where every
    stage (setup included) runs; `commands_from` is a tree the repository's own commands
    are read from instead of `repo` (`discovery.candidates`).
    """
    repo, data_dir = repo.resolve(), data_dir.resolve()
    if data_dir.is_relative_to(repo):
        # The default data dir (./.agentbot) sits in the checkout: keep its venvs and
        # worktrees out of git and of the tools that honour .gitignore.
        data_dir.mkdir(parents=True, exist_ok=True)
        ignore = data_dir / ".gitignore"
        if not ignore.exists():
            ignore.write_text("*\n")
    clock = clock or SystemClock()
    start = clock.monotonic()
    pipeline = _Pipeline(
        repo, config, data_dir, base_sha, clock, env or os.environ, on_stage, sandbox
    )
    pipeline.commands_from = commands_from
    report = pipeline.check(autofix=fix)
    rounds = 0
    if fix and fix_callback is not None:
        while not report.passed and rounds < config.fix_rounds:
            fix_callback(report)
            rounds += 1
            report = pipeline.check(autofix=True)
    return report.model_copy(
        update={"fix_rounds_used": rounds, "duration_seconds": round(clock.monotonic() - start, 3)}
    )


class _Pipeline:
    """One workspace; `check` sets up (if due) and runs every stage once."""

    def __init__(
        self,
        repo: Path,
        config: ValidationConfig,
        data_dir: Path,
        base_sha: str | None,
        clock: Clock,
        env: Mapping[str, str],
        on_stage: StageCallback | None,
        sandbox: Sandbox | None,
    ) -> None:
        self.repo, self.config, self.data_dir, self.clock = repo, config, data_dir, clock
        self.base_env, self.on_stage, self.sandbox = env, on_stage, sandbox
        self.base = resolve_commit(repo, base_sha) if base_sha is not None else None
        self.base_asked = base_sha
        self.disabled = frozenset(s for s in STAGES if getattr(config, s) is None)
        self.commands_from: Path | None = None

    def check(self, *, autofix: bool) -> ValidationReport:
        """Setup (if due) and every stage, with the base's judge files (`base_judge`)."""
        with judged_by_base(self.repo, self.base) as altered:
            report = self._check(autofix=autofix)
        if not altered:
            return report
        return report.model_copy(update={"warnings": [*report.warnings, judge_note(altered)]})

    def _check(self, *, autofix: bool) -> ValidationReport:
        """Setup (if due) and every stage; with `autofix`, safe fixers on the change first."""
        env = prepare(
            self.repo, self.config, data_dir=self.data_dir, env=self.base_env,
            base_sha=self.base, clock=self.clock, sandbox=self.sandbox,
            commands_from=self.commands_from,
        )  # fmt: skip
        self._emit(env.setup)
        timeout = self.config.timeout_seconds
        base = (
            BaseTree(env.senv, self.base, timeout=timeout, clock=self.clock) if self.base else None
        )
        check = Check(
            senv=env.senv, specs=env.specs, flags=env.flags, changed=env.changed, base=base,
            base_asked=self.base_asked, guard=TreeGuard(self.repo), timeout=timeout,
            clock=self.clock, emit=self._emit, disabled=self.disabled,
            require_tests=self.config.require_tests,
        )  # fmt: skip
        try:
            report = check.run(env.setup)
            if autofix and not report.passed:
                report = check.autofix(report, env.setup)
            if self.base is not None and not report.passed:
                report = confirm(report, env.senv, self.base, timeout=timeout, clock=self.clock)
        finally:
            if base is not None:
                base.close()
        return report

    def _emit(self, gate: QualityGateResult) -> None:
        if self.on_stage is not None:
            self.on_stage(gate)


@dataclass(frozen=True)
class Prepared:
    """A workspace set up for its stages: the setup gate and what the stages run with."""

    setup: QualityGateResult
    senv: StageEnv
    specs: dict[str, list[StageSpec]]
    flags: frozenset[str]
    changed: list[str] | None


def prepare(
    repo: Path,
    config: ValidationConfig,
    *,
    data_dir: Path,
    env: Mapping[str, str],
    base_sha: str | None = None,
    clock: Clock | None = None,
    sandbox: Sandbox | None = None,
    commands_from: Path | None = None,
) -> Prepared:
    """The setup stage on its own (cached per dependency files), as the stages will use it.

    Callable before an agent starts, so it works in the environment validation checks
    with; a later `run_validation` finds the setup done. Setup never keeps a change to
    a tracked file, and what it installs into the checkout is kept out of git.
    """
    repo, data_dir = repo.resolve(), data_dir.resolve()
    # Detected on every check: a fix round may have added a dependency file.
    profile = detect_profile(repo)
    exclude(repo, LITTER)
    changed = changed_files(repo, base_sha) if base_sha else None
    specs = candidates(repo, config, profile, trusted=commands_from)
    # The first choice of each stage, and its last resort (the default) should it not run.
    top = [s for c in specs.values() for s in dict.fromkeys([*c[:1], *c[-1:]])]
    use_venv = config.setup is not None
    senv = build_stage_env(repo, profile, data_dir, env, use_venv=use_venv, sandbox=sandbox)
    plan = plan_setup(
        senv,
        config.setup,
        top,
        pre_commit=any(s.pre_commit for s in top),
        installer=env.get(INSTALLER_VAR, ""),
    )
    guard = TreeGuard(repo)
    before = guard.snapshot()
    outcome = run_setup(senv, plan, timeout=config.timeout_seconds, clock=clock or SystemClock())
    settled = guard.settle(before, setup=True)
    setup = _setup_gate(outcome.gate, settled.restored, changed, profile.lockfiles)
    senv = build_stage_env(
        repo, profile, data_dir, env, use_venv=use_venv, from_root=outcome.from_root,
        sandbox=sandbox,
    )  # fmt: skip
    return Prepared(setup=setup, senv=senv, specs=specs, flags=outcome.flags, changed=changed)


def _setup_gate(
    gate: QualityGateResult,
    restored: list[str],
    changed: list[str] | None,
    lockfiles: tuple[str, ...],
) -> QualityGateResult:
    """The setup gate with what it tried to change, and a failure the change did not cause."""
    notes = [gate.warning] if gate.warning else []
    if restored:
        notes.append(f"setup modified tracked files, restored: {', '.join(restored[:10])}")
    status = gate.status
    if status == "failed" and changed is not None and not _touches(changed, lockfiles):
        status = "preexisting"
        notes.append(
            "setup fails with the base commit's dependency files too (this change does not"
            " touch them): an environment problem of the repository; running what can run"
        )
    return gate.model_copy(
        update={"status": status, "warning": "; ".join(notes), "restored_files": restored}
    )


def _touches(changed: list[str], lockfiles: tuple[str, ...]) -> bool:
    """True if the change edits a dependency file."""
    return any(Path(f).match(g) for f in changed for g in lockfiles)


def resolve_base(repo: Path, ref: str) -> str | None:
    """The commit SHA a base ref names in `repo` (for `--base`), or None."""
    return resolve_commit(repo, ref)
