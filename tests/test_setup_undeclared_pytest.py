"""`validation.test: "python -m pytest -q"` on repositories that do not declare pytest.

Most small repositories install pytest in CI, not in their metadata. Through `agentbot run`
(the Action) with pip and uv offline (a local wheelhouse), setup must bring pytest into the
repository's own environment, and every workflow's report must show a counted test run:
the IssueFixer, the Implementer (a docs-only task included) and TDD. /cover's case is
tests/test_setup_cover.py.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.e2e import REPO, World, world
from tests.fakes.gitrepo import clone_branch, commits, push_files
from tests.tdd_script import team
from tests.test_cli_run import AGENTBOT, actions_env, labeled_payload
from tests.test_fix_issue import fix_script
from tests.test_follow_up import pr_comment_by
from tests.test_implement import FILES as IMPLEMENT_FILES
from tests.test_implement import responder
from tests.test_setup_cover import CONFIG
from tests.test_tdd_python import FILES as TDD_FILES
from tests.test_tdd_python import KATA, straight
from tests.test_validation import _closure, _repack, offline_env

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

COUNTED = re.compile(r"(\d+)/(\d+) passed")


@pytest.fixture(scope="module")
def offline(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """pip and uv pointed at a wheelhouse holding pytest and setuptools, nothing else."""
    wheels = tmp_path_factory.mktemp("wheels")
    for dist in _closure(("pytest", "setuptools")):
        _repack(dist, wheels)
    return {k: v for k, v in offline_env(wheels).items() if k.startswith(("PIP_", "UV_"))}


def run(
    w: World, tmp: Path, offline: dict[str, str], event: str, payload: dict[str, Any]
) -> subprocess.CompletedProcess[str]:
    """One `agentbot run` in a fresh runner folder, offline."""
    runner = tmp / "runner"
    runner.mkdir()
    env = actions_env(runner, w.gh.url, w.llm.base_url, event, payload)
    env = {k: v for k, v in env.items() if not k.startswith(("PIP_", "UV_"))} | offline
    checkout = clone_branch(w.remote, "main", runner / "checkout")
    return subprocess.run(
        [AGENTBOT, "run"], cwd=checkout, env=env, capture_output=True, text=True, timeout=800
    )


def counts(text: str) -> list[tuple[int, int]]:
    """Every `passed/ran passed` count a report shows."""
    return [(int(a), int(b)) for a, b in COUNTED.findall(text)]


def test_the_issue_fixer_runs_the_tests(tmp_path: Path, offline: dict[str, str]) -> None:
    with world(tmp_path, fix_script(), repo_yaml=CONFIG) as w:
        w.gh.set_permission(REPO, "alice", "write")
        w.gh.add_issue(REPO, number=7, title="add() is wrong", labels=["agent-fix"])
        proc = run(w, tmp_path, offline, "issues", labeled_payload())
        assert proc.returncode == 0, proc.stdout + proc.stderr
        [pr] = w.gh.pulls(REPO)
        assert pr.pull is not None and not pr.pull.draft, pr.body
        assert counts(pr.body) and all(ran >= 1 for _, ran in counts(pr.body)), pr.body
        assert "pytest" in pr.body and "not pinned" in pr.body, pr.body  # the setup row says so
        assert "No module named pytest" not in pr.body


def test_the_implementer_runs_the_tests_for_every_task(
    tmp_path: Path, offline: dict[str, str]
) -> None:
    tasks = (
        "## Phase 1\n- [ ] T001 Create mod_t001.py with a function\n"
        "- [ ] T002 Describe the greeting in README.md\n"
    )

    def docs_or_code(request: Any) -> Any:
        first = str(request.json["messages"][0]["content"])
        if "T002" in first and len(request.json["messages"]) == 1:
            from tests.fakes.anthropic import reply, tool_use

            return reply(
                tool_use(
                    "str_replace_based_edit_tool",
                    {"command": "create", "path": "README.md", "file_text": "# Greet\n\nHi.\n"},
                )
            )
        return responder()(request)

    files = {**IMPLEMENT_FILES, ".github/agentbot.yml": CONFIG}
    with world(tmp_path, [docs_or_code] * 12, files=files) as w:
        push_files(w.remote, "feature/greet", {"specs/greet/tasks.md": tasks}, start="main")
        w.gh.set_permission(REPO, "rev", "write")
        w.gh.add_pull(REPO, head="feature/greet", user="rev")
        delivery = pr_comment_by("rev", "/implement specs/greet/tasks.md")
        proc = run(w, tmp_path, offline, "issue_comment", dict(delivery.payload))
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert len(commits(w.remote, "feature/greet", base="main")) == 3  # tasks.md + 2 tasks
        summary = (tmp_path / "runner" / "summary.md").read_text()
        body = str(w.gh.calls_to("*", rf"/repos/{REPO}/pulls(/\d+)?")[-1].json["body"])
        shown = counts(summary + body)
        assert shown and all(ran >= 1 for _, ran in shown), summary + body
        assert "nothing was validated" not in summary + body


def test_tdd_runs_the_tests(tmp_path: Path, offline: dict[str, str]) -> None:
    _, script = team(straight())
    with world(tmp_path, script, files=TDD_FILES, repo_yaml=CONFIG) as w:
        w.gh.set_permission(REPO, "alice", "write")
        number = w.gh.add_issue(
            REPO, title="Roman numerals", body=KATA, labels=["agent-tdd"]
        ).number
        payload = labeled_payload("agent-tdd")
        payload["issue"]["number"] = number
        proc = run(w, tmp_path, offline, "issues", payload)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        [pr] = w.gh.pulls(REPO)
        assert "4 of 4 requirement(s) done" in pr.body, pr.body
        summary = (tmp_path / "runner" / "summary.md").read_text()
        shown = counts(summary + pr.body)
        assert shown and all(ran >= 1 for _, ran in shown), summary + pr.body
        assert "No module named pytest" not in summary + pr.body
