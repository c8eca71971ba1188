"""The `agentbot` command line: the only place (with webhooks/app.py) that reads the environment."""

from __future__ import annotations

import sys

import typer

from bot import __version__
from bot.errors import AgentbotError

app = typer.Typer(
    name="agentbot",
    help="Turn GitHub events into validated pull requests written by LLM agents.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_NEUTRAL = 0, 1, 2, 78


def _version(value: bool) -> None:
    if value:
        typer.echo(f"agentbot {__version__}")
        raise typer.Exit(EXIT_OK)


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Turn GitHub events into validated pull requests written by LLM agents."""


def main() -> None:
    """Console-script entry: run the CLI; our errors become a one-line message and exit 2."""
    try:
        app()
    except AgentbotError as exc:
        typer.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_USAGE)
