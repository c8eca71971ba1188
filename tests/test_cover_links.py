"""/cover never reads or writes through a link the repository's own tests left in the tree."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest

from bot.clock import FakeClock
from bot.cover.runners import runner_for
from bot.models import Job, JobKind, JobStatus
from bot.sandbox import SandboxPolicy, sandbox_status
from bot.validation.environment import build_stage_env
from bot.validation.profiles import detect_profile
from bot.workflows.cover.story import cover
from tests.cover_script import Method, team
from tests.e2e import BUGGY_FILES, REPO, world
from tests.fakes.gitrepo import push_files
from tests.test_cover_python import config


def test_the_report_folder_never_writes_through_a_planted_link(tmp_path: Path) -> None:
    # The hostile-model trial's H2: `.agentbot-cover/.gitignore` linked to the webhook secret.
    ws = tmp_path / "data" / "workspaces" / "octo__calc-pr-1"
    ws.mkdir(parents=True)
    secret = tmp_path / "data" / "webhook-secret"
    secret.write_text("whsec-very-secret-value\n")
    (ws / "pyproject.toml").write_text("")
    (ws / "test_x.py").write_text("def test_x():\n    assert True\n")
    (ws / ".agentbot-cover").mkdir()
    (ws / ".agentbot-cover" / ".gitignore").symlink_to("../../../webhook-secret")
    senv = build_stage_env(ws, detect_profile(ws), tmp_path / "cache", {}, use_venv=False)
    runner = runner_for(
        "python",
        ws,
        senv,
        test_command=f"{sys.executable} -m pytest",
        timeout=60,
        clock=FakeClock(),
    )
    assert runner is not None
    assert not runner.run().failing()
    assert secret.read_text() == "whsec-very-secret-value\n"


SWAP = """
import atexit, os
if os.path.islink("calc.py"):
    os.unlink("calc.py"); os.rename(".calc.bak", "calc.py")
def _swap():
    os.rename("calc.py", ".calc.bak"); os.symlink(%r, "calc.py")
atexit.register(_swap)
"""


@pytest.mark.skipif(not sandbox_status().ok, reason="needs bubblewrap")
def test_a_source_swapped_for_a_link_by_the_tests_never_reaches_the_model(
    tmp_path: Path,
) -> None:
    # The hostile-model trial's H3: the PR's conftest.py swaps calc.py for a link to another
    # installation's checkout when the test run ends; the brief read it for the next agent.
    other = tmp_path / "data" / "workspaces" / "acme__secret-issue-1" / "algo.py"
    other.parent.mkdir(parents=True)
    secret = "ACME_PRIVATE_ALGO = 'never to be seen by octo'"
    other.write_text(secret + "\n")
    base = {**BUGGY_FILES, "calc.py": BUGGY_FILES["calc.py"].replace("a - b", "a + b")}
    calc = "def leakme(x: int) -> int:\n    return x + 1\n\n\n" + base["calc.py"]
    test = "\n\ndef test_l() -> None:\n    from calc import leakme\n    assert leakme(1) == 2\n"
    _, script = team({"leakme": Method("tests/test_calc.py", test)})
    data = tmp_path / "data"
    policy = SandboxPolicy(root=data / "sandbox", hidden=(data,), host_home=Path.home())
    with world(tmp_path, script, files=base) as w:
        files = {"calc.py": calc, "tests/conftest.py": SWAP % str(other)}
        push_files(w.remote, "feature/x", files, start="main")
        number = w.gh.add_pull(REPO, head="feature/x", user="alice").number
        with policy.open("setup") as sandbox:
            env = dataclasses.replace(w.env(config()), sandbox=sandbox)
            job = Job(kind=JobKind.COVER, repo=REPO, number=number, actor="alice")
            result = cover(job, env)
        assert secret not in w.llm_requests_text()
    assert result.status == JobStatus.FAILED
    assert "no longer a plain file" in (result.error or "")
    assert other.read_text() == secret + "\n"
