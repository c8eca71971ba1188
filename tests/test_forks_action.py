"""The fork examples (issue #27): no `pull_request_target`, no checkout of a pull request's
head, least permissions, zizmor clean; a relayed review is rebuilt from the API."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.test_action import NEEDED, ROOT, load

EXAMPLES = ROOT / ".github" / "workflows" / "examples"
FORKS = sorted(EXAMPLES.glob("fork-*.yml"))


def test_fork_examples_never_check_out_a_forks_code_with_secrets() -> None:
    assert [f.name for f in FORKS] == [
        "fork-commands.yml",
        "fork-review-relay.yml",
        "fork-review.yml",
    ]
    for f in FORKS:
        wf = load(f)
        assert "pull_request_target" not in wf["on"]
        for job in wf["jobs"].values():
            for step in job["steps"]:
                if str(step.get("uses", "")).startswith("actions/checkout@"):
                    assert "ref" not in step["with"]  # the default branch only
                    assert step["with"]["persist-credentials"] is False


def test_the_command_workflow_asks_for_what_a_review_or_push_needs() -> None:
    wf = load(EXAMPLES / "fork-commands.yml")
    assert set(wf["on"]) == {"issue_comment"} and wf["permissions"] == NEEDED
    (job,) = wf["jobs"].values()
    assert "/fix" in job["if"] and "/cover" in job["if"]


def test_the_relay_has_no_permission_and_no_secret() -> None:
    wf = load(EXAMPLES / "fork-review-relay.yml")
    assert set(wf["on"]) == {"pull_request_review"} and wf["permissions"] == {}
    assert "secrets." not in (EXAMPLES / "fork-review-relay.yml").read_text()


def test_the_review_workflow_rebuilds_the_review_from_the_api() -> None:
    wf = load(EXAMPLES / "fork-review.yml")
    assert wf["on"]["workflow_run"]["workflows"] == ["agentbot fork review relay"]
    assert wf["permissions"] == {**NEEDED, "actions": "read"}
    (job,) = wf["jobs"].values()
    script = next(s["run"] for s in job["steps"] if "run" in s)
    assert "*[!0-9]*" in script and "gh api" in script
    agent = next(s for s in job["steps"] if str(s.get("uses", "")).startswith("agentbot/"))
    assert agent["with"]["event-name"] == "pull_request_review"


def test_the_action_runs_the_event_it_is_given(tmp_path: Path) -> None:
    action = load(ROOT / "action.yml")
    run_step = next(s for s in action["runs"]["steps"] if s.get("id") == "run")
    script = run_step["run"].replace(
        "exec agentbot run", 'echo "$GITHUB_EVENT_NAME $GITHUB_EVENT_PATH"'
    )
    base = {"PATH": "/usr/bin:/bin", "GITHUB_EVENT_NAME": "workflow_run", "GITHUB_EVENT_PATH": "a"}
    given = {"AGENTBOT_INPUT_EVENT_NAME": "pull_request_review", "AGENTBOT_INPUT_EVENT_PATH": "b"}
    for env, want in [(base, "workflow_run a"), ({**base, **given}, "pull_request_review b")]:
        out = subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True)
        assert out.stdout.strip() == want, out.stderr


def test_fork_examples_are_zizmor_clean() -> None:
    zizmor = shutil.which("zizmor") or str(Path(__file__).parents[1] / ".venv" / "bin" / "zizmor")
    if not Path(zizmor).exists():
        pytest.skip("zizmor is not installed")
    got = subprocess.run(
        [zizmor, "--offline", str(ROOT / "action.yml"), *map(str, FORKS)],
        capture_output=True,
        text=True,
    )
    assert got.returncode == 0, got.stdout + got.stderr
