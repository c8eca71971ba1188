"""Text for people: commits, PR titles and bodies, comments, step summaries; pure functions."""

# Over 300 lines: every text for people in one pure module, its wording reviewed as one.

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from bot.models import JobKind, JobResult, JobStatus, ValidationReport
from bot.outbound.paths import TEST_PATH
from bot.outbound.structure import defuse_closing, model_text
from bot.tasks_md import TaskPlan
from bot.verdict_text import no_tests_line, unproven_section, unverified_section

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
    "preexisting": "🟨",
    "unverified": "⚠️",
}


@dataclass(frozen=True)
class Step:
    """One line of the progress comment."""

    title: str
    state: StepState = "pending"
    detail: str = ""


def validation_table(report: ValidationReport | None) -> str:
    """A markdown table of the validation stages: command, origin, new vs pre-existing problems."""
    if report is None:
        return "_Validation did not run._"
    rows = [
        "| stage | result | command | from | problems | time | notes |",
        "|---|---|---|---|---|---|---|",
    ]
    for gate in report.gates:
        seconds = gate.command_result.duration_seconds if gate.command_result else 0.0
        notes = gate.warning or ("auto-fixed" if gate.auto_fixed else "")
        if gate.gate_name == "test" and report.tests is not None:
            t = report.tests
            counts = f"{t.passed_count}/{t.test_count} passed"
            notes = f"{counts}; {notes}" if notes else counts
        problems = ""
        if gate.status == "failed" or gate.preexisting_count:
            problems = f"{len(gate.new_issues)} new · {gate.preexisting_count} pre-existing"
        icon = _ICONS.get(gate.status, "")
        if report.unverified and gate.status == "passed":
            icon = "☑️"  # no green tick beside a change whose tests could not run
        command = f"`{_cell(_short(gate.command))}`" if gate.command else ""
        rows.append(
            f"| {gate.gate_name} | {icon} {gate.status} | {command} | {gate.source}"
            f" | {problems} | {seconds:.1f}s | {_cell(notes)} |"
        )
    lines = ["\n".join(rows)]
    new = [
        f"- {gate.gate_name}: `{_cell(i)}`" for gate in report.gates for i in gate.new_issues[:10]
    ]
    if new:
        lines.append("New problems (these block):\n" + "\n".join(new))
    if report.preexisting_failures:
        names = ", ".join(f"`{n}`" for n in report.preexisting_failures[:10])
        lines.append(
            f"Pre-existing failures on the base commit (not caused by this change): {names}"
        )
    if report.fix_rounds_used:
        lines.append(f"Fix rounds used: {report.fix_rounds_used}")
    lines += [f"_{_cell(w)}_" for w in report.warnings]
    return "\n\n".join(lines)


def _short(command: str, limit: int = 80) -> str:
    """A long command (many changed files) cut to fit a table cell."""
    return command if len(command) <= limit else command[: limit - 1] + "…"


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


# --- commits and pull requests -----------------------------------------------------------


def commit_type(labels: Sequence[str]) -> str:
    """Conventional commit type from the issue's labels."""
    names = {label.lower() for label in labels}
    if "bug" in names:
        return "fix"
    if names & {"enhancement", "feature"}:
        return "feat"
    if names & {"docs", "documentation"}:
        return "docs"
    return "fix"


def commit_scope(files: Sequence[str]) -> str:
    """A scope when every non-test file shares one top-level folder, else none."""
    tops = {f.split("/", 1)[0] for f in files if "/" in f and not TEST_PATH.search(f)}
    loose = [f for f in files if "/" not in f and not TEST_PATH.search(f)]
    scope = tops.pop() if len(tops) == 1 and not loose else ""
    # A folder name is the change's text: only a plain word may stand in the subject (a
    # folder `fixes #3` would make the commit close issue 3).
    return scope if re.fullmatch(r"[\w.-]{1,40}", scope) else ""


def subject_line(text: str, limit: int = 72) -> str:
    """First line of `text`, trimmed to `limit` characters for a commit subject."""
    line = text.strip().splitlines()[0] if text.strip() else "update"
    line = line.rstrip(".")
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def fix_commit_message(
    *, number: int, summary: str, title: str, labels: Sequence[str], files: Sequence[str]
) -> str:
    """The IssueFixer's one commit: `type(scope): subject`, the summary, `Fixes #N`."""
    scope = commit_scope(files)
    head = f"{commit_type(labels)}({scope})" if scope else commit_type(labels)
    summary = model_text(summary)
    subject = f"{head}: {subject_line(summary or model_text(title), 60)}"
    return f"{subject}\n\n{summary}\n\nFixes #{number}\n"


