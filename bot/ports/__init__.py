"""The ports bundle a workflow receives (`JobEnv`): built by the entry point, by fakes in tests.

Everything that leaves a job goes through two of its fields: `github` (every REST write)
and `push` (every git push). A dry run swaps both for recorders (`bot.ports.recording`);
an outbound check can wrap them the same way.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from bot.clock import Clock, SystemClock
from bot.config import RepoConfig
from bot.cost import SpendMeter
from bot.llm import LLM
from bot.models import Job, JobResult
from bot.ports.facts import FactCache
from bot.ports.github import GitHubPort, GitHubProxy, GitHubReads, GitHubWrites

if TYPE_CHECKING:
    from bot.git import Workspace
    from bot.sandbox import Sandbox

__all__ = [
    "FactCache",
    "GitHubFor",
    "GitHubPort",
    "GitHubProxy",
    "GitHubReads",
    "GitHubWrites",
    "Handler",
    "JobEnv",
    "Push",
    "push_branch",
]

Push = Callable[["Workspace", str], None]
"""Publish a workspace's branch to origin."""

GitHubFor = Callable[[int | None, str], GitHubPort]
"""(installation id from the delivery, `owner/name`) -> a client acting for it."""


def push_branch(ws: Workspace, branch: str) -> None:
    """Push `branch` with a lease: our own branches may be rewritten, nobody else's."""
    ws.push(branch, force_with_lease=True)


@dataclass
class JobEnv:
    """Everything a job handler may use; no module-level clients anywhere else."""

    github: GitHubPort
    config: RepoConfig
    llm_factory: Callable[[str], LLM]
    """Model name -> an LLM adapter for it."""
    data_dir: Path
    server_url: str = "https://github.com"
    """Clone base: `{server_url}/{owner}/{name}.git`; `file://` in tests."""
    checkout: Path | None = None
    """An existing checkout to work in (Action mode) instead of a fresh clone."""
    push: Push = push_branch
    """How a branch leaves the job (a recorder in dry runs)."""
    echo: Callable[[str], None] = print
    """Where dry runs print what they would have posted."""
    clock: Clock = field(default_factory=SystemClock)
    log: logging.Logger = field(default_factory=lambda: logging.getLogger("agentbot.job"))
    sandbox: Sandbox | None = None
    """The job's sandbox (bot.sandbox), where the agent's tools and validation run; the doors
    always give one, and it ends with the job (None only in tests that run commands directly)."""
    bot_login: str = ""
    """agentbot's own login (`name[bot]`) when the door knows it; empty: any App account's
    comment counts as agentbot's (no person's login can end in `[bot]`)."""
    commands_from: Path | None = None
    """Where validation reads the repository's own commands (Makefile, package.json, CI...)
    instead of the workspace: the base's default branch for a fork's pull request."""
    meter: SpendMeter | None = None
    """The App's spend caps over time: counts what the job spends and stops it at a cap."""
    instructions_used: list[str] = field(default_factory=list)
    """Repository instruction files the job's agents were given (`bot.instructions`), for
    the pull request body; filled as agents run."""


Handler = Callable[[Job, JobEnv], JobResult]
"""A workflow entry: run one job, return its result (never raise for a job failure)."""
