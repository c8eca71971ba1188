"""Which sandbox this machine gives a job, and why: bubblewrap if it really works, else none.

The answer comes from running bwrap once with the namespaces a job uses (cached per
process and bwrap path), never from its mere presence: on GitHub-hosted Ubuntu 24.04,
AppArmor lets bwrap start and then refuses it the user namespace.
"""

from __future__ import annotations

import functools
import shutil
import subprocess
import sys
from dataclasses import dataclass
from typing import Literal

SandboxKind = Literal["bwrap", "none"]

APPARMOR_HINT = (
    "unprivileged user namespaces are restricted (Ubuntu 24.04 AppArmor): allow bwrap with"
    " an AppArmor profile (the composite action does this) or"
    " `sysctl kernel.apparmor_restrict_unprivileged_userns=0`"
)


@dataclass(frozen=True)
class SandboxStatus:
    """The sandbox jobs get here: `kind`, where bwrap is, and a one-line reason."""

    kind: SandboxKind
    reason: str
    bwrap: str | None = None
    disable_userns: bool = False
    """bwrap can forbid nested user namespaces (0.8+)."""

    @property
    def ok(self) -> bool:
        """Whether jobs are sandboxed."""
        return self.kind == "bwrap"

    def line(self) -> str:
        """`sandbox: bwrap (...)` or `sandbox: none (...)`, for doctor and logs."""
        return f"sandbox: {self.kind} ({self.reason})"


def sandbox_status(mode: str = "auto", path: str | None = None) -> SandboxStatus:
    """The sandbox for `AGENTBOT_SANDBOX=mode` with bwrap looked up on `path` (default PATH)."""
    if mode == "none":
        return SandboxStatus("none", "AGENTBOT_SANDBOX=none: jobs run unsandboxed (unsafe)")
    if not sys.platform.startswith("linux"):
        return SandboxStatus("none", f"bubblewrap needs Linux; this is {sys.platform}")
    found = shutil.which("bwrap", path=path)
    if found is None:
        return SandboxStatus(
            "none", "bwrap not found on PATH: install bubblewrap (Debian/Ubuntu: bubblewrap)"
        )
    return _probe(found)


@functools.cache
def _probe(bwrap: str) -> SandboxStatus:
    """Run `true` in the namespaces a job gets; the first line of bwrap's complaint if not."""
    try:
        help_text = subprocess.run(
            [bwrap, "--help"], capture_output=True, text=True, timeout=10, check=False
        ).stdout
        disable = "--disable-userns" in help_text
        argv = [
            bwrap,
            *("--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts"),
            *("--unshare-net", "--die-with-parent", "--cap-drop", "ALL"),
            *(["--disable-userns"] if disable else []),
            *("--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "true"),
        ]
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return SandboxStatus("none", f"{bwrap} cannot run: {exc}", bwrap=bwrap)
    if proc.returncode != 0:
        first = (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[0]
        hint = f"; {APPARMOR_HINT}" if "uid map" in first or "Permission denied" in first else ""
        return SandboxStatus("none", f"{bwrap} fails: {first}{hint}", bwrap=bwrap)
    version = subprocess.run(
        [bwrap, "--version"], capture_output=True, text=True, timeout=10, check=False
    ).stdout.strip()
    return SandboxStatus(
        "bwrap",
        f"{version or 'bubblewrap'} at {bwrap}: own user, pid, mount, ipc, uts and net namespaces",
        bwrap=bwrap,
        disable_userns=disable,
    )
