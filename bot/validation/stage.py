"""What a stage runs: its command, where it came from, and how it narrows to the change."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass, replace

STAGES = ("format", "lint", "typecheck", "test")
FILES = "{files}"
"""Placeholder in `scoped` and `fix`: the changed files the stage takes, shell-quoted."""

# Where a command came from, in the order they are looked for (DESIGN §13).
SOURCES = (
    "agentbot.yml",
    "pre-commit",
    "tox",
    "nox",
    "Makefile",
    "justfile",
    "package.json",
    "CI workflow",
    "default",
)


@dataclass(frozen=True)
class StageSpec:
    """One way to run a stage, found in the repository's files or the language defaults."""

    stage: str
    command: str
    """The whole-checkout form (what runs without a base commit)."""
    source: str
    """One of SOURCES, with a detail after it: `tox (typing)`, `CI workflow (ci.yml)`."""
    scoped: str | None = None
    """The changed-files form (FILES placeholder); None: the stage always runs whole."""
    fix: str | None = None
    """A safe auto-fix over the changed files (FILES placeholder); None: no fixer."""
    suffixes: tuple[str, ...] = ()
    """Which changed files `scoped` and `fix` take, by suffix; empty: every file."""
    runner: str = "auto"
    """Test output parser (test stage)."""
    deps: tuple[str, ...] = ()
    """Requirements the setup stage installs for it (a tox env's or nox session's deps)."""
    tools: tuple[str, ...] = ()
    """Programs that must be on PATH for it to run; empty: the command's first word."""
    calls: tuple[str, ...] = ()
    """The command lines it runs inside (a Makefile recipe, a tox env's commands): setup
    installs what they call."""
    strict: bool = False
    """New warnings block too, not just new errors (clippy without -D warnings)."""
    pre_commit: bool = False
    """pre-commit's hooks: they fix in place, so a check run is undone by the tree guard."""
    note: str = ""

    @property
    def kind(self) -> str:
        """The source without its detail: `tox (typing)` -> `tox`."""
        return self.source.split(" (", 1)[0]

    def files(self, changed: Sequence[str]) -> list[str]:
        """The changed files this spec's scoped form takes."""
        if not self.suffixes:
            return list(changed)
        return [f for f in changed if f.endswith(self.suffixes)]

    def resolve(self, changed: Sequence[str] | None) -> str | None:
        """The command for this change (None: no changed file it checks); whole without one."""
        if changed is None or self.scoped is None:
            return self.command
        files = self.files(changed)
        return fill(self.scoped, files) if files else None

    def fixer(self, changed: Sequence[str] | None) -> str | None:
        """The auto-fix command over the changed files it takes, if any."""
        if self.fix is None or changed is None:
            return None
        files = self.files(changed)
        return fill(self.fix, files) if files else None

    def with_note(self, note: str) -> StageSpec:
        """A copy with `note` added."""
        return replace(self, note="; ".join(n for n in (self.note, note) if n))


def fill(template: str, files: Sequence[str]) -> str:
    """The template with its FILES placeholder replaced by the quoted paths (after `--`)."""
    return template.replace(FILES, " ".join(shlex.quote(f) for f in files))
