"""The agent's tools, run by us and confined to one workspace (DESIGN §7).

`Toolbox.run(name, input)` dispatches a model's tool call to bash or the editor and
never raises for a model mistake (bad arguments, a path outside the workspace, a missing
file): those come back as an error `ToolOutcome` the model can read and correct.
`files_modified` collects what the calls changed, relative to the workspace.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from bot.errors import ToolError
from bot.sandbox import Sandbox
from bot.secrets import agent_env
from bot.tools.base import ToolOutcome, cap_text
from bot.tools.changes import ChangeTracker
from bot.tools.editor import Editor
from bot.tools.schemas import (
    BASH_TOOL,
    EDITOR_TOOL,
    FINISH_NAME,
    FINISH_TOOL,
    TOOL_DEFINITIONS,
    tool_definitions,
)
from bot.tools.shell import SHELL_DEFAULTS, ShellEnv, format_run, run_bash

__all__ = [
    "BASH_TOOL",
    "EDITOR_TOOL",
    "FINISH_NAME",
    "FINISH_TOOL",
    "TOOL_DEFINITIONS",
    "ShellEnv",
    "ToolOutcome",
    "Toolbox",
    "cap_text",
    "tool_definitions",
]


class Toolbox:
    """bash and the text editor for one workspace, with the changes they made."""

    def __init__(
        self,
        workspace: Path,
        *,
        bash_timeout: float = 120.0,
        output_cap: int = 30_000,
        env: Mapping[str, str] | None = None,
        sandbox: Sandbox | None = None,
        shell: ShellEnv | None = None,
        read_only: bool = False,
    ) -> None:
        """`env` is the base environment for bash (default: this process's), allowlisted;
        `shell` a prepared one (the project's environment) used instead; with `sandbox`
        (the job's) every command runs in it. `read_only` (the Planner's tools): the editor
        only views, and the sandbox mounts the workspace read-only for bash."""
        self.workspace = workspace.resolve()
        self.read_only = read_only
        self.sandbox = sandbox
        self.bash_timeout = bash_timeout
        self.output_cap = output_cap
        self.shell = shell or ShellEnv({})
        base = shell.env if shell is not None else agent_env(os.environ if env is None else env)
        self.env = {**base, **SHELL_DEFAULTS}
        self.files_modified: set[Path] = set()
        self.editor = Editor(self.workspace, output_cap=output_cap)
        self.changes = ChangeTracker(self.workspace)

    def run(self, name: str, input: dict[str, Any]) -> ToolOutcome:
        """Run one tool call; model mistakes come back as `is_error` outcomes."""
        try:
            if not isinstance(input, dict):
                raise ToolError(f"{name}: the input must be a JSON object")
            if name == BASH_TOOL["name"]:
                return self.bash(input)
            if name == EDITOR_TOOL["name"]:
                if self.read_only and input.get("command") != "view":
                    raise ToolError("the editor is read-only here: only `view` works")
                outcome, changed = self.editor.run(input)
                if changed is not None:
                    self.files_modified.add(changed)
                return outcome
            raise ToolError(f"unknown tool {name!r}; available: {', '.join(TOOL_DEFINITIONS)}")
        except ToolError as exc:
            return ToolOutcome(str(exc), is_error=True)

    def bash(self, input: dict[str, Any]) -> ToolOutcome:
        """Run `input["command"]` in a fresh shell in the workspace."""
        command = input.get("command")
        if input.get("restart") and not command:
            return ToolOutcome(
                "Every command already runs in a fresh shell in the workspace; nothing to restart."
            )
        if not isinstance(command, str) or not command.strip():
            raise ToolError("bash needs `command`, the shell command to run")
        before = self.changes.snapshot()
        shell = self.shell
        run = run_bash(
            command,
            cwd=self.workspace,
            env=self.env,
            timeout=self.bash_timeout,
            cap=self.output_cap,
            sandbox=self.sandbox,
            writable=() if self.read_only else shell.writable,
            readable=(*shell.readable, *shell.writable) if self.read_only else shell.readable,
            read_only=self.read_only,
        )
        self.files_modified |= ChangeTracker.changed(before, self.changes.snapshot())
        return ToolOutcome(format_run(run, self.bash_timeout), is_error=run.timed_out)
