"""Arguments from a newcomer's trial: each is refused naming what to give, exit 2, nothing made."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest

from tests.test_cli_bad_input import _one_clear_line
from tests.test_cli_errors import run


def _refused(proc: subprocess.CompletedProcess[str], *names: str) -> None:
    """Exit 2, no traceback, every name in the message (typer's box may wrap it)."""
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr
    flat = " ".join(proc.stderr.replace("│", " ").split())
    for name in names:
        assert name in flat, proc.stderr


@pytest.mark.parametrize(
    "command",
    [
        ("jobs", "--limit", "99999999999999999999999"),
        ("refuel", "octo/app", "--limit", "99999999999999999999999"),
        ("implement", "tasks.md", "--phase", "99999999999999999999999"),
        ("implement", "tasks.md", "--pr", "99999999999999999999999"),
        ("worker", "--concurrency", "20000"),
        ("serve", "--workers", "20000"),
        ("tdd", "kata.md", "--max-cycles", "99999999999999999999999"),
    ],
)
def test_a_huge_count_is_refused_naming_the_option(
    tmp_path: Path, command: tuple[str, ...]
) -> None:
    proc = run(tmp_path, *command)
    _refused(proc, command[-2])
    assert not (tmp_path / "data").exists()


def test_stats_backfill_without_credentials_makes_nothing(tmp_path: Path) -> None:
    proc = run(tmp_path, "stats", "--backfill", "--repo", "octo/app")
    _one_clear_line(proc, "GITHUB_TOKEN")
    assert not (tmp_path / "data").exists()


def test_stats_backfill_with_no_repository_names_repo(tmp_path: Path) -> None:
    proc = run(tmp_path, "stats", "--backfill", GITHUB_TOKEN="t")
    _one_clear_line(proc, "--repo")
    assert not (tmp_path / "data").exists()


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_validate_makes_the_data_dir_private(tmp_path: Path) -> None:
    (tmp_path / "repo").mkdir()
    run(tmp_path, "validate", "--repo", str(tmp_path / "repo"))
    assert _mode(tmp_path / "data") == 0o700


def test_a_session_writes_private_files(tmp_path: Path) -> None:
    from bot.clock import SystemClock
    from bot.session import Session

    session = Session.create(tmp_path, "job", SystemClock())
    session.append_transcript({"event": "x"})
    session.write_report("done")
    assert _mode(session.path) == 0o700
    assert _mode(session.path.parent) == 0o700
    for path in session.path.iterdir():
        assert _mode(path) == 0o600, path


@pytest.mark.parametrize(
    ("args", "name"),
    [
        (("tasks", ""), "TASKS_MD"),
        (("fix", "o/r#1", "--repo", ""), "--repo"),
        (("validate", "--repo", ""), "--repo"),
        (("cover", "--repo", ""), "--repo"),
        (("implement", "", "--repo", "."), "TASKS_MD"),
        (("tdd", ""), "KATA.md"),
        (("tdd", "kata.md", "--repo", ""), "--repo"),
        (("route", "--event-name", "push", "--payload", ""), "--payload"),
        (("route", "--event-name", "push", "--payload", "x.json", "--config", ""), "--config"),
        (("run", "--event-name", "push", "--event-path", ""), "--event-path"),
    ],
)
def test_an_empty_path_is_not_this_directory(
    tmp_path: Path, args: tuple[str, ...], name: str
) -> None:
    proc = run(tmp_path, *args)
    _refused(proc, name, "empty")


@pytest.mark.parametrize(
    "args",
    [
        ("tasks", "{f}"),
        ("tdd", "{f}"),
        ("route", "--event-name", "push", "--payload", "{f}"),
        ("run", "--event-name", "push", "--event-path", "{f}"),
        ("implement", "{f}"),
    ],
)
@pytest.mark.parametrize("kind", ["fifo", "device", "huge"])
def test_a_named_file_must_be_a_regular_file_of_sane_size(
    tmp_path: Path, args: tuple[str, ...], kind: str
) -> None:
    target = tmp_path / "input"
    if kind == "fifo":
        os.mkfifo(target)
    elif kind == "device":
        target = Path("/dev/zero")
    else:
        with target.open("wb") as f:
            f.truncate(6 * 1024 * 1024)  # sparse: no disk used
    proc = run(tmp_path, *(a.format(f=target) for a in args))
    _refused(proc, str(target))
    if kind == "huge":
        assert "5 MB" in proc.stderr, proc.stderr
    else:
        assert "regular file" in proc.stderr, proc.stderr


def test_run_names_a_payload_repository_that_is_not_owner_slash_repo(tmp_path: Path) -> None:
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"repository": {"full_name": "bad"}}))
    proc = run(tmp_path, "run", "--event-name", "push", "--event-path", str(event))
    _one_clear_line(proc, "'bad'", "OWNER/REPO")
    assert "GITHUB_REPOSITORY is not set" not in proc.stderr


