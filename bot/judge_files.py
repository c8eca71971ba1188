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
import tomllib
from typing import Any

PYTEST_CONFIG = ("pytest.ini", ".pytest.ini", "pytest.toml", ".pytest.toml", "pyproject.toml",
                 "tox.ini", "setup.cfg")  # fmt: skip
"""Every file pytest reads its configuration from (pytest 9 reads the two `.toml` ones too)."""

JUDGE_FILE = re.compile(
    r"(^|/)(pytest\.ini|\.pytest\.ini|pytest\.toml|\.pytest\.toml|tox\.ini|setup\.cfg"
    r"|pyproject\.toml|noxfile\.py|conftest\.py|package\.json|[Mm]akefile|GNUmakefile"
    r"|[Jj]ustfile|\.justfile|\.mocharc\.[cm]?(js|json|jsonc|ya?ml)"
    r"|(jest|vitest|vite)\.config\.[cm]?[jt]s(on)?|vitest\.workspace\.[cm]?[jt]s(on)?"
    r"|\.pre-commit-config\.yaml|\.cargo/config(\.toml)?)$"
    r"|^\.github/agentbot\.ya?ml$|^\.github/workflows/[^/]+\.ya?ml$"
)
"""Files that define a stage's command or its runner's behaviour."""

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
            tool = tomllib.loads(text).get("tool", {})
            part = {k: tool.get(k) for k in _PYPROJECT_TOOLS}
        elif name == "setup.cfg":
            ini = configparser.RawConfigParser(strict=False)
            ini.read_string(text)
            part = {s: dict(ini.items(s)) for s in _INI_SECTIONS if ini.has_section(s)}
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
    """A conftest's pytest hooks and plugin lists (its fixtures are the tests' business)."""
    tree = ast.parse(text)
    found = []
    for node in ast.walk(tree):
        hook = isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith(
            "pytest_"
        )
        plugins = isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign) and (
            "pytest_plugins" in ast.unparse(node).split("=")[0]
        )
        # pluginmanager.register(...), atexit.register(...): a report rewritten some other way.
        registers = isinstance(node, ast.Call) and "register" in ast.unparse(node.func)
        if hook or plugins or registers:
            found.append(ast.unparse(node))
    return found


def changed_judge(files: dict[str, tuple[bytes | None, bytes | None]]) -> list[str]:
    """The paths whose judge part differs between (base bytes, head bytes); None is absent."""
    # An absent file reads as empty: a new conftest.py holding only fixtures defines no judge.
    return [
        path
        for path, (base, head) in sorted(files.items())
        if is_judge_file(path) and judge_part(path, base or b"") != judge_part(path, head or b"")
    ]
