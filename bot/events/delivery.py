"""One delivery as it travels from a door to its job: the event, its payload, what both name.

Both doors build a `Delivery` (the Action from `$GITHUB_EVENT_PATH`, the App from a
stored webhook) and hand it to the one use case; nothing downstream reads the raw payload
again for the repository, installation, default branch or issue number.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from bot.events.decision import Ignore
from bot.events.payloads import installation_id, repo_full_name


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _number(payload: Mapping[str, Any]) -> int | None:
    """The issue or pull request number the payload is about, when it names one."""
    for key in ("issue", "pull_request"):
        node = payload.get(key)
        value = node.get("number") if isinstance(node, Mapping) else None
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


@dataclass(frozen=True)
class Delivery:
    """An event and its JSON payload, with the fields every step needs read out once."""

    event_name: str
    payload: Mapping[str, Any]
    delivery_id: str = ""
    repo: str | None = field(init=False)
    """`owner/name`, None when the payload names no valid repository."""
    installation_id: int | None = field(init=False)
    default_branch: str | None = field(init=False)
    """The repository's default branch as the payload states it (most events carry it)."""
    number: int | None = field(init=False)
    sender: str = field(init=False)

    def __post_init__(self) -> None:
        repo = self.payload.get("repository")
        sender = self.payload.get("sender")
        object.__setattr__(self, "repo", repo_full_name(self.payload))
        object.__setattr__(self, "installation_id", installation_id(self.payload))
        branch = repo.get("default_branch") if isinstance(repo, Mapping) else None
        object.__setattr__(self, "default_branch", _text(branch))
        object.__setattr__(self, "number", _number(self.payload))
        login = sender.get("login") if isinstance(sender, Mapping) else None
        object.__setattr__(self, "sender", _text(login) or "")

    @classmethod
    def from_json(
        cls, event_name: str, body: bytes | str, delivery_id: str = ""
    ) -> Delivery | Ignore:
        """Parse a stored delivery; a body that is not a JSON object is an Ignore."""
        try:
            payload = json.loads(body)
        except ValueError:
            return Ignore(reason="the stored payload is not JSON")
        if not isinstance(payload, dict):
            return Ignore(reason=f"{event_name} payload is not a JSON object")
        return cls(event_name, payload, delivery_id)