def task_type(description: str) -> str:
    """Conventional type from a task's text when obvious, else feat."""
    first = description.lower().split()[0] if description.split() else ""
    if first in {"test", "tests", "add tests", "write"} or "test" in first:
        return "test"
    if first in {"fix", "repair"}:
        return "fix"
    if first in {"document", "docs", "update readme"}:
        return "docs"
    if first in {"refactor", "rename", "extract"}:
        return "refactor"
    return "feat"


def task_commit_message(task_id: str, description: str) -> str:
    """One Implementer task's commit: `type(T012): task text`."""
    return f"{task_type(description)}({task_id}): {subject_line(model_text(description), 60)}"


def implement_pr_title(branch: str) -> str:
    """The title of a pull request the Implementer opens for `branch`."""
    return f"feat: implement {branch.rsplit('/', 1)[-1]}"


def session_commit_message(session: str) -> str:
    """The commit that adds a session folder under `.agents-work/` (seed 004)."""
    return f"chore(agents): session artifacts {session}\n"


CHECKLIST_MARKER = "<!-- agentbot:tasks -->"

TaskState = tuple[str, str]
"""(status, detail) of one task: done, failed or skipped, and why."""


def checklist_body(
    plan: TaskPlan, states: Mapping[str, TaskState], *, tries: int, concerns: Sequence[str] = ()
) -> str:
    """The Implementer PR body: the whole task list with its state, failures explained."""
    lines = [CHECKLIST_MARKER, "## Tasks", ""]
    for t in plan.tasks:
        status, detail = states.get(t.id, ("", ""))
        if t.done or status == "done":
            lines.append(f"- [x] {t.id} {t.description}")
        elif status == "failed":
            lines.append(
                f"- [ ] {t.id} {t.description} — ❌ failed after {tries} tries: {detail[:200]}"
            )
        elif status == "skipped":
            lines.append(f"- [ ] {t.id} {t.description} — ⏭️ skipped: {detail}")
        else:
            lines.append(f"- [ ] {t.id} {t.description}")
    if concerns:
        lines += ["", *security_section(concerns)]
    return defuse_closing("\n".join(lines)) + "\n"


def security_section(concerns: Sequence[str]) -> list[str]:
    """The PR body section naming the agents' security concerns (seed 004 gate)."""
    return [
        "## ⚠️ Security review needed",
        "",
        "The agent raised these concerns; this pull request stays a draft until a person"
        " has looked:",
        "",
        *(f"- {_cell(c)}" for c in concerns),
    ]


def fix_pr_body(result: JobResult) -> str:
    """The body of an IssueFixer pull request."""
    number = result.job.number
    parts = [
        "## Summary",
        result.summary or "_No summary given._",
    ]
    if result.security_concerns:
        parts.append("\n".join(security_section(result.security_concerns)))
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
    # Only the bot's own `Fixes #N` closes anything; the rest holds model text.
    rest = defuse_closing("\n\n".join(p for p in parts if p))
    # What could not be verified opens the body, above everything else.
    unproven = unproven_section(result.error) if result.status == JobStatus.UNPROVEN else []
    top = "\n\n".join(
        p
        for p in (
            *unverified_section(result.validation),
            *unproven,
            no_tests_line(result.validation),
        )
        if p
    )
    return "\n\n".join(p for p in (PR_MARKER, top, f"Fixes #{number}", rest) if p) + "\n"


def pr_footer(result: JobResult, *, failed: str = "") -> str:
    """The progress comment's last words once the pull request is open."""
    if failed:
        return f"Opened a draft PR {result.pr_url} for review: {failed}.\n\n{usage_line(result)}"
    return f"Pull request: {result.pr_url}\n\n{usage_line(result)}"


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
        JobStatus.UNVERIFIED: "⚠️ unverified (draft: the tests could not run)",
        JobStatus.UNPROVEN: "⚠️ unproven (draft: the change's tests were not shown to fail first)",
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
    if result.validation is None and result.job.kind == JobKind.TDD and result.items:
        # TDD's gate is its runner: the suite ran at every RED, GREEN and REFACTOR.
        gate = "_The test suite ran at every step of every cycle (the TDD runner's verdicts)._"
        lines += ["", "### Validation", "", gate]
    else:
        lines += ["", "### Validation", "", validation_table(result.validation)]
    if result.items:
        lines += ["", "### Items", "", "| item | outcome | detail |", "|---|---|---|"]
        for item in result.items:
            lines.append(
                f"| {_cell(str(item.get('id', '')))} | {_cell(str(item.get('status', '')))}"
                f" | {_cell(str(item.get('detail', '')))} |"
            )
    return "\n".join(lines) + "\n"
