"""The agent loop against a ScriptedLLM: edits, budgets, failures, the finish contract."""

from __future__ import annotations

import itertools
import subprocess
from pathlib import Path
from typing import Any

import pytest

from bot.agent import run_agent
from bot.clock import FakeClock
from bot.cost import BudgetTracker
from bot.errors import AgentExecutionError, LimitsExceeded, LLMError
from bot.models import AgentRole, AgentStatus, SessionStatusFile, Usage
from bot.roles import FIXER, ISSUE_FIXER, Role
from bot.session import Session
from bot.tools import Toolbox
from tests.fakes.scripted_llm import DEFAULT_USAGE, ScriptedLLM, finish, reply, tool_use

EDIT = "str_replace_based_edit_tool"
MODEL = "claude-sonnet-4-5"
PRICES = {MODEL: {"input": 3.0, "output": 15.0, "cache_write": 3.75, "cache_read": 0.3}}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t"}
    env |= {"GIT_COMMITTER_EMAIL": "t@e", "PATH": "/usr/bin:/bin"}
    for args in (["init", "-q"], ["add", "."], ["commit", "-qm", "init"]):
        subprocess.run(["git", *args], cwd=root, env=env, check=True)
    return root


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


def budget_for(clock: FakeClock, **limits: Any) -> BudgetTracker:
    args: dict[str, Any] = {"max_turns": 50, "max_usd": 10.0, "max_minutes": 30.0} | limits
    return BudgetTracker(model=MODEL, clock=clock, prices=PRICES, **args)


def run(
    llm: ScriptedLLM,
    repo: Path,
    clock: FakeClock,
    *,
    role: Role = ISSUE_FIXER,
    budget: BudgetTracker | None = None,
    session: Session | None = None,
    **kwargs: Any,
) -> Any:
    return run_agent(
        role=role,
        task="Fix issue #1: add() subtracts.",
        workspace=repo,
        llm=llm,
        budget=budget or budget_for(clock),
        clock=clock,
        session=session,
        **kwargs,
    )


def view(path: str) -> Any:
    return tool_use(EDIT, {"command": "view", "path": path})


USAGES = [
    Usage(input_tokens=1200, output_tokens=80, cache_creation_input_tokens=1000),
    Usage(input_tokens=300, output_tokens=120, cache_read_input_tokens=1000),
    Usage(input_tokens=250, output_tokens=60, cache_read_input_tokens=1400),
]


def three_turns() -> ScriptedLLM:
    return ScriptedLLM(
        [
            reply("Let me look.", view("calc.py"), usage=USAGES[0]),
            reply(
                tool_use(
                    EDIT,
                    {
                        "command": "str_replace",
                        "path": "calc.py",
                        "old_str": "a - b",
                        "new_str": "a + b",
                    },
                ),
                usage=USAGES[1],
            ),
            reply(
                finish(
                    summary="add() now adds.",
                    root_cause="add() used the minus operator.",
                    artifacts={"files_changed": ["calc.py"]},
                ),
                usage=USAGES[2],
            ),
        ]
    )


