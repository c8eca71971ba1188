"""The layering contracts (pyproject.toml, run by lint-imports in .ci/run) hold, and break."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINT = str(Path(sys.executable).with_name("lint-imports"))


def lint(tree: Path) -> subprocess.CompletedProcess[str]:
    """lint-imports on `tree` (its pyproject.toml, its packages first on the path)."""
    return subprocess.run(
        [LINT, "--no-cache", "--no-logo"],
        cwd=tree,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(tree)},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_tree_keeps_every_contract() -> None:
    proc = lint(ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 broken" in proc.stdout


@pytest.mark.parametrize(
    ("module", "planted", "broken"),
    [
        ("bot/events/decide.py", "from bot.github import GitHub", "Decisions are pure"),
        ("bot/ports/facts.py", "from bot.workflows.handlers import HANDLERS", "Layers"),
        ("bot/agent/run.py", "from bot.ports import GitHubPort", "never see GitHub"),
        ("bot/report.py", "from bot.events import decide", "do not depend on each other"),
    ],
)
def test_a_planted_violation_breaks_a_contract(
    tmp_path: Path, module: str, planted: str, broken: str
) -> None:
    for part in ("bot", "webhooks"):
        shutil.copytree(ROOT / part, tmp_path / part, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    target = tmp_path / module
    target.write_text(target.read_text() + f"\n{planted}  # planted\n")
    proc = lint(tmp_path)
    assert proc.returncode == 1, proc.stdout
    assert broken in proc.stdout.split("Broken contracts", 1)[1]
