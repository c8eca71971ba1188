"""Bad input reads as one line naming the variable or key and the fix; exit 2, no traceback."""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from bot.config import RepoConfig
from bot.errors import ConfigError
from bot.queue.sqlite import SqliteQueue

AGENTBOT = str(Path(sys.executable).with_name("agentbot"))


def run(tmp: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTBOT_", "GITHUB_"))}
    base.update({"HOME": str(tmp / "home"), "AGENTBOT_DATA_DIR": str(tmp / "data"), **env})
    return subprocess.run(
        [AGENTBOT, *args], cwd=tmp, env=base, capture_output=True, text=True, timeout=60
    )


def test_a_bad_variable_is_named_with_exit_2(tmp_path: Path) -> None:
    proc = run(tmp_path, "jobs", AGENTBOT_PROVIDER="bogus")
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("error: AGENTBOT_PROVIDER: ")
    assert "'anthropic' or 'openai-compatible'" in proc.stderr and "bogus" in proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.splitlines()) == 1


def test_agentbot_debug_shows_the_traceback(tmp_path: Path) -> None:
    proc = run(tmp_path, "jobs", AGENTBOT_PROVIDER="bogus", AGENTBOT_DEBUG="1")
    assert proc.returncode == 2
    assert "Traceback" in proc.stderr and "error: AGENTBOT_PROVIDER" in proc.stderr


def test_a_postgres_queue_without_the_extra_names_it(tmp_path: Path) -> None:
    """psycopg hidden from the import system, as on an install without the extra."""
    code = (
        "import sys; sys.modules['psycopg'] = None; sys.argv = ['agentbot', 'jobs'];"
        " from bot.cli import main; main()"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTBOT_")}
    env["AGENTBOT_QUEUE"] = "postgresql://bot@127.0.0.1:1/agentbot"
    proc = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 2, proc.stderr
    assert "AGENTBOT_QUEUE" in proc.stderr and "pip install 'agentbot[postgres]'" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_yaml_error_reads_as_file_line_column() -> None:
    with pytest.raises(ConfigError) as info:
        RepoConfig.from_text("model: x\nlabels: [fix,\nbudget: 1: 2\n")
    message = str(info.value)
    assert message.startswith(".github/agentbot.yml:3:")
    assert "<unicode string>" not in message and not message.startswith(" ")
    assert info.value.line == 3


def test_validate_prints_brackets_as_written(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".github").mkdir(parents=True)
    (repo / "pyproject.toml").write_text('[project]\nname = "x"\nversion = "0"\n')
    (repo / ".github" / "agentbot.yml").write_text(
        "validation: {setup: null, format: null, lint: null, test: null}\n"
    )
    proc = run(tmp_path, "validate", "--repo", str(repo), AGENTBOT_SANDBOX="none")
    assert "([tool.mypy] or" in proc.stdout.replace("\n", " "), proc.stdout


def test_flag_help_shows_no_type(tmp_path: Path) -> None:
    proc = run(tmp_path, "fix", "--help")
    assert proc.returncode == 0
    assert "--dry-run" in proc.stdout and "<bool>" not in proc.stdout


# What a newcomer trial found: each bad input one line, exit 2, no traceback.
@pytest.mark.parametrize(
    ("name", "value", "says"),
    [
        ("GITHUB_API_URL", "notaurl", "not an http(s) URL"),
        ("AGENTBOT_LLM_BASE_URL", "ftp://x", "not an http(s) URL"),
        ("AGENTBOT_CONNECT_RETRY_SECONDS", "inf", "finite number"),
        ("AGENTBOT_DATA_DIR", "/etc/passwd", "is not a folder"),
    ],
)
def test_a_bad_setting_found_by_a_newcomer_is_named(
    tmp_path: Path, name: str, value: str, says: str
) -> None:
    proc = run(tmp_path, "jobs", **{name: value})
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith(f"error: {name}: ") and says in proc.stderr
    assert "Traceback" not in proc.stderr and "Value error" not in proc.stderr


@pytest.mark.parametrize(
    "args",
    [
        ("fix", "octo/app#1", "--repo", "/nonexistent"),
        ("cover", "--repo", "/nonexistent"),
        ("validate", "--repo", "/nonexistent"),
        ("implement", "tasks.md", "--repo", "/nonexistent"),
        ("serve", "--port", "99999"),
    ],
)
def test_a_bad_option_exits_2_before_anything_runs(tmp_path: Path, args: tuple[str, ...]) -> None:
    proc = run(tmp_path, *args, ANTHROPIC_API_KEY="k", GITHUB_TOKEN="t")
    assert proc.returncode == 2, proc.stderr
    assert "Invalid value" in proc.stderr and "Traceback" not in proc.stderr


def test_text_that_is_not_utf8_is_named(tmp_path: Path) -> None:
    payload = tmp_path / "event.json"
    payload.write_bytes(b"\xff\xfe{}")
    proc = run(tmp_path, "run", "--event-name", "issues", "--event-path", str(payload))
    assert proc.returncode == 2 and "not UTF-8" in proc.stderr, proc.stderr
    kata = tmp_path / "kata.md"
    kata.write_bytes(b"# K\n\xff\n")
    proc = run(tmp_path, "tdd", str(kata), "--repo", str(tmp_path / "p"), ANTHROPIC_API_KEY="k")
    assert proc.returncode == 2 and "not UTF-8" in proc.stderr, proc.stderr
    repo = tmp_path / "repo"
    (repo / ".github").mkdir(parents=True)
    (repo / ".github" / "agentbot.yml").write_bytes(b"\xff\xfe\x00bad")
    proc = run(tmp_path, "validate", "--repo", str(repo))
    assert proc.returncode == 2 and "agentbot.yml: not UTF-8 text" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr


def test_tdd_without_the_llm_key_stops_before_its_first_request(tmp_path: Path) -> None:
    kata = tmp_path / "kata.md"
    kata.write_text("# Roman numerals\n\n## Requirements\n- 1 is I\n")
    env = {"ANTHROPIC_API_KEY": "", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9"}
    proc = run(tmp_path, "tdd", str(kata), "--repo", str(tmp_path / "p"), **env)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("error: ANTHROPIC_API_KEY is not set")
    assert not (tmp_path / "p").exists()  # nothing half-written


def test_a_port_that_is_taken_is_one_line(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        proc = run(tmp_path, "serve", "--port", port)
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        f"error: cannot listen on 127.0.0.1:{port}: Address already in use (--host, --port)"
    )
    assert not (tmp_path / "data").exists()  # no worker, queue or secret before it can serve


def test_the_data_dir_and_queue_are_private_to_their_owner(tmp_path: Path) -> None:
    run(tmp_path, "doctor")
    data = tmp_path / "data"
    assert stat.S_IMODE(data.stat().st_mode) == 0o700
    assert not (data / "agentbot.db").exists()  # doctor only reads a queue; serve makes it
    SqliteQueue(tmp_path / "new" / "agentbot.db").close()
    assert stat.S_IMODE((tmp_path / "new").stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / "new" / "agentbot.db").stat().st_mode) == 0o600


@pytest.mark.parametrize("command", [("serve",), ("worker",)])
def test_a_bad_job_timeout_stops_the_app_at_start(tmp_path: Path, command: tuple[str, ...]) -> None:
    proc = run(tmp_path, *command, AGENTBOT_JOB_TIMEOUT="an hour")
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("error: AGENTBOT_JOB_TIMEOUT must be a number of seconds")
    assert "Traceback" not in proc.stderr and len(proc.stderr.splitlines()) == 1
    assert not (tmp_path / "data").exists()  # no worker, queue or secret before it can run
