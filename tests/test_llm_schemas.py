"""Function-tool schemas for the typed tools, and make_llm's choice of adapter."""

from __future__ import annotations

from typing import Any

import pytest

from bot.clock import FakeClock
from bot.errors import ConfigError
from bot.llm import BASH_TOOL, EDITOR_TOOL, function_tool_schemas, make_llm, tool_spec
from bot.llm.anthropic import AnthropicLLM
from bot.llm.openai_compat import OpenAICompatLLM
from bot.models import LLMProviderConfig
from tests.fakes.anthropic import FakeAnthropic, reply, text


def test_bash_schema_has_command_and_restart() -> None:
    name, description, schema = tool_spec(BASH_TOOL)
    assert name == "bash" and description
    assert schema["properties"]["command"]["type"] == "string"
    assert schema["properties"]["restart"]["type"] == "boolean"


def test_editor_schema_matches_the_2025_07_28_commands() -> None:
    name, _, schema = tool_spec(EDITOR_TOOL)
    assert name == "str_replace_based_edit_tool"
    assert schema["required"] == ["command", "path"]
    assert schema["properties"]["command"]["enum"] == ["view", "create", "str_replace", "insert"]
    assert schema["properties"]["insert_line"]["type"] == "integer"
    assert schema["properties"]["view_range"]["items"] == {"type": "integer"}


def test_older_editor_keeps_undo_edit() -> None:
    _, _, schema = tool_spec({"type": "text_editor_20250124", "name": "str_replace_editor"})
    assert "undo_edit" in schema["properties"]["command"]["enum"]


def test_client_tool_passes_through_and_unknown_typed_tool_is_refused() -> None:
    finish: dict[str, Any] = {"name": "finish", "input_schema": {"type": "object"}}
    assert function_tool_schemas([finish]) == [
        {"type": "function", "function": {"name": "finish", "parameters": {"type": "object"}}}
    ]
    with pytest.raises(ValueError, match="web_search_20250305"):
        function_tool_schemas([{"type": "web_search_20250305", "name": "web_search"}])


def test_schemas_are_copies_per_call() -> None:
    first = function_tool_schemas([EDITOR_TOOL])
    first[0]["function"]["parameters"]["properties"]["command"]["enum"].append("rm")
    again = function_tool_schemas([EDITOR_TOOL])
    assert "rm" not in again[0]["function"]["parameters"]["properties"]["command"]["enum"]
    bash = function_tool_schemas([BASH_TOOL])[0]["function"]["parameters"]
    bash["properties"].clear()
    assert tool_spec(BASH_TOOL)[2]["properties"]


def test_make_llm_anthropic_uses_config_url_and_retries() -> None:
    with FakeAnthropic([reply(text("hi"))]) as fake:
        cfg = LLMProviderConfig(
            provider="anthropic",
            model="claude-haiku-4-5",
            api_key="k",
            base_url=fake.base_url,
            max_retries=2,
        )
        llm = make_llm(cfg, clock=FakeClock())
        assert isinstance(llm, AnthropicLLM)
        assert (llm.provider, llm.model, llm.max_retries) == ("anthropic", "claude-haiku-4-5", 2)
        assert (
            llm.complete(system="", messages=[{"role": "user", "content": "x"}], tools=[]).text
            == "hi"
        )
        assert fake.requests[0].json["temperature"] == 0.1  # the config's default


@pytest.mark.parametrize("provider", ["openai", "deepseek", "perplexity"])
def test_make_llm_openai_compatible(provider: Any) -> None:
    llm = make_llm(LLMProviderConfig(provider=provider, model="m", api_key="k"))
    assert isinstance(llm, OpenAICompatLLM)
    assert llm.provider == provider


def test_make_llm_without_base_url_is_a_config_error() -> None:
    cfg = LLMProviderConfig(provider="openai", model="m", api_key="k")
    cfg.base_url = ""
    with pytest.raises(ConfigError, match="base_url"):
        make_llm(cfg)
