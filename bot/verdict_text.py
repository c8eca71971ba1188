"""What people read about a change whose tests could not run, or a repository without tests."""

from __future__ import annotations

from bot.models import NO_TESTS, ValidationReport

__all__ = [
    "NO_TESTS",
    "no_tests_line",
    "unproven_section",
    "unverified_reason",
    "unverified_section",
]
UNVERIFIED_TITLE = "⚠️ Unverified: the tests could not run"


def unverified_reason(report: ValidationReport | None) -> str:
    """One line: which stages could not run and why (empty when every stage was verified)."""
    if report is None:
        return ""
    return "; ".join(f"{g.gate_name}: {g.warning}" for g in report.unverified)


def unverified_section(report: ValidationReport | None) -> list[str]:
    """The heading and lines a draft PR opens with when a stage could not be verified."""
    if report is None or not report.unverified:
        return []
    lines = [
        f"## {UNVERIFIED_TITLE}",
        "This change was **not** validated: no test of the repository was counted. Check it by"
        " hand, or let the stage run and re-run the job.",
    ]
    for gate in report.unverified:
        command = f" (`{gate.command}`)" if gate.command else ""
        lines.append(f"- **{gate.gate_name}**{command}: {gate.warning}")
    example = next((g.command for g in report.unverified if g.command), "") or "<your test command>"
    lines.append(
        "To let it run, name the commands in `.github/agentbot.yml`, for example:"
        f' `validation: {{setup: "<install command>", test: "{example}"}}`'
    )
    return ["\n".join(lines)]


def no_tests_line(report: ValidationReport | None) -> str:
    """A plain sentence when the repository has no tests at all, else empty."""
    if report is None:
        return ""
    test = next((g for g in report.gates if g.gate_name == "test"), None)
    if test is None or not test.warning.startswith(NO_TESTS):
        return ""
    return f"**No tests in this repository**: nothing here was tested; {test.warning}."


UNPROVEN_TITLE = "⚠️ Unproven: the change's tests were not shown to catch the bug"


def unproven_section(reason: str) -> list[str]:
    """The heading and line a draft PR opens with when the gate passed but the proof did not."""
    return [
        f"## {UNPROVEN_TITLE}",
        f"The gate passed, but {reason}: a test that fails without this change and passes with"
        " it would prove the fix. See the proof below; review it by hand before merging.",
    ]
