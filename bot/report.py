"""Text for people: PR bodies, progress comments, step summaries; pure functions of data."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from bot.models import JobResult, JobStatus, ValidationReport

PROGRESS_MARKER = "<!-- agentbot:progress -->"
"""Hidden marker that identifies our sticky progress comment, so re-runs edit, not add."""

PR_MARKER = "<!-- agentbot:pr -->"

StepState = Literal["pending", "running", "done", "failed", "skipped"]

_ICONS: dict[str, str] = {
    "pending": "⏳",
    "running": "🔄",
    "done": "✅",
    "failed": "❌",
    "skipped": "⏭️",
    "passed": "✅",
    "timed_out": "⏱️",
}


@dataclass(frozen=True)
class Step:
    """One line of the progress comment."""

    title: str
    state: StepState = "pending"
    detail: str = ""


def validation_table(report: ValidationReport | None) -> str:
    """A markdown table of the validation stages; says so when validation did not run."""
    if report is None:
        return "_Validation did not run._"
    rows = ["| stage | result | time | notes |", "|---|---|---|---|"]
    for gate in report.gates:
        seconds = gate.command_result.duration_seconds if gate.command_result else 0.0
        notes = gate.warning or ("auto-fixed" if gate.auto_fixed else "")
        if gate.gate_name == "test" and report.tests is not None:
            t = report.tests
            counts = f"{t.passed_count}/{t.test_count} passed"
            notes = f"{counts}; {notes}" if notes else counts
        icon = _ICONS.get(gate.status, "")
        rows.append(
            f"| {gate.gate_name} | {icon} {gate.status} | {seconds:.1f}s | {_cell(notes)} |"
        )
    lines = ["\n".join(rows)]
    if report.preexisting_failures:
        names = ", ".join(f"`{n}`" for n in report.preexisting_failures[:10])
        lines.append(
            f"Pre-existing failures on the base commit (not caused by this change): {names}"
        )
    if report.fix_rounds_used:
        lines.append(f"Fix rounds used: {report.fix_rounds_used}")
    return "\n\n".join(lines)


def usage_line(result: JobResult) -> str:
    """Cost, tokens and turns on one line."""
    u = result.usage
    return (
        f"Cost ${result.cost_usd:.4f} · tokens {u.input_tokens:,} in / {u.output_tokens:,} out"
        f" (cache {u.cache_read_input_tokens:,} read, {u.cache_creation_input_tokens:,} written)"
        f" · {result.turns} turns"
    )


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _files(files: Sequence[str]) -> str:
    if not files:
        return "_none_"
    return "\n".join(f"- `{f}`" for f in files)


def fix_pr_body(result: JobResult) -> str:
    """The body of an IssueFixer pull request."""
    number = result.job.number
    parts = [
        PR_MARKER,
        f"Fixes #{number}",
        "## Summary",
        result.summary or "_No summary given._",
    ]
    if result.root_cause:
        parts += ["## Root cause", result.root_cause]
    parts += [
        "## Validation",
        validation_table(result.validation),
        "## Files changed",
        _files(result.files_changed),
        "## Cost",
        usage_line(result),
        f"_Opened by agentbot for @{result.job.actor}._" if result.job.actor else "",
    ]
    return "\n\n".join(p for p in parts if p) + "\n"


def progress_comment(title: str, steps: Sequence[Step], *, footer: str = "") -> str:
    """The sticky progress comment: a marker, a title and a checklist of steps."""
    lines = [PROGRESS_MARKER, f"### {title}", ""]
    for step in steps:
        detail = f" — {step.detail}" if step.detail else ""
        lines.append(f"- {_ICONS[step.state]} {step.title}{detail}")
    if footer:
        lines += ["", footer]
    return "\n".join(lines) + "\n"


def failure_comment(result: JobResult) -> str:
    """Why a job failed, what was kept, and what to do next."""
    parts = [f"agentbot could not finish this: {result.error or result.summary}"]
    gate = result.validation.failing_gate if result.validation else None
    if gate is not None:
        output = gate.command_result.output[-1500:] if gate.command_result else ""
        parts.append(f"The `{gate.gate_name}` stage still fails:\n\n```\n{output}\n```")
    if result.branch:
        parts.append(f"The work so far is kept on branch `{result.branch}`.")
    parts.append(usage_line(result))
    return "\n\n".join(parts) + "\n"


def needs_info_comment(question: str, actor: str = "") -> str:
    """The question the agent needs answered before it can fix the issue."""
    who = f"@{actor} " if actor else ""
    return (
        f"{who}agentbot needs more information before it can fix this:\n\n> "
        + question.replace("\n", "\n> ")
        + "\n\nAnswer in a comment, then comment `/fix` or re-apply the label.\n"
    )


def step_summary(result: JobResult) -> str:
    """The markdown written to `$GITHUB_STEP_SUMMARY` in Action mode."""
    outcome = {
        JobStatus.SUCCESS: "✅ success",
        JobStatus.FAILED: "❌ failed",
        JobStatus.NEUTRAL: "⏭️ nothing to do",
        JobStatus.NEEDS_INFO: "❓ needs information",
    }[result.status]
    target = f"{result.job.repo}#{result.job.number}" if result.job.number else result.job.repo
    lines = [
        f"## agentbot {result.job.kind.value}: {outcome}",
        "",
        f"- Target: {target}",
    ]
    if result.pr_url:
        lines.append(f"- Pull request: {result.pr_url}")
    if result.summary:
        lines.append(f"- Summary: {result.summary}")
    if result.error:
        lines.append(f"- Error: {result.error}")
    lines.append(f"- {usage_line(result)}")
    lines += ["", "### Validation", "", validation_table(result.validation)]
    if result.items:
        lines += ["", "### Items", "", "| item | outcome | detail |", "|---|---|---|"]
        for item in result.items:
            lines.append(
                f"| {_cell(str(item.get('id', '')))} | {_cell(str(item.get('status', '')))}"
                f" | {_cell(str(item.get('detail', '')))} |"
            )
    return "\n".join(lines) + "\n"
