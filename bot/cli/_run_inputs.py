"""What `agentbot run` reads before any call to GitHub: the payload, its repository, the inputs."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from bot.cli._common import repo_ok, usage_error
from bot.events import repo_full_name
from bot.input_files import read_input


def event_payload(path: Path) -> dict[str, Any]:
    """The event's payload, naming its repository (GITHUB_REPOSITORY where it names none)."""
    payload = _read(path)
    # Actions always sets it to OWNER/REPO; anything else was set by hand, and the run's
    # link is built from it even when the payload names the repository.
    given = os.environ.get("GITHUB_REPOSITORY", "")
    if given and not repo_ok(given):
        raise usage_error(
            f"GITHUB_REPOSITORY must be OWNER/REPO (e.g. octo/app), got {given!r}: set it to"
            " the repository the event is for"
        )
    if "repository" not in payload and given:
        # `schedule` payloads carry no repository; the runner's variable names it.
        payload["repository"] = {"full_name": given}
    if repo_full_name(payload) is None:
        named = payload.get("repository")
        name = named.get("full_name") if isinstance(named, dict) else named
        if name is not None:  # named, but not as GitHub names one: say what was there
            raise usage_error(
                f"{path}: the payload's repository {name!r} is not OWNER/REPO (e.g. octo/app)"
            )
        raise usage_error("the event names no repository and GITHUB_REPOSITORY is not set")
    return payload


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(read_input(path).decode("utf-8"))
    except OSError as exc:
        raise usage_error(f"cannot read the event payload {path}: {exc.strerror}") from exc
    except UnicodeDecodeError:
        raise usage_error(f"{path}: the event payload is not UTF-8 JSON") from None
    except json.JSONDecodeError as exc:
        raise usage_error(f"{path}:{exc.lineno}: the event payload is not valid JSON") from exc
    except RecursionError:
        raise usage_error(
            f"{path}: the event payload is nested too deeply to be from GitHub"
        ) from None
    if not isinstance(data, dict):
        raise usage_error(f"{path}: the event payload is not a JSON object")
    return data


def check_run_inputs(inputs: Mapping[str, str], config_path: str) -> None:
    """`agentbot run`'s refuel inputs and config path, named (exit 2) when wrong."""
    from bot.events.triggers import dispatch_params

    if any(inputs.values()):
        _, problem = dispatch_params(inputs)
        for name in inputs if problem else ():
            # The problem names the action's input; here it came from an option or a variable.
            where = f"input {name} (--{name.replace('_', '-')} / AGENTBOT_{name.upper()})"
            problem = problem.replace(f"input {name} ", f"{where} ")
        if problem:
            raise usage_error(problem)
    path = Path(config_path)
    if not config_path.strip() or path.is_absolute() or ".." in path.parts:
        raise usage_error(f"--config: {config_path!r} must be a path inside the repository")
