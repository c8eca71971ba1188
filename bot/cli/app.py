"""The typer app every command module registers on, and the exit codes."""

from __future__ import annotations

import typer

from bot import __version__

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_NEUTRAL = 0, 1, 2, 78

app = typer.Typer(
    name="agentbot",
    help="Turn GitHub events into validated pull requests written by LLM agents.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


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
