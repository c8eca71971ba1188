"""Test runners the /cover end-to-end tests need, installed once from their registry by version."""

from __future__ import annotations

import fcntl
import os
import subprocess
from pathlib import Path

JEST_VERSION = "29.7.0"
VITEST_VERSION = "2.1.9"


def cache_dir() -> Path:
    """Where downloaded test material is kept between runs ($AGENTBOT_TEST_CACHE)."""
    default = Path.home() / ".cache" / "agentbot-tests"
    return Path(os.environ.get("AGENTBOT_TEST_CACHE") or default)


def node_modules(name: str, *packages: str) -> Path:
    """A node_modules folder holding `packages` (npm install once per name, then reused)."""
    root = cache_dir() / name
    modules = root / "node_modules"
    root.mkdir(parents=True, exist_ok=True)
    with (root / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # parallel test workers install it once
        if not (root / ".installed").exists():
            subprocess.run(
                ["npm", "install", "--no-audit", "--no-fund", "--loglevel=error",
                 "--prefix", str(root), *packages],
                check=True, capture_output=True, timeout=600,
            )  # fmt: skip
            (root / ".installed").write_text(" ".join(packages))
    return modules


def jest_modules() -> Path:
    """jest, from npm."""
    return node_modules(f"jest-{JEST_VERSION}", f"jest@{JEST_VERSION}")


def vitest_modules() -> Path:
    """vitest with its V8 coverage provider, from npm."""
    return node_modules(
        f"vitest-{VITEST_VERSION}",
        f"vitest@{VITEST_VERSION}",
        f"@vitest/coverage-v8@{VITEST_VERSION}",
    )
