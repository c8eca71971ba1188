"""Token prices, the cost of a call, and the per-job budget (turns, USD, minutes).

Prices are USD per million tokens, from the providers' published price lists as known when
this was written (late 2025; the 4-6 Claude models assumed priced as their 4-5 versions):
`input` (uncached), `output`, `cache_write` (Anthropic's 5-minute cache write,
1.25 x input) and `cache_read`. A model name is matched after dropping a provider prefix
(`anthropic/`, Bedrock's `anthropic.`), a date suffix (`-20250929…`) or `-latest`, first
exactly, then by the longest table key it starts with (`claude-opus-4-7` -> `claude-opus-4`).
A model found nowhere is priced at `UNKNOWN_MODEL_PRICE`, the most expensive current model
(Claude Opus 4.1), so an unknown model stops early rather than overspends; set its real
price in `.github/agentbot.yml` `prices:`. Long-context surcharges (over 200k input tokens)
are not modelled.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Protocol

from bot.clock import Clock
from bot.errors import ConfigError, LimitsExceeded
from bot.models import Usage

PRICE_FIELDS = ("input", "output", "cache_write", "cache_read")


@dataclass(frozen=True)
class ModelPrice:
    """USD per million tokens."""

    input: float
    output: float
    cache_write: float
    cache_read: float


# Anthropic: a 5-minute cache write costs 1.25x input, a cache read 0.1x input.
# OpenAI and DeepSeek cache automatically with no write surcharge: cache_write = input.
DEFAULT_PRICES: dict[str, ModelPrice] = {
    "claude-opus-4-6": ModelPrice(input=5.0, output=25.0, cache_write=6.25, cache_read=0.5),
    "claude-opus-4-5": ModelPrice(input=5.0, output=25.0, cache_write=6.25, cache_read=0.5),
    "claude-opus-4-1": ModelPrice(input=15.0, output=75.0, cache_write=18.75, cache_read=1.5),
    "claude-opus-4": ModelPrice(input=15.0, output=75.0, cache_write=18.75, cache_read=1.5),
    "claude-sonnet-4-6": ModelPrice(input=3.0, output=15.0, cache_write=3.75, cache_read=0.3),
    "claude-sonnet-4-5": ModelPrice(input=3.0, output=15.0, cache_write=3.75, cache_read=0.3),
    "claude-sonnet-4": ModelPrice(input=3.0, output=15.0, cache_write=3.75, cache_read=0.3),
    "claude-3-7-sonnet": ModelPrice(input=3.0, output=15.0, cache_write=3.75, cache_read=0.3),
    "claude-haiku-4-5": ModelPrice(input=1.0, output=5.0, cache_write=1.25, cache_read=0.1),
    "claude-3-5-haiku": ModelPrice(input=0.8, output=4.0, cache_write=1.0, cache_read=0.08),
    "claude-3-haiku": ModelPrice(input=0.25, output=1.25, cache_write=0.3, cache_read=0.03),
    "gpt-5": ModelPrice(input=1.25, output=10.0, cache_write=1.25, cache_read=0.125),
    "gpt-5-mini": ModelPrice(input=0.25, output=2.0, cache_write=0.25, cache_read=0.025),
    "gpt-5-nano": ModelPrice(input=0.05, output=0.4, cache_write=0.05, cache_read=0.005),
    "gpt-4.1": ModelPrice(input=2.0, output=8.0, cache_write=2.0, cache_read=0.5),
    "gpt-4.1-mini": ModelPrice(input=0.4, output=1.6, cache_write=0.4, cache_read=0.1),
    "gpt-4.1-nano": ModelPrice(input=0.1, output=0.4, cache_write=0.1, cache_read=0.025),
    "gpt-4o": ModelPrice(input=2.5, output=10.0, cache_write=2.5, cache_read=1.25),
    "gpt-4o-mini": ModelPrice(input=0.15, output=0.6, cache_write=0.15, cache_read=0.075),
    "o3": ModelPrice(input=2.0, output=8.0, cache_write=2.0, cache_read=0.5),
    "o4-mini": ModelPrice(input=1.1, output=4.4, cache_write=1.1, cache_read=0.275),
    "deepseek-chat": ModelPrice(input=0.28, output=0.42, cache_write=0.28, cache_read=0.028),
    "deepseek-reasoner": ModelPrice(input=0.28, output=0.42, cache_write=0.28, cache_read=0.028),
}

UNKNOWN_MODEL_PRICE = ModelPrice(input=15.0, output=75.0, cache_write=18.75, cache_read=1.5)
"""Used for a model in neither the table nor the overrides: Claude Opus 4.1's price."""

_DATE_SUFFIX = re.compile(r"-(\d{8}|latest)\b.*$")


