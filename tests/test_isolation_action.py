"""Action mode (`agentbot run` as a runner calls it): the agent never reaches the runner's
file commands, actions/checkout's credentials or the token; without bwrap the job says, in
one line, that the runner is the boundary."""

from __future__ import annotations

import base64
import json
import os
import subprocess
from pathlib import Path

import pytest

from bot.sandbox import sandbox_status
from bot.tools.shell import SHELL_DEFAULTS
from tests.e2e import REPO, fast_validation_yaml, world
from tests.fakes.anthropic import FakeAnthropic, reply, tool_use
from tests.fakes.gitrepo import clone_branch, git
from tests.test_cli_run import AGENTBOT, actions_env, labeled_payload
from tests.test_fix_issue import fix_script
from tests.test_isolation_app import path_without_bwrap

pytestmark = pytest.mark.slow

TOKEN = "ghs_testtoken123456789"  # what actions_env gives the job
PERSISTED = "ghs_persisted_by_actions_checkout_0001"


def tool_results(llm: FakeAnthropic) -> list[str]:
    """Every tool result the model was sent, in order."""
    found: list[str] = []
    for request in llm.requests:
        for message in (request.json or {}).get("messages", []):
            for block in message.get("content") if isinstance(message.get("content"), list) else []:
                if block.get("type") == "tool_result" and str(block.get("content")) not in found:
                    found.append(str(block.get("content")))
    return found


def runner_files(tmp: Path, checkout: Path) -> dict[str, Path]:
    """RUNNER_TEMP as a runner lays it out, and what actions/checkout (v4 and v6) persists."""
    temp = tmp / "_temp"
    commands = temp / "_runner_file_commands"
    commands.mkdir(parents=True)
    files = {
        "GITHUB_ENV": commands / "set_env_6f1c",
        "GITHUB_PATH": commands / "add_path_6f1c",
        "GITHUB_STATE": commands / "save_state_6f1c",
    }
    for path in files.values():
        path.write_text("")
    basic = base64.b64encode(f"x-access-token:{PERSISTED}".encode()).decode()
    header = f"AUTHORIZATION: basic {basic}"
    creds = temp / "git-credentials-0b4c2f9e-6a1d-4c55-9a39-2f0d8f3a1e77.config"
    creds.write_text(f'[http "https://github.com/"]\n\textraheader = {header}\n')
    git(checkout, "config", "http.https://github.com/.extraheader", header)
    git(checkout, "config", f"includeIf.gitdir:{checkout / '.git'}.path", str(creds))
    return {**files, "RUNNER_TEMP": temp, "creds": creds}


