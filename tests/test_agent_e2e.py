"""The agent loop through the real SDKs over HTTP, against the scripted provider servers."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from bot.agent import run_agent
from bot.clock import FakeClock
from bot.cost import BudgetTracker
from bot.errors import LimitsExceeded, LLMError
from bot.llm import LLM
from bot.llm.anthropic import AnthropicLLM
from bot.llm.openai_compat import OpenAICompatLLM
from bot.models import AgentResult, AgentStatus, Usage
from bot.roles import ISSUE_FIXER
from bot.session import Session
from tests.fakes.anthropic import FakeAnthropic, ScriptedServer, error, finish, reply, tool_use
from tests.fakes.openai_chat import FakeOpenAIChat

pytestmark = pytest.mark.slow

EDIT = "str_replace_based_edit_tool"
VIEW = tool_use(EDIT, {"command": "view", "path": "calc.py"})
REPLACE = tool_use(
    EDIT, {"command": "str_replace", "path": "calc.py", "old_str": "a - b", "new_str": "a + b"}
)
USAGES = [
    Usage(input_tokens=1500, output_tokens=90, cache_creation_input_tokens=2000),
    Usage(input_tokens=200, output_tokens=140, cache_read_input_tokens=2000),
    Usage(input_tokens=180, output_tokens=70, cache_read_input_tokens=2300),
]


@dataclass(frozen=True)
class Provider:
    """How to stand up one provider: its fake server, its adapter, its model and prices."""

    name: str
    server: Callable[[list[Any]], ScriptedServer]
    make: Callable[[str, FakeClock, int], LLM]
    model: str
    price: dict[str, float]
    merges_cache_writes: bool
    """OpenAI-style usage has no cache-write count: those tokens come back as input."""


PROVIDERS = [
    Provider(
        "anthropic",
        FakeAnthropic,
        lambda url, clock, retries: AnthropicLLM(
            model="claude-sonnet-4-5",
            api_key="test",
            base_url=url,
            clock=clock,
            max_retries=retries,
        ),
        "claude-sonnet-4-5",
        {"input": 3.0, "output": 15.0, "cache_write": 3.75, "cache_read": 0.3},
        merges_cache_writes=False,
    ),
    Provider(
        "openai",
        FakeOpenAIChat,
        lambda url, clock, retries: OpenAICompatLLM(
            model="gpt-4.1", api_key="test", base_url=url, clock=clock, max_retries=retries
        ),
        "gpt-4.1",
        {"input": 2.0, "output": 8.0, "cache_write": 2.0, "cache_read": 0.5},
        merges_cache_writes=True,
    ),
]


@pytest.fixture(params=PROVIDERS, ids=lambda p: p.name)
def provider(request: pytest.FixtureRequest) -> Provider:
    p: Provider = request.param
    return p


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


@dataclass
class Harness:
    fake: ScriptedServer
    llm: LLM
    clock: FakeClock
    budget: BudgetTracker
    session: Session

    def run(self, repo: Path) -> AgentResult:
        return run_agent(
            role=ISSUE_FIXER,
            task="Fix issue #1: add() subtracts.",
            workspace=repo,
            llm=self.llm,
            budget=self.budget,
            clock=self.clock,
            session=self.session,
        )


@contextmanager
def harness(
    provider: Provider, script: list[Any], tmp_path: Path, *, max_turns: int = 20, retries: int = 2
) -> Iterator[Harness]:
    clock = FakeClock()
    with provider.server(script) as fake:
        budget = BudgetTracker(
            model=provider.model,
            max_turns=max_turns,
            max_usd=5.0,
            max_minutes=30.0,
            clock=clock,
            prices={provider.model: provider.price},
        )
        session = Session.create(tmp_path / "data", f"{provider.name}-run", clock)
        yield Harness(fake, provider.make(fake.base_url, clock, retries), clock, budget, session)


def test_three_turn_session_over_http(provider: Provider, repo: Path, tmp_path: Path) -> None:
    script = [
        reply("Let me look.", VIEW, usage=USAGES[0]),
        reply(REPLACE, usage=USAGES[1]),
        reply(finish(summary="add() adds.", root_cause="a minus sign"), usage=USAGES[2]),
    ]
    with harness(provider, script, tmp_path) as h:
        result = h.run(repo)
        requests = h.fake.requests

    assert result.success and result.output is not None
    assert result.output.root_cause == "a minus sign"
    assert (repo / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    assert result.files_modified == [Path("calc.py")]
    assert result.turns == 3 and len(requests) == 3
    total = USAGES[0] + USAGES[1] + USAGES[2]
    if provider.merges_cache_writes:
        total = Usage(
            input_tokens=total.input_tokens + total.cache_creation_input_tokens,
            output_tokens=total.output_tokens,
            cache_read_input_tokens=total.cache_read_input_tokens,
        )
    assert result.usage == total
    p = provider.price
    expected = (
        total.input_tokens * p["input"]
        + total.output_tokens * p["output"]
        + total.cache_creation_input_tokens * p["cache_write"]
        + total.cache_read_input_tokens * p["cache_read"]
    ) / 1_000_000
    assert result.cost_usd == pytest.approx(expected)
    assert h.session.read_status().status is AgentStatus.OK
    # the view's output went back to the model over the wire
    sent = str(requests[1].json["messages"])
    assert "return a - b" in sent
    assert "Edited calc.py" in str(requests[2].json["messages"])


def test_a_script_that_never_finishes_stops_at_max_turns_over_http(
    provider: Provider, repo: Path, tmp_path: Path
) -> None:
    script = [reply(VIEW) for _ in range(6)]
    with harness(provider, script, tmp_path, max_turns=3) as h:
        with pytest.raises(LimitsExceeded) as info:
            h.run(repo)
        served, left = len(h.fake.requests), h.fake.remaining

    assert (served, left) == (3, 3)
    assert info.value.limit == "turns"
    assert info.value.result is not None and info.value.result.turns == 3
    status = h.session.read_status()
    assert status.status is AgentStatus.FAIL and status.current_state == "BLOCKED"


def test_overloaded_past_the_retry_bound_fails_naming_the_provider_error(
    provider: Provider, repo: Path, tmp_path: Path
) -> None:
    script = [reply(VIEW), *[error(529, retry_after=2) for _ in range(3)]]
    with harness(provider, script, tmp_path, retries=2) as h:
        with pytest.raises(LLMError) as info:
            h.run(repo)
        served = len(h.fake.requests)

    assert served == 4  # one reply, then the first try and two retries of the failing call
    assert h.clock.sleeps == [2.0, 2.0]
    assert info.value.provider == provider.name and info.value.status == 529
    partial = info.value.result
    assert partial is not None and partial.turns == 1 and not partial.success
    assert partial.error_details is not None
    assert provider.name in partial.error_details and "529" in partial.error_details
    assert h.session.read_status().status is AgentStatus.FAIL


def test_invalid_finish_goes_back_over_the_wire_then_fails(
    provider: Provider, repo: Path, tmp_path: Path
) -> None:
    script = [reply(finish(status="DONE")) for _ in range(3)]
    with harness(provider, script, tmp_path) as h:
        result = h.run(repo)
        requests = h.fake.requests

    assert not result.success and result.output is None and len(requests) == 3
    assert "finish input rejected" in str(requests[1].json["messages"])
    assert "2 attempt(s) left" in str(requests[1].json["messages"])
    assert h.session.read_status().status is AgentStatus.FAIL
