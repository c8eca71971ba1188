"""Options the job commands share, as typed aliases, and the checks options share."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic_core import PydanticCustomError, core_schema

from bot.cli._common import usage_error

REPO_HINT = "OWNER/REPO (e.g. octo/app)"
"""What a repository option takes, for its messages."""

MAX_COUNT = 100_000
"""The most a count option (--limit, --max-cycles) takes: more is a typo, and SQLite and
the loops take no number past 2**63."""
MAX_THREADS = 256
"""The most worker threads one process starts (--concurrency, serve --workers)."""
MAX_NUMBER = 2**31 - 1
"""GitHub's issue and pull request numbers are 32-bit."""


class GivenPath(type(Path())):  # type: ignore[misc]
    """A path option's type: "" is refused (exit 2, naming the option), not read as "."."""

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> Any:
        """typer validates a path through pydantic: this refuses the empty one there."""

        def check(value: Any) -> Path:
            if isinstance(value, str) and not value.strip():
                raise PydanticCustomError(
                    "empty_path", "an empty path: give a file or folder (. for this one)"
                )
            return Path(value)

        return core_schema.no_info_plain_validator_function(check)


def non_empty(what: str) -> Callable[[typer.CallbackParam, str | None], str | None]:
    """A text option's check: "" or blanks is refused naming `what` to give (exit 2)."""

    def check(param: typer.CallbackParam, value: str | None) -> str | None:
        # Read as "not given", an empty value would silently mean all (or the default).
        if value is None or value.strip():
            return value
        flag = param.opts[0] if param.opts else str(param.name)
        raise usage_error(f"{flag} {value!r}: give {what}, or leave {flag} out")

    return check


def given(what: str) -> Callable[[typer.CallbackParam, str], str]:
    """A required text option's check: "" or blanks is refused naming `what` to give (exit 2)."""

    def check(param: typer.CallbackParam, value: str) -> str:
        if value.strip():
            return value
        flag = param.opts[0] if param.opts else str(param.name)
        where = f", or set {param.envvar}" if isinstance(param.envvar, str) else ""
        raise usage_error(f"{flag} {value!r}: give {what}{where}")

    return check


EVENT_NAME_HINT = "the event's name (e.g. issues, push)"
"""What an event name option takes, for its messages."""

GitHubRepoOption = Annotated[
    str | None,
    typer.Option(
        "--github-repo",
        callback=non_empty(REPO_HINT),
        help="OWNER/REPO (default: from the origin remote, which must be on GitHub).",
    ),
]
CheckoutDryRunOption = Annotated[
    bool, typer.Option("--dry-run", help="Commit locally; push and post nothing.")
]


def checkout_dir(help: str) -> Any:
    """The `--repo` option of a folder that must exist ("" refused, not read as ".")."""
    return typer.Option("--repo", exists=True, file_okay=False, path_type=GivenPath, help=help)


CheckoutOption = Annotated[Path, checkout_dir("The checkout (its branch is used).")]
JsonOption = Annotated[bool, typer.Option("--json", help="Print the result as JSON.")]


def finite_float(
    default: Any = ...,
    *decls: str,
    low: float,
    high: float | None = None,
    unit: str,
    help: str,
    envvar: str | None = None,
) -> Any:
    """A float option refusing nan, inf and numbers outside `low`..`high` (exit 2, naming it)."""
    span = f"from {low:g} to {high:g}" if high is not None else f"{low:g} or more"

    def check(ctx: typer.Context, param: typer.CallbackParam, value: float | None) -> float | None:
        # typer's own min/max would read nan as "above the maximum": one check says it all.
        if value is None or (
            math.isfinite(value) and low <= value and (high is None or value <= high)
        ):
            return value
        flag = param.opts[0] if param.opts else str(param.name)
        source = ctx.get_parameter_source(str(param.name))
        named = f"{flag} {value:g}"
        if source is not None and source.name == "ENVIRONMENT" and param.envvar:
            named = f"{param.envvar} {value:g} ({flag})"
        raise usage_error(f"{named}: give a finite number of {unit}, {span}")

    return typer.Option(
        default,
        *decls,
        callback=check,
        envvar=envvar,
        help=f"{help.rstrip('.')}; {span}.",
    )
