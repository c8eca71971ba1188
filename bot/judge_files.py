"""The files that define how a repository is judged: a stage's command or its runner's behaviour.

One line of them can make a red suite green (a Makefile recipe that runs `true`, a pytest
plugin loaded by `addopts = "-p ..."` that rewrites every report, a jest
`testPathIgnorePatterns`), so a change may not redefine its own judge: validation runs
with the base's versions and a change to any of them is shown to people (issue #25).
In a file that also holds other settings only the judge's part counts: a dependency
added to `pyproject.toml` is fine, its `[tool.pytest.ini_options]` is not. Pure.
"""

from __future__ import annotations

import ast
import configparser
import json
import re
import sys
import tomllib
from collections.abc import Collection
from typing import Any

PYTEST_CONFIG = ("pytest.ini", ".pytest.ini", "pytest.toml", ".pytest.toml", "pyproject.toml",
                 "tox.ini", "setup.cfg")  # fmt: skip
"""Every file pytest reads its configuration from (pytest 9 reads the two `.toml` ones too)."""

JUDGE_FILE = re.compile(
    r"(^|/)(pytest\.ini|\.pytest\.ini|pytest\.toml|\.pytest\.toml|tox\.ini|setup\.cfg"
    r"|pyproject\.toml|noxfile\.py|conftest\.py|package\.json|[Mm]akefile|GNUmakefile"
    r"|[Jj]ustfile|\.justfile|\.mocharc\.[cm]?(js|json|jsonc|ya?ml)"
    r"|(jest|vitest|vite)\.config\.[cm]?[jt]s(on)?|vitest\.workspace\.[cm]?[jt]s(on)?"
    r"|\.pre-commit-config\.yaml|\.cargo/config(\.toml)?|setup\.py"
    r"|\.npmrc|\.yarnrc(\.ya?ml)?|\.pnpmfile\.c?js)$"
    r"|^\.github/agentbot\.ya?ml$|^\.github/workflows/[^/]+\.ya?ml$"
)
"""Files that define a stage's command or its runner's behaviour."""

MAKEFILE = re.compile(r"(^|/)([Mm]akefile|GNUmakefile)$")
"""A Makefile: the files it includes define the judge too (`bot.validation.base_judge`)."""

_INI_SECTIONS = ("pytest", "tool:pytest")
_PYPROJECT_TOOLS = ("pytest", "tox", "hatch", "poe", "pdm", "coverage")
_PACKAGE_KEYS = ("scripts", "jest", "vitest", "mocha", "ava", "c8", "nyc", "type")


def is_judge_file(path: str) -> bool:
    """Whether `path` can define a stage's command or its runner's behaviour."""
    return bool(JUDGE_FILE.search(path))


def judge_part(path: str, data: bytes) -> bytes:
    """What of `data` (the file at `path`) defines the judge; the whole file when unreadable."""
    name = path.rsplit("/", 1)[-1]
    try:
        text = data.decode("utf-8")
        part: Any
        if name == "pyproject.toml":
            doc = tomllib.loads(text)
            tool = doc.get("tool", {})
            part = {k: tool.get(k) for k in _PYPROJECT_TOOLS}
            # A pytest plugin the project's own install registers (loaded by every run).
            part["pytest11"] = [
                doc.get("project", {}).get("entry-points", {}).get("pytest11"),
                tool.get("poetry", {}).get("plugins", {}).get("pytest11"),
            ]
        elif name == "setup.cfg":
            ini = configparser.RawConfigParser(strict=False)
            ini.read_string(text)
            part = {s: dict(ini.items(s)) for s in _INI_SECTIONS if ini.has_section(s)}
            if ini.has_option("options.entry_points", "pytest11"):
                part["pytest11"] = ini.get("options.entry_points", "pytest11")
        elif name == "setup.py":
            part = _setup_py(text)
        elif name == "package.json":
            doc = json.loads(text)
            part = {k: doc.get(k) for k in _PACKAGE_KEYS} if isinstance(doc, dict) else doc
        elif name == "conftest.py":
            part = _hooks(text)
        else:
            return data
    except (UnicodeDecodeError, ValueError, SyntaxError, configparser.Error, AttributeError):
        return data
    return json.dumps(part, sort_keys=True, default=str).encode()


