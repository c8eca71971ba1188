"""Follow-ups on agentbot's own PRs: review threads and failed CI (rules in bot.followup)."""
