"""The TDD workflow: red-green-refactor cycles judged by the runner (the pure core is bot.tdd)."""
