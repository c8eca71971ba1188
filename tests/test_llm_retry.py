"""Retries of both adapters over HTTP: which errors, how long (FakeClock), and the final error."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from datetime import timedelta
from email.utils import format_datetime
from typing import Any

import pytest

from bot.clock import FakeClock
from bot.errors import LLMError
from bot.llm import LLM
from bot.llm.anthropic import AnthropicLLM
from bot.llm.openai_compat import OpenAICompatLLM
from bot.llm.retry import RETRY_AFTER_MAX, parse_retry_after
from tests.fakes.anthropic import FakeAnthropic, ScriptedServer, error, reply, text
from tests.fakes.openai_chat import FakeOpenAIChat

MESSAGES: list[dict[str, Any]] = [{"role": "user", "content": "hello"}]


@pytest.fixture(params=["anthropic", "openai"])
def setup(request: pytest.FixtureRequest) -> Iterator[tuple[ScriptedServer, LLM, FakeClock]]:
    """A fake server of either provider, an adapter with max_retries=3 on it, its clock."""
    clock = FakeClock()
    if request.param == "anthropic":
        with FakeAnthropic() as fake:
            yield (
                fake,
                AnthropicLLM(
                    model="claude-haiku-4-5",
                    api_key="k",
                    base_url=fake.base_url,
                    clock=clock,
                    max_retries=3,
                ),
                clock,
            )
    else:
        with FakeOpenAIChat() as chat:
            yield (
                chat,
                OpenAICompatLLM(
                    model="gpt-4.1",
                    api_key="k",
                    base_url=chat.base_url,
                    clock=clock,
                    max_retries=3,
                ),
                clock,
            )


def call(llm: LLM) -> str:
    """One completion's text."""
    return llm.complete(system="s", messages=MESSAGES, tools=[]).text


def test_overloaded_with_retry_after_ms_waits_that_long(
    setup: tuple[ScriptedServer, LLM, FakeClock],
) -> None:
    fake, llm, clock = setup
    fake.add(error(529, retry_after_ms=1500, retry_after=9), reply(text("ok")))
    assert call(llm) == "ok"
    assert clock.sleeps == [1.5]  # retry-after-ms wins over retry-after
    assert len(fake.requests) == 2
    assert fake.requests[0].body == fake.requests[1].body


def test_rate_limit_with_retry_after_seconds(setup: tuple[ScriptedServer, LLM, FakeClock]) -> None:
    fake, llm, clock = setup
    fake.add(error(429, retry_after=7), reply(text("ok")))
    assert call(llm) == "ok"
    assert clock.sleeps == [7.0]


def test_server_errors_back_off_exponentially(setup: tuple[ScriptedServer, LLM, FakeClock]) -> None:
    fake, llm, clock = setup
    fake.add(error(500), error(502), error(503), reply(text("ok")))
    assert call(llm) == "ok"
    assert clock.sleeps == [1.0, 2.0, 4.0]


def test_a_huge_retry_after_is_capped(setup: tuple[ScriptedServer, LLM, FakeClock]) -> None:
    fake, llm, clock = setup
    fake.add(error(529, retry_after=86_400), reply(text("ok")))
    assert call(llm) == "ok"
    assert clock.sleeps == [RETRY_AFTER_MAX]


def test_overloaded_past_the_bound_raises_llm_error(
    setup: tuple[ScriptedServer, LLM, FakeClock],
) -> None:
    fake, llm, clock = setup
    fake.add(*[error(529, "Overloaded", retry_after_ms=250) for _ in range(4)], reply(text("late")))

    with pytest.raises(LLMError) as info:
        call(llm)

    err = info.value
    assert err.provider == llm.provider and err.status == 529
    assert f"{llm.provider} ({llm.model}) failed after 4 attempts" in str(err)
    assert "HTTP 529 overloaded_error: Overloaded" in str(err)
    assert clock.sleeps == [0.25, 0.25, 0.25]
    assert len(fake.requests) == 4 and fake.remaining == 1  # never a silent success


def test_bad_request_fails_at_once(setup: tuple[ScriptedServer, LLM, FakeClock]) -> None:
    fake, llm, clock = setup
    fake.add(error(400, "messages: roles must alternate"), reply(text("unused")))

    with pytest.raises(LLMError) as info:
        call(llm)

    assert info.value.status == 400
    assert (
        "rejected the request: HTTP 400 invalid_request_error: messages: roles must alternate"
        in str(info.value)
    )
    assert clock.sleeps == [] and len(fake.requests) == 1


@pytest.mark.parametrize(
    ("status", "advice"), [(401, "API key"), (404, "model name"), (413, "too large")]
)
def test_other_client_errors_are_not_retried(
    setup: tuple[ScriptedServer, LLM, FakeClock], status: int, advice: str
) -> None:
    fake, llm, clock = setup
    fake.add(error(status), reply(text("unused")))
    with pytest.raises(LLMError, match=advice) as info:
        call(llm)
    assert info.value.status == status and len(fake.requests) == 1 and clock.sleeps == []


def test_exhausted_script_fails_loudly(setup: tuple[ScriptedServer, LLM, FakeClock]) -> None:
    fake, llm, _ = setup
    with pytest.raises(LLMError, match="script exhausted"):
        call(llm)
    assert fake.exhausted == 4


@pytest.mark.parametrize("provider", ["anthropic", "deepseek"])
def test_connection_errors_are_retried_then_named(provider: str) -> None:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()  # nothing listens there now
    clock = FakeClock()
    llm: LLM
    if provider == "anthropic":
        llm = AnthropicLLM(
            model="m", api_key="k", base_url=f"http://127.0.0.1:{port}", clock=clock, max_retries=2
        )
    else:
        llm = OpenAICompatLLM(
            model="m",
            api_key="k",
            base_url=f"http://127.0.0.1:{port}/v1",
            clock=clock,
            max_retries=2,
            provider=provider,
        )

    with pytest.raises(LLMError, match=r"cannot reach 127\.0\.0\.1: ConnectError") as info:
        call(llm)

    assert info.value.provider == provider and info.value.status is None
    assert clock.sleeps == [1.0, 2.0]


def test_parse_retry_after_reads_ms_seconds_and_dates() -> None:
    clock = FakeClock()
    later = format_datetime(clock.now() + timedelta(seconds=30), usegmt=True)
    assert parse_retry_after({"Retry-After-Ms": "120"}, clock) == 0.12
    assert parse_retry_after({"retry-after": "2.5"}, clock) == 2.5
    assert parse_retry_after({"retry-after": later}, clock) == 30.0
    assert parse_retry_after({"retry-after": "soon"}, clock) is None
    assert parse_retry_after({"retry-after-ms": "x", "retry-after": "3"}, clock) == 3.0
    assert parse_retry_after({}, clock) is None
