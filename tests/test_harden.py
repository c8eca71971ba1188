"""The CLI process is undumpable: an agent's bash cannot read its environment from /proc."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

PROBE = """
import sys
from pathlib import Path
if sys.argv[1] == "harden":
    from bot.cli import harden
    harden()
from bot.tools import Toolbox
cmd = "cat /proc/$PPID/environ | tr '\\\\0' '\\\\n'"
out = Toolbox(Path(sys.argv[2])).run("bash", {"command": cmd})
print(out.content)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl is Linux-only")
@pytest.mark.parametrize("mode", ["harden", "plain"])
def test_bash_cannot_read_the_parents_environ(tmp_path: Path, mode: str) -> None:
    work = tmp_path / "ws"
    work.mkdir()
    env = {
        "PATH": os.environ["PATH"],
        "PYTHONPATH": str(ROOT),
        "HOME": str(work),
        "GITHUB_TOKEN": "ghs_parent_secret_value_123",
    }
    # Root with CAP_SYS_PTRACE reads any /proc/<pid>/environ: drop every capability first
    # (as a non-root user runs anyway), so only the dumpable flag decides.
    wrapper = (
        ["setpriv", "--bounding-set", "-all", "--inh-caps", "-all"] if os.geteuid() == 0 else []
    )
    if wrapper and shutil.which("setpriv") is None:
        pytest.skip("running as root and util-linux's setpriv is missing")
    proc = subprocess.run(
        [*wrapper, sys.executable, "-c", PROBE, mode, str(work)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    if mode == "harden":
        assert "ghs_parent_secret_value_123" not in proc.stdout
        assert "Permission denied" in proc.stdout
    else:  # the control: without harden() the secret is readable, so the test can fail
        assert "ghs_parent_secret_value_123" in proc.stdout
