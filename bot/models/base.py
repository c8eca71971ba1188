"""The base of every shared model, and the clock default for timestamps."""

from __future__ import annotations

from datetime import UTC, datetime

from pydantic import BaseModel, ConfigDict


def utcnow() -> datetime:
    """Return the current time, timezone-aware (UTC)."""
    return datetime.now(UTC)


class Model(BaseModel):
    """Base for every model: unknown fields are errors, values are validated on assignment."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)
