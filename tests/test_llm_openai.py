"""OpenAICompatLLM through the real SDK against FakeOpenAIChat: translation both ways."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import openai
import pytest

from bot.clock import FakeClock
from bot.errors import LLMError
from bot.llm import BASH_TOOL, EDITOR_TOOL, ToolUseBlock
from bot.llm.openai_compat import INVALID_ARGUMENTS_KEY, OpenAICompatLLM, chat_messages
from bot.llm.schemas import BASH_INPUT_SCHEMA, EDITOR_INPUT_SCHEMA
from tests.fakes.anthropic import ScriptedReply
from tests.fakes.openai_chat import FakeOpenAIChat, RecordedRequest, reply, text, tool_use, usage

FINISH_TOOL: dict[str, Any] = {
    "name": "finish",
    "description": "Hand in the result.",
    "input_schema": {"type": "object", "properties": {"summary": {"type": "string"}}},
}


@pytest.fixture
def fake() -> Iterator[FakeOpenAIChat]:
    """An empty FakeOpenAIChat; tests add their steps."""
    with FakeOpenAIChat() as server:
        yield server


def make(fake: FakeOpenAIChat, **kw: Any) -> OpenAICompatLLM:
    """An adapter on the fake (provider deepseek unless given)."""
    kw.setdefault("provider", "deepseek")
    return OpenAICompatLLM(
        model="deepseek-chat", api_key="sk-ds", base_url=fake.base_url, clock=FakeClock(), **kw
    )


def test_tools_become_function_tools(fake: FakeOpenAIChat) -> None:
    fake.add(reply(text("ok")))

    make(fake).complete(
        system="sys",
        messages=[{"role": "user", "content": "x"}],
        tools=[BASH_TOOL, EDITOR_TOOL, FINISH_TOOL],
    )

    req = fake.requests[0]
    assert req.path == "/v1/chat/completions"
    assert req.headers["authorization"] == "Bearer sk-ds"
    tools = req.json["tools"]
    assert [t["type"] for t in tools] == ["function"] * 3
    bash, editor, finish = (t["function"] for t in tools)
    assert (bash["name"], bash["parameters"]) == ("bash", BASH_INPUT_SCHEMA)
    assert (editor["name"], editor["parameters"]) == (
        "str_replace_based_edit_tool",
        EDITOR_INPUT_SCHEMA,
    )
    assert editor["parameters"]["properties"]["command"]["enum"] == [
        "view",
        "create",
        "str_replace",
        "insert",
    ]
    assert set(editor["parameters"]["properties"]) == {
        "command",
        "path",
        "file_text",
        "old_str",
        "new_str",
        "insert_line",
        "view_range",
    }
    assert finish == {
        "name": "finish",
        "parameters": FINISH_TOOL["input_schema"],
        "description": "Hand in the result.",
    }
    assert req.json["messages"][0] == {"role": "system", "content": "sys"}


def test_max_tokens_parameter_follows_the_provider(fake: FakeOpenAIChat) -> None:
    fake.add(reply(text("a")), reply(text("b")))
    make(fake).complete(
        system="", messages=[{"role": "user", "content": "x"}], tools=[], max_tokens=100
    )
    make(fake, provider="openai", temperature=0.2).complete(
        system="", messages=[{"role": "user", "content": "x"}], tools=[], max_tokens=200
    )
    first, second = (r.json for r in fake.requests)
    assert (
        first["max_tokens"] == 100 and "max_completion_tokens" not in first and "tools" not in first
    )
    assert second["max_completion_tokens"] == 200 and "max_tokens" not in second
    assert second["temperature"] == 0.2 and "temperature" not in first


def test_history_translation() -> None:
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "task"},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Two things."},
                {"type": "tool_use", "id": "t1", "name": "bash", "input": {"command": "ls"}},
                {"type": "tool_use", "id": "t2", "name": "bash", "input": {"command": "pwd"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "a.py"},
                {
                    "type": "tool_result",
                    "tool_use_id": "t2",
                    "content": [{"type": "text", "text": "no such dir"}],
                    "is_error": True,
                },
                {"type": "text", "text": "Keep going."},
            ],
        },
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t3", "name": "finish", "input": {}}],
        },
    ]
    assert chat_messages("sys", messages) == [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "task"},
        {
            "role": "assistant",
            "content": "Two things.",
            "tool_calls": [
                {
                    "id": "t1",
                    "type": "function",
                    "function": {"name": "bash", "arguments": '{"command": "ls"}'},
                },
                {
                    "id": "t2",
                    "type": "function",
                    "function": {"name": "bash", "arguments": '{"command": "pwd"}'},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "t1", "content": "a.py"},
        {"role": "tool", "tool_call_id": "t2", "content": "Error: no such dir"},
        {"role": "user", "content": "Keep going."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "t3", "type": "function", "function": {"name": "finish", "arguments": "{}"}}
            ],
        },
    ]


@pytest.mark.parametrize(
    ("stop", "expected"),
    [
        ("end_turn", "end_turn"),
        ("max_tokens", "max_tokens"),
        ("refusal", "refusal"),
        ("weird", "other"),
    ],
)
def test_finish_reasons_map(fake: FakeOpenAIChat, stop: str, expected: str) -> None:
    fake.add(reply(text("t"), stop_reason=stop))
    r = make(fake).complete(system="", messages=[{"role": "user", "content": "x"}], tools=[])
    assert r.stop_reason == expected


def test_tool_calls_with_a_stop_finish_reason_still_mean_tool_use(fake: FakeOpenAIChat) -> None:
    fake.add(reply(tool_use("bash", {"command": "ls"}, id="c1"), stop_reason="end_turn"))
    r = make(fake).complete(
        system="", messages=[{"role": "user", "content": "x"}], tools=[BASH_TOOL]
    )
    assert r.stop_reason == "tool_use"
    assert r.content == [ToolUseBlock(id="c1", name="bash", input={"command": "ls"})]


def test_usage_splits_cached_prompt_tokens(fake: FakeOpenAIChat) -> None:
    fake.add(reply(text("t"), usage=usage(100, 20, cache_read=900)))
    r = make(fake).complete(system="", messages=[{"role": "user", "content": "x"}], tools=[])
    assert (r.usage.input_tokens, r.usage.output_tokens, r.usage.cache_read_input_tokens) == (
        100,
        20,
        900,
    )
    assert r.usage.cache_creation_input_tokens == 0


def test_invalid_tool_arguments_reach_the_tool_runner(fake: FakeOpenAIChat) -> None:
    # A string `input` is served verbatim as the call's `arguments`: here, not JSON.
    fake.add(reply({"type": "tool_use", "id": "c9", "name": "bash", "input": "{oops"}))
    r = make(fake).complete(
        system="", messages=[{"role": "user", "content": "x"}], tools=[BASH_TOOL]
    )
    assert r.tool_uses == [
        ToolUseBlock(id="c9", name="bash", input={INVALID_ARGUMENTS_KEY: "{oops"})
    ]


class NoChoices(FakeOpenAIChat):
    """A server that answers a completion without choices."""

    def render_reply(self, step: ScriptedReply, request: RecordedRequest) -> dict[str, Any]:
        """A chat.completion with `choices: []`."""
        return {**super().render_reply(step, request), "choices": []}


def test_no_choices_is_an_llm_error() -> None:
    with NoChoices([reply(text("x"))]) as server:
        llm = OpenAICompatLLM(model="m", api_key="k", base_url=server.base_url, clock=FakeClock())
        with pytest.raises(LLMError, match="no choices"):
            llm.complete(system="", messages=[{"role": "user", "content": "x"}], tools=[])


def test_fake_streams_chunks_and_usage(fake: FakeOpenAIChat) -> None:
    fake.add(reply(text("hello"), tool_use("bash", {"command": "ls"}, id="c5"), usage=usage(3, 4)))
    client = openai.OpenAI(api_key="k", base_url=fake.base_url, max_retries=0)

    chunks = list(
        client.chat.completions.create(
            model="gpt-4.1",
            messages=[{"role": "user", "content": "x"}],
            stream=True,
            stream_options={"include_usage": True},
        )
    )

    content = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    calls = [tc for c in chunks if c.choices for tc in c.choices[0].delta.tool_calls or []]
    finishes = [
        c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason
    ]
    assert content == "hello"
    assert calls[0].id == "c5" and calls[0].function is not None
    assert json.loads(calls[0].function.arguments or "") == {"command": "ls"}
    assert finishes == ["tool_calls"]
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens == 4
