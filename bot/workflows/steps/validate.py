"""The validation step of a workflow: the repository's gate, with repair rounds on failure."""

from __future__ import annotations

from collections.abc import Callable

from bot.git import Workspace
from bot.models import ValidationReport
from bot.ports import JobEnv
from bot.validation import run_validation


def validate(
    env: JobEnv, ws: Workspace, base_sha: str, repair: Callable[[ValidationReport], None]
) -> ValidationReport:
    """Validate `ws` against `base_sha` (only new failures count); `repair` runs per fix round."""
    return run_validation(
        ws.path,
        env.config.validation,
        data_dir=env.data_dir,
        base_sha=base_sha,
        fix=True,
        fix_callback=repair,
        clock=env.clock,
        sandbox=env.sandbox,
        commands_from=env.commands_from,
    )


def unverified_stop(report: ValidationReport) -> str:
    """Why a passing gate cannot be accepted: the stages it could not verify (else empty)."""
    if not report.passed or not report.unverified:
        return ""
    stages = "; ".join(f"{g.gate_name}: {g.warning}" for g in report.unverified)
    return f"the gate is unverified (the change was not tested): {stages}"
