"""Setup initialises a declared submodule when the job runs in the sandbox (issue #24).

In the sandbox the checkout's `.git` is read-only, so `git submodule update` there cannot
record the submodule; the bot's own hardened git runs it (bot.validation.submodule_init).
Real git, a bare remote served over HTTP on 127.0.0.1, real bubblewrap.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.config import ValidationConfig
from bot.sandbox import Sandbox, SandboxPolicy, sandbox_status
from bot.validation import prepare
from tests.realrepos.githttp import GitHttp, serve
from tests.realrepos.test_submodule_realrepo import RECORDED, seed_project, vectors_remote

needs_bwrap = pytest.mark.skipif(
    sandbox_status().kind != "bwrap" and os.environ.get("AGENTBOT_CI_STRICT") != "1",
    reason="needs bubblewrap",
)


@pytest.fixture
def http(tmp_path: Path) -> Iterator[GitHttp]:
    with serve(tmp_path / "http") as served:
        yield served


@pytest.fixture
def sandbox(tmp_path: Path) -> Iterator[Sandbox]:
    data = tmp_path / "data"
    policy = SandboxPolicy(root=data / "sandbox", hidden=(data,), app=True)
    with policy.open("setup") as opened:
        yield opened


def _project(tmp_path: Path, http: GitHttp) -> Path:
    vectors, recorded = vectors_remote(tmp_path, http)
    remote = tmp_path / "project.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    seed_project(remote, vectors, recorded, tmp_path)
    ws = tmp_path / "data" / "workspaces" / "octo__roman-1"
    subprocess.run(["git", "clone", "-q", str(remote), str(ws)], check=True)
    assert not (ws / "tests" / "vectors" / "cases.json").exists()  # a clone leaves it empty
    return ws


@needs_bwrap
def test_a_sandboxed_setup_initialises_the_submodule_at_its_recorded_commit(
    tmp_path: Path, http: GitHttp, sandbox: Sandbox
) -> None:
    ws = _project(tmp_path, http)
    config = ValidationConfig(setup="true")  # nothing to install: the submodule alone
    ready = prepare(ws, config, data_dir=tmp_path / "data", env=dict(os.environ),
                    sandbox=sandbox)  # fmt: skip
    assert ready.setup.status == "passed", ready.setup.command_result
    assert "git submodule update --init --recursive" in ready.setup.command
    cases = json.loads((ws / "tests" / "vectors" / "cases.json").read_text())
    assert cases == json.loads(json.dumps(RECORDED))  # the recorded commit, not the remote's main


@needs_bwrap
def test_a_submodule_url_on_another_transport_is_not_fetched(
    tmp_path: Path, http: GitHttp, sandbox: Sandbox
) -> None:
    ws = _project(tmp_path, http)
    # The checkout's .gitmodules names a local path instead (a hostile repository's choice).
    secret = tmp_path / "elsewhere.git"
    subprocess.run(["git", "init", "-q", "--bare", str(secret)], check=True)
    text = (ws / ".gitmodules").read_text()
    url = next(ln.split("=", 1)[1].strip() for ln in text.splitlines() if "url =" in ln)
    (ws / ".gitmodules").write_text(text.replace(url, f"file://{secret}"))
    config = ValidationConfig(setup="true")
    ready = prepare(ws, config, data_dir=tmp_path / "data", env=dict(os.environ),
                    sandbox=sandbox)  # fmt: skip
    assert ready.setup.status == "failed"
    assert ready.setup.command_result is not None
    assert "transport 'file' not allowed" in ready.setup.command_result.output
