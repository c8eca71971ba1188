"""Importing the packages reads no environment and creates no file."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PROBE = """
import os, sys
reads = []
ROOT = sys.argv[1]
get, has = os._Environ.__getitem__, os._Environ.__contains__
def who():
    # The nearest caller that is not the mapping machinery (os.py, _collections_abc.py).
    f = sys._getframe(2)
    while f and f.f_code.co_filename.endswith(("os.py", "_collections_abc.py", "os>", "abc>")):
        f = f.f_back
    return f.f_code.co_filename if f else ""
def spy_get(self, k):
    reads.append((k, who()))
    return get(self, k)
def spy_has(self, k):
    reads.append((k, who()))
    return has(self, k)
os._Environ.__getitem__ = spy_get
os._Environ.__contains__ = spy_has
import importlib, pkgutil
import bot, webhooks
for pkg in (bot, webhooks):
    for m in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + "."):
        importlib.import_module(m.name)
# Libraries may copy the whole environment at import (wsgiref, croniter); only our reads count.
ours = [k for k, f in reads if f.startswith((ROOT + "/bot/", ROOT + "/webhooks/"))]
print("READS", ours)
"""


def test_import_reads_no_env_and_creates_no_file(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1"}
    env["AGENTBOT_DATA_DIR"] = str(tmp_path / "data")
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, str(ROOT)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    assert "READS []" in proc.stdout
    assert list(tmp_path.iterdir()) == []


HELP_PROBE = """
import sys
from bot.cli import main
sys.argv = ["agentbot", "--help"]
try:
    main()
except SystemExit as exc:
    assert exc.code == 0, exc.code
print("MODULES", " ".join(sorted(sys.modules)))
"""

HEAVY = ("githubkit", "bot.worker", "bot.workflows", "webhooks", "fastapi", "anthropic", "openai")
"""What `agentbot --help` must not load: the GitHub client, the worker, the jobs, the SDKs."""


def test_help_imports_neither_the_github_client_nor_the_worker(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1"}
    proc = subprocess.run(
        [sys.executable, "-c", HELP_PROBE], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    assert "Usage: agentbot" in proc.stdout
    modules = proc.stdout.split("MODULES ", 1)[1].split()
    assert "bot.cli.run" in modules and "bot.cli.serve" in modules  # every command is loaded
    loaded = [m for m in modules if m.split(".")[0] in HEAVY or m.startswith(HEAVY)]
    assert loaded == []
