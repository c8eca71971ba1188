"""What a path is for the limits: a test, a doc, or source; protected-path globs."""

from __future__ import annotations

import fnmatch
import re
from typing import Literal

TEST_PATH = re.compile(
    r"(^|/)(tests?|spec|__tests__)/|(^|/)test_[^/]*\.py$|_test\.(py|go)$|(^|/)conftest\.py$"
    r"|\.(test|spec)\.[jt]sx?$|_spec\.rb$"
)
"""Test files by the conventions of pytest, Go, Jest/Vitest and RSpec."""

DOC_PATH = re.compile(
    r"(^|/)(docs?|documentation|changelog\.d|changes|newsfragments)/|\.(md|mdx|rst|adoc)$"
    r"|(^|/)(README|CHANGELOG|CHANGES|HISTORY|NEWS|AUTHORS|CONTRIBUTING)[^/]*$",
    re.IGNORECASE,
)
"""Documentation: doc folders, changelog fragments, Markdown/reST/AsciiDoc, README & co."""

Kind = Literal["source", "test", "doc"]


def kind_of(path: str) -> Kind:
    """Whether `path` is a test, a doc, or source (anything else, config and data included)."""
    if TEST_PATH.search(path):
        return "test"
    if DOC_PATH.search(path):
        return "doc"
    return "source"


def glob_match(path: str, pattern: str) -> bool:
    """`**` matches any depth, `*` within one segment; case-insensitive (macOS, Windows)."""
    path, pattern = path.casefold(), pattern.casefold()
    regex = (
        re.escape(pattern)
        .replace(r"\*\*/", "(.*/)?")
        .replace(r"\*\*", ".*")
        .replace(r"\*", "[^/]*")
    )
    return re.fullmatch(regex, path) is not None or fnmatch.fnmatch(path, pattern)


def protected_by(path: str, patterns: list[str]) -> str | None:
    """The first protected-path pattern `path` (or a folder above it) falls under."""
    for pattern in patterns:
        if glob_match(path, pattern) or glob_match(path + "/", pattern.rstrip("*")):
            return pattern
    return None


def glob_prefix(pattern: str) -> str:
    """The literal folders a glob starts with (`.github/workflows/**` -> `.github/workflows`)."""
    head = re.split(r"[*?\[]", pattern, maxsplit=1)[0]
    return head.rsplit("/", 1)[0] if "/" in head else ""
