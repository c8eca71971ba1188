"""Red-green-refactor cycles (DESIGN §8.4, seeds 000 and 003): the pure parts of `agentbot tdd`.

`kata` parses a kata or a feature request into requirements, `verdict` judges a test run
(RED for the right reason, overshoot, GREEN), `state` holds the cycles done and reads them
back from the branch, `skeleton` makes a fresh project per language, `suite` runs the
repository's test command, `table` renders the PR body. The flow is `bot.workflows.tdd.story`.
"""
