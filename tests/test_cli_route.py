"""`agentbot route`: one JSON line per decision, exit 0; unreadable or non-object input exits 2."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from bot.cli import load_app
from bot.config import RepoConfig
from bot.events import decide, decision_json
from bot.workflows.handlers import HANDLERS

ROOT = Path(__file__).resolve().parents[1]
WEBHOOKS = ROOT / "tests" / "data" / "webhooks"
VENDORED = {p.stem: json.loads(p.read_text("utf-8")) for p in sorted(WEBHOOKS.glob("*.json"))}
APP = load_app()
runner = CliRunner()


def run(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = runner.invoke(APP, ["route", *args], env=env)
    return result.exit_code, result.stdout, result.stderr


def write(tmp_path: Path, payload: Any, name: str = "event.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(payload), encoding="utf-8")
    return path


def labeled(name: str) -> dict[str, Any]:
    first = next(ex["payload"] for ex in VENDORED["issues"] if ex["action"] == "labeled")
    payload: dict[str, Any] = copy.deepcopy(first)
    payload["label"]["name"] = name
    return payload


def test_route_decides_every_vendored_payload(tmp_path: Path) -> None:
    count = 0
    for event, examples in VENDORED.items():
        for i, ex in enumerate(examples):
            path = write(tmp_path, ex["payload"], f"{event}-{i}.json")
            code, out, err = run("--event-name", event, "--payload", str(path))
            assert code == 0, (event, i, err)
            lines = out.splitlines()
            assert len(lines) == 1, out
            expected = decision_json(decide(event, ex["payload"], RepoConfig(), kinds=HANDLERS))
            assert json.loads(lines[0]) == expected
            count += 1
    assert count >= 329


def test_route_prints_a_job(tmp_path: Path) -> None:
    code, out, _ = run(
        "--event-name", "issues", "--payload", str(write(tmp_path, labeled("agent-fix")))
    )
    assert code == 0
    got = json.loads(out)
    assert got["action"] == "fix_issue"
    assert (got["repo"], got["number"], got["actor"]) == ("Codertocat/Hello-World", 1, "Codertocat")
    assert got["params"] == {"trigger": "label", "label": "agent-fix"}


def test_config_file_sets_labels(tmp_path: Path) -> None:
    config = tmp_path / "agentbot.yml"
    config.write_text("labels:\n  fix: please-fix\n", encoding="utf-8")
    payload = str(write(tmp_path, labeled("please-fix")))
    code, out, _ = run("--event-name", "issues", "--payload", payload, "--config", str(config))
    assert (code, json.loads(out)["action"]) == (0, "fix_issue")
    code, out, _ = run("--event-name", "issues", "--payload", payload)
    assert (code, json.loads(out)["action"]) == (0, "ignore")


def test_bot_login_and_default_branch_options(tmp_path: Path) -> None:
    payload = labeled("agent-fix")
    payload["sender"]["login"] = "agentbot[bot]"
    path = str(write(tmp_path, payload))
    code, out, _ = run("--event-name", "issues", "--payload", path, "--bot-login", "agentbot")
    assert code == 0
    assert "itself" in json.loads(out)["reason"]

    push = copy.deepcopy(
        next(ex["payload"] for ex in VENDORED["push"] if "heads" in ex["payload"]["ref"])
    )
    push["ref"] = "refs/heads/main"
    push["commits"][0]["added"] = ["tasks.md"]
    del push["repository"]["default_branch"]
    path = str(write(tmp_path, push, "push.json"))
    code, out, _ = run("--event-name", "push", "--payload", path, "--default-branch", "main")
    assert "default branch main" in json.loads(out)["reason"]
    code, out, _ = run("--event-name", "push", "--payload", path, "--default-branch", "trunk")
    assert json.loads(out)["action"] == "implement"


@pytest.mark.parametrize("payload", [[], "text", None, 3])
def test_valid_json_that_is_not_an_object_exits_2(tmp_path: Path, payload: Any) -> None:
    path = write(tmp_path, payload)
    code, out, err = run("--event-name", "issues", "--payload", str(path))
    assert code == 2 and out == ""
    assert str(path) in err and "not a JSON object" in err


def test_missing_payload_file_exits_2(tmp_path: Path) -> None:
    missing = tmp_path / "nope.json"
    code, out, err = run("--event-name", "issues", "--payload", str(missing))
    assert code == 2
    assert out == ""
    assert str(missing) in err and "does not exist" in err


def test_invalid_json_exits_2_naming_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{\n  "action": "labeled",\n  oops\n}', encoding="utf-8")
    code, _, err = run("--event-name", "issues", "--payload", str(bad))
    assert code == 2
    assert str(bad) in err and "not valid JSON" in err and "line 3" in err


@pytest.mark.parametrize("kind", ["directory", "binary"])
def test_unreadable_payload_exits_2(tmp_path: Path, kind: str) -> None:
    target = tmp_path / "payload"
    if kind == "directory":
        target.mkdir()
    else:
        target.write_bytes(b"\xff\xfe\x00garbage")
    code, _, err = run("--event-name", "issues", "--payload", str(target))
    assert code == 2
    assert str(target) in err


def test_bad_config_exits_2(tmp_path: Path) -> None:
    payload = str(write(tmp_path, labeled("agent-fix")))
    config = tmp_path / "agentbot.yml"
    config.write_text("labels:\n  fixx: x\n", encoding="utf-8")
    code, _, err = run("--event-name", "issues", "--payload", payload, "--config", str(config))
    assert code == 2
    assert "labels.fixx" in err
    code, _, err = run(
        "--event-name", "issues", "--payload", payload, "--config", str(tmp_path / "no.yml")
    )
    assert code == 2
    assert "no.yml" in err


def test_console_script_reads_the_actions_environment(tmp_path: Path) -> None:
    """A real process, as an Action step runs it: event name and path from the environment."""
    path = write(tmp_path, labeled("agent-fix"))
    env = {**os.environ, "GITHUB_EVENT_NAME": "issues", "GITHUB_EVENT_PATH": str(path)}
    env["PYTHONPATH"] = str(ROOT)
    proc = subprocess.run(
        [sys.executable, "-c", "from bot.cli import main; main()", "route"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == 1
    assert json.loads(lines[0])["action"] == "fix_issue"


def test_route_sends_the_tdd_label_to_tdd(tmp_path: Path) -> None:
    """TDD is built: its label routes to it, as in production."""
    payload = str(write(tmp_path, labeled("agent-tdd")))
    code, out, _ = run("--event-name", "issues", "--payload", payload)
    assert code == 0
    decision = json.loads(out)
    assert decision["action"] == "tdd", decision