def _hooks(text: str) -> list[str]:
    """A conftest's judging part: everything but its fixtures (their suspicious calls kept).

    A hook can be bound many ways (`def pytest_…`, an assignment, `globals()[…]`, an import),
    so only fixtures, the tests' own business, are left out, and within them any call that
    could reach the runner (`pluginmanager.register`, `setattr`, `os._exit`, …) counts.
    """
    tree = ast.parse(text)
    found = []
    for index, node in enumerate(tree.body):
        docstring = (
            index == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
        )
        if docstring:
            continue
        if _harmless_import(node):
            continue
        if not _is_fixture(node):
            found.append(ast.unparse(node))
            continue
        for inner in ast.walk(node):
            if isinstance(inner, ast.Call) and _SUSPECT.search(ast.unparse(inner.func)):
                found.append(ast.unparse(inner))
    return found


_SUSPECT = re.compile(r"register|plugin|hook|setattr|globals|_exit|modules|__dict__|exec|eval")


def _harmless_import(node: ast.stmt) -> bool:
    """`import pytest`, `from pathlib import Path`: pytest's or the standard library's names,
    none of them a hook or a star."""
    if isinstance(node, ast.Import):
        modules = [a.name for a in node.names]
    elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
        modules = [node.module]
    else:
        return False
    bound = [a.asname or a.name for a in node.names]
    return all(m.split(".")[0] in _KNOWN for m in modules) and not any(
        b == "*" or b.startswith("pytest_") for b in bound
    )


_KNOWN = frozenset(sys.stdlib_module_names) | {"pytest", "__future__"}


def _is_fixture(node: ast.stmt) -> bool:
    """A function decorated with `@pytest.fixture` or `@fixture` (called or not)."""
    if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return False
    for deco in node.decorator_list:
        target = deco.func if isinstance(deco, ast.Call) else deco
        if ast.unparse(target) in ("pytest.fixture", "fixture"):
            return True
    return False


def _setup_py(text: str) -> str:
    """setup.py's shape with its strings blanked, but for entry points and pytest's names.

    A version bump changes a string only; an entry point (`pytest11`) added, in whatever
    spelling, changes the shape or a kept string.
    """
    tree = ast.parse(text)
    kept: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "entry_points":
            kept |= {id(n) for n in ast.walk(node.value)}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Constant) or not isinstance(node.value, str):
            continue
        if id(node) not in kept and "pytest" not in node.value:
            node.value = ""
    return ast.dump(tree)


def make_includes(text: str) -> list[str]:
    """The file patterns a Makefile includes (`include`, `-include`, `sinclude`).

    A word holding a variable cannot be resolved here: every `*.mk`/`*.make` counts then.
    """
    found: list[str] = []
    for line in text.splitlines():
        match = re.match(r"\s*(?:-|s)?include\s+(.+)", line)
        if not match:
            continue
        for word in match.group(1).split("#", 1)[0].split():
            found += ["*.mk", "*.make"] if "$" in word else [word]
    return found


def changed_judge(
    files: dict[str, tuple[bytes | None, bytes | None]], also: Collection[str] = ()
) -> list[str]:
    """The paths whose judge part differs between (base bytes, head bytes); None is absent.

    `also` names more judge files (those a Makefile includes).
    """
    # An absent file reads as empty: a new conftest.py holding only fixtures defines no judge.
    return [
        path
        for path, (base, head) in sorted(files.items())
        if (is_judge_file(path) or path in also)
        and judge_part(path, base or b"") != judge_part(path, head or b"")
    ]
