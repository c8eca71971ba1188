"""`agentbot usage`: spend against every cap, by the system clock (moved with libfaketime),
and one clear line for a bad installation cap."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from bot.queue.sqlite import SqliteQueue

CLI = [sys.executable, "-c", "from bot.cli import main; main()"]


def _run(tmp: Path, *args: str, faketime: str = "", **env: str) -> subprocess.CompletedProcess[str]:
    full = {
        **{k: v for k, v in os.environ.items() if not k.startswith("AGENTBOT_")},
        "AGENTBOT_DATA_DIR": str(tmp / "data"),
        **env,
    }
    prefix = ["faketime", "-f", faketime] if faketime else []
    return subprocess.run(
        [*prefix, *CLI, "usage", *args], env=full, capture_output=True, text=True, timeout=120
    )


def _seed(tmp: Path) -> None:
    q = SqliteQueue(tmp / "data" / "agentbot.db")
    q.record_spend("a", "octo/calc", 1, "fix_issue", 0.75, datetime(2026, 1, 31, 10, tzinfo=UTC))
    q.record_spend("b", "acme/web", 2, "implement", 0.5, datetime(2026, 1, 31, 20, tzinfo=UTC))
    q.record_spend("c", "octo/calc", 3, "fix_issue", 4.0, datetime(2026, 1, 2, tzinfo=UTC))
    q.record_spend("d", "octo/calc", 4, "fix_issue", 9.0, datetime(2025, 12, 31, tzinfo=UTC))
    q.set_repo_caps("octo/calc", 1.0, None, datetime(2026, 1, 31, 10, tzinfo=UTC))
    q.close()


def _rows(out: str) -> dict[tuple[str, str], dict[str, Any]]:
    return {(r["scope"], r["period"]): r for r in json.loads(out)["caps"]}


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("faketime") is None, reason="libfaketime is not installed")
def test_days_and_months_follow_the_system_clock(tmp_path: Path) -> None:
    _seed(tmp_path)
    caps = {"AGENTBOT_MAX_USD_PER_DAY": "1.5", "AGENTBOT_MAX_USD_PER_MONTH": "5"}
    late = _run(tmp_path, "--json", faketime="@2026-01-31 23:59:00", **caps)
    assert late.returncode == 0, late.stderr
    rows = _rows(late.stdout)
    day, month = rows[("installation", "day")], rows[("installation", "month")]
    assert day["spent_usd"] == pytest.approx(1.25) and day["left_usd"] == pytest.approx(0.25)
    assert day["resets_at"] == "2026-02-01T00:00:00+00:00" and not day["reached"]
    assert month["spent_usd"] == pytest.approx(5.25) and month["reached"]
    repo_day = rows[("octo/calc", "day")]
    assert repo_day["spent_usd"] == pytest.approx(0.75) and repo_day["cap_usd"] == 1.0
    assert repo_day["setting"].startswith("budget.max_usd_per_day")
    assert rows[("acme/web", "day")]["cap_usd"] is None

    # A minute later it is the next UTC day and month: everything resets.
    next_day = _rows(_run(tmp_path, "--json", faketime="@2026-02-01 00:01:00", **caps).stdout)
    assert next_day[("installation", "day")]["spent_usd"] == 0
    assert next_day[("installation", "month")]["spent_usd"] == 0

    only = _run(tmp_path, "--repo", "octo/calc", faketime="@2026-01-31 12:00:00", **caps)
    assert only.returncode == 0, only.stderr
    assert "octo/calc" in only.stdout and "acme/web" not in only.stdout
    assert "installation" in only.stdout


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "value"),
    [("AGENTBOT_MAX_USD_PER_DAY", "ten"), ("AGENTBOT_MAX_USD_PER_MONTH", "-3")],
)
def test_a_bad_installation_cap_is_one_line_naming_it(
    tmp_path: Path, name: str, value: str
) -> None:
    done = _run(tmp_path, **{name: value})
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and name in lines[0] and "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("command", "where"),
    [
        ("usage", "data dir"),
        ("stats", "data dir"),
        ("jobs", "data dir"),
        ("jobs", "queue in a missing folder"),
        ("stats", "queue in a missing folder"),
    ],
)
def test_a_command_that_only_reads_names_a_missing_queue_and_creates_nothing(
    tmp_path: Path, command: str, where: str
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTBOT_", "GITHUB_"))}
    env.update(HOME=str(tmp_path / "home"), AGENTBOT_DATA_DIR=str(tmp_path / "data"))
    db = tmp_path / "data" / "agentbot.db"
    if where != "data dir":
        db = tmp_path / "nowhere" / "sub" / "q.db"
        env["AGENTBOT_QUEUE"] = f"sqlite:///{db}"
    proc = subprocess.run(
        [*CLI, command], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    [line] = proc.stderr.splitlines()
    assert line.startswith(f"error: there is no queue at {db}: `agentbot serve`"), line
    assert "AGENTBOT_QUEUE" in line and "AGENTBOT_DATA_DIR" in line, line
    assert proc.stdout == ""
    assert sorted(tmp_path.iterdir()) == [], list(tmp_path.rglob("*"))
