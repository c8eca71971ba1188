"""Bad input reads as one line naming the variable or key and the fix; exit 2, no traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bot.config import RepoConfig
from bot.errors import ConfigError

AGENTBOT = str(Path(sys.executable).with_name("agentbot"))


def run(tmp: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTBOT_", "GITHUB_"))}
    base.update(HOME=str(tmp / "home"), AGENTBOT_DATA_DIR=str(tmp / "data"), **env)
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
