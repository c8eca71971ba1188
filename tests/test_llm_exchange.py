"""One scripted multi-turn exchange through each adapter, over HTTP, with budget accounting."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from bot.clock import FakeClock
from bot.cost import BudgetTracker
from bot.llm import BASH_TOOL, EDITOR_TOOL, LLM, Reply, TextBlock, ToolUseBlock
from bot.llm.anthropic import AnthropicLLM
from bot.llm.openai_compat import OpenAICompatLLM
from bot.models import Usage
from tests.fakes.anthropic import (
    FakeAnthropic,
    ScriptedServer,
    finish,
    reply,
    text,
    tool_use,
    usage,
)
from tests.fakes.openai_chat import FakeOpenAIChat

FINISH_TOOL: dict[str, Any] = {
    "name": "finish",
    "description": "Report the outcome and stop.",
    "input_schema": {
        "type": "object",
        "properties": {"status": {"type": "string"}, "summary": {"type": "string"}},
        "required": ["status", "summary"],
    },
}
TOOLS = [BASH_TOOL, EDITOR_TOOL, FINISH_TOOL]
SYSTEM = "You fix bugs in the repository in your workspace."
TASK = "Issue #7: `add(2, 2)` returns 5."

BASH = tool_use("bash", {"command": "pytest -q"})
EDIT = tool_use(
    "str_replace_based_edit_tool",
    {"command": "str_replace", "path": "calc.py", "old_str": "a + b + 1", "new_str": "a + b"},
)
FINISH = finish(summary="add() no longer adds one")
SCRIPT = [
    reply(text("Let me run the tests."), BASH, usage=usage(120, 30, cache_write=2000)),
    reply(EDIT, usage=usage(80, 60, cache_read=2000)),
    reply(text("The fix is in."), usage=usage(90, 15, cache_read=2100)),
    reply(FINISH, usage=usage(40, 25, cache_read=2150, cache_write=50)),
]


def run_exchange(llm: LLM, budget: BudgetTracker) -> tuple[list[Reply], list[dict[str, Any]]]:
    """A minimal agent loop: run tools (by echoing), nudge on plain text, stop on finish."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": TASK}]
    replies: list[Reply] = []
    while True:
        budget.check()
        r = llm.complete(system=SYSTEM, messages=messages, tools=TOOLS, max_tokens=4096)
        budget.record(r.usage)
        replies.append(r)
        messages.append(r.as_message())
        if any(u.name == "finish" for u in r.tool_uses):
            return replies, messages
        if not r.tool_uses:
            messages.append({"role": "user", "content": "Call `finish` when you are done."})
            continue
        results = [
            {"type": "tool_result", "tool_use_id": u.id, "content": f"ran {u.name}"}
            for u in r.tool_uses
        ]
        messages.append({"role": "user", "content": results})


@pytest.fixture(params=["anthropic", "deepseek"])
def served(request: pytest.FixtureRequest) -> Iterator[tuple[str, ScriptedServer, LLM]]:
    """A fake server running SCRIPT and the adapter pointed at it."""
    clock = FakeClock()
    if request.param == "anthropic":
        with FakeAnthropic(SCRIPT) as fake:
            yield (
                "anthropic",
                fake,
                AnthropicLLM(
                    model="claude-sonnet-4-5",
                    api_key="sk-test",
                    base_url=fake.base_url,
                    clock=clock,
                ),
            )
    else:
        with FakeOpenAIChat(SCRIPT) as chat:
            yield (
                "deepseek",
                chat,
                OpenAICompatLLM(
                    model="deepseek-chat",
                    api_key="sk-test",
                    base_url=chat.base_url,
                    clock=clock,
                    provider="deepseek",
                ),
            )


def expected_usage(provider: str, u: Usage) -> Usage:
    """What the adapter reports for a scripted usage: chat completions has no cache writes."""
    if provider == "anthropic":
        return u
    return Usage(
        input_tokens=u.input_tokens + u.cache_creation_input_tokens,
        output_tokens=u.output_tokens,
        cache_read_input_tokens=u.cache_read_input_tokens,
    )


