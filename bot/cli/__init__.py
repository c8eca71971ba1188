"""The `agentbot` command line: the only place (with webhooks/app.py) that reads the environment.

Each subcommand lives in a module of this package that decorates the shared `app`
(`bot.cli.app`); `load_app()` imports them all, so a new command is a new module.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import sys
import traceback
from typing import Any, NoReturn

import typer
import typer.main

from bot.cli.app import EXIT_FAILED, EXIT_USAGE, app
from bot.errors import AgentbotError, ConfigError, TaskParseError

__all__ = ["app", "command", "harden", "load_app", "main"]


def load_app() -> typer.Typer:
    """Import every command module (they register on `app`) and return the app."""
    for mod in pkgutil.iter_modules(__path__):
        if not mod.name.startswith("_") and mod.name != "app":
            importlib.import_module(f"{__name__}.{mod.name}")
    return app


def command() -> Any:
    """The click command `main` runs: the app, with flags shown without a type."""
    root = typer.main.get_command(load_app())
    _hide_flag_types(root)
    return root


def _hide_flag_types(cmd: Any) -> None:
    # typer's help prints `<bool>` beside every on/off flag, which takes no value at all.
    # (typer builds on its own vendored click: ask for attributes, not click's classes.)
    for param in cmd.params:
        if getattr(param, "is_flag", False):
            param.metavar = ""
    make_help = cmd.get_help_option

    def help_option(ctx: Any) -> Any:
        option = make_help(ctx)  # made per context, so it is not in `cmd.params`
        if option is not None:
            option.metavar = ""
        return option

    cmd.get_help_option = help_option
    subcommands: dict[str, Any] = getattr(cmd, "commands", {})
    for sub in subcommands.values():
        _hide_flag_types(sub)


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
    """Console-script entry: input errors exit 2, other failures exit 1, in one line each.

    No traceback reaches a user; `AGENTBOT_DEBUG=1` prints it under the line.
    """
    harden()
    debug = os.environ.get("AGENTBOT_DEBUG", "") not in ("", "0")
    try:
        command()()
    except (ConfigError, TaskParseError) as exc:
        _fail(f"error: {exc}", EXIT_USAGE, debug=debug)
    except AgentbotError as exc:
        # GitHub outages, git failures and the like are failures, not usage errors.
        _fail(f"error: {exc}", EXIT_FAILED, debug=debug)
    except Exception as exc:
        _fail(
            f"error: internal error: {type(exc).__name__}: {exc}"
            " (AGENTBOT_DEBUG=1 prints the traceback; please report it)",
            EXIT_FAILED,
            debug=debug,
        )


def _fail(line: str, code: int, *, debug: bool) -> NoReturn:
    if debug:
        traceback.print_exc()
    typer.echo(line, err=True)
    sys.exit(code)
