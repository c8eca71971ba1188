"""Agent roles as data (DESIGN §7): one module per role, each defining `ROLE`.

`get_role(name)` finds a role by its `AgentRole` value (`issue_fixer`, also `issue-fixer`
or `IssueFixer`). Role modules added later (tester, refactorer…) register themselves by
defining a module-level `ROLE`: the registry imports every module of this package on
first use.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from functools import cache

from bot.roles.base import (
    DEFAULT_CONTEXT,
    PROMPT_CONTEXT_KEYS,
    WORKSPACE_TOOLS,
    Role,
    inline_list,
    repo_context,
)
from bot.roles.fixer import ROLE as FIXER
from bot.roles.implementer import ROLE as IMPLEMENTER
from bot.roles.issue_fixer import ROLE as ISSUE_FIXER

__all__ = [
    "DEFAULT_CONTEXT",
    "FIXER",
    "IMPLEMENTER",
    "ISSUE_FIXER",
    "PROMPT_CONTEXT_KEYS",
    "WORKSPACE_TOOLS",
    "Role",
    "get_role",
    "inline_list",
    "registry",
    "repo_context",
]


@cache
def registry() -> dict[str, Role]:
    """Every role defined in this package, by name."""
    roles: dict[str, Role] = {}
    for info in pkgutil.iter_modules(__path__):
        if info.name == "base":
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        role = getattr(module, "ROLE", None)
        if isinstance(role, Role):
            roles[role.name.value] = role
    return roles


def get_role(name: str) -> Role:
    """The role called `name` (snake_case, kebab-case or CamelCase); ValueError if none."""
    key = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name.strip()).lower().replace("-", "_")
    roles = registry()
    if key not in roles:
        raise ValueError(f"unknown role {name!r}; defined roles: {', '.join(sorted(roles))}")
    return roles[key]
