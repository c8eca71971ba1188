"""What every tool returns, and the head+tail output cap they share."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    """A tool's answer to the model: the text of the `tool_result` and whether it is an error."""

    content: str
    is_error: bool = False


def cut_marker(cut: int, total: int, unit: str) -> str:
    """The line that stands where the middle of a long output was cut."""
    return (
        f"\n\n[... {cut:,} {unit} cut from the middle ({total:,} in total);"
        " narrow the command (grep, head, tail, a view_range) to see them ...]\n\n"
    )


def cap_text(text: str, cap: int) -> str:
    """Keep the head and the tail of `text` within about `cap` characters, marking the cut."""
    if len(text) <= cap:
        return text
    keep = max(cap - 160, 2)  # room for the marker
    head = keep // 2
    tail = keep - head
    return text[:head] + cut_marker(len(text) - keep, len(text), "characters") + text[-tail:]
