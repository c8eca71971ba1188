"""The `agentbot` command line: the only place (with webhooks/app.py) that reads the environment.

Each subcommand lives in a module of this package that decorates the shared `app`
(`bot.cli.app`); `load_app()` imports them all, so a new command is a new module.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys

import typer

from bot.cli.app import EXIT_USAGE, app
from bot.errors import AgentbotError

__all__ = ["app", "load_app", "main"]


def load_app() -> typer.Typer:
    """Import every command module (they register on `app`) and return the app."""
    for mod in pkgutil.iter_modules(__path__):
        if not mod.name.startswith("_") and mod.name != "app":
            importlib.import_module(f"{__name__}.{mod.name}")
    return app


def main() -> None:
    """Console-script entry: run the CLI; our errors become a one-line message and exit 2."""
    try:
        load_app()()
    except AgentbotError as exc:
        typer.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_USAGE)
