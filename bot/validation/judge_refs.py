"""Files the judge files reach: they define the judge too (issue #25, the attacker trial).

A judge file can hand its work to another file: a conftest loads a module through
`pytest_plugins` or imports one (a star import puts that module's hooks in the conftest), a
Makefile recipe, package.json script, tox or nox command runs a script. A change to such a
file redefines the judge as much as a change to the judge file itself, so it is one.
Found from the base's judge files and the change's (either may point at it). Pure.
"""

from __future__ import annotations

import ast
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
                found |= {p for p in changed if _runs(text, judge, p)}
    return found


def _runs(text: str, judge: str, path: str) -> bool:
    """Whether a command in `text` names `path` (relative to the judge file's folder)."""
    folder = posixpath.dirname(judge)
    rel = posixpath.relpath(path, folder) if folder else path
    if rel.startswith("../"):
        return False
    pattern = r"(?<![\w./-])(\./)?" + re.escape(rel) + r"(?![\w/-]|\.\w)"
    return re.search(pattern, text) is not None


def _modules(conftest: str, text: str) -> set[str]:
    """Paths of the modules a conftest names in `pytest_plugins` or imports (any layout)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return set()
    folder = posixpath.dirname(conftest)
    names: list[tuple[str, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [(a.name, 0) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            names.append((base, node.level))
            names += [(f"{base}.{a.name}" if base else a.name, node.level) for a in node.names]
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
