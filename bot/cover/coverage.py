"""Line coverage from the runners' reports, and diff-cover-style changed-line accounting.

Four report formats, one shape: coverage.py's JSON (Python), lcov (jest, vitest, c8:
istanbul and V8 alike), SimpleCov's `.resultset.json` (Ruby; the stdlib `Coverage`
fallback writes the same shape) and Go's cover profile. Each becomes, per
repository-relative path, the executable lines and the lines that ran. A changed line
counts only when it is executable, as diff-cover counts it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any


@dataclass(frozen=True)
class FileLines:
    """One file's executable lines and those of them that ran."""

    executable: frozenset[int]
    covered: frozenset[int]


LineCoverage = dict[str, FileLines]


@dataclass(frozen=True)
class ChangedCoverage:
    """Coverage of some changed lines: how many are executable, how many of those ran."""

    covered: int
    executable: int

    @property
    def percent(self) -> float | None:
        """Covered share in percent; None when no changed line is executable."""
        return None if self.executable == 0 else 100.0 * self.covered / self.executable

    def label(self) -> str:
        """`40%` (or `n/a` when nothing is executable)."""
        p = self.percent
        return "n/a" if p is None else f"{p:.0f}%"


def relative(path: str, root: str) -> str:
    """`path` relative to the repository root `root` (runners report either form)."""
    clean = path.removeprefix("./")
    root = root.rstrip("/") + "/"
    return clean[len(root) :] if clean.startswith(root) else clean


def parse_coverage_py(text: str, root: str) -> LineCoverage:
    """`coverage json` output."""
    data = json.loads(text)
    out: LineCoverage = {}
    for name, info in (data.get("files") or {}).items():
        ran = set(info.get("executed_lines") or [])
        missing = set(info.get("missing_lines") or [])
        out[relative(name, root)] = FileLines(frozenset(ran | missing), frozenset(ran))
    return out


def parse_lcov(text: str, root: str) -> LineCoverage:
    """An lcov tracefile (`SF:` … `DA:line,hits` … `end_of_record`)."""
    out: LineCoverage = {}
    path = ""
    lines: dict[int, int] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("SF:"):
            path, lines = relative(line[3:], root), {}
        elif line.startswith("DA:") and path:
            number, _, hits = line[3:].partition(",")
            count = hits.split(",", 1)[0]
            if number.isdigit() and count.lstrip("-").isdigit():
                lines[int(number)] = max(lines.get(int(number), 0), int(count))
        elif line == "end_of_record" and path:
            out[path] = _merge(out.get(path), lines)
            path = ""
    return out


def parse_simplecov(text: str, root: str) -> LineCoverage:
    """SimpleCov's `.resultset.json` (every command's result merged), or `{path: lines}`."""
    data = json.loads(text)
    files: dict[str, Any] = {}
    results = [v for v in data.values() if isinstance(v, dict) and "coverage" in v]
    for result in results or [{"coverage": data}]:
        for name, info in result["coverage"].items():
            counts = info.get("lines") if isinstance(info, dict) else info
            files.setdefault(name, []).append(counts or [])
    out: LineCoverage = {}
    for name, runs in files.items():
        merged: dict[int, int] = {}
        for counts in runs:
            for index, hits in enumerate(counts):
                if hits is not None:
                    merged[index + 1] = max(merged.get(index + 1, 0), int(hits))
        out[relative(name, root)] = _merge(None, merged)
    return out


def parse_go_cover(text: str, module: str) -> LineCoverage:
    """A `go test -coverprofile` file (`pkg/file.go:3.24,5.2 statements count` blocks)."""
    hits: dict[str, dict[int, int]] = {}
    for line in text.splitlines()[1:]:  # the first line is `mode: …`
        name, _, rest = line.rpartition(":")
        fields = rest.split()
        if not name or len(fields) != 3 or "," not in fields[0]:
            continue
        start, end = (int(part.split(".")[0]) for part in fields[0].split(","))
        path = name.removeprefix(module + "/") if name.startswith(module + "/") else name
        lines = hits.setdefault(path, {})
        for number in range(start, end + 1):
            lines[number] = max(lines.get(number, 0), int(fields[2]))
    return {path: _merge(None, lines) for path, lines in hits.items()}


def _merge(before: FileLines | None, hits: Mapping[int, int]) -> FileLines:
    executable = set(hits) | (set(before.executable) if before else set())
    covered = {n for n, h in hits.items() if h > 0} | (set(before.covered) if before else set())
    return FileLines(frozenset(executable), frozenset(covered))


def changed_coverage(
    cov: LineCoverage | None,
    path: str,
    lines: Iterable[int],
    *,
    fallback: LineCoverage | None = None,
) -> ChangedCoverage:
    """Coverage of `lines` of `path`: executable ones, and how many of those ran.

    A file the run never loaded has no lines in its report: its executable lines come from
    `fallback` (another run that loaded it), else every line counts, none covered.
    """
    wanted = set(lines)
    key = str(PurePosixPath(path))
    info = (cov or {}).get(key)
    if info is None:
        known = (fallback or {}).get(key)
        executable = wanted & known.executable if known is not None else wanted
        return ChangedCoverage(covered=0, executable=len(executable))
    executable = wanted & info.executable
    return ChangedCoverage(covered=len(executable & info.covered), executable=len(executable))
