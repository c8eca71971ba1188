"""Importing the packages reads no environment and creates no file."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PROBE = """
import os
reads = []
get, has = os._Environ.__getitem__, os._Environ.__contains__
os._Environ.__getitem__ = lambda self, k: (reads.append(k), get(self, k))[1]
os._Environ.__contains__ = lambda self, k: (reads.append(k), has(self, k))[1]
import importlib, pkgutil
import bot, webhooks
for pkg in (bot, webhooks):
    for m in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + "."):
        importlib.import_module(m.name)
mine = [k for k in reads if k.startswith(("GITHUB_", "AGENTBOT_", "ANTHROPIC_", "OPENAI_"))]
print("READS", mine)
"""


def test_import_reads_no_env_and_creates_no_file(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1"}
    env["AGENTBOT_DATA_DIR"] = str(tmp_path / "data")
    proc = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    assert "READS []" in proc.stdout
    assert list(tmp_path.iterdir()) == []
