"""Follow-ups on agentbot's own pull requests: which threads to answer, what the agent is
told, and the markers kept in the pull request body (pure; the flow is in bot.workflows)."""
