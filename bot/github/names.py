"""Names checked before any request: owner/name, list states, permission roles."""

from __future__ import annotations

from typing import Literal, cast

from bot.errors import GitHubError

ROLES = ("none", "read", "triage", "write", "maintain", "admin")
STATES = ("open", "closed", "all")


def split_repo(repo: str) -> tuple[str, str]:
    """("owner", "name") of "owner/name"; anything else is refused before any request."""
    owner, _, name = repo.partition("/")
    if not owner or not name or "/" in name:
        raise GitHubError(f"not an owner/name repository: {repo!r}")
    return owner, name


def list_state(state: str) -> Literal["open", "closed", "all"]:
    """A list filter state, checked: open, closed or all."""
    if state not in STATES:
        raise GitHubError(f"state must be one of {', '.join(STATES)}, not {state!r}")
    return cast(Literal["open", "closed", "all"], state)
