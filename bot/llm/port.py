"""LLM port: the provider-neutral request/reply types every adapter maps to and from."""

from __future__ import annotations

from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from bot.models import Usage


class TextBlock(BaseModel):
    """Plain text from the model."""

    model_config = ConfigDict(frozen=True)
    type: Literal["text"] = "text"
    text: str


class ToolUseBlock(BaseModel):
    """The model asks us to run a tool."""

    model_config = ConfigDict(frozen=True)
    type: Literal["tool_use"] = "tool_use"
    id: str
    name: str
    input: dict[str, Any] = Field(default_factory=dict)


ContentBlock = TextBlock | ToolUseBlock

StopReason = Literal["end_turn", "tool_use", "max_tokens", "stop_sequence", "refusal", "other"]


class Reply(BaseModel):
    """One model response, whatever the provider."""

    content: list[ContentBlock]
    stop_reason: StopReason
    usage: Usage
    model: str = ""

    @property
    def tool_uses(self) -> list[ToolUseBlock]:
        """The tool calls in this reply, in order."""
        return [b for b in self.content if isinstance(b, ToolUseBlock)]

    @property
    def text(self) -> str:
        """All text blocks joined."""
        return "\n".join(b.text for b in self.content if isinstance(b, TextBlock))

    def as_message(self) -> dict[str, Any]:
        """This reply as the assistant message to append to the history (Anthropic shape)."""
        return {"role": "assistant", "content": [b.model_dump() for b in self.content]}


class LLM(Protocol):
    """What the agent loop needs from a provider.

    `messages` use Anthropic's shape (role user/assistant, content as a string or a list of
    `text` / `tool_use` / `tool_result` block dicts); `tools` are Anthropic tool definitions
    (client tools with `input_schema`, or the typed `bash_20250124` /
    `text_editor_20250728` tools). Adapters for other providers translate both.
    """

    provider: str
    model: str

    def complete(
        self,
        *,
        system: str,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        max_tokens: int = 8192,
    ) -> Reply:
        """Send one request and return the reply; retries live inside the adapter."""
        ...
