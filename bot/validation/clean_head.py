"""A test failure blamed on the change is confirmed on a clean checkout of the head (#25, item 9).

Earlier stages, an earlier round or a reused workspace can leave artefacts the tests trip on
(cargo's `E0464 multiple candidates for rmeta` after check and clippy shared its target
folder). Before the agent is sent back, the test command runs again in a fresh worktree
of the base with the change's files laid over it (its own build folders, nothing left
over): when every test passes there, counted, the failure was the workspace's, not the
change's, and the gate says so instead of failing.
"""

from __future__ import annotations

import os
import secrets
import shutil

from bot.clock import Clock
from bot.models import QualityGateResult, ValidationReport
from bot.validation.changes import changed_files, git
from bot.validation.environment import StageEnv
from bot.validation.parsers import infer_runner, parse_test_counts
from bot.validation.runner import run_command


def passes_on_clean_head(
    senv: StageEnv, base: str, command: str, *, timeout: float, clock: Clock
) -> bool:
    """Whether `command` passes, counted, in a fresh checkout of the base plus the change."""
    repo = senv.repo
    tmp = senv.data_dir / "worktrees" / secrets.token_hex(6) / repo.name
    tmp.parent.mkdir(parents=True, exist_ok=True)
    git(repo, "worktree", "add", "--detach", "--quiet", str(tmp), base, check=False)
    if not tmp.is_dir():
        return False
    try:
        deleted = git(repo, "diff", "--name-only", "-z", "--diff-filter=D", base).split("\0")
        for rel in changed_files(repo, base):
            (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(repo / rel, tmp / rel)
        for rel in filter(None, deleted):
            (tmp / rel).unlink(missing_ok=True)
        env = dict(senv.env)
        if senv.profile.venv:
            dirs = [str(tmp / d) for d in ("src", ".") if (tmp / d).is_dir()]
            env["PYTHONPATH"] = os.pathsep.join(dirs)
        if (repo / "node_modules").is_dir():
            (tmp / "node_modules").symlink_to(repo / "node_modules", target_is_directory=True)
        if senv.profile.name == "rust":
            env["CARGO_TARGET_DIR"] = str(tmp / "target")
        result = run_command(
            command, tmp, env=env, timeout=timeout, clock=clock, sandbox=senv.sandbox,
            writable=[tmp, *(p for p in senv.writable if p != repo)],
            readable=[repo, *senv.readable],
        )  # fmt: skip
        counts = parse_test_counts(infer_runner(command, "auto"), result.output)
        return (
            result.success
            and counts is not None
            and counts.test_count > 0
            and not counts.failed_count
        )
    finally:
        git(repo, "worktree", "remove", "--force", "--force", str(tmp), check=False)
        shutil.rmtree(tmp.parent, ignore_errors=True)
        git(repo, "worktree", "prune", check=False)


def confirm(
    report: ValidationReport, senv: StageEnv, base: str, *, timeout: float, clock: Clock
) -> ValidationReport:
    """The report, its failing test gate passed when a clean checkout of the head passes."""
    gates = report.gates
    failing = [g for g in gates if g.status in ("failed", "timed_out")]
    if [g.gate_name for g in failing] != ["test"] or not failing[0].command:
        return report
    gate = failing[0]
    if gate.status != "failed":
        return report
    if not passes_on_clean_head(senv, base, gate.command, timeout=timeout, clock=clock):
        return report
    note = (
        "failed in the workspace but every test passes on a clean checkout of this change:"
        " an artefact of earlier stages, not the change"
    )
    fixed: QualityGateResult = gate.model_copy(
        update={"status": "passed", "new_issues": [], "warning": "; ".join(
            n for n in (gate.warning, note) if n
        )},
    )  # fmt: skip
    return report.model_copy(
        update={
            "gates": [fixed if g is gate else g for g in gates],
            "passed": True,
            "new_failures": [],
        }
    )
