"""Price lookup, cost of usage, overrides, and the three budget limits."""

from __future__ import annotations

import pytest

from bot.clock import FakeClock
from bot.cost import (
    DEFAULT_PRICES,
    UNKNOWN_MODEL_PRICE,
    BudgetTracker,
    ModelPrice,
    cost_usd,
    normalize_model,
    price_for,
)
from bot.errors import ConfigError, LimitsExceeded
from bot.models import Usage

MILLION = Usage(
    input_tokens=1_000_000,
    output_tokens=1_000_000,
    cache_creation_input_tokens=1_000_000,
    cache_read_input_tokens=1_000_000,
)


@pytest.mark.parametrize(
    ("model", "key"),
    [
        ("claude-sonnet-4-5", "claude-sonnet-4-5"),
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
        ("anthropic/claude-sonnet-4.5", "claude-sonnet-4-5"),
        ("anthropic.claude-haiku-4-5-20251001-v1:0", "claude-haiku-4-5"),
        ("claude-3-5-haiku-latest", "claude-3-5-haiku"),
        ("claude-opus-4-20250514", "claude-opus-4"),
        ("claude-opus-4-7", "claude-opus-4"),
        ("gpt-4o-mini-2024-07-18", "gpt-4o-mini"),
        ("gpt-4o-2024-08-06", "gpt-4o"),
        ("deepseek-chat", "deepseek-chat"),
    ],
)
def test_model_names_find_their_table_row(model: str, key: str) -> None:
    assert price_for(model) == DEFAULT_PRICES[key]


def test_names_normalize() -> None:
    assert normalize_model("Anthropic/Claude-Opus-4.1") == "claude-opus-4-1"
    assert normalize_model("gpt-4.1-mini") == "gpt-4.1-mini"


def test_current_claude_prices() -> None:
    assert price_for("claude-sonnet-4-5") == ModelPrice(3.0, 15.0, 3.75, 0.30)
    assert price_for("claude-haiku-4-5") == ModelPrice(1.0, 5.0, 1.25, 0.10)
    assert price_for("claude-opus-4-5") == ModelPrice(5.0, 25.0, 6.25, 0.50)
    assert price_for("claude-opus-4-1") == ModelPrice(15.0, 75.0, 18.75, 1.50)


def test_unknown_model_is_priced_conservatively() -> None:
    assert price_for("some-new-model") == UNKNOWN_MODEL_PRICE
    assert price_for("gpt-50") == UNKNOWN_MODEL_PRICE  # not `gpt-5`: prefixes end at a dash
    most_expensive = max(p.output for p in DEFAULT_PRICES.values())
    assert UNKNOWN_MODEL_PRICE.output >= most_expensive


def test_cost_adds_every_token_kind() -> None:
    usage = Usage(
        input_tokens=1000,
        output_tokens=500,
        cache_creation_input_tokens=2000,
        cache_read_input_tokens=10_000,
    )
    expected = (1000 * 3 + 500 * 15 + 2000 * 3.75 + 10_000 * 0.3) / 1e6
    assert cost_usd("claude-sonnet-4-5", usage) == pytest.approx(expected)
    assert cost_usd("claude-sonnet-4-5", MILLION) == pytest.approx(3 + 15 + 3.75 + 0.3)


def test_overrides_replace_only_the_fields_given() -> None:
    prices = {"claude-sonnet-4-5": {"input": 1.0, "output": 2.0}}
    assert cost_usd("claude-sonnet-4-5-20250929", MILLION, prices) == pytest.approx(
        1 + 2 + 3.75 + 0.3
    )
    # An override also prices a model the table doesn't know.
    mine = {"my-local-llama": {"input": 0, "output": 0, "cache_write": 0, "cache_read": 0}}
    assert cost_usd("my-local-llama", MILLION, mine) == 0.0
    assert cost_usd("other", MILLION, mine) == pytest.approx(15 + 75 + 18.75 + 1.5)


@pytest.mark.parametrize(
    ("prices", "path"),
    [
        ({"m": {"inputs": 1.0}}, "prices.m.inputs"),
        ({"m": {"input": -1.0}}, "prices.m.input"),
        ({"m": {"output": "cheap"}}, "prices.m.output"),
    ],
)
def test_bad_overrides_are_config_errors(prices: dict[str, dict[str, float]], path: str) -> None:
    with pytest.raises(ConfigError) as info:
        cost_usd("m", MILLION, prices)
    assert info.value.path == path
    with pytest.raises(ConfigError):
        BudgetTracker(
            model="m", max_turns=1, max_usd=1, max_minutes=1, clock=FakeClock(), prices=prices
        )


def tracker(clock: FakeClock, **kw: float) -> BudgetTracker:
    """A tracker for claude-sonnet-4-5 with generous limits unless given."""
    limits: dict[str, float] = {"max_turns": 100, "max_usd": 100.0, "max_minutes": 60.0, **kw}
    return BudgetTracker(
        model="claude-sonnet-4-5",
        max_turns=int(limits["max_turns"]),
        max_usd=limits["max_usd"],
        max_minutes=limits["max_minutes"],
        clock=clock,
    )


def test_turn_limit() -> None:
    budget = tracker(FakeClock(), max_turns=3)
    for _ in range(3):
        budget.check()
        budget.record(Usage(input_tokens=1))
    with pytest.raises(LimitsExceeded) as info:
        budget.check()
    assert (info.value.limit, info.value.used, info.value.allowed) == ("turns", 3, 3)
    assert "max_turns" in str(info.value)


def test_usd_limit() -> None:
    budget = tracker(FakeClock(), max_usd=0.02)
    budget.check()
    budget.record(Usage(input_tokens=5000))  # $0.015
    budget.check()
    budget.record(Usage(output_tokens=1000))  # + $0.015 = $0.03
    with pytest.raises(LimitsExceeded) as info:
        budget.check()
    assert info.value.limit == "usd"
    assert info.value.used == pytest.approx(0.03) and info.value.allowed == 0.02
    assert budget.cost_usd == pytest.approx(0.03)


def test_minutes_limit() -> None:
    clock = FakeClock()
    clock.advance(1000)  # the tracker counts from its creation, not the clock's start
    budget = tracker(clock, max_minutes=2)
    clock.advance(119)
    budget.check()
    assert budget.elapsed_seconds == 119
    clock.sleep(1)
    with pytest.raises(LimitsExceeded) as info:
        budget.check()
    assert (info.value.limit, info.value.used, info.value.allowed) == ("minutes", 2.0, 2)


def test_record_sums_usage() -> None:
    budget = tracker(FakeClock())
    budget.record(
        Usage(
            input_tokens=1,
            output_tokens=2,
            cache_creation_input_tokens=3,
            cache_read_input_tokens=4,
        )
    )
    budget.record(
        Usage(
            input_tokens=10,
            output_tokens=20,
            cache_creation_input_tokens=30,
            cache_read_input_tokens=40,
        )
    )
    assert budget.usage == Usage(
        input_tokens=11,
        output_tokens=22,
        cache_creation_input_tokens=33,
        cache_read_input_tokens=44,
    )
    assert budget.turns == 2
    assert budget.cost_usd == pytest.approx(cost_usd("claude-sonnet-4-5", budget.usage))
