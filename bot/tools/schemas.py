"""Tool definitions the model sees: Anthropic's typed bash and editor tools, and `finish`."""

from __future__ import annotations

from typing import Any

from bot.models import AgentOutput

BASH_TOOL: dict[str, Any] = {"type": "bash_20250124", "name": "bash"}
"""Anthropic's bash tool; we run it (`bot.tools.shell`)."""

EDITOR_TOOL: dict[str, Any] = {
    "type": "text_editor_20250728",
    "name": "str_replace_based_edit_tool",
}
"""Anthropic's text editor tool; we run it (`bot.tools.editor`)."""

FINISH_NAME = "finish"

_FIELD_HELP = {
    "status": (
        "OK: the work is done and checked. NEEDS_INFO: you cannot go on without an answer from"
        " the user (put it in `question`). BLOCKED: something outside your control stops you."
        " FAIL: you tried and could not do it."
    ),
    "summary": "1-3 sentences: what you did and the state the workspace is in.",
    "artifacts": "Files you changed, tests you added or updated, commands to run, notes.",
    "gates": "Your own check: is the definition of done met, are tests or a review needed.",
    "next": "What should happen next, and why.",
    "root_cause": "Why the problem happened (bug fixes): the cause, not the symptom.",
    "question": "With NEEDS_INFO: the one question the user must answer.",
    "data": "Your role's structured result, in the shape your instructions give (else {}).",
}


def _inline_refs(node: Any, defs: dict[str, Any]) -> Any:
    """Replace `$ref`s with their definitions: some providers reject `$defs`."""
    if isinstance(node, dict):
        if "$ref" in node:
            target = defs[str(node["$ref"]).rsplit("/", 1)[-1]]
            merged = {
                **_inline_refs(target, defs),
                **{k: v for k, v in node.items() if k != "$ref"},
            }
            return _inline_refs(merged, defs)
        return {k: _inline_refs(v, defs) for k, v in node.items() if k not in ("$defs", "title")}
    if isinstance(node, list):
        return [_inline_refs(v, defs) for v in node]
    return node


def finish_input_schema() -> dict[str, Any]:
    """AgentOutput's JSON schema, self-contained, with a description on each top-level field."""
    raw = AgentOutput.model_json_schema()
    schema: dict[str, Any] = _inline_refs(raw, raw.get("$defs", {}))
    for name, help_text in _FIELD_HELP.items():
        schema["properties"][name]["description"] = help_text
    return schema


FINISH_TOOL: dict[str, Any] = {
    "name": FINISH_NAME,
    "description": (
        "Call this exactly once, when you are done, to hand in your result (the output"
        " contract). Its input is validated; if it is rejected, fix it and call finish again."
        " Nothing you do after finish is seen."
    ),
    "input_schema": finish_input_schema(),
}
"""The client tool that ends every agent run; its input is an AgentOutput (seed 004)."""

TOOL_DEFINITIONS: dict[str, dict[str, Any]] = {
    BASH_TOOL["name"]: BASH_TOOL,
    EDITOR_TOOL["name"]: EDITOR_TOOL,
}
"""Workspace tools by name (what a Role lists)."""


def tool_definitions(names: tuple[str, ...] | list[str]) -> list[dict[str, Any]]:
    """The definitions of the named workspace tools, then `finish`."""
    unknown = [n for n in names if n not in TOOL_DEFINITIONS]
    if unknown:
        raise ValueError(f"unknown tools {unknown}; known: {sorted(TOOL_DEFINITIONS)}")
    return [*(TOOL_DEFINITIONS[n] for n in names), FINISH_TOOL]
