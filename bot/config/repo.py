"""RepoConfig: `.github/agentbot.yml` (DESIGN §4); errors name the key and line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import Field, field_validator
from pydantic import ValidationError as PydanticValidationError

from bot.config.sections import (
    LOGIN,
    Budget,
    Commands,
    Execution,
    FollowUpConfig,
    Labels,
    Limits,
    Permission,
    PlanConfig,
    PullRequestConfig,
    RoleConfig,
    SandboxConfig,
    Section,
    ValidationConfig,
)
from bot.errors import ConfigError
from bot.input_files import read_input

REPO_CONFIG_PATH = ".github/agentbot.yml"
PRICE_FIELDS = ("input", "output", "cache_write", "cache_read")
ROLE_NAMES = (
    "issue_fixer", "implementer", "fixer", "tester", "tdd_implementer", "refactorer",
    "supervisor", "analyst", "test_architect", "test_writer", "reviewer", "planner",
)  # fmt: skip
"""The agent roles `roles:` may tune (bot.models.AgentRole's values; a test keeps them equal)."""


class RepoConfig(Section):
    """A repository's `.github/agentbot.yml`; every key optional, unknown keys are errors."""

    labels: Labels = Field(default_factory=Labels)
    commands: Commands = Field(default_factory=Commands)
    min_permission: Permission = "write"
    allowed_bots: list[str] = Field(default_factory=list)
    model: str = "claude-sonnet-4-6"
    """Default model; claude-sonnet-4-5 (DESIGN §4) reaches end of life on 2026-11-30."""
    roles: dict[str, RoleConfig] = Field(default_factory=dict)
    budget: Budget = Field(default_factory=Budget)
    validation: ValidationConfig = Field(default_factory=ValidationConfig)
    limits: Limits = Field(default_factory=Limits)
    pull_request: PullRequestConfig = Field(default_factory=PullRequestConfig)
    execution: Execution = Field(default_factory=Execution)
    followup: FollowUpConfig = Field(default_factory=FollowUpConfig)
    sandbox: SandboxConfig = Field(default_factory=SandboxConfig)
    prices: dict[str, dict[str, float]] = Field(default_factory=dict)
    """Per-model USD per million tokens: {model: {input, output, cache_write, cache_read}}."""
    commit_session_artifacts: bool = False
    plan: PlanConfig = Field(default_factory=PlanConfig)
    assignee: str = ""
    """A login whose assignment to an issue starts a fix (the App's own account always does)."""

    @field_validator("prices")
    @classmethod
    def _prices(cls, value: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
        for model, fields in value.items():
            for key, price in fields.items():
                if key not in PRICE_FIELDS:
                    raise ValueError(f"{model}.{key}: a price is one of {', '.join(PRICE_FIELDS)}")
                if price < 0:
                    raise ValueError(f"{model}.{key}: a price is USD per million tokens, >= 0")
        return value

    @field_validator("roles")
    @classmethod
    def _roles(cls, value: dict[str, RoleConfig]) -> dict[str, RoleConfig]:
        unknown = sorted(set(value) - set(ROLE_NAMES))
        if unknown:
            raise ValueError(f"unknown role {unknown[0]!r}; roles are {', '.join(ROLE_NAMES)}")
        return value

    @field_validator("assignee")
    @classmethod
    def _login(cls, value: str) -> str:
        if value.strip() and not LOGIN.fullmatch(value.strip()):
            raise ValueError(f"a GitHub login (letters, digits, -), got {value!r}")
        return value.strip()

    @classmethod
    def from_text(cls, text: str, *, source: str = REPO_CONFIG_PATH) -> RepoConfig:
        """Parse YAML text; errors name the key path and line."""
        try:
            node = yaml.compose(text, Loader=yaml.SafeLoader)
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            line = mark.line + 1 if mark is not None else None
            # PyYAML's own text names the input `"<unicode string>"`: say it in our words.
            problem = getattr(exc, "problem", None) or str(exc).split("\n")[0]
            context = getattr(exc, "context", None)
            where = f"{source}:{line}:{mark.column + 1}" if mark is not None else source
            detail = f"{problem} ({context})" if context else problem
            error = ConfigError(f"{where}: not valid YAML: {detail}")
            error.line = line
            raise error from None
        duplicate = _duplicate_key(node)
        if duplicate is not None:  # PyYAML keeps the last silently; the writer meant one of them
            path, line, first = duplicate
            raise ConfigError(
                f"duplicate key in {source} (first on line {first}): keep one of them",
                path=path,
                line=line,
            )
        if data is None:
            return cls()
        if not isinstance(data, dict):
            raise ConfigError(f"{source}: the top level must be a mapping of keys", line=1)
        # A section written with no value (`validation:`) means its defaults, as a user expects.
        sections = {
            name for name, f in cls.model_fields.items()
            if isinstance(f.annotation, type) and issubclass(f.annotation, Section)
        }  # fmt: skip
        data = {k: v for k, v in data.items() if not (v is None and k in sections)}
        try:
            return cls.model_validate(data)
        except PydanticValidationError as exc:
            err = exc.errors()[0]
            loc = [str(p) for p in err["loc"]]
            path = ".".join(loc)
            what = "unknown key" if err["type"] == "extra_forbidden" else err["msg"]
            raise ConfigError(
                f"{what} in {source}; see the configuration reference in the README",
                path=path,
                line=_line_of(node, list(err["loc"])),
            ) from exc

    @classmethod
    def from_file(cls, path: Path) -> RepoConfig:
        """Load a file; a missing file means all defaults."""
        try:
            text = read_input(path).decode("utf-8")
        except FileNotFoundError:
            return cls()
        except UnicodeDecodeError as exc:
            raise ConfigError(f"not UTF-8 text (byte {exc.start})", path=str(path)) from None
        except OSError as exc:
            raise ConfigError(f"cannot read it: {exc.strerror}", path=str(path)) from None
        return cls.from_text(text, source=str(path))

    def model_for(self, role: str) -> str:
        """The model a role uses: its override, else the repo's model."""
        override = self.roles.get(role)
        return override.model if override and override.model else self.model


def _duplicate_key(root: yaml.Node | None) -> tuple[str, int, int] | None:
    """The first key written twice in one mapping: its path, its line and its first line."""
    stack: list[tuple[yaml.Node, str]] = [(root, "")] if root is not None else []
    seen: set[int] = set()  # an alias repeats a node: walk it once
    while stack:
        node, path = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        children: list[tuple[yaml.Node, str]] = []
        if isinstance(node, yaml.MappingNode):
            lines: dict[str, int] = {}
            for key, value in node.value:
                name, line = str(key.value), key.start_mark.line + 1
                where = f"{path}.{name}" if path else name
                if name in lines and name != "<<":  # `<<` merges may repeat
                    return where, line, lines[name]
                lines.setdefault(name, line)
                children.append((value, where))
        elif isinstance(node, yaml.SequenceNode):
            children = [(v, f"{path}.{i}" if path else str(i)) for i, v in enumerate(node.value)]
        stack.extend(reversed(children))
    return None


def _line_of(node: yaml.Node | None, loc: list[Any]) -> int | None:
    """Follow `loc` through the composed YAML tree; return the 1-based line of the deepest hit."""
    line = None
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                if key.value == str(part):
                    line = key.start_mark.line + 1
                    node = value
                    break
            else:
                return line
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
            if part >= len(node.value):
                return line
            node = node.value[part]
            line = node.start_mark.line + 1
        else:
            return line
    return line