def test_replies_carry_blocks_stop_reasons_and_usage(
    served: tuple[str, ScriptedServer, LLM],
) -> None:
    provider, fake, llm = served
    budget = BudgetTracker(
        model=llm.model, max_turns=10, max_usd=1.0, max_minutes=5, clock=FakeClock()
    )

    replies, _ = run_exchange(llm, budget)

    assert [r.stop_reason for r in replies] == ["tool_use", "tool_use", "end_turn", "tool_use"]
    assert replies[0].content == [
        TextBlock(text="Let me run the tests."),
        ToolUseBlock(id=BASH["id"], name="bash", input={"command": "pytest -q"}),
    ]
    assert replies[1].content == [
        ToolUseBlock(id=EDIT["id"], name=EDIT["name"], input=EDIT["input"])
    ]
    assert replies[2].text == "The fix is in."
    assert replies[3].tool_uses == [
        ToolUseBlock(
            id=FINISH["id"],
            name="finish",
            input={"status": "OK", "summary": FINISH["input"]["summary"]},
        )
    ]
    assert [r.usage for r in replies] == [expected_usage(provider, s.usage) for s in SCRIPT]
    assert fake.remaining == 0 and len(fake.requests) == 4
    assert replies[0].model == llm.model


def test_budget_sums_tokens_and_prices_them(served: tuple[str, ScriptedServer, LLM]) -> None:
    provider, _, llm = served
    budget = BudgetTracker(
        model=llm.model, max_turns=10, max_usd=1.0, max_minutes=5, clock=FakeClock()
    )

    run_exchange(llm, budget)

    total = Usage()
    for step in SCRIPT:
        total = total + expected_usage(provider, step.usage)
    assert budget.usage == total
    assert budget.turns == 4
    if provider == "anthropic":
        # claude-sonnet-4-5: $3 in, $15 out, $3.75 cache write, $0.30 cache read per MTok
        assert total == Usage(
            input_tokens=330,
            output_tokens=130,
            cache_creation_input_tokens=2050,
            cache_read_input_tokens=6250,
        )
        dollars = (330 * 3 + 130 * 15 + 2050 * 3.75 + 6250 * 0.30) / 1e6
    else:
        # deepseek-chat: $0.28 in (cache miss), $0.42 out, $0.028 cache hit per MTok
        dollars = (2380 * 0.28 + 130 * 0.42 + 6250 * 0.028) / 1e6
    assert budget.cost_usd == pytest.approx(dollars)


def test_price_overrides_change_the_cost(served: tuple[str, ScriptedServer, LLM]) -> None:
    provider, _, llm = served
    prices = {llm.model: {"input": 10.0, "output": 100.0, "cache_read": 1.0}}
    budget = BudgetTracker(
        model=llm.model, max_turns=10, max_usd=1.0, max_minutes=5, clock=FakeClock(), prices=prices
    )

    run_exchange(llm, budget)

    u = budget.usage
    write = 3.75 if provider == "anthropic" else 0.28  # not overridden: the table's price
    dollars = (
        u.input_tokens * 10
        + u.output_tokens * 100
        + u.cache_creation_input_tokens * write
        + u.cache_read_input_tokens * 1.0
    ) / 1e6
    assert budget.cost_usd == pytest.approx(dollars)


def test_tool_results_reach_the_model(served: tuple[str, ScriptedServer, LLM]) -> None:
    provider, fake, llm = served
    budget = BudgetTracker(
        model=llm.model, max_turns=10, max_usd=1.0, max_minutes=5, clock=FakeClock()
    )

    run_exchange(llm, budget)

    second = fake.requests[1].json["messages"]
    if provider == "anthropic":
        assert second[1]["content"][1] == {
            "type": "tool_use",
            "id": BASH["id"],
            "name": "bash",
            "input": {"command": "pytest -q"},
        }
        result = second[2]["content"][0]
        assert (result["type"], result["tool_use_id"], result["content"]) == (
            "tool_result",
            BASH["id"],
            "ran bash",
        )
    else:
        assert second[0] == {"role": "system", "content": SYSTEM}
        assert second[2]["tool_calls"][0]["id"] == BASH["id"]
        assert second[3] == {"role": "tool", "tool_call_id": BASH["id"], "content": "ran bash"}
        fourth = fake.requests[3].json["messages"]
        assert fourth[-1] == {"role": "user", "content": "Call `finish` when you are done."}
