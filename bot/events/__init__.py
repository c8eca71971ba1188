"""Pure event routing (DESIGN §3): a webhook or Actions event becomes a Job or an Ignore.

Imports no port. `decide` is total: any payload, however malformed, gets a decision.
"""

from __future__ import annotations

from bot.events.decide import decide
from bot.events.decision import Ignore, decision_json, describe
from bot.events.payloads import installation_id, repo_full_name

__all__ = ["Ignore", "decide", "decision_json", "describe", "installation_id", "repo_full_name"]
