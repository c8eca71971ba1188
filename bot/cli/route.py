"""`agentbot route`: print what agentbot would do with an event, as one JSON line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from bot.cli.app import EXIT_OK, EXIT_USAGE, app
from bot.cli.options import EVENT_NAME_HINT, GivenPath, given
from bot.config import RepoConfig
from bot.errors import ConfigError
from bot.events import decide, decision_json
from bot.input_files import read_input


def _fail(message: str) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(EXIT_USAGE)


def _read_payload(path: Path) -> dict[str, Any]:
    try:
        text = read_input(path).decode("utf-8")
    except FileNotFoundError:
        raise _fail(f"payload file {path} does not exist") from None
    except OSError as exc:
        raise _fail(f"cannot read payload file {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise _fail(f"cannot read payload file {path}: {exc}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _fail(
            f"payload file {path} is not valid JSON (line {exc.lineno}, column {exc.colno}):"
            f" {exc.msg}"
        ) from None
    except RecursionError:
        raise _fail(f"payload file {path} is nested too deeply to be a webhook payload") from None
    if not isinstance(data, dict):  # as `agentbot run`: no webhook payload is anything else
        raise _fail(f"payload file {path} is not a JSON object, as every webhook payload is")
    return data


def _read_config(path: Path | None) -> RepoConfig:
    if path is None:
        return RepoConfig()
    try:
        text = read_input(path).decode("utf-8")
    except OSError as exc:
        raise _fail(f"cannot read config file {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise _fail(f"cannot read config file {path}: {exc}") from None
    try:
        return RepoConfig.from_text(text, source=str(path))
    except ConfigError as exc:
        raise _fail(str(exc)) from None


@app.command()
def route(
    event_name: Annotated[
        str,
        typer.Option(
            "--event-name",
            envvar="GITHUB_EVENT_NAME",
            callback=given(EVENT_NAME_HINT),
            help="Webhook or Actions event name.",
        ),
    ],
    payload: Annotated[
        Path,
        typer.Option(
            "--payload",
            envvar="GITHUB_EVENT_PATH",
            path_type=GivenPath,
            help="File holding the event's JSON payload.",
        ),
    ],
    config: Annotated[
        Path | None,
        typer.Option(
            path_type=GivenPath,
            help="The repository's .github/agentbot.yml (default: all defaults).",
        ),
    ] = None,
    bot_login: Annotated[
        str, typer.Option(help="The bot's own login; its events are ignored (no loops).")
    ] = "",
    default_branch: Annotated[
        str | None, typer.Option(help="Default branch when the payload does not name it.")
    ] = None,
) -> None:
    """Print the routing decision as one JSON line; exit 0, even when the event is ignored."""
    from bot.workflows.handlers import HANDLERS  # routed kinds are the built ones

    repo_config = _read_config(config)
    data = _read_payload(payload)
    decision = decide(
        event_name,
        data,
        repo_config,
        kinds=HANDLERS,
        bot_login=bot_login,
        default_branch=default_branch,
    )
    typer.echo(json.dumps(decision_json(decision), ensure_ascii=True))
    raise typer.Exit(EXIT_OK)
