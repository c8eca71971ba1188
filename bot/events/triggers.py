"""Pure text rules of the triggers: comment commands, paths, tasks.md pushes, dispatch inputs."""

from __future__ import annotations

import json
import math
import posixpath
from collections.abc import Mapping, Sequence
from typing import Any

from bot.config import Commands
from bot.events.payloads import Commit
from bot.models import JobKind

TASKS_MD = "tasks.md"
COMMAND_NAMES = ("fix", "implement", "cover")


def match_command(
    body: str, commands: Commands, names: Sequence[str] = COMMAND_NAMES
) -> tuple[str, str] | None:
    """Return `(name, rest of the first line)` when `body` starts with one of the `names`' commands.

    Leading whitespace is allowed; the command must be followed by whitespace or the end
    (so `/fixes` is not `/fix`); case is ignored, as people type `/Fix` too. Longer commands
    are tried first, so `/agent fix` wins over `/agent` when both are configured.
    """
    text = body.lstrip()
    candidates = sorted(
        ((name, getattr(commands, name)) for name in names),
        key=lambda item: len(item[1]),
        reverse=True,
    )
    for name, command in candidates:
        # An empty command would match every comment; treat it as switched off.
        if not command.strip():
            continue
        head, tail = text[: len(command)], text[len(command) :]
        if head.casefold() != command.casefold():
            continue
        if tail and not tail[0].isspace():
            continue
        return name, tail.split("\n", 1)[0].strip()
    return None


def implement_path(rest: str) -> tuple[str, str]:
    """Return `(tasks_path, problem)` from what follows `/implement`; problem is "" if fine.

    The first word is the path (backticks and quotes around it are dropped). It must stay
    inside the repository: relative, no `..`, no backslashes.
    """
    words = rest.split()
    if not words:
        return "", ""
    path = words[0].strip("`'\"")
    if not path:
        return "", ""
    if path.startswith("/") or "\\" in path or "\x00" in path:
        return path, f"`{path}` is not a relative path inside the repository"
    if ".." in path.split("/"):
        return path, f"`{path}` leaves the repository"
    return posixpath.normpath(path), ""


def implement_args(rest: str) -> tuple[str, str, str]:
    """`/implement [path] [selection]` -> `(tasks_path, selection, problem)`.

    The first word is the tasks path when it looks like one (it ends with `.md` or holds a
    `/`); the rest, read by the job, selects tasks (`T010-T015`, `phase 3`, `US2`...).
    """
    words = rest.split(maxsplit=1)
    first = words[0].strip("`'\"") if words else ""
    if first.endswith(".md") or "/" in first or "\\" in first:
        path, problem = implement_path(words[0])
        return path, words[1].strip() if len(words) > 1 else "", problem
    return "", rest.strip(), ""


def cover_args(rest: str) -> dict[str, Any]:
    """`/cover [path/or/symbol …] [--force]` -> `{"targets": [...], "force": bool}`.

    Targets only narrow which changed methods get tests (a path, folder, glob or method
    name); `--force` (or `-f`) goes on past new red-zone methods.
    """
    words = [w.strip("`'\"") for w in rest.split()]
    force = any(w in ("--force", "-f") for w in words)
    targets = [w for w in words if w and w not in ("--force", "-f")]
    return {"targets": targets, "force": force}


def changed_tasks_md(commits: Sequence[Commit], head_commit: Commit | None) -> list[str]:
    """Paths named `tasks.md` (at any depth) that the push added or modified and left in place.

    Commits are replayed in order, so a file added then removed in the same push does not
    count. `head_commit` is a fallback for payloads whose `commits` list is empty.
    """
    present: dict[str, None] = {}  # an ordered set
    for commit in list(commits) or ([head_commit] if head_commit else []):
        for path in [*commit.added, *commit.modified]:
            present[path] = None
        for path in commit.removed:
            present.pop(path, None)
    return [p for p in present if p == TASKS_MD or p.endswith("/" + TASKS_MD)]


def dispatch_params(inputs: Mapping[str, Any]) -> tuple[dict[str, Any], str]:
    """Parse refuel inputs (`label`, `limit`, `max_usd`); return `(params, problem)`.

    GitHub sends `workflow_dispatch` inputs as strings (typed values come through the API
    too); an empty string means "not given". Other inputs are the workflow's own business.
    """
    params: dict[str, Any] = {}
    label = inputs.get("label")
    if label is not None and label != "":
        if not isinstance(label, str) or not label.strip():
            return {}, f"input label must be a label name, got {label!r}"
        params["label"] = label.strip()
    limit = inputs.get("limit")
    if limit is not None and limit != "":
        number = _integer(limit)
        if number is None or number <= 0:
            return {}, f"input limit must be a whole number above 0, got {limit!r}"
        params["limit"] = number
    max_usd = inputs.get("max_usd")
    if max_usd is not None and max_usd != "":
        amount = _amount(max_usd)
        if amount is None or amount <= 0:
            return {}, f"input max_usd must be a number of dollars above 0, got {max_usd!r}"
        params["max_usd"] = amount
    return params, ""


def dispatched_job(inputs: Mapping[str, Any]) -> tuple[dict[str, Any], str]:
    """The Job fields of a run the App dispatched (`kind`, `number`, `ref`, `actor`, `params`).

    Returns `(fields, problem)`; the inputs are the ones `bot.worker.dispatch_inputs` sends.
    """
    kind = inputs.get("kind")
    if kind not in {k.value for k in JobKind}:
        return {}, f"input kind must be one of {', '.join(k.value for k in JobKind)}, got {kind!r}"
    number: int | None = None
    raw_number = inputs.get("number")
    if raw_number not in (None, ""):
        number = _integer(raw_number)
        if number is None or number <= 0:
            return {}, f"input number must be an issue or PR number, got {raw_number!r}"
    try:
        params = json.loads(str(inputs.get("params") or "{}"))
    except json.JSONDecodeError:
        return {}, "input params must be a JSON object"
    if not isinstance(params, dict):
        return {}, "input params must be a JSON object"
    params = {**params, "trigger": "workflow_dispatch"}
    fields = {
        "kind": JobKind(str(kind)),
        "actor": str(inputs.get("actor") or ""),
        "number": number,
        "ref": str(inputs.get("ref") or ""),
        "delivery_id": str(inputs.get("delivery_id") or ""),
        "params": params,
    }
    return fields, ""


def _integer(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isascii() and value.strip().isdigit():
        try:
            return int(value.strip())
        except ValueError:  # longer than Python's int-from-string digit limit
            return None
    return None


def _amount(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        number = float(value.strip() if isinstance(value, str) else value)
    except (ValueError, OverflowError):  # "ten", or an int too large for a float
        return None
    return number if math.isfinite(number) else None
