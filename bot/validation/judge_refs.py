"""Files the judge files reach: they define the judge too (issue #25, the attacker trial).

A judge file can hand its work to another file: a conftest loads a module through
`pytest_plugins` or imports its hooks (`from m import *`, `from m import pytest_…`), a
Makefile recipe, package.json script, tox or nox command runs a script. A change to such a
file redefines the judge as much as a change to the judge file itself, so it is one.
Found from the base's judge files and the change's (either may point at it). Pure.
"""

from __future__ import annotations

import ast
import fnmatch
import json
import posixpath
import re
from collections.abc import Callable, Collection

_RUNNERS = re.compile(
    r"(^|/)([Mm]akefile|GNUmakefile|[Jj]ustfile|\.justfile|package\.json|tox\.ini"
    r"|noxfile\.py|\.pre-commit-config\.yaml)$"
)
"""Judge files whose commands can run a script of the repository."""


def referenced(
    changed: Collection[str], judges: Collection[str], read: Callable[[str], list[bytes]]
) -> set[str]:
    """The `changed` paths a judge file reaches; `read(path)` gives its texts (base, change)."""
    found: set[str] = set()
    for judge in judges:
        for data in read(judge):
            text = data.decode("utf-8", "replace")
            if judge.rsplit("/", 1)[-1] == "conftest.py":
                found |= _modules(judge, text) & set(changed)
            elif _RUNNERS.search(judge):
                commands = _commands(judge, text)
                found |= {p for p in changed if not _tests(p) and _runs(commands, judge, p)}
    return found


def _tests(path: str) -> bool:
    """Whether a file a command runs is tests itself (`python test_parse.py`), which the change
    may add to, rather than a script that runs them (`sh scripts/test.sh`)."""
    name = path.rsplit("/", 1)[-1]
    if name.endswith(".py"):
        return any(fnmatch.fnmatch(name, p) for p in ("test_*", "*_test.py", "test.py", "tests.py"))
    return any(fnmatch.fnmatch(name, p) for p in ("*.test.*", "*.spec.*", "*_test.*", "*_spec.*"))


def _commands(judge: str, text: str) -> str:
    """The commands a judge file runs: package.json's scripts, a Makefile's or justfile's
    recipe lines, pre-commit's entries; tox and nox files whole (their commands are code)."""
    name = judge.rsplit("/", 1)[-1]
    if name == "package.json":
        try:
            scripts = json.loads(text).get("scripts") or {}
        except (ValueError, AttributeError):
            return text
        return "\n".join(str(v) for v in scripts.values()) if isinstance(scripts, dict) else ""
    if name.lower().endswith(("makefile", "justfile")):
        return "\n".join(line for line in text.splitlines() if line[:1] in ("\t", " "))
    if name == ".pre-commit-config.yaml":
        return "\n".join(line for line in text.splitlines() if line.strip().startswith("entry:"))
    return text


def _runs(text: str, judge: str, path: str) -> bool:
    """Whether a command in `text` names `path` (relative to the judge file's folder)."""
    folder = posixpath.dirname(judge)
    rel = posixpath.relpath(path, folder) if folder else path
    if rel.startswith("../"):
        return False
    pattern = r"(?<![\w./-])(\./)?" + re.escape(rel) + r"(?![\w/-]|\.\w)"
    return re.search(pattern, text) is not None


def _modules(conftest: str, text: str) -> set[str]:
    """Paths of the modules a conftest loads as plugins or takes hooks from (any layout)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return set()
    folder = posixpath.dirname(conftest)
    names: list[tuple[str, int]] = []
    for node in ast.walk(tree):
        # Only imports that bring hooks into the conftest: `*`, or a `pytest_…` name. A plain
        # import (the package under test, a helper) brings none; its code runs in the tests'
        # process either way, as the package's own does.
        if isinstance(node, ast.ImportFrom) and any(
            a.name == "*" or a.name.startswith("pytest_") for a in node.names
        ):
            names.append((node.module or "", node.level))
            names += [(f"{node.module}.{a.name}" if node.module else a.name, node.level)
                      for a in node.names if a.name != "*"]  # fmt: skip
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "pytest_plugins" for t in targets):
                names += [(s, 0) for s in _strings(node.value)]
    paths: set[str] = set()
    for name, level in names:
        parts = [p for p in name.split(".") if p]
        if not parts:
            continue
        roots = [_up(folder, level - 1)] if level else ["", "src", folder]
        for root in roots:
            stem = posixpath.join(root, *parts) if root else posixpath.join(*parts)
            paths |= {f"{stem}.py", f"{stem}/__init__.py"}
    return paths


def _up(folder: str, levels: int) -> str:
    for _ in range(max(0, levels)):
        folder = posixpath.dirname(folder)
    return folder


def _strings(value: ast.expr | None) -> list[str]:
    """The string constants of a `pytest_plugins = ...` value (a string, list or tuple)."""
    if isinstance(value, ast.Constant) and isinstance(value.value, str):
        return [value.value]
    if isinstance(value, ast.List | ast.Tuple | ast.Set):
        return [s for e in value.elts for s in _strings(e)]
    return []
