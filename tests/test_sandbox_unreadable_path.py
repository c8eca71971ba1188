"""A job run by a service user whose PATH holds a folder it cannot read still gets its sandbox."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SNIPPET = """
import sys, types
from bot.sandbox.job import Sandbox
me = types.SimpleNamespace(policy=types.SimpleNamespace(host_home=None), hidden=())
print(Sandbox._toolchain_dirs(me, sys.argv[1:]))
"""


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"), reason="needs root")
def test_an_unreadable_path_folder_is_skipped_not_a_crash(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    (locked / "bin").mkdir(parents=True)
    locked.chmod(0o700)  # root's: the service user cannot look inside
    tmp_path.chmod(0o755)
    proc = subprocess.run(
        ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
         sys.executable, "-c", SNIPPET, str(locked / "bin"), "/usr/bin"],
        capture_output=True, text=True, cwd=Path(__file__).parent.parent, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-500:]
    assert "PermissionError" not in proc.stderr
    assert "locked" not in proc.stdout
