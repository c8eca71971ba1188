"""The `agentbot` command line: the only place (with webhooks/app.py) that reads the environment.

Each subcommand lives in a module of this package that decorates the shared `app`
(`bot.cli.app`); `load_app()` imports them all, so a new command is a new module.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys

import typer

from bot.cli.app import EXIT_FAILED, EXIT_USAGE, app
from bot.errors import AgentbotError, ConfigError, TaskParseError

__all__ = ["app", "harden", "load_app", "main"]


def load_app() -> typer.Typer:
    """Import every command module (they register on `app`) and return the app."""
    for mod in pkgutil.iter_modules(__path__):
        if not mod.name.startswith("_") and mod.name != "app":
            importlib.import_module(f"{__name__}.{mod.name}")
    return app


def harden() -> None:
    """Make this process undumpable, so same-user children cannot read its memory or environ.

    Agent tools and the repository's tests run as our children with a scrubbed environment;
    without this they could still read `/proc/<our pid>/environ` (tokens, API keys). Root
    (or sudo) still can: run agentbot as an unprivileged user where that matters.
    """
    if sys.platform.startswith("linux"):
        import ctypes

        pr_set_dumpable = 4
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(pr_set_dumpable, 0, 0, 0, 0)


def main() -> None:
    """Console-script entry: run the CLI; input errors exit 2, other failures of ours exit 1."""
    harden()
    try:
        load_app()()
    except (ConfigError, TaskParseError) as exc:
        typer.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    except AgentbotError as exc:
        # GitHub outages, git failures and the like are failures, not usage errors.
        typer.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_FAILED)
