"""Values a newcomer's trial gave the CLI: each is named with what to give instead, exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.test_cli_bad_input import _one_clear_line
from tests.test_cli_errors import run


@pytest.mark.parametrize("value", ["noslash", "a/b/c", "../x", "octo/..", "octo/app\n", "a b/c"])
@pytest.mark.parametrize("payload", [{}, {"repository": {"full_name": "octo/app"}}])
def test_run_names_a_github_repository_that_is_not_owner_slash_repo(
    tmp_path: Path, value: str, payload: dict[str, object]
) -> None:
    event = tmp_path / "event.json"
    event.write_text(json.dumps(payload))  # a `schedule` payload names no repository
    proc = run(
        tmp_path,
        "run",
        "--repo",
        str(tmp_path),
        GITHUB_EVENT_NAME="schedule",
        GITHUB_EVENT_PATH=str(event),
        GITHUB_REPOSITORY=value,
    )
    _one_clear_line(proc, "GITHUB_REPOSITORY must be OWNER/REPO", repr(value))