@pytest.mark.skipif(not sandbox_status().ok, reason=f"bubblewrap: {sandbox_status().reason}")
def test_the_agent_reaches_no_runner_file_command_checkout_credential_or_token(
    tmp_path: Path,
) -> None:
    checkout_dir = tmp_path / "checkout"
    probe = "\n".join(
        [
            'echo "== env"; env',
            'echo "== GITHUB_ENV"; echo "LD_PRELOAD=/x.so" >> "$GITHUB_ENV" && echo appended',
            'echo "== runner temp"; ls -la "{temp}"; cat "{temp}"/_runner_file_commands/*',
            'echo "== creds"; cat "{creds}"',
            'echo "== git config"; cat .git/config; git config --list --show-origin',
            'echo "== proc"; cat /proc/*/environ 2>/dev/null | tr "\\0" "\\n" | grep -a TOKEN',
            'echo "== end"',
        ]
    )
    with world(tmp_path, [], repo_yaml=fast_validation_yaml()) as w:
        w.gh.set_permission(REPO, "alice", "write")
        w.gh.add_issue(REPO, number=7, title="add() is wrong", labels=["agent-fix"])
        checkout = clone_branch(w.remote, "main", checkout_dir)
        files = runner_files(tmp_path, checkout)
        command = probe.format(temp=files["RUNNER_TEMP"], creds=files["creds"])
        w.llm.add(reply(tool_use("bash", {"command": command})), *fix_script())
        env = actions_env(tmp_path, w.gh.url, w.llm.base_url, "issues", labeled_payload())
        env.update(
            RUNNER_TEMP=str(files["RUNNER_TEMP"]),
            GITHUB_ENV=str(files["GITHUB_ENV"]),
            GITHUB_PATH=str(files["GITHUB_PATH"]),
            GITHUB_STATE=str(files["GITHUB_STATE"]),
            ACTIONS_RUNTIME_TOKEN="eyJhbGciOi.runtime-token-for-the-cache-service",
            DOCKER_PASS="dkr-pass-7f3a9c21e8",
        )
        proc = subprocess.run(
            [AGENTBOT, "run"], cwd=checkout, env=env, capture_output=True, text=True, timeout=300
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        out = tool_results(w.llm)[0]
    sections = {h: body for h, _, body in (p.partition("\n") for p in out.split("== ")[1:])}
    names = {line.split("=", 1)[0] for line in sections["env"].splitlines() if "=" in line}
    allowed = {"PATH", "HOME", "LANG", "TERM", "TZ", "CI", "TMPDIR", "PWD", "SHLVL", "_"}
    allowed |= {"GIT_TERMINAL_PROMPT", "GIT_PAGER", "PAGER", "RUSTUP_HOME"}
    # What agentbot itself sets for the project's environment (values of its own, not the
    # runner's): quiet tools, caches under the data dir, the workspace's venv.
    allowed |= set(SHELL_DEFAULTS) | {
        "FORCE_COLOR", "PIP_DISABLE_PIP_VERSION_CHECK", "PIP_NO_INPUT", "UV_NO_PROGRESS",
        "UV_PYTHON_DOWNLOADS", "HUSKY", "npm_config_audit", "npm_config_fund",
        "npm_config_update_notifier", "MYPY_FORCE_TERMINAL_WIDTH", "PRE_COMMIT_HOME",
        "PYTHONPYCACHEPREFIX", "UV_LINK_MODE", "MYPY_CACHE_DIR", "RUFF_CACHE_DIR",
        "VIRTUAL_ENV", "PYTHONPATH",
    }  # fmt: skip
    # The package caches, per repository under the data dir (agentbot's own paths).
    allowed |= {
        "UV_CACHE_DIR", "PIP_CACHE_DIR", "npm_config_cache", "npm_config_store_dir",
        "YARN_CACHE_FOLDER", "YARN_GLOBAL_FOLDER", "GOMODCACHE", "COREPACK_HOME", "CARGO_HOME",
    }  # fmt: skip
    extra = {n for n in names - allowed if not n.startswith("LC_")}
    from bot.secrets import inheritable

    assert all(inheritable(n) for n in extra), extra
    assert "appended" not in sections["GITHUB_ENV"]
    for name in ("GITHUB_ENV", "GITHUB_PATH", "GITHUB_STATE"):
        assert files[name].read_text() == "", name
    assert "No such file or directory" in sections["runner temp"]
    assert "No such file or directory" in sections["creds"]
    assert "extraheader" not in sections["git config"].lower()
    assert "includeif" not in sections["git config"].lower()
    assert not files["creds"].exists()  # removed before the agent started
    for secret in (TOKEN, PERSISTED, "runtime-token", "dkr-pass", "sk-ant-test-key"):
        assert secret not in out, secret
    summary = (tmp_path / "summary.md").read_text()
    assert "no sandbox" not in summary


def test_without_bwrap_the_action_runs_with_the_runner_as_the_boundary_and_says_so(
    tmp_path: Path,
) -> None:
    with world(tmp_path, fix_script(), repo_yaml=fast_validation_yaml()) as w:
        w.gh.set_permission(REPO, "alice", "write")
        w.gh.add_issue(REPO, number=7, title="add() is wrong", labels=["agent-fix"])
        checkout = clone_branch(w.remote, "main", tmp_path / "checkout")
        env = actions_env(tmp_path, w.gh.url, w.llm.base_url, "issues", labeled_payload())
        env["PATH"] = path_without_bwrap(tmp_path)
        proc = subprocess.run(
            [AGENTBOT, "run"], cwd=checkout, env=env, capture_output=True, text=True, timeout=300
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert len(w.gh.pulls(REPO)) == 1
    line = "agentbot: no sandbox (bwrap not found on PATH"
    notices = [ln for ln in proc.stderr.splitlines() if ln.startswith(line)]
    assert len(notices) == 1 and "the runner is the isolation boundary" in notices[0]
    summary = (tmp_path / "summary.md").read_text()
    assert summary.count("no sandbox") == 1 and "runner is the isolation boundary" in summary
    outputs = dict(ln.split("=", 1) for ln in (tmp_path / "output.txt").read_text().splitlines())
    assert outputs["status"] == "success" and json.dumps(outputs)
    assert os.environ["PATH"] != env["PATH"]
