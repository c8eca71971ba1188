"""scripts/enable-sandbox.sh, the composite action's sandbox step, with stub system tools."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
import yaml

from bot.sandbox import sandbox_status

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "enable-sandbox.sh"


def stub(folder: Path, name: str, body: str) -> None:
    path = folder / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)


def run(env: dict[str, str]) -> str:
    proc = subprocess.run(["bash", str(SCRIPT)], env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr  # never fails the job
    return proc.stdout.strip()


def stubbed_path(tmp: Path) -> tuple[Path, str]:
    """A bin folder first on PATH, and PATH without any real bwrap, sudo or apt-get."""
    bin_dir = tmp / "bin"
    bin_dir.mkdir()
    keep = [
        p
        for p in os.environ["PATH"].split(os.pathsep)
        if not any((Path(p) / t).exists() for t in ("bwrap", "sudo", "apt-get"))
    ]
    shadow = tmp / "usr-bin"
    shadow.mkdir()
    for tool in ("sh", "bash", "uname", "id", "readlink", "tee", "cat", "cp", "true", "echo"):
        for folder in os.environ["PATH"].split(os.pathsep):
            if (Path(folder) / tool).exists():
                (shadow / tool).symlink_to(Path(folder) / tool)
                break
    return bin_dir, os.pathsep.join([str(bin_dir), str(shadow), *keep])


def test_the_action_enables_the_sandbox_before_running_agentbot() -> None:
    steps = yaml.safe_load((ROOT / "action.yml").read_text())["runs"]["steps"]
    names = [s.get("id") or s.get("name") for s in steps]
    enable = next(i for i, s in enumerate(steps) if "enable-sandbox.sh" in s.get("run", ""))
    assert enable < names.index("run")


@pytest.mark.skipif(not sandbox_status().ok, reason=f"bubblewrap: {sandbox_status().reason}")
def test_where_bwrap_works_nothing_changes() -> None:
    assert run(dict(os.environ)) == "agentbot sandbox: bubblewrap works"


def test_a_missing_bwrap_is_installed_with_apt(tmp_path: Path) -> None:
    bin_dir, path = stubbed_path(tmp_path)
    calls = tmp_path / "apt.log"
    stub(bin_dir, "id", "echo 1001\n")
    stub(bin_dir, "sudo", '[ "$1" = -n ] && shift; "$@"\n')
    stub(bin_dir, "apt-get", f'echo "$*" >> {calls}\n')
    out = run({"PATH": path})
    assert "install -y -qq bubblewrap" in calls.read_text()
    assert out.startswith("agentbot sandbox: bwrap is not installed")


def test_without_sudo_it_says_so_and_goes_on(tmp_path: Path) -> None:
    bin_dir, path = stubbed_path(tmp_path)
    stub(bin_dir, "id", "echo 1001\n")
    stub(bin_dir, "sudo", "exit 1\n")
    out = run({"PATH": path})
    assert out == (
        "agentbot sandbox: bwrap is not installed and cannot be (no sudo);"
        " the runner is the isolation boundary"
    )


def test_apparmor_restriction_gets_a_profile_scoped_to_bwrap(tmp_path: Path) -> None:
    bin_dir, path = stubbed_path(tmp_path)
    loaded = tmp_path / "loaded"
    profiles = tmp_path / "apparmor.d"
    profiles.mkdir()
    stub(bin_dir, "id", "echo 1001\n")
    stub(bin_dir, "sudo", '[ "$1" = -n ] && shift; "$@"\n')
    # Ubuntu 24.04's bwrap before the profile is loaded.
    stub(
        bin_dir,
        "bwrap",
        f'[ -e {loaded} ] && exit 0\necho "bwrap: setting up uid map: Permission denied" >&2\n'
        "exit 1\n",
    )
    stub(bin_dir, "apparmor_parser", f'[ "$1" = -r ] && cp "$2" {loaded}\n')
    out = run({"PATH": path, "AGENTBOT_APPARMOR_DIR": str(profiles)})
    profile = (profiles / "agentbot-bwrap").read_text()
    assert f"profile agentbot-bwrap {bin_dir / 'bwrap'} flags=(unconfined) {{" in profile
    assert "  userns," in profile.splitlines()
    assert loaded.read_text() == profile
    assert out.startswith("agentbot sandbox: bubblewrap works (the AppArmor profile")


def test_a_bwrap_that_still_fails_leaves_the_runner_as_the_boundary(tmp_path: Path) -> None:
    bin_dir, path = stubbed_path(tmp_path)
    stub(bin_dir, "id", "echo 1001\n")
    stub(bin_dir, "sudo", "exit 1\n")
    stub(bin_dir, "bwrap", 'echo "bwrap: setting up uid map: Permission denied" >&2\nexit 1\n')
    out = run({"PATH": path})
    assert out == (
        "agentbot sandbox: bubblewrap cannot run here (bwrap: setting up uid map: Permission"
        " denied); the runner is the isolation boundary"
    )
