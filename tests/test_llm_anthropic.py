"""AnthropicLLM through the real SDK against FakeAnthropic: request shape, prompt caching, SSE."""

from __future__ import annotations

import copy
import itertools
import json
from collections.abc import Iterator
from typing import Any

import anthropic
import pytest

from bot.clock import FakeClock
from bot.llm import BASH_TOOL, EDITOR_TOOL, ToolUseBlock
from bot.llm.anthropic import AnthropicLLM, with_cache_breakpoints
from tests.fakes.anthropic import FakeAnthropic, finish, reply, text, tool_use, usage

MARK = b'"cache_control":{"type":"ephemeral"}'
FINISH_TOOL: dict[str, Any] = {
    "name": "finish",
    "description": "Hand in the result.",
    "input_schema": {"type": "object", "properties": {"summary": {"type": "string"}}},
}
TOOLS = [BASH_TOOL, EDITOR_TOOL, FINISH_TOOL]
SYSTEM = "You are a careful engineer."


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    """An empty FakeAnthropic; tests add their steps."""
    with FakeAnthropic() as server:
        yield server


def make(fake: FakeAnthropic, **kw: Any) -> AnthropicLLM:
    """An adapter on the fake."""
    return AnthropicLLM(
        model="claude-sonnet-4-5",
        api_key="sk-ant-test",
        base_url=fake.base_url,
        clock=FakeClock(),
        **kw,
    )


def marks(body: bytes) -> list[int]:
    """End offsets of every cache_control breakpoint in a raw body."""
    out, at = [], body.find(MARK)
    while at != -1:
        out.append(at + len(MARK))
        at = body.find(MARK, at + 1)
    return out