def normalize_model(model: str) -> str:
    """Table form of a name: `anthropic.claude-sonnet-4-5-20250929-v1:0` -> `claude-sonnet-4-5`."""
    name = model.strip().lower().rsplit("/", 1)[-1]
    if "claude-" in name:
        name = name[name.index("claude-") :].replace(".", "-")  # OpenRouter writes 4.5
    return _DATE_SUFFIX.sub("", name)


def _match(name: str, keys: list[str]) -> str | None:
    if name in keys:
        return name
    prefixes = [k for k in keys if name.startswith(k + "-")]
    return max(prefixes, key=len) if prefixes else None


def validate_prices(overrides: Mapping[str, Mapping[str, float]]) -> None:
    """Raise ConfigError for an unknown price field or a negative or non-numeric price."""
    for model, fields in overrides.items():
        for key, value in fields.items():
            path = f"prices.{model}.{key}"
            if key not in PRICE_FIELDS:
                raise ConfigError(
                    f"unknown price field; use one of {', '.join(PRICE_FIELDS)}", path=path
                )
            if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
                raise ConfigError(
                    "a price must be a number >= 0 (USD per million tokens)", path=path
                )


def price_for(model: str, overrides: Mapping[str, Mapping[str, float]] | None = None) -> ModelPrice:
    """The price of a model: the table's (or the unknown-model default) with overrides applied."""
    name = normalize_model(model)
    key = _match(name, list(DEFAULT_PRICES))
    price = DEFAULT_PRICES[key] if key else UNKNOWN_MODEL_PRICE
    if overrides:
        validate_prices(overrides)
        by_name = {normalize_model(k): v for k, v in overrides.items()}
        hit = _match(name, list(by_name))
        if hit is not None:
            price = replace(price, **{k: float(v) for k, v in by_name[hit].items()})
    return price


def cost_usd(
    model: str, usage: Usage, overrides: Mapping[str, Mapping[str, float]] | None = None
) -> float:
    """USD a call (or a sum of calls) of this model cost."""
    p = price_for(model, overrides)
    return (
        usage.input_tokens * p.input
        + usage.output_tokens * p.output
        + usage.cache_creation_input_tokens * p.cache_write
        + usage.cache_read_input_tokens * p.cache_read
    ) / 1_000_000


class SpendMeter(Protocol):
    """Spending beyond one job: the App's caps per day and month (bot.worker.spend)."""

    def check(self) -> None:
        """Raise LimitsExceeded when a spend cap is reached."""
        ...

    def add(self, usd: float) -> None:
        """Count money the job just spent."""
        ...


class BudgetTracker:
    """One job's spending: `check()` before each LLM call, `record(usage)` after it."""

    def __init__(
        self,
        *,
        model: str,
        max_turns: int,
        max_usd: float,
        max_minutes: float,
        clock: Clock,
        prices: Mapping[str, Mapping[str, float]] | None = None,
        meter: SpendMeter | None = None,
    ) -> None:
        if prices:
            validate_prices(prices)  # fail at job start, not after the first paid call
        self.model = model
        self.max_turns = max_turns
        self.max_usd = max_usd
        self.max_minutes = max_minutes
        self.prices = prices
        self.meter = meter
        self.usage = Usage()
        self.cost_usd = 0.0
        self.turns = 0
        self._clock = clock
        self._started = clock.monotonic()
        # `[P]` tasks share one tracker from several threads; sums must not lose updates.
        self._lock = threading.Lock()

    @property
    def elapsed_seconds(self) -> float:
        """Seconds since the tracker was made."""
        return self._clock.monotonic() - self._started

    def check(self) -> None:
        """Raise LimitsExceeded when turns, USD or minutes are used up."""
        if self.turns >= self.max_turns:
            raise LimitsExceeded(
                f"turn budget used up: {self.turns} of {self.max_turns} turns; "
                "raise budget.max_turns in .github/agentbot.yml or split the task",
                limit="turns",
                used=self.turns,
                allowed=self.max_turns,
            )
        if self.cost_usd >= self.max_usd:
            raise LimitsExceeded(
                f"USD budget used up: ${self.cost_usd:.4f} of ${self.max_usd:.2f}; "
                "raise budget.max_usd_per_job in .github/agentbot.yml or split the task",
                limit="usd",
                used=self.cost_usd,
                allowed=self.max_usd,
            )
        minutes = self.elapsed_seconds / 60
        if minutes >= self.max_minutes:
            raise LimitsExceeded(
                f"time budget used up: {minutes:.1f} of {self.max_minutes:g} minutes; "
                "raise budget.max_minutes in .github/agentbot.yml or split the task",
                limit="minutes",
                used=minutes,
                allowed=self.max_minutes,
            )
        if self.meter is not None:
            self.meter.check()

    def record(self, usage: Usage) -> None:
        """Add one call's tokens and cost, and count a turn (thread-safe)."""
        cost = cost_usd(self.model, usage, self.prices)
        with self._lock:
            self.usage = self.usage + usage
            self.cost_usd += cost
            self.turns += 1
        if self.meter is not None:
            self.meter.add(cost)
