"""JSON schemas of Anthropic's typed tools, and tool definitions as OpenAI function tools."""

from __future__ import annotations

import copy
from typing import Any

BASH_TOOL: dict[str, Any] = {"type": "bash_20250124", "name": "bash"}
"""Anthropic's bash tool, run by us (DESIGN §7)."""

EDITOR_TOOL: dict[str, Any] = {
    "type": "text_editor_20250728",
    "name": "str_replace_based_edit_tool",
}
"""Anthropic's text editor tool, run by us (DESIGN §7)."""

BASH_DESCRIPTION = (
    "Run a command in a fresh bash shell whose working directory is the workspace. Nothing "
    "persists between calls (no `cd`, no variables: chain commands with `&&`); `restart` is "
    "a no-op. A command is stopped after 120 s; output over 30,000 characters is cut to its "
    "head and tail."
)

BASH_INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "command": {
            "type": "string",
            "description": "The bash command to run. Required unless the tool is being restarted.",
        },
        "restart": {
            "type": "boolean",
            "description": "Set to true to restart the bash session.",
        },
    },
}
"""The input Anthropic's `bash_20250124` tool takes."""

EDITOR_DESCRIPTION = (
    "View, create and edit files in the workspace. `view` shows a file with line numbers (or a "
    "directory listing); `create` writes `file_text` to a new file; `str_replace` replaces the "
    "one exact occurrence of `old_str` with `new_str`; `insert` adds `new_str` after line "
    "`insert_line` (0 = start of file). Paths are relative to the workspace root."
)

EDITOR_COMMANDS = ("view", "create", "str_replace", "insert")


def editor_input_schema(commands: tuple[str, ...] = EDITOR_COMMANDS) -> dict[str, Any]:
    """The input Anthropic's text editor tool takes (`text_editor_20250728` by default)."""
    return {
        "type": "object",
        "properties": {
            "command": {
                "type": "string",
                "enum": list(commands),
                "description": "The command to run.",
            },
            "path": {"type": "string", "description": "Path of the file or directory."},
            "file_text": {
                "type": "string",
                "description": "`create`: the content of the new file.",
            },
            "old_str": {
                "type": "string",
                "description": "`str_replace`: the exact text to replace; it must occur once.",
            },
            "new_str": {
                "type": "string",
                "description": "`str_replace`: the replacement; `insert`: the text to insert.",
            },
            "insert_line": {
                "type": "integer",
                "description": "`insert`: the line after which `new_str` goes (0 = top).",
            },
            "view_range": {
                "type": "array",
                "items": {"type": "integer"},
                "minItems": 2,
                "maxItems": 2,
                "description": "`view`: [first, last] line to show, 1-based; last -1 = to the end.",
            },
        },
        "required": ["command", "path"],
    }


EDITOR_INPUT_SCHEMA: dict[str, Any] = editor_input_schema()
"""The input `text_editor_20250728` takes."""


def tool_spec(tool: dict[str, Any]) -> tuple[str, str, dict[str, Any]]:
    """Name, description and input JSON schema (a fresh copy) of an Anthropic tool definition."""
    name = str(tool["name"])
    kind = str(tool.get("type", "custom"))
    if kind.startswith("bash_"):
        return name, BASH_DESCRIPTION, copy.deepcopy(BASH_INPUT_SCHEMA)
    if kind.startswith("text_editor_"):
        # Editors before 2025-07-28 also had `undo_edit`.
        older = kind in ("text_editor_20241022", "text_editor_20250124")
        commands = (*EDITOR_COMMANDS, "undo_edit") if older else EDITOR_COMMANDS
        return name, EDITOR_DESCRIPTION, editor_input_schema(commands)
    if kind == "custom" and "input_schema" in tool:
        return name, str(tool.get("description", "")), copy.deepcopy(tool["input_schema"])
    raise ValueError(
        f"tool {name!r} of type {kind!r} has no function-tool equivalent; "
        "use a client tool with `input_schema`, bash_* or text_editor_*"
    )


def function_tool_schemas(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Anthropic tool definitions as OpenAI chat-completions function tools."""
    out: list[dict[str, Any]] = []
    for tool in tools:
        name, description, schema = tool_spec(tool)
        function: dict[str, Any] = {"name": name, "parameters": schema}
        if description:
            function["description"] = description
        out.append({"type": "function", "function": function})
    return out
