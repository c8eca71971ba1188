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


@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
@pytest.mark.parametrize(
    ("command", "option", "span"),
    [
        (("serve",), "--lease-seconds", "from 0.1 to 86400"),
        (("serve",), "--poll-seconds", "from 0.01 to 3600"),
        (("serve",), "--header-timeout", "from 0.1 to 3600"),
        (("serve",), "--body-timeout", "from 0.1 to 3600"),
        (("worker",), "--lease-seconds", "from 0.1 to 86400"),
        (("worker",), "--poll-seconds", "from 0.01 to 3600"),
        (("refuel", "octo/app"), "--max-usd", "0.01 or more"),
    ],
)
def test_a_float_option_refuses_what_is_not_a_finite_number(
    tmp_path: Path, command: tuple[str, ...], option: str, span: str, value: str
) -> None:
    proc = run(tmp_path, *command, f"{option}={value}")
    _one_clear_line(proc, f"{option} {value}", "finite", span)
    assert not (tmp_path / "data").exists()  # refused before anything starts


def test_a_float_from_a_variable_is_named_by_the_variable(tmp_path: Path) -> None:
    proc = run(tmp_path, "serve", AGENTBOT_HEADER_TIMEOUT="nan")
    _one_clear_line(proc, "AGENTBOT_HEADER_TIMEOUT nan", "--header-timeout", "0.1 to 3600")


def test_a_finite_float_out_of_range_is_named_with_the_range(tmp_path: Path) -> None:
    proc = run(tmp_path, "serve", "--poll-seconds", "0")
    _one_clear_line(proc, "--poll-seconds 0", "from 0.01 to 3600")
    proc = run(tmp_path, "refuel", "octo/app", "--max-usd", "0")
    _one_clear_line(proc, "--max-usd 0", "0.01 or more")


def test_implement_refuses_a_tasks_md_without_tasks(tmp_path: Path) -> None:
    (tmp_path / "tasks.md").write_text("# Tasks\n\nNothing here yet.\n")
    proc = run(tmp_path, "implement", "tasks.md", "--repo", str(tmp_path))
    _one_clear_line(proc, "tasks.md: no tasks", "`- [ ] T001 Description`")


@pytest.mark.parametrize(
    ("command", "option", "hint"),
    [
        ("jobs", "--state", "queued, running, done, failed, dead, ignored"),
        ("stats", "--repo", "OWNER/REPO"),
        ("usage", "--repo", "OWNER/REPO"),
    ],
)
@pytest.mark.parametrize("value", ["", "  "])
def test_an_empty_filter_is_refused_not_read_as_all(
    tmp_path: Path, command: str, option: str, hint: str, value: str
) -> None:
    proc = run(tmp_path, command, option, value)
    _one_clear_line(proc, f"{option} {value!r}", hint, f"leave {option} out")
    assert proc.stdout == ""  # no listing of everything


def test_an_empty_github_repo_is_refused_not_read_as_the_origin(tmp_path: Path) -> None:
    (tmp_path / "tasks.md").write_text("- [ ] T001 Create a\n")
    proc = run(tmp_path, "implement", "tasks.md", "--repo", str(tmp_path), "--github-repo", "")
    _one_clear_line(proc, "--github-repo ''", "OWNER/REPO", "leave --github-repo out")


def test_jobs_names_the_state_it_does_not_know(tmp_path: Path) -> None:
    proc = run(tmp_path, "jobs", "--state", "finished")
    _one_clear_line(proc, "--state 'finished'", "queued, running, done, failed, dead, ignored")
