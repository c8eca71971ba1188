"""The texts and blocks the agent loop sends the model, and how it reads a refusal."""

from __future__ import annotations

import re
from typing import Any

from pydantic import ValidationError as PydanticValidationError

from bot.errors import LimitsExceeded, LLMError
from bot.llm import Reply

NO_TOOL_CALL = (
    "You replied without calling a tool. Continue the work with the tools, and when you are"
    " done call `finish` with your result; a reply without a tool call is not a result."
)
CUT_OFF = (
    "Your reply was cut off at the output token limit. Continue in smaller steps (write"
    " large files in parts), and call `finish` when you are done."
)
FINISH_ACCEPTED = "Result recorded. Your work is over."
WARN_TURNS = 3
"""Turns left when the model is warned that its turns run out."""
WARN_USD_SHARE = 0.8
_REFUSAL = re.compile(
    r"\bI(?:'m| am)? (?:can(?:'|no)t|cannot|won't|will not|am not able to|am unable to|"
    r"not able to|unable to) (?:help|assist|comply|do that|continue|work on|complete)",
    re.IGNORECASE,
)


def finish_errors(exc: PydanticValidationError) -> str:
    """The validation errors of a `finish` input, one `where: what` each."""
    parts = []
    for err in exc.errors(include_url=False):
        where = ".".join(str(p) for p in err["loc"]) or "input"
        parts.append(f"{where}: {err['msg']}")
    return "; ".join(parts)


def describe(exc: BaseException) -> str:
    """An agent error as the run's failure text."""
    if isinstance(exc, LLMError):
        status = f", HTTP {exc.status}" if exc.status is not None else ""
        return f"LLM provider {exc.provider} failed{status}: {exc}"
    if isinstance(exc, LimitsExceeded):
        return f"limit {exc.limit} reached: {exc}"
    return str(exc)


def text_block(text: str) -> dict[str, Any]:
    """A text content block."""
    return {"type": "text", "text": text}


def refusal(reply: Reply) -> str:
    """The refusal in a reply without tool calls, or ""."""
    text = " ".join(b.text for b in reply.content if b.type == "text").strip()
    if reply.stop_reason == "refusal":
        return text[:300] or "(stop reason: refusal)"
    return text[:300] if _REFUSAL.search(text) else ""


def tool_result(tool_use_id: str, content: str, *, is_error: bool = False) -> dict[str, Any]:
    """A tool_result content block."""
    return {
        "type": "tool_result",
        "tool_use_id": tool_use_id,
        "content": content,
        "is_error": is_error,
    }


def turn_warning(left: int) -> str:
    """The one warning before the turn limit."""
    return (
        f"[agentbot] {left} turn(s) left before your turn limit. Wrap up now: finish the"
        " change you have, run the targeted test, and call `finish`. If the limit is reached"
        " first, your change so far is validated and opened as a draft pull request."
    )


def usd_warning(spent: float) -> str:
    """The one warning near the USD budget."""
    return (
        f"[agentbot] {spent:.0%} of this job's USD budget is spent. Wrap up now and call"
        " `finish` with what you have."
    )


def rejection(problem: str, left: int) -> str:
    """A finish the workspace does not bear out, sent back."""
    after = (
        f"{left} more rejection(s) possible"
        if left
        else "the next finish is accepted as it is and judged by validation"
    )
    return f"finish not accepted: {problem}\nFix this and call finish again ({after})."
