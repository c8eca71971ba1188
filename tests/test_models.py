"""Models: JSON round-trips, invariants, timezone-aware times."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from bot.models import (
    AgentOutput,
    AgentResult,
    AgentRole,
    AgentStatus,
    Job,
    JobKind,
    JobResult,
    JobStatus,
    LLMProviderConfig,
    TestResult,
    Usage,
    ValidationReport,
)


def test_job_result_round_trips() -> None:
    job = Job(kind=JobKind.FIX_ISSUE, repo="o/r", number=7, actor="alice", params={"x": 1})
    res = JobResult(
        job=job,
        status=JobStatus.SUCCESS,
        usage=Usage(input_tokens=3, output_tokens=4),
        validation=ValidationReport(profile="python", passed=True),
    )
    again = JobResult.model_validate_json(res.model_dump_json())
    assert again == res
    assert again.started_at.tzinfo is not None
    assert job.key == "o/r#7"
    assert Job(kind=JobKind.IMPLEMENT, repo="o/r", ref="feat").key == "o/r@feat"


def test_agent_result_round_trips() -> None:
    out = AgentOutput(status=AgentStatus.OK, summary="done")
    res = AgentResult(
        role=AgentRole.ISSUE_FIXER,
        success=True,
        message="ok",
        output=out,
        files_modified=[Path("a.py")],
    )
    assert AgentResult.model_validate_json(res.model_dump_json()) == res


def test_test_result_counts_must_add_up() -> None:
    TestResult(passed=False, test_count=3, passed_count=2, failed_count=1)
    with pytest.raises(ValidationError, match="test_count"):
        TestResult(passed=True, test_count=3, passed_count=3, failed_count=1)


def test_usage_adds_and_exit_codes() -> None:
    u = Usage(input_tokens=1, cache_read_input_tokens=2) + Usage(output_tokens=5)
    assert (u.input_tokens, u.output_tokens, u.cache_read_input_tokens) == (1, 5, 2)
    assert u.total_tokens == 8
    # unverified: the draft was opened, its doubt is in the `status` output (exit 0).
    assert [s.exit_code for s in JobStatus] == [0, 1, 78, 0, 0, 0]  # unproven: 0, as unverified


def test_provider_default_urls() -> None:
    assert LLMProviderConfig(provider="deepseek", model="m").base_url == (
        "https://api.deepseek.com/v1"
    )
    with pytest.raises(ValidationError, match="custom"):
        LLMProviderConfig(provider="custom", model="m")


def test_agent_output_rejects_unknown_status() -> None:
    with pytest.raises(ValidationError):
        AgentOutput.model_validate({"status": "MAYBE", "summary": "x"})
    with pytest.raises(ValidationError):
        AgentOutput.model_validate({"status": "OK", "summary": ""})
