"""Use cases: one module per job kind (fix_issue, implement, refuel), registered in bot.jobs."""
