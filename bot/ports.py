"""The ports bundle a workflow receives: built by the entry point, by the fakes in tests."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from bot.clock import Clock, SystemClock
from bot.config import RepoConfig
from bot.llm import LLM
from bot.models import Job, JobResult

if TYPE_CHECKING:
    from bot.github import GitHub


@dataclass
class JobEnv:
    """Everything a job handler may use; no module-level clients anywhere else."""

    github: GitHub
    config: RepoConfig
    llm_factory: Callable[[str], LLM]
    """Model name -> an LLM adapter for it."""
    data_dir: Path
    server_url: str = "https://github.com"
    """Clone base: `{server_url}/{owner}/{name}.git`; `file://` in tests."""
    dry_run: bool = False
    checkout: Path | None = None
    """An existing checkout to work in (Action mode) instead of a fresh clone."""
    echo: Callable[[str], None] = print
    """Where dry runs print what they would have posted."""
    clock: Clock = field(default_factory=SystemClock)
    log: logging.Logger = field(default_factory=lambda: logging.getLogger("agentbot.job"))


Handler = Callable[[Job, JobEnv], JobResult]
"""A workflow entry: run one job, return its result (never raise for a job failure)."""
