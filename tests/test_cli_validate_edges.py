"""`agentbot validate` at its edges: an unverified stage, a config section with no value."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import get_args

from bot.cli.validate import _STYLE
from bot.config import RepoConfig
from bot.models.validation import GateStatus

AGENTBOT = str(Path(sys.executable).with_name("agentbot"))


def run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTBOT_", "GITHUB_"))}
    env.update(AGENTBOT_DATA_DIR=str(cwd.parent / "data"), AGENTBOT_SANDBOX="none")
    return subprocess.run(
        [AGENTBOT, "validate", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


def repo(tmp: Path, config: str) -> Path:
    path = tmp / "r"
    (path / ".github").mkdir(parents=True)
    (path / ".github" / "agentbot.yml").write_text(config)
    (path / "pyproject.toml").write_text('[project]\nname = "m"\nversion = "0"\n')
    (path / "m.py").write_text("def f() -> int:\n    return 1\n")
    (path / "test_m.py").write_text(
        "from m import f\n\n\ndef test_f() -> None:\n    assert f() == 1\n"
    )
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    return path


def test_every_gate_status_has_a_style() -> None:
    assert set(_STYLE) == set(get_args(GateStatus))


def test_an_unverified_test_stage_is_shown_and_is_no_pass(tmp_path: Path) -> None:
    config = (
        "validation:\n  format: null\n  lint: null\n  typecheck: null\n  test: no-such-runner -q\n"
    )
    proc = run(repo(tmp_path, config))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "internal error" not in proc.stderr and "Traceback" not in proc.stderr
    assert "unverified" in proc.stdout and "gate UNVERIFIED" in proc.stdout, proc.stdout
    assert "PASSED" not in proc.stdout


def test_a_section_with_no_value_means_its_defaults() -> None:
    for key in ("validation", "labels", "budget", "limits"):
        assert RepoConfig.from_text(f"{key}:\n") == RepoConfig(), key


def test_validate_leaves_no_egg_info_behind_but_keeps_the_users(tmp_path: Path) -> None:
    setup = (
        "mkdir -p src/m.egg-info m.egg-info lib/python/n.egg-info"
        " && touch src/m.egg-info/PKG-INFO m.egg-info/x"
    )
    config = (
        f"validation:\n  setup: {setup}\n  format: null\n  lint: null\n  typecheck: null\n"
        "  test: null\n"
    )
    path = repo(tmp_path, config)
    (path / "m.egg-info").mkdir()  # the user's own, from before
    (path / "m.egg-info" / "PKG-INFO").write_text("mine\n")
    proc = run(path, "--repo", str(path))
    assert "setup: passed" in proc.stderr, proc.stdout + proc.stderr
    assert not (path / "src" / "m.egg-info").exists()
    assert not (path / "lib" / "python" / "n.egg-info").exists()  # package_dir={"": "lib/python"}
    assert (path / "m.egg-info" / "PKG-INFO").read_text() == "mine\n"
    assert (path / "m.egg-info" / "x").exists()  # in a folder the user had: not ours to judge