def run_session(llm: AnthropicLLM, turns: int) -> list[dict[str, Any]]:
    """Drive `turns` calls, appending replies and tool results; return the caller's history."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Fix issue #12."}]
    for _ in range(turns):
        before = copy.deepcopy(messages)
        r = llm.complete(system=SYSTEM, messages=messages, tools=TOOLS)
        assert messages == before  # the adapter never changes the caller's history
        messages.append(r.as_message())
        results = [
            {"type": "tool_result", "tool_use_id": u.id, "content": f"output of {u.input}"}
            for u in r.tool_uses
        ]
        messages.append({"role": "user", "content": results or "go on"})
    return messages


def test_request_carries_key_version_model_tools_and_max_tokens(fake: FakeAnthropic) -> None:
    fake.add(reply(text("hi")))

    make(fake).complete(
        system=SYSTEM, messages=[{"role": "user", "content": "x"}], tools=TOOLS, max_tokens=1234
    )

    req = fake.requests[0]
    assert (req.method, req.path) == ("POST", "/v1/messages")
    assert "sk-ant-test" in (
        req.headers.get("x-api-key", "") + req.headers.get("authorization", "")
    )
    assert req.headers["anthropic-version"]
    assert req.headers["x-stainless-retry-count"] == "0"
    body = req.json
    assert (body["model"], body["max_tokens"]) == ("claude-sonnet-4-5", 1234)
    assert [t.get("type", "custom") for t in body["tools"]] == [
        "bash_20250124",
        "text_editor_20250728",
        "custom",
    ]
    assert body["tools"][1]["name"] == "str_replace_based_edit_tool"
    assert body["system"] == [
        {"type": "text", "text": SYSTEM, "cache_control": {"type": "ephemeral"}}
    ]
    assert "stream" not in body and "temperature" not in body


def test_temperature_is_sent_when_set(fake: FakeAnthropic) -> None:
    fake.add(reply(text("hi")))
    make(fake, temperature=0.1).complete(
        system="", messages=[{"role": "user", "content": "x"}], tools=[]
    )
    body = fake.requests[0].json
    assert body["temperature"] == 0.1
    assert "system" not in body and "tools" not in body


def test_ten_turn_session_keeps_the_cached_prefix_byte_stable(fake: FakeAnthropic) -> None:
    fake.add(*[reply(tool_use("bash", {"command": f"step {i}"})) for i in range(9)])
    fake.add(reply(finish(summary="done")))

    run_session(make(fake), 10)

    bodies = [r.body for r in fake.requests]
    assert len(bodies) == 10 and fake.remaining == 0
    assert len(marks(bodies[0])) == 3  # tools, system, task (= the last message)
    for prev, cur in itertools.pairwise(bodies):
        ends = marks(cur)
        assert len(ends) == 4
        # Up to the last-but-one breakpoint (the task) the bytes equal the previous request's.
        assert cur[: ends[-2]] == prev[: ends[-2]]
        # And the whole previous request, up to its moving breakpoint, is a byte prefix of
        # this one, so the previous turn's cache entry is read.
        moving = prev.rfind(b',"cache_control"')
        assert cur[:moving] == prev[:moving]
        assert len(cur) > len(prev)


def test_breakpoints_sit_on_tools_system_task_and_last_block(fake: FakeAnthropic) -> None:
    fake.add(*[reply(tool_use("bash", {"command": "ls"})) for _ in range(3)])

    run_session(make(fake), 3)

    body = fake.requests[-1].json
    assert body["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    assert all("cache_control" not in t for t in body["tools"][:-1])
    assert body["system"][0]["cache_control"] == {"type": "ephemeral"}
    first, last = body["messages"][0], body["messages"][-1]
    assert first["content"] == [
        {"type": "text", "text": "Fix issue #12.", "cache_control": {"type": "ephemeral"}}
    ]
    assert last["content"][-1]["type"] == "tool_result"
    assert last["content"][-1]["cache_control"] == {"type": "ephemeral"}
    middle = json.dumps(body["messages"][1:-1])
    assert "cache_control" not in middle


def test_never_more_than_four_breakpoints_even_with_callers_own(fake: FakeAnthropic) -> None:
    fake.add(reply(text("ok")))
    eph = {"type": "ephemeral"}
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": [{"type": "text", "text": "task", "cache_control": eph}]},
        {"role": "assistant", "content": [{"type": "text", "text": "a", "cache_control": eph}]},
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "t1",
                    "content": [{"type": "text", "text": "r", "cache_control": eph}],
                    "cache_control": eph,
                }
            ],
        },
    ]
    tools = [{**t, "cache_control": eph} for t in TOOLS]
    original = copy.deepcopy(messages)

    make(fake).complete(system=SYSTEM, messages=messages, tools=tools)

    assert len(marks(fake.requests[0].body)) == 4
    assert messages == original


def test_cache_off_sends_no_breakpoint(fake: FakeAnthropic) -> None:
    fake.add(reply(text("ok")))
    make(fake, cache=False).complete(
        system=SYSTEM, messages=[{"role": "user", "content": "x"}], tools=TOOLS
    )
    assert b"cache_control" not in fake.requests[0].body


def test_breakpoint_placement_is_pure() -> None:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "only"}]
    tools, system, out = with_cache_breakpoints(system="s", messages=messages, tools=[])
    assert tools == [] and system[0]["cache_control"] == {"type": "ephemeral"}
    assert out == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "only", "cache_control": {"type": "ephemeral"}}],
        }
    ]
    assert messages == [{"role": "user", "content": "only"}]


@pytest.mark.parametrize(
    ("stop", "expected"),
    [
        ("max_tokens", "max_tokens"),
        ("pause_turn", "other"),
        ("refusal", "refusal"),
        ("stop_sequence", "stop_sequence"),
    ],
)
def test_stop_reasons_map(fake: FakeAnthropic, stop: str, expected: str) -> None:
    fake.add(reply(text("partial"), stop_reason=stop))
    r = make(fake).complete(system="", messages=[{"role": "user", "content": "x"}], tools=[])
    assert r.stop_reason == expected and r.text == "partial"


def test_usage_maps_cache_counts(fake: FakeAnthropic) -> None:
    fake.add(reply(text("ok"), usage=usage(11, 22, cache_write=33, cache_read=44)))
    r = make(fake).complete(system="", messages=[{"role": "user", "content": "x"}], tools=[])
    assert r.usage.model_dump() == {
        "input_tokens": 11,
        "output_tokens": 22,
        "cache_creation_input_tokens": 33,
        "cache_read_input_tokens": 44,
    }


def test_unknown_blocks_are_dropped(fake: FakeAnthropic) -> None:
    thinking = {"type": "thinking", "thinking": "hmm", "signature": "sig"}
    fake.add(reply(thinking, text("answer"), tool_use("bash", {"command": "ls"}, id="toolu_1")))
    r = make(fake).complete(
        system="", messages=[{"role": "user", "content": "x"}], tools=[BASH_TOOL]
    )
    assert r.text == "answer"
    assert r.tool_uses == [ToolUseBlock(id="toolu_1", name="bash", input={"command": "ls"})]


def test_fake_streams_the_same_reply_as_sse(fake: FakeAnthropic) -> None:
    fake.add(
        reply(
            text("streamed"), tool_use("bash", {"command": "ls"}, id="toolu_s"), usage=usage(7, 9)
        )
    )
    client = anthropic.Anthropic(api_key="k", base_url=fake.base_url, max_retries=0)

    with client.messages.stream(
        model="claude-sonnet-4-6", max_tokens=100, messages=[{"role": "user", "content": "x"}]
    ) as stream:
        message = stream.get_final_message()

    assert fake.requests[0].json["stream"] is True
    assert message.stop_reason == "tool_use"
    assert message.content[0].type == "text" and message.content[0].text == "streamed"
    block = message.content[1]
    assert block.type == "tool_use" and block.id == "toolu_s" and block.input == {"command": "ls"}
    assert (message.usage.input_tokens, message.usage.output_tokens) == (7, 9)


def test_exhausted_script_answers_500_with_a_clear_message(fake: FakeAnthropic) -> None:
    client = anthropic.Anthropic(api_key="k", base_url=fake.base_url, max_retries=0)
    with pytest.raises(anthropic.InternalServerError, match="script exhausted"):
        client.messages.create(
            model="claude-sonnet-4-6", max_tokens=10, messages=[{"role": "user", "content": "x"}]
        )
    assert fake.exhausted == 1


def test_callable_step_answers_from_the_request(fake: FakeAnthropic) -> None:
    fake.add(lambda req: reply(text(f"you said {req.json['messages'][0]['content'][0]['text']}")))
    r = make(fake).complete(system="", messages=[{"role": "user", "content": "hello"}], tools=[])
    assert r.text == "you said hello"
