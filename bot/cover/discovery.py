"""Discovery without an LLM: the methods a diff added or changed, their zones and modes.

`changed_lines(diff)` reads `git diff -U0` into the new side's added lines and deletion
points per file; `discover(...)` maps them onto each file's functions (from the syntax
tree) and gives every touched function its mode (`new` when the base version of the
file has no function of that qualified name, else `modified`) and complexity zone.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from bot.cover.languages import language_for
from bot.cover.syntax import FunctionInfo, functions
from bot.cover.zones import Thresholds, Zone, zone

MethodMode = Literal["new", "modified"]

_FILE = re.compile(r"^\+\+\+ (?:b/)?(?P<path>.+?)\t?$")
_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(?P<start>\d+)(?:,(?P<count>\d+))? @@")


@dataclass
class FileDiff:
    """What a diff did to one file, on the new side."""

    added: set[int] = field(default_factory=set)
    """Added or rewritten lines (1-based)."""
    deleted_after: set[int] = field(default_factory=set)
    """Lines after which old lines were removed (0 = at the top)."""

    def touches(self, fn: FunctionInfo) -> bool:
        """True when the diff added lines in `fn`, or removed some from inside it."""
        return any(fn.covers(n) for n in self.added) or any(
            fn.start_line <= n < fn.end_line for n in self.deleted_after
        )


def changed_lines(diff: str) -> dict[str, FileDiff]:
    """Per file (new path), the lines a `git diff -U0` added and where it removed lines."""
    files: dict[str, FileDiff] = {}
    current: FileDiff | None = None
    for line in diff.splitlines():
        if line.startswith("+++ "):
            found = _FILE.match(line)
            path = found["path"] if found else ""
            current = None if path == "/dev/null" else files.setdefault(path, FileDiff())
            continue
        hunk = _HUNK.match(line)
        if hunk and current is not None:
            start, count = int(hunk["start"]), int(hunk["count"] or "1")
            if count == 0:
                current.deleted_after.add(start)
            else:
                current.added.update(range(start, start + count))
    return files


@dataclass(frozen=True)
class ChangedMethod:
    """A function or method the change added or modified."""

    path: str
    language: str
    function: FunctionInfo
    mode: MethodMode
    changed: tuple[int, ...]
    """The added lines inside it."""
    zone: Zone

    @property
    def id(self) -> str:
        """`path::qualname`, unique in a repository."""
        return f"{self.path}::{self.function.qualname}"

    @property
    def slug(self) -> str:
        """The metadata file's name: the path with `/` as `_`, no extension, then the method."""
        stem = self.path.rsplit(".", 1)[0] if "." in self.path else self.path
        method = re.sub(r"[^A-Za-z0-9_]+", "_", self.function.qualname).strip("_")
        return f"{stem.replace('/', '_')}__{method}"


@dataclass(frozen=True)
class SourcePair:
    """A changed file's text on the head, and on the base (None when the change added it)."""

    head: bytes
    base: bytes | None


def discover(
    diffs: Mapping[str, FileDiff],
    sources: Mapping[str, SourcePair],
    *,
    limits: Thresholds | None = None,
) -> list[ChangedMethod]:
    """The methods `diffs` touched, file by file in path order, each in file order.

    Only files in `sources` are read (the caller leaves out tests, deleted and unknown
    files); a file in an unsupported language is skipped.
    """
    found: list[ChangedMethod] = []
    for path in sorted(sources):
        lang = language_for(path)
        diff = diffs.get(path)
        if lang is None or diff is None:
            continue
        pair = sources[path]
        before = {f.qualname for f in functions(pair.base, lang)} if pair.base else set()
        for fn in functions(pair.head, lang):
            if not diff.touches(fn):
                continue
            found.append(
                ChangedMethod(
                    path=path,
                    language=lang.name,
                    function=fn,
                    mode="modified" if fn.qualname in before else "new",
                    changed=tuple(sorted(n for n in diff.added if fn.covers(n))),
                    zone=zone(fn.loc, fn.branches + 1, limits or Thresholds()),
                )
            )
    return found


def select(methods: Sequence[ChangedMethod], targets: Iterable[str]) -> list[ChangedMethod]:
    """The methods a `/cover path/or/symbol …` names (all of them when it names none).

    A target matches a method by its file (exact, a folder prefix or a glob), its name or
    its qualified name (`Calc.add`, `Calc#add`, `path::Calc.add`).
    """
    wanted = [t.strip().strip("`'\"") for t in targets if t.strip()]
    if not wanted:
        return list(methods)
    return [m for m in methods if any(_matches(m, t) for t in wanted)]


def _matches(method: ChangedMethod, target: str) -> bool:
    fn = method.function
    folder = target.rstrip("/") + "/"
    return (
        target in (method.path, fn.name, fn.qualname, method.id)
        or method.path.startswith(folder)
        or fnmatch.fnmatchcase(method.path, target)
    )


def red_new(methods: Iterable[ChangedMethod]) -> list[ChangedMethod]:
    """The new methods in the red zone: seed 002's `red_zone_new_code` stop."""
    return [m for m in methods if m.zone == "red" and m.mode == "new"]


def call_graph(methods: Sequence[ChangedMethod]) -> dict[str, frozenset[str]]:
    """For each method's id, the ids of the other changed methods it calls (by name)."""
    by_name: dict[str, set[str]] = {}
    for m in methods:
        by_name.setdefault(m.function.name, set()).add(m.id)
    return {
        m.id: frozenset(i for name in m.function.calls for i in by_name.get(name, ()) if i != m.id)
        for m in methods
    }
