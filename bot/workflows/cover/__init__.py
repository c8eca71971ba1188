"""The /cover workflow: tests for a PR's changed methods (the pure core is bot.cover)."""
