"""Rendering of PR bodies, comments and step summaries, checked against snapshot files."""

from __future__ import annotations

from datetime import UTC, datetime

from bot.models import (
    CommandResult,
    Job,
    JobKind,
    JobResult,
    JobStatus,
    QualityGateResult,
    TestResult,
    Usage,
    ValidationReport,
)
from bot.report import (
    PROGRESS_MARKER,
    Step,
    failure_comment,
    fix_pr_body,
    needs_info_comment,
    progress_comment,
    step_summary,
    validation_table,
)
from tests.snapshot import assert_snapshot

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _cmd(name: str, ok: bool, out: str = "") -> CommandResult:
    return CommandResult(
        command=[name], exit_code=0 if ok else 1, output=out, success=ok, duration_seconds=1.25
    )


def _report(passed: bool) -> ValidationReport:
    tests = TestResult(
        passed=passed,
        test_count=4,
        passed_count=4 if passed else 3,
        failed_count=0 if passed else 1,
    )
    return ValidationReport(
        profile="python",
        gates=[
            QualityGateResult(
                gate_name="format",
                status="passed",
                command_result=_cmd("ruff", True),
                command="pre-commit run --color never --files src/x.py",
                source="pre-commit",
            ),
            QualityGateResult(
                gate_name="lint",
                status="passed",
                auto_fixed=True,
                preexisting_count=54,
                command="ruff check --no-fix --output-format json src/x.py",
                source="default",
            ),
            QualityGateResult(
                gate_name="typecheck", status="skipped", warning="mypy not installed"
            ),
            QualityGateResult(
                gate_name="test",
                status="passed" if passed else "failed",
                command_result=_cmd("pytest", passed, "FAILED test_x.py::test_b - assert 1 == 2"),
                command="pytest -v",
                source="tox (py)",
                new_issues=[] if passed else ["test_x.py::test_b"],
            ),
        ],
        tests=tests,
        preexisting_failures=["test_old.py::test_flaky"],
        passed=passed,
    )


def _result(status: JobStatus, passed: bool = True) -> JobResult:
    return JobResult(
        job=Job(kind=JobKind.FIX_ISSUE, repo="octo/app", number=7, actor="alice"),
        status=status,
        summary="Handle empty input in parse()",
        root_cause="parse() indexed [0] without checking for an empty list.",
        error="" if passed else "validation failed after 3 fix rounds",
        pr_url="https://github.com/octo/app/pull/8" if passed else "",
        branch="agentbot/fix-issue-7",
        files_changed=["app/parse.py", "tests/test_parse.py"],
        validation=_report(passed),
        usage=Usage(input_tokens=12000, output_tokens=900, cache_read_input_tokens=30000),
        cost_usd=0.0612,
        turns=6,
        started_at=T0,
    )


def test_fix_pr_body_snapshot() -> None:
    body = fix_pr_body(_result(JobStatus.SUCCESS))
    assert body.startswith("<!-- agentbot:pr -->\n\nFixes #7")
    assert_snapshot("fix_pr_body.md", body)


def test_failure_comment_snapshot() -> None:
    text = failure_comment(_result(JobStatus.FAILED, passed=False))
    assert "`test` stage still fails" in text
    assert_snapshot("failure_comment.md", text)


def test_step_summary_snapshot() -> None:
    res = _result(JobStatus.SUCCESS).model_copy(
        update={"items": [{"id": "T001", "status": "done", "detail": "feat(T001): x | y"}]}
    )
    assert_snapshot("step_summary.md", step_summary(res))


def test_progress_comment_has_marker_and_states() -> None:
    text = progress_comment(
        "agentbot is fixing #7",
        [Step("Read the issue", "done"), Step("Write a fix", "running"), Step("Validate")],
    )
    assert text.startswith(PROGRESS_MARKER)
    assert "- ✅ Read the issue" in text
    assert "- 🔄 Write a fix" in text
    assert "- ⏳ Validate" in text


def test_validation_table_without_report_and_skipped_is_not_passed() -> None:
    assert validation_table(None) == "_Validation did not run._"
    table = validation_table(_report(True))
    assert "| typecheck | ⏭️ skipped |  |  |  | 0.0s | mypy not installed |" in table
    assert "4/4 passed" in table
    # Per stage: the command, where it came from, new vs pre-existing problems.
    assert (
        "| lint | ✅ passed | `ruff check --no-fix --output-format json src/x.py` | default"
        in table
    )
    assert "| 0 new · 54 pre-existing |" in table
    failed = validation_table(_report(False))
    assert "| test | ❌ failed | `pytest -v` | tox (py) | 1 new · 0 pre-existing |" in failed
    assert "New problems (these block):\n- test: `test_x.py::test_b`" in failed


def test_needs_info_comment_quotes_question() -> None:
    text = needs_info_comment("Which version?\nAnd which OS?", "bob")
    assert text.startswith("@bob ")
    assert "> Which version?\n> And which OS?" in text