def test_three_turn_session_edits_the_file_and_accounts_tokens_and_cost(
    repo: Path, clock: FakeClock, tmp_path: Path
) -> None:
    llm = three_turns()
    session = Session.create(tmp_path / "data", "fix-1", clock)

    result = run(llm, repo, clock, session=session)

    assert result.success and result.output.status is AgentStatus.OK
    assert result.role is AgentRole.ISSUE_FIXER
    assert result.message == "add() now adds."
    assert result.output.root_cause == "add() used the minus operator."
    assert (repo / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    assert result.files_modified == [Path("calc.py")]
    assert result.turns == 3 and result.error_details is None
    total = USAGES[0] + USAGES[1] + USAGES[2]
    assert result.usage == total
    assert total.input_tokens == 1750 and total.cache_read_input_tokens == 2400
    expected = (1750 * 3.0 + 260 * 15.0 + 1000 * 3.75 + 2400 * 0.3) / 1_000_000
    assert result.cost_usd == pytest.approx(expected)
    # what the model was sent
    assert llm.calls[0].system == ISSUE_FIXER.system_prompt()
    assert llm.calls[0].tool_names == ["bash", EDIT, "finish"]
    assert llm.calls[0].messages[0]["content"][0]["text"] == "Fix issue #1: add() subtracts."
    viewed = llm.calls[1].tool_results[0]
    assert viewed["content"] == "     1\tdef add(a, b):\n     2\t    return a - b"
    assert viewed["is_error"] is False
    assert "Edited calc.py" in llm.calls[2].tool_results[0]["content"]
    assert llm.calls[2].messages[1]["content"][0] == {"type": "text", "text": "Let me look."}
    # session artifacts
    status = session.read_status()
    assert (status.current_state, status.status) == ("DONE", AgentStatus.OK)
    events = [e["event"] for e in session.read_transcript()]
    assert events[0] == "start" and events[-1] == "end"
    assert events.count("request") == 3 and events.count("reply") == 3
    assert events.count("tool") == 2 and "finish" in events
    report = (session.path / "report.md").read_text()
    assert "# issue_fixer: OK" in report and "`calc.py`" in report


def test_a_script_that_never_finishes_stops_at_max_turns(
    repo: Path, clock: FakeClock, tmp_path: Path
) -> None:
    llm = ScriptedLLM(itertools.repeat(reply(view("calc.py"))))
    session = Session.create(tmp_path / "data", "loop", clock)

    with pytest.raises(LimitsExceeded) as info:
        run(llm, repo, clock, budget=budget_for(clock, max_turns=4), session=session)

    assert info.value.limit == "turns"
    assert len(llm.calls) == 4
    partial = info.value.result
    assert partial is not None and not partial.success
    assert partial.turns == 4
    assert partial.usage == Usage(input_tokens=40, output_tokens=20)
    assert partial.cost_usd == pytest.approx((40 * 3 + 20 * 15) / 1_000_000)
    assert partial.error_details is not None and "turns" in partial.error_details
    status = session.read_status()
    assert status.status is AgentStatus.FAIL
    assert any("turn budget used up" in i for i in status.known_issues)


def test_the_roles_own_turn_limit_applies_too(repo: Path, clock: FakeClock) -> None:
    llm = ScriptedLLM(itertools.repeat(reply(view("calc.py"))))
    with pytest.raises(LimitsExceeded, match="issue_fixer used all 2 of its turns") as info:
        run(llm, repo, clock, role=ISSUE_FIXER.configured(max_turns=2))
    assert info.value.result is not None and info.value.result.turns == 2


def test_usd_and_time_budgets_stop_the_run(repo: Path, clock: FakeClock) -> None:
    pricey = ScriptedLLM(
        itertools.repeat(reply(view("calc.py"), usage=Usage(output_tokens=10_000)))
    )
    with pytest.raises(LimitsExceeded) as usd:
        run(pricey, repo, clock, budget=budget_for(clock, max_usd=0.2))
    assert usd.value.limit == "usd" and len(pricey.calls) == 2  # $0.15 each

    def slow(call: Any) -> Any:
        clock.advance(61)
        return reply(view("calc.py"))

    with pytest.raises(LimitsExceeded) as late:
        run(
            ScriptedLLM(itertools.repeat(slow)),
            repo,
            clock,
            budget=budget_for(clock, max_minutes=2),
        )
    assert late.value.limit == "minutes"


def test_provider_failure_fails_the_run_naming_the_provider_error(
    repo: Path, clock: FakeClock, tmp_path: Path
) -> None:
    boom = LLMError(
        "overloaded_error: Overloaded (after 4 retries)", provider="anthropic", status=529
    )
    llm = ScriptedLLM([reply(view("calc.py")), boom])
    session = Session.create(tmp_path / "data", "llm-down", clock)

    with pytest.raises(LLMError) as info:
        run(llm, repo, clock, session=session)

    partial = info.value.result
    assert partial is not None and not partial.success and partial.turns == 1
    assert partial.error_details is not None
    assert "anthropic" in partial.error_details and "529" in partial.error_details
    assert "Overloaded" in partial.error_details
    assert session.read_status().status is AgentStatus.FAIL
    assert session.read_transcript()[-1]["error"] == partial.error_details


def test_unexpected_errors_become_agent_execution_errors(repo: Path, clock: FakeClock) -> None:
    llm = ScriptedLLM([RuntimeError("socket closed")])
    with pytest.raises(AgentExecutionError, match="RuntimeError: socket closed") as info:
        run(llm, repo, clock)
    assert info.value.result is not None and info.value.result.turns == 0
    assert isinstance(info.value.__cause__, RuntimeError)


def test_invalid_finish_is_sent_back_twice_then_fails(
    repo: Path, clock: FakeClock, tmp_path: Path
) -> None:
    bad = [finish(status="DONE"), finish(summary=""), tool_use("finish", {"status": "OK"})]
    llm = ScriptedLLM([reply(b) for b in bad])
    session = Session.create(tmp_path / "data", "bad-finish", clock)

    result = run(llm, repo, clock, session=session)

    assert not result.success and result.output is None
    assert len(llm.calls) == 3
    first, second = llm.calls[1].tool_results[0], llm.calls[2].tool_results[0]
    assert (
        first["is_error"]
        and "status:" in first["content"]
        and "2 attempt(s) left" in first["content"]
    )
    assert (
        second["is_error"]
        and "summary:" in second["content"]
        and "1 attempt(s) left" in second["content"]
    )
    assert result.error_details is not None
    assert (
        "finish input invalid 3 times" in result.error_details and "summary" in result.error_details
    )
    assert session.read_status().status is AgentStatus.FAIL
    assert [e["event"] for e in session.read_transcript()].count("finish_rejected") == 3


def test_a_corrected_finish_is_accepted(repo: Path, clock: FakeClock) -> None:
    llm = ScriptedLLM([reply(finish(status="Ok")), reply(finish(status="OK", summary="fine"))])
    result = run(llm, repo, clock)
    assert result.success and result.turns == 2


def test_needs_info_requires_a_question(repo: Path, clock: FakeClock, tmp_path: Path) -> None:
    llm = ScriptedLLM(
        [
            reply(finish(status="NEEDS_INFO", summary="unclear")),
            reply(finish(status="NEEDS_INFO", summary="unclear", question="Which OS?")),
        ]
    )
    session = Session.create(tmp_path / "data", "ask", clock)

    result = run(llm, repo, clock, session=session)

    assert "question" in llm.calls[1].tool_results[0]["content"]
    assert not result.success and result.error_details is None
    assert result.output.status is AgentStatus.NEEDS_INFO and result.output.question == "Which OS?"
    assert session.read_status().current_state == "ASK_USER"


def test_blocked_is_a_result_with_error_details(repo: Path, clock: FakeClock) -> None:
    result = run(ScriptedLLM([reply(finish(status="BLOCKED", summary="no tests"))]), repo, clock)
    assert not result.success and result.output.status is AgentStatus.BLOCKED
    assert result.error_details == "agent reported BLOCKED: no tests"


def test_a_reply_without_tools_gets_a_reminder(repo: Path, clock: FakeClock) -> None:
    llm = ScriptedLLM(
        [reply("I think I am done."), reply("Long", stop_reason="max_tokens"), reply(finish())]
    )
    result = run(llm, repo, clock)
    assert result.success and result.turns == 3
    assert "call `finish`" in llm.calls[1].messages[-1]["content"][0]["text"]
    assert "cut off" in llm.calls[2].messages[-1]["content"][0]["text"]


def test_every_tool_use_gets_a_result_and_tools_outside_the_role_are_refused(
    repo: Path, clock: FakeClock
) -> None:
    bash_only = Role(name=AgentRole.FIXER, template="fixer.md", tools=("bash",), max_turns=5)
    llm = ScriptedLLM(
        [
            reply(tool_use("bash", {"command": "echo hi"}), view("calc.py"), tool_use("computer")),
            reply(finish()),
        ]
    )

    run(llm, repo, clock, role=bash_only)

    assert llm.calls[0].tool_names == ["bash", "finish"]
    uses = [b["id"] for b in llm.calls[1].messages[1]["content"] if b["type"] == "tool_use"]
    results = llm.calls[1].tool_results
    assert [r["tool_use_id"] for r in results] == uses
    assert results[0]["content"] == "hi" and not results[0]["is_error"]
    assert results[1]["is_error"] and "not available; use bash, finish" in results[1]["content"]
    assert results[2]["is_error"]


def test_tools_before_finish_run_and_tools_after_it_do_not(repo: Path, clock: FakeClock) -> None:
    llm = ScriptedLLM(
        [
            reply(
                tool_use("bash", {"command": "echo one > one.txt"}),
                finish(),
                tool_use("bash", {"command": "echo two > two.txt"}),
            )
        ]
    )
    result = run(llm, repo, clock)
    assert result.success
    assert (repo / "one.txt").exists() and not (repo / "two.txt").exists()
    assert result.files_modified == [Path("one.txt")]


def test_a_shared_budget_reports_each_runs_own_usage(repo: Path, clock: FakeClock) -> None:
    budget = budget_for(clock)
    first = run(ScriptedLLM([reply(view("calc.py")), reply(finish())]), repo, clock, budget=budget)
    second = run(ScriptedLLM([reply(finish())]), repo, clock, budget=budget, role=FIXER)
    assert (first.turns, second.turns, budget.turns) == (2, 1, 3)
    assert second.usage == DEFAULT_USAGE
    assert second.cost_usd == pytest.approx((10 * 3 + 5 * 15) / 1_000_000)
    assert first.cost_usd + second.cost_usd == pytest.approx(budget.cost_usd)


def test_context_reaches_the_system_prompt_and_a_given_toolbox_is_used(
    repo: Path, clock: FakeClock
) -> None:
    box = Toolbox(repo, output_cap=5_000)
    box.files_modified.add(Path("earlier.txt"))
    llm = ScriptedLLM([reply(finish())])
    result = run(llm, repo, clock, toolbox=box, context={"protected_paths": "`vendor/**`"})
    assert "Never modify protected paths: `vendor/**`." in llm.calls[0].system
    assert result.files_modified == [Path("earlier.txt")]


def test_the_run_keeps_what_the_workflow_wrote_in_status_json(
    repo: Path, clock: FakeClock, tmp_path: Path
) -> None:
    session = Session.create(tmp_path / "data", "impl", clock)
    session.write_status(SessionStatusFile(session=session.name, completed_tasks=["T001"]))
    run(ScriptedLLM([reply(finish())]), repo, clock, session=session)
    status = session.read_status()
    assert status.completed_tasks == ["T001"] and status.status is AgentStatus.OK
