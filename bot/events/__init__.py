"""Pure event routing (DESIGN §3): a webhook or Actions event becomes a Job or an Ignore.

Imports no port. `screen` and `settle` (and `decide`, both at once) are total: any
payload, however malformed, gets a decision.
"""

from __future__ import annotations

from bot.events.decide import Screened, decide, screen, settle
from bot.events.decision import Ignore, decision_json, describe
from bot.events.delivery import Delivery
from bot.events.payloads import installation_id, repo_full_name

__all__ = [
    "Delivery",
    "Ignore",
    "Screened",
    "decide",
    "decision_json",
    "describe",
    "installation_id",
    "repo_full_name",
    "screen",
    "settle",
]
