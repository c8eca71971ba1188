"""JavaScript setup: the repository's package manager, at its declared version, frozen."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Mapping
from pathlib import Path


def node_install(repo: Path, env: Mapping[str, str]) -> str:
    """The frozen install of the repo's package manager (no lockfile: npm, writing none)."""
    try:
        manager = str(json.loads((repo / "package.json").read_text()).get("packageManager", ""))
    except (OSError, ValueError, AttributeError):
        manager = ""
    path = env.get("PATH", "")
    if (repo / "pnpm-lock.yaml").is_file():
        version = manager.split("@", 1)[1].split("+")[0] if manager.startswith("pnpm@") else ""
        if not version:
            head = (repo / "pnpm-lock.yaml").read_text(errors="replace")[:200]
            lock = re.search(r"lockfileVersion: '?(\d+)", head)
            version = {"5": "7", "6": "8"}.get(lock.group(1) if lock else "", "9")
        pnpm = "pnpm" if shutil.which("pnpm", path=path) else f"npx --yes pnpm@{version}"
        return f"{pnpm} install --frozen-lockfile"
    if (repo / "yarn.lock").is_file():
        berry = (repo / ".yarnrc.yml").is_file() or re.match(r"yarn@[2-9]", manager) is not None
        yarn = (
            "yarn"
            if shutil.which("yarn", path=path)
            else ("npx --yes -p @yarnpkg/cli-dist yarn" if berry else "npx --yes yarn@1")
        )
        return f"{yarn} install --immutable" if berry else f"{yarn} install --frozen-lockfile"
    if (repo / "bun.lockb").is_file() or (repo / "bun.lock").is_file():
        return "bun install --frozen-lockfile"
    if any((repo / f).is_file() for f in ("package-lock.json", "npm-shrinkwrap.json")):
        return "npm ci --no-audit --no-fund"
    # Without a lockfile, install must not write one into the workspace.
    return "npm install --no-audit --no-fund --no-package-lock"
