"""The test runner's configuration, guarded like the tests in GREEN and REFACTOR (pure).

One line of it can make a red suite exit 0 (`addopts = "--co"` collects without running,
a `--deselect`, a jest `testPathIgnorePatterns`), so the Implementer and the Refactorer may
not change it. In a file that also holds other settings only the runner's part counts:
a dependency added to `pyproject.toml` is fine, its `[tool.pytest.ini_options]` is not.
"""

from __future__ import annotations

import configparser
import json
import re
import tomllib
from typing import Any

RUNNER_CONFIG = re.compile(
    r"(^|/)(pytest\.ini|tox\.ini|setup\.cfg|pyproject\.toml|package\.json"
    r"|(jest|vitest|vite)\.config\.[cm]?[jt]s(on)?|vitest\.workspace\.[cm]?[jt]s(on)?)$"
)
"""Files that configure pytest, Jest or Vitest (a `conftest.py` is a test file already)."""

_INI_SECTIONS = ("pytest", "tool:pytest")


def is_runner_config(path: str) -> bool:
    """Whether `path` configures a test runner."""
    return bool(RUNNER_CONFIG.search(path))


def runner_part(path: str, data: bytes) -> bytes:
    """What of `data` (the file at `path`) the runner reads; the whole file when unreadable."""
    name = path.rsplit("/", 1)[-1]
    try:
        text = data.decode("utf-8")
        part: Any
        if name == "pyproject.toml":
            part = tomllib.loads(text).get("tool", {}).get("pytest")
        elif name in ("setup.cfg", "tox.ini"):
            ini = configparser.RawConfigParser(strict=False)
            ini.read_string(text)
            part = {s: dict(ini.items(s)) for s in _INI_SECTIONS if ini.has_section(s)}
        elif name == "package.json":
            doc = json.loads(text)
            scripts = doc.get("scripts") if isinstance(doc, dict) else None
            part = {
                "jest": doc.get("jest") if isinstance(doc, dict) else doc,
                "vitest": doc.get("vitest") if isinstance(doc, dict) else None,
                "test": scripts.get("test") if isinstance(scripts, dict) else scripts,
            }
        else:
            return data
    except (UnicodeDecodeError, ValueError, configparser.Error, AttributeError):
        return data
    return json.dumps(part, sort_keys=True, default=str).encode()
