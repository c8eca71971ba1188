"""`agentbot tdd` on an empty directory, as a person runs it: the real binary, a scripted model."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e import REPO, fast_validation_yaml, world
from tests.fakes.anthropic import FakeAnthropic
from tests.fakes.gitrepo import clone_branch, commits
from tests.tdd_script import team
from tests.test_cli_run import actions_env, labeled_payload
from tests.test_tdd_python import FILES, KATA, straight

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

AGENTBOT = str(Path(sys.executable).with_name("agentbot"))


def cli_env(tmp: Path, llm_url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTBOT_", "ANTHROPIC_"))}
    env.update(
        ANTHROPIC_API_KEY="sk-ant-test-key-0000",
        ANTHROPIC_BASE_URL=llm_url,
        AGENTBOT_DATA_DIR=str(tmp / "data"),
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
    )
    return env


def test_tdd_on_an_empty_directory_builds_a_project_validate_passes(tmp_path: Path) -> None:
    kata = tmp_path / "KATA.md"
    kata.write_text(KATA)
    project = tmp_path / "roman"
    project.mkdir()
    _, script = team(straight())
    with FakeAnthropic(list(script)) as llm:
        env = cli_env(tmp_path, llm.base_url)
        args = [AGENTBOT, "tdd", str(kata), "--repo", str(project), "--language", "python"]
        proc = subprocess.run(args, env=env, capture_output=True, text=True, timeout=500)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "| 4 | 4 is IV: subtract I before V | `test_four` | assertion |" in proc.stdout
        log = subprocess.run(
            ["git", "log", "--reverse", "--format=%s"], cwd=project, capture_output=True, text=True
        ).stdout.splitlines()
        assert log == [
            "chore: python project skeleton for TDD",
            "feat(roman-numerals): 1 is I",
            "feat(roman-numerals): 2 is II: repeat I",
            "feat(roman-numerals): 5 is V",
            "feat(roman-numerals): 4 is IV: subtract I before V",
        ]
        assert (project / "roman_numerals" / "roman.py").is_file()
        checked = subprocess.run(
            [AGENTBOT, "validate", "--repo", str(project)],
            env=env, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert checked.returncode == 0, checked.stdout + checked.stderr
        assert "gate PASSED" in checked.stdout and "4/4 passed" in checked.stdout

        again = subprocess.run(args, env=env, capture_output=True, text=True, timeout=300)
        assert again.returncode == 0 and len(llm.requests) == 24  # nothing left to do: no call


def test_max_cycles_stops_and_a_local_rerun_goes_on(tmp_path: Path) -> None:
    kata = tmp_path / "KATA.md"
    kata.write_text(KATA)
    project = tmp_path / "roman"
    t, script = team(straight())
    with FakeAnthropic(list(script)) as llm:
        env = cli_env(tmp_path, llm.base_url)
        args = [AGENTBOT, "tdd", str(kata), "--repo", str(project)]
        first = subprocess.run([*args, "--max-cycles", "2"], env=env, capture_output=True,
                               text=True, timeout=500)  # fmt: skip
        assert first.returncode == 1, first.stdout + first.stderr
        assert "Stopped: the session's limit of 2 cycle(s). Run again to continue." in first.stdout
        assert "3. 5 is V — ⬜ not covered yet" in first.stdout
        second = subprocess.run(args, env=env, capture_output=True, text=True, timeout=500)
        assert second.returncode == 0, second.stdout + second.stderr
        assert (t.calls(1), t.calls(2), t.calls(3), t.calls(4)) == (6, 6, 6, 6)
        assert "| 1 | 1 is I | `test_one` | missing name | 1/1/0 | none |" in second.stdout


def test_a_kata_without_requirements_is_a_usage_error(tmp_path: Path) -> None:
    kata = tmp_path / "KATA.md"
    kata.write_text("# Empty\n\n## Requirements\n\nnone yet\n")
    proc = subprocess.run(
        [AGENTBOT, "tdd", str(kata), "--repo", str(tmp_path / "p")],
        env=cli_env(tmp_path, "http://127.0.0.1:9"), capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 2
    assert "line 3: `## Requirements` lists nothing" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_agentbot_run_in_the_action_runs_an_agent_tdd_issue(tmp_path: Path) -> None:
    kata = "# Roman Numerals\n\n## Requirements\n- 1 is I\n- 2 is II: repeat I\n"
    text = fast_validation_yaml().replace(
        f"  test: {sys.executable}", f"  test: PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 {sys.executable}"
    )
    _, script = team(straight())
    with world(tmp_path, script, files=FILES, repo_yaml=text) as w:
        w.gh.set_permission(REPO, "alice", "write")
        w.gh.add_issue(REPO, number=7, title="Roman", body=kata, labels=["agent-tdd"])
        checkout = clone_branch(w.remote, "main", tmp_path / "checkout")
        env = actions_env(
            tmp_path, w.gh.url, w.llm.base_url, "issues", labeled_payload("agent-tdd")
        )
        proc = subprocess.run(
            [AGENTBOT, "run"], cwd=checkout, env=env, capture_output=True, text=True, timeout=300
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert len(w.llm.requests) == 12
        outputs = (tmp_path / "output.txt").read_text()
        assert "status=success" in outputs and "/pull/" in outputs
        [pr] = w.gh.pulls(REPO)
        assert "2 of 2 requirement(s) done" in (pr.body or "") and "Closes #7" in (pr.body or "")
        subjects = [c.subject for c in commits(w.remote, "agentbot/tdd-issue-7", base="main")]
        assert subjects == [
            "feat(roman-numerals): 2 is II: repeat I",
            "feat(roman-numerals): 1 is I",
        ]