@pytest.mark.parametrize(("name", "value"), [("LIMIT", "nan"), ("MAX_USD", "x"), ("LABEL", " ")])
def test_run_names_the_variable_of_a_bad_input(tmp_path: Path, name: str, value: str) -> None:
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"repository": {"full_name": "octo/app"}}))
    proc = run(
        tmp_path,
        "run",
        "--event-name",
        "workflow_dispatch",
        "--event-path",
        str(event),
        **{f"AGENTBOT_{name}": value},
    )
    _one_clear_line(proc, f"AGENTBOT_{name}", f"--{name.lower().replace('_', '-')}")


@pytest.mark.parametrize(
    ("event_name", "payload"),
    [("", {"repository": {"full_name": "octo/app"}}), ("push", []), ("push", "text")],
)
def test_route_refuses_what_run_refuses(tmp_path: Path, event_name: str, payload: object) -> None:
    event = tmp_path / "event.json"
    event.write_text(json.dumps(payload))
    routed = run(tmp_path, "route", "--event-name", event_name, "--payload", str(event))
    _one_clear_line(routed)
    assert routed.stdout == ""
    ran = run(tmp_path, "run", "--event-name", event_name, "--event-path", str(event))
    _one_clear_line(ran)


@pytest.mark.parametrize(
    ("args", "name"),
    [(("--base", ""), "--base"), (("",), "TARGETS"), (("a.py", " "), "TARGETS")],
)
def test_cover_refuses_empty_base_and_targets(
    tmp_path: Path, args: tuple[str, ...], name: str
) -> None:
    proc = run(tmp_path, "cover", *args, "--repo", str(tmp_path))
    _one_clear_line(proc, name)


KATA = "# Kata: Add\n\n## Requirements\n\n1. add two numbers\n"


def test_tdd_refuses_a_folder_that_is_neither_a_checkout_nor_empty(tmp_path: Path) -> None:
    (tmp_path / "kata.md").write_text(KATA)
    project = tmp_path / "project"
    project.mkdir()
    (project / "notes.txt").write_text("mine\n")
    proc = run(tmp_path, "tdd", "kata.md", "--repo", str(project), ANTHROPIC_API_KEY="k")
    _one_clear_line(proc, str(project), "not a git checkout", "git init")
    assert not (project / ".git").exists()
    assert not (tmp_path / "data").exists()


def test_tdd_checks_the_model_before_making_the_folder(tmp_path: Path) -> None:
    (tmp_path / "kata.md").write_text(KATA)
    proc = run(tmp_path, "tdd", "kata.md", "--repo", str(tmp_path / "new" / "dir"))
    _one_clear_line(proc, "ANTHROPIC_API_KEY")
    assert not (tmp_path / "new").exists() and not (tmp_path / "data").exists()


@pytest.mark.parametrize("command", ["validate", "tdd"])
def test_a_checkout_config_that_is_a_fifo_is_named_not_waited_on(
    tmp_path: Path, command: str
) -> None:
    (tmp_path / "kata.md").write_text(KATA)
    project = tmp_path / "project"
    (project / ".github").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    os.mkfifo(project / ".github" / "agentbot.yml")
    args = (
        ["--repo", str(project)] if command == "validate" else ["kata.md", "--repo", str(project)]
    )
    proc = run(tmp_path, command, *args)
    _one_clear_line(proc, "agentbot.yml", "regular file")
