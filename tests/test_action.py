"""action.yml and the example workflows: inputs via env, outputs written, least permissions."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from bot.cli.run import outputs
from bot.models import Job, JobKind, JobResult, JobStatus

ROOT = Path(__file__).resolve().parents[1]
EXPR = re.compile(r"\$\{\{\s*([^}]*?)\s*\}\}")
SHA_PIN = re.compile(r"^[\w.-]+/[\w.-]+(/[\w./-]+)?@[0-9a-f]{40}$")


def load(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text())
    assert isinstance(data, dict)
    # YAML 1.1 reads the key `on` as True
    if True in data:
        data["on"] = data.pop(True)
    return data


def test_every_input_reaches_the_run_step_through_env() -> None:
    action = load(ROOT / "action.yml")
    run_step = next(s for s in action["runs"]["steps"] if s.get("id") == "run")
    env_exprs = " ".join(str(v) for v in run_step["env"].values())
    for name in action["inputs"]:
        assert f"inputs.{name}" in env_exprs, f"input {name} does not reach the run step"
    script = run_step["run"].strip()
    assert script.splitlines()[-1] == "exec agentbot run"
    assert run_step["env"]["AGENTBOT_NEUTRAL_EXIT_CODE"] == "0"  # Actions has no neutral


def test_run_script_keeps_the_jobs_key_when_the_input_is_empty(tmp_path: Path) -> None:
    action = load(ROOT / "action.yml")
    run_step = next(s for s in action["runs"]["steps"] if s.get("id") == "run")
    script = run_step["run"].replace("exec agentbot run", 'echo "key=$ANTHROPIC_API_KEY"')
    env = {"PATH": "/usr/bin:/bin", "ANTHROPIC_API_KEY": "from-job-env"}
    out = subprocess.run(
        ["bash", "-c", script],
        env={**env, "AGENTBOT_INPUT_ANTHROPIC_API_KEY": ""},
        capture_output=True,
        text=True,
    )
    assert out.stdout.strip() == "key=from-job-env"
    out = subprocess.run(
        ["bash", "-c", script],
        env={**env, "AGENTBOT_INPUT_ANTHROPIC_API_KEY": "from-input"},
        capture_output=True,
        text=True,
    )
    assert out.stdout.strip() == "key=from-input"


def test_no_expression_is_inlined_in_a_script() -> None:
    action = load(ROOT / "action.yml")
    for step in action["runs"]["steps"]:
        if "run" in step:
            assert not EXPR.search(step["run"]), f"expression inside run: {step['run']!r}"
    for wf in (ROOT / ".github" / "workflows").rglob("*.yml"):
        for job in load(wf)["jobs"].values():
            for step in job["steps"]:
                assert not EXPR.search(step.get("run", "")), f"{wf.name}: {step['run']!r}"


def test_every_output_is_written_by_agentbot_run() -> None:
    action = load(ROOT / "action.yml")
    written = set(
        outputs(JobResult(job=Job(kind=JobKind.FIX_ISSUE, repo="o/r"), status=JobStatus.SUCCESS))
    )
    for name, spec in action["outputs"].items():
        found = EXPR.search(spec["value"])
        assert found and found.group(1) == f"steps.run.outputs.{name}"
        assert name in written, f"output {name} is never written"


def test_third_party_actions_are_pinned_by_sha() -> None:
    files = [ROOT / "action.yml", *(ROOT / ".github" / "workflows").rglob("*.yml")]
    for f in files:
        for uses in re.findall(r"uses:\s*(\S+)", f.read_text()):
            if uses.startswith(("actions/", "docker://")):
                assert SHA_PIN.match(uses), f"{f.name}: {uses} is not pinned by SHA"


NEEDED = {"contents": "write", "issues": "write", "pull-requests": "write", "checks": "write"}


@pytest.mark.parametrize("name", ["agent-fix.yml", "implement.yml", "refuel.yml", "agentbot.yml"])
def test_examples_use_the_action_with_least_permissions(name: str) -> None:
    wf = load(ROOT / ".github" / "workflows" / "examples" / name)
    assert wf["on"], "no trigger"
    assert wf["permissions"] == NEEDED
    steps = [s for job in wf["jobs"].values() for s in job["steps"]]
    assert any(str(s.get("uses", "")).startswith("agentbot/agentbot@") for s in steps)
    for job in wf["jobs"].values():
        assert "permissions" not in job or set(job["permissions"]) <= set(NEEDED)
    # A workflow-level group would let any later comment cancel a queued run: per job only.
    assert "concurrency" not in wf
    checkout = next(s for s in steps if str(s.get("uses", "")).startswith("actions/checkout@"))
    assert checkout["with"]["persist-credentials"] is False


def test_the_follow_up_example_asks_for_checks_and_nothing_more() -> None:
    wf = load(ROOT / ".github" / "workflows" / "examples" / "follow-up.yml")
    assert wf["permissions"] == NEEDED
    assert set(wf["on"]) == {
        "pull_request_review",
        "pull_request_review_comment",
        "issue_comment",
        "workflow_run",
    }
    assert wf["on"]["workflow_run"]["types"] == ["completed"]
    assert "concurrency" not in wf
    (job,) = wf["jobs"].values()
    assert "agentbot/" in job["if"] and "changes_requested" in job["if"]
    checkout = next(s for s in job["steps"] if str(s.get("uses", "")).startswith("actions/"))
    assert checkout["with"]["persist-credentials"] is False


def test_example_triggers_match_the_routes() -> None:
    fix_wf = load(ROOT / ".github" / "workflows" / "examples" / "agent-fix.yml")
    fix = fix_wf["on"]
    assert fix["issues"]["types"] == ["labeled", "assigned"] and "issue_comment" in fix
    when = fix_wf["jobs"]["fix"]["if"]
    wanted = ("'agent-fix'", "'agent-tdd'", "'agent-plan'", "'assigned'", "'/fix'", "'/cover'")
    assert all(t in when for t in (*wanted, "'/plan'", "'/approve'"))
    impl = load(ROOT / ".github" / "workflows" / "examples" / "implement.yml")["on"]
    assert "issue_comment" in impl and "**/tasks.md" in impl["push"]["paths"]
    refuel = load(ROOT / ".github" / "workflows" / "examples" / "refuel.yml")["on"]
    assert "schedule" in refuel and "workflow_dispatch" in refuel


def test_app_manifest_asks_for_what_agentbot_uses() -> None:
    manifest = yaml.safe_load((ROOT / "app.yml").read_text())
    perms = manifest["default_permissions"]
    assert perms["contents"] == perms["issues"] == perms["pull_requests"] == "write"
    assert "workflows" not in perms and "administration" not in perms
    assert set(manifest["default_events"]) == {
        "issues",
        "issue_comment",
        "push",
        "pull_request",
        "pull_request_review",
        "pull_request_review_comment",
        "check_suite",
    }
    assert perms["checks"] == "write"
