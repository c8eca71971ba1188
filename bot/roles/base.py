"""A role is data: a prompt template, a tool set and limits (DESIGN §7).

Templates live in `bot/prompts/` (package data) and use `{{name}}` placeholders and
`{{> partial.md}}` includes; braces elsewhere (JSON, code) are left alone. Every
placeholder must be given, by the caller or by the role's defaults; an unknown name is an
error, so a typo never reaches a model as literal `{{...}}`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cache
from importlib import resources

from bot.models import AgentRole
from bot.tools import BASH_TOOL, EDITOR_TOOL

WORKSPACE_TOOLS: tuple[str, ...] = (BASH_TOOL["name"], EDITOR_TOOL["name"])
"""bash and the text editor: what the code-writing roles use."""

PROMPT_CONTEXT_KEYS = frozenset(
    {
        "protected_paths",
        "max_changed_lines",
        "validation_commands",
        "environment",
        "bash_timeout",
        "output_cap",
    }
)
"""Per-repository facts any role prompt may use; see `repo_context`."""

DEFAULT_CONTEXT: tuple[tuple[str, str], ...] = (
    ("protected_paths", "`.github/workflows/**`"),
    ("max_changed_lines", "200"),
    ("validation_commands", "the project's usual format, lint, type-check and test commands"),
    (
        "environment",
        "Use the project's own commands to run its tests and checks. Do not install packages"
        " into the system.",
    ),
    ("bash_timeout", "120"),
    ("output_cap", "30,000"),
)
"""What the prompts say when the caller gives no repository facts."""

INSTRUCTIONS_KEY = "repo_instructions"
"""Context key of the repository's fenced agent instructions (`bot.instructions`), which
every role gets after its own prompt, whatever its template says."""

_INCLUDE = re.compile(r"\{\{>\s*([\w.-]+)\s*\}\}")
_PLACEHOLDER = re.compile(r"\{\{\s*(\w+)\s*\}\}")


@cache
def load_template(name: str) -> str:
    """A template from bot/prompts with its `{{> partial}}` includes expanded."""
    text = resources.files("bot.prompts").joinpath(name).read_text(encoding="utf-8")
    return _INCLUDE.sub(lambda m: load_template(m.group(1)).rstrip("\n"), text)


def placeholders(template: str) -> set[str]:
    """The `{{name}}` placeholders a template (with its includes) uses."""
    return set(_PLACEHOLDER.findall(load_template(template)))


def render(template: str, context: dict[str, str]) -> str:
    """Fill every placeholder of `template`; missing or unknown names raise ValueError."""
    text = load_template(template)
    wanted = set(_PLACEHOLDER.findall(text))
    missing = sorted(wanted - context.keys())
    unknown = sorted(context.keys() - wanted)
    if missing or unknown:
        raise ValueError(
            f"prompt {template}: missing {missing or 'nothing'}, unknown {unknown or 'nothing'};"
            f" it takes {sorted(wanted)}"
        )
    return _PLACEHOLDER.sub(lambda m: context[m.group(1)], text)


@dataclass(frozen=True)
class Role:
    """One agent role: which prompt, which tools, how many turns, which model."""

    name: AgentRole
    template: str
    tools: tuple[str, ...]
    max_turns: int
    model: str | None = None
    """None: the job's default model."""
    max_tokens: int = 8192
    defaults: tuple[tuple[str, str], ...] = DEFAULT_CONTEXT
    """Placeholder values used when the caller does not give them."""
    read_only: bool = False
    """The role only reads: the editor views, the sandbox mounts the workspace read-only."""

    def system_prompt(self, **context: str) -> str:
        """The rendered system prompt; `context` fills (or overrides) the placeholders.

        Shared keys (`PROMPT_CONTEXT_KEYS`) the template does not use are ignored, so one
        `repo_context(...)` serves every role; any other unknown key is an error.
        """
        guidance = context.pop(INSTRUCTIONS_KEY, "")
        used = placeholders(self.template)
        unknown = sorted(context.keys() - used - PROMPT_CONTEXT_KEYS)
        if unknown:
            raise ValueError(f"prompt {self.template}: unknown {unknown}; it takes {sorted(used)}")
        merged = {**dict(self.defaults), **context}
        prompt = render(self.template, {k: v for k, v in merged.items() if k in used})
        return f"{prompt.rstrip()}\n\n{guidance}\n" if guidance else prompt

    def configured(self, *, model: str | None = None, max_turns: int | None = None) -> Role:
        """This role with a repository's overrides (`roles.<name>` in agentbot.yml) applied."""
        return replace(
            self,
            model=model if model is not None else self.model,
            max_turns=max_turns if max_turns is not None else self.max_turns,
        )


def repo_context(
    *,
    protected_paths: Sequence[str] = (),
    max_changed_lines: int | None = None,
    validation_commands: Sequence[str] = (),
    environment: str = "",
) -> dict[str, str]:
    """Prompt context from a repository's settings (`limits`, the validation commands) and
    the prepared environment's description."""
    context: dict[str, str] = {}
    if environment:
        context["environment"] = environment
    if protected_paths:
        context["protected_paths"] = inline_list(protected_paths)
    if max_changed_lines is not None:
        context["max_changed_lines"] = str(max_changed_lines)
    if validation_commands:
        context["validation_commands"] = inline_list(validation_commands)
    return context


def inline_list(items: Sequence[str], *, empty: str = "none") -> str:
    """Items as an inline, comma-separated list of code spans (for prompt placeholders)."""
    return ", ".join(f"`{item}`" for item in items) if items else empty
