"""`agentbot fix`, `refuel` and `implement` as a user runs them: env vars, exit codes, dry runs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e import REPO, fast_validation_yaml, world
from tests.fakes.gitrepo import branch_sha, server_url
from tests.test_fix_issue import fix_script

AGENTBOT = str(Path(sys.executable).with_name("agentbot"))


def cli_env(tmp: Path, api_url: str = "", llm_url: str = "") -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("GITHUB_", "AGENTBOT_", "ANTHROPIC_"))
    }
    env.update(
        GITHUB_TOKEN="ghp_clitoken0000000000000000",
        GITHUB_API_URL=api_url or "http://127.0.0.1:9",
        GITHUB_SERVER_URL=server_url(tmp / "server"),
        ANTHROPIC_API_KEY="sk-ant-cli-test",
        ANTHROPIC_BASE_URL=llm_url or "http://127.0.0.1:9",
        AGENTBOT_DATA_DIR=str(tmp / "data"),
    )
    return env


def run(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [AGENTBOT, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=300
    )


@pytest.mark.slow
def test_fix_dry_run_posts_nothing_and_prints_the_pr(tmp_path: Path) -> None:
    with world(tmp_path, fix_script(), repo_yaml=fast_validation_yaml()) as w:
        w.gh.add_issue(REPO, number=7, title="add() is wrong", labels=["agent-fix"])
        proc = run(
            ["fix", f"{REPO}#7", "--dry-run"], cli_env(tmp_path, w.gh.url, w.llm.base_url), tmp_path
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "would open PR agentbot/fix-issue-7 -> main" in proc.stdout
        assert "## agentbot fix_issue: ✅ success" in proc.stdout
        assert w.gh.writes() == []
        assert branch_sha(w.remote, "agentbot/fix-issue-7") is None
        assert "ghp_clitoken" not in proc.stdout + proc.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["fix", "octo/calc"], "expected OWNER/REPO#NUMBER"),
        # `..` would become a path of another API endpoint; numbers are GitHub's 32-bit ones
        (["fix", "../r#1"], "expected OWNER/REPO#NUMBER"),
        (["fix", "o/..#1"], "expected OWNER/REPO#NUMBER"),
        (["fix", "o/r#0"], "expected OWNER/REPO#NUMBER"),
        (["fix", "o/r#99999999999999999999999"], "expected OWNER/REPO#NUMBER"),
        (["refuel", "not a repo"], "expected OWNER/REPO"),
        (["refuel", "../x"], "expected OWNER/REPO"),
        (["implement", "missing/tasks.md"], "no such file"),
    ],
)
def test_bad_input_exits_2_with_a_message(tmp_path: Path, args: list[str], message: str) -> None:
    proc = run(args, cli_env(tmp_path), tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert message in proc.stderr


@pytest.mark.parametrize(
    ("selection", "message"),
    [
        (["phase", "4"], "cannot select `phase 4`: not in this tasks.md: phase 4"),
        (["T001,T009"], "not in this tasks.md: T009"),
        (["everything"], "cannot read 'everything' as a task selection; use T010-T015"),
        # empty would read as "all tasks"; phase 0 and below are no phase
        ([""], "an empty SELECTION or --task selects nothing"),
        (["--task", " "], "an empty SELECTION or --task selects nothing"),
        (["--phase", "0"], "--phase"),
    ],
)
def test_a_bad_task_selection_exits_2_naming_it(
    tmp_path: Path, selection: list[str], message: str
) -> None:
    (tmp_path / "tasks.md").write_text("## Phase 1\n- [ ] T001 Create a\n")
    proc = run(["implement", "tasks.md", *selection], cli_env(tmp_path), tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert message in proc.stderr and "Traceback" not in proc.stderr


def test_no_credentials_is_a_usage_error(tmp_path: Path) -> None:
    env = cli_env(tmp_path)
    del env["GITHUB_TOKEN"]
    proc = run(["fix", "octo/calc#1"], env, tmp_path)
    assert proc.returncode == 2
    assert "no GitHub credentials" in proc.stderr


def test_bad_repo_config_names_key_and_line(tmp_path: Path) -> None:
    with world(tmp_path, [], repo_yaml="budget:\n  max_usd_per_jobb: 2\n") as w:
        w.gh.add_issue(REPO, number=7, title="x", labels=["agent-fix"])
        proc = run(["fix", f"{REPO}#7"], cli_env(tmp_path, w.gh.url), tmp_path)
        assert proc.returncode == 2
        assert "budget.max_usd_per_jobb (line 2)" in proc.stderr
        assert w.gh.writes() == []
