"""An in-process LLM that replays a script: the fast double for agent-loop tests.

    from tests.fakes.scripted_llm import ScriptedLLM, finish, reply, tool_use

    llm = ScriptedLLM([
        reply(tool_use("str_replace_based_edit_tool", {"command": "view", "path": "a.py"})),
        reply("Testing.", tool_use("bash", {"command": "pytest -q"}), usage=Usage(input_tokens=9)),
        reply(finish(summary="fixed")),
    ])
    ...
    llm.calls[1].messages[-1]      # what the loop sent on the second call (tool results)
    assert llm.remaining == 0

A step is a `Reply`, an exception instance (raised by `complete`, e.g. an `LLMError`), or a
callable `(Call) -> Reply` that answers from what was sent. The script may be any iterable,
infinite ones included (`itertools.repeat(step)`). Running out of steps raises
AssertionError: the test scripted fewer turns than the loop took.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from bot.llm import Reply, StopReason, TextBlock, ToolUseBlock
from bot.models import Usage

DEFAULT_USAGE = Usage(input_tokens=10, output_tokens=5)


@dataclass(frozen=True)
class Call:
    """One `complete` call as the loop made it (`messages` is a shallow copy)."""

    system: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    max_tokens: int

    @property
    def tool_names(self) -> list[str]:
        """The names of the tools offered on this call."""
        return [str(t["name"]) for t in self.tools]

    @property
    def tool_results(self) -> list[dict[str, Any]]:
        """The `tool_result` blocks of the last message."""
        content = self.messages[-1]["content"] if self.messages else []
        if not isinstance(content, list):
            return []
        return [b for b in content if b.get("type") == "tool_result"]


Step = Reply | BaseException | Callable[[Call], Reply]

_ids = itertools.count(1)


def tool_use(name: str, input: dict[str, Any] | None = None, *, id: str = "") -> ToolUseBlock:
    """A tool call; ids are generated (`toolu_scripted_0001`…) unless given."""
    return ToolUseBlock(id=id or f"toolu_scripted_{next(_ids):04d}", name=name, input=input or {})


def finish(status: str = "OK", summary: str = "done", **fields: Any) -> ToolUseBlock:
    """A call of the `finish` tool with the given contract fields."""
    return tool_use("finish", {"status": status, "summary": summary, **fields})


def reply(
    *blocks: TextBlock | ToolUseBlock | str,
    usage: Usage | None = None,
    stop_reason: StopReason | None = None,
    model: str = "scripted-model",
) -> Reply:
    """A model reply; strings become text blocks; stop_reason follows the blocks by default."""
    content = [TextBlock(text=b) if isinstance(b, str) else b for b in blocks]
    if stop_reason is None:
        stop_reason = (
            "tool_use" if any(isinstance(b, ToolUseBlock) for b in content) else "end_turn"
        )
    return Reply(
        content=content,
        stop_reason=stop_reason,
        usage=usage if usage is not None else DEFAULT_USAGE,
        model=model,
    )


class ScriptedLLM:
    """Implements the `LLM` protocol by replaying `script`, recording every call."""

    def __init__(
        self,
        script: Iterable[Step],
        *,
        model: str = "claude-sonnet-4-5",
        provider: str = "scripted",
        record: bool = True,
    ) -> None:
        self.model = model
        self.provider = provider
        self.calls: list[Call] = []
        self.record = record
        self._steps = iter(script)
        self._served = 0

    @property
    def remaining(self) -> int:
        """Steps not served yet (consumes a finite script's iterator; don't use on infinite)."""
        rest = list(self._steps)
        self._steps = iter(rest)
        return len(rest)

    def complete(
        self,
        *,
        system: str,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        max_tokens: int = 8192,
    ) -> Reply:
        """Serve the next step."""
        call = Call(system, list(messages), tools, max_tokens)
        if self.record:
            self.calls.append(call)
        try:
            step = next(self._steps)
        except StopIteration:
            raise AssertionError(
                f"ScriptedLLM script exhausted after {self._served} replies"
            ) from None
        self._served += 1
        if isinstance(step, BaseException):
            raise step
        if isinstance(step, Reply):
            return step
        return step(call)
