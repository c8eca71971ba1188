"""JavaScript setup: the repository's package manager, at its declared version, frozen.

`packageManager` in package.json names the manager and its version; without it the
lockfile kind does (`pnpm-lock.yaml`, `yarn.lock`, `bun.lock(b)`), at the major the
lockfile format implies. A declared version is installed from npm's registry into a
folder of its own under the repository's package cache (`pm/pnpm@9.12.0/bin`), which
is put on every stage's PATH, so the repository's own scripts that call `pnpm` or
`yarn` find it. (npm rather than corepack: corepack's signature check needs keys a
registry mirror may not serve; npm checks the tarball's integrity itself.)
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Manager:
    """A package manager the repository uses: `pnpm`, `yarn` (1), `yarn` (berry), `bun`."""

    name: str
    version: str
    """Declared (packageManager) or implied by the lockfile; "" when neither says."""
    berry: bool = False
    declared_by: str = "package.json packageManager"

    @property
    def package(self) -> str:
        """The npm package that ships this manager at this version."""
        pkg = "@yarnpkg/cli-dist" if self.berry else self.name
        return f"{pkg}@{self.version}" if self.version else pkg

    def folder(self, cache: Path) -> Path:
        """Where it is installed under the repository's package cache."""
        return cache / "pm" / self.package.replace("/", "+")


def manager(repo: Path) -> Manager | None:
    """The manager the repository declares (packageManager) or its lockfile implies."""
    try:
        declared = str(json.loads((repo / "package.json").read_text()).get("packageManager", ""))
    except (OSError, ValueError, AttributeError):
        declared = ""
    m = re.fullmatch(r"(pnpm|yarn|bun|npm)@([\w.-]+)(?:\+.*)?", declared.strip())
    name, version = (m.group(1), m.group(2)) if m else ("", "")
    by = "package.json packageManager"
    if name == "npm":
        return None
    if name == "pnpm" or (not name and (repo / "pnpm-lock.yaml").is_file()):
        if not version and (repo / "pnpm-lock.yaml").is_file():
            head = (repo / "pnpm-lock.yaml").read_text(errors="replace")[:200]
            lock = re.search(r"lockfileVersion: '?(\d+)", head)
            version = {"5": "7", "6": "8"}.get(lock.group(1) if lock else "", "9")
        return Manager("pnpm", version, declared_by=by if name else "pnpm-lock.yaml")
    if name == "yarn" or (not name and (repo / "yarn.lock").is_file()):
        berry = (
            re.match(r"[2-9]|\d\d", version) is not None
            if version
            else ((repo / ".yarnrc.yml").is_file())
        )
        by = by if name else "yarn.lock"
        return Manager("yarn", version or ("" if berry else "1"), berry=berry, declared_by=by)
    if name == "bun" or (repo / "bun.lockb").is_file() or (repo / "bun.lock").is_file():
        return Manager("bun", version)
    return None


def manager_bin(repo: Path, cache: Path) -> Path | None:
    """The folder put on the stages' PATH for the repository's manager, if it has one."""
    found = manager(repo)
    return found.folder(cache) / "bin" if found is not None and found.name != "bun" else None


def describe(repo: Path) -> str:
    """The setup row's note on the manager: which, at what version, declared where."""
    found = manager(repo)
    if found is None or found.name == "bun":
        return ""
    named = f"{found.name}@{found.version}" if found.version else found.name
    # yarn 2+ ships as @yarnpkg/cli-dist: the row names the manager, then that package.
    shipped = "" if found.package == named else f" as {found.package}"
    return (
        f"{named}{shipped} (from {found.declared_by}), installed from the npm registry,"
        " on PATH for the repository's own scripts"  # manager_bin, in every stage's PATH
    )


def node_install(repo: Path, env: Mapping[str, str], cache: Path) -> list[str]:
    """The setup commands: the manager at its version (if not there yet), then the install."""
    found = manager(repo)
    if found is None:
        if any((repo / f).is_file() for f in ("package-lock.json", "npm-shrinkwrap.json")):
            return ["npm ci --no-audit --no-fund"]
        # Without a lockfile, install must not write one into the workspace.
        return ["npm install --no-audit --no-fund --no-package-lock"]
    if found.name == "bun":
        return ["bun install --frozen-lockfile"]
    steps: list[str] = []
    on_path = shutil.which(found.name, path=env.get("PATH", ""))
    if found.version or on_path is None:
        folder = found.folder(cache)
        exe = shlex.quote(str(folder / "bin" / found.name))
        steps.append(
            f"test -x {exe} || npm install --global --no-audit --no-fund"
            f" --prefix {shlex.quote(str(folder))} {shlex.quote(found.package)}"
        )
    frozen = "--immutable" if found.berry else "--frozen-lockfile"
    steps.append(f"{found.name} install {frozen}")
    return steps
