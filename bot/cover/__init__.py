"""The pure core of `/cover` (DESIGN §8.5, seed 002): discovery, zones, waves, metadata, mutants.

Nothing here runs a process or talks to GitHub or a model: the workflow
(`bot.workflows.cover.story`) and the test runners (`bot.cover.runners`) do, on top of these.
"""
