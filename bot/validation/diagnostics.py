"""Problems out of lint, typecheck and format tools' output (pure functions).

JSON where the command asked for it (ruff, eslint, cargo/clippy, pyright), the text
formats tools print by default otherwise (mypy, pyright, tsc, go vet, flake8-style
`path:line:col: CODE message`, ruff's and rustc's `--> path:line:col` blocks, eslint's
stylish listing, and the "would reformat" lines of ruff format, black, prettier, rustfmt
and gofmt). Paths come back relative to the repository whatever the tool printed, so a
run in the base commit's worktree compares with a run in the workspace.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Literal

from bot.models import Diagnostic
from bot.validation.parsers import strip_ansi

Severity = Literal["error", "warning"]
_SEVERITY: dict[str, Severity] = {
    "error": "error",
    "fatal": "error",
    "warning": "warning",
    "warn": "warning",
}

_MYPY = re.compile(
    r"^(?P<path>[^\s:][^:\n]*\.pyi?):(?P<line>\d+)(?::\d+)?(?::\d+:\d+)?: (?P<sev>error|warning):"
    r" (?P<msg>.*?)(?:  \[(?P<rule>[\w-]+)\])?\s*$",
    re.MULTILINE,
)
_PYRIGHT = re.compile(
    r"^\s+(?P<path>/[^\n]+?|[^\s][^\n]*?):(?P<line>\d+):\d+ - (?P<sev>error|warning):"
    r" (?P<msg>.*?)(?: \((?P<rule>report\w+)\))?\s*$",
    re.MULTILINE,
)
_TSC = re.compile(
    r"^(?P<path>[^\s(:][^(:\n]*?)(?:\((?P<line>\d+),\d+\):|:(?P<line2>\d+):\d+ -)"
    r" (?P<sev>error|warning) (?P<rule>TS\d+): (?P<msg>.*)$",
    re.MULTILINE,
)
# flake8, pycodestyle, pylint --output-format=parseable, ruff concise, go vet, shellcheck gcc.
_COLON = re.compile(
    r"^(?:vet: )?(?P<path>[\w./@+-][^\s:]*\.\w+):(?P<line>\d+)(?::\d+)?:\s+(?!note:)"
    r"(?:(?P<sev>error|warning):\s+)?(?:(?P<rule>[A-Z]+[0-9]+|\[[\w-]+\])\s+(?:\[\*\]\s+)?)?"
    r"(?P<msg>\S.*?)\s*$",
    re.MULTILINE,
)
# rustc/clippy text and ruff's `full` format: a header line, then ` --> path:line:col`.
_ARROW_HEAD = re.compile(
    r"^(?:(?P<sev>error|warning)(?:\[(?P<code>[\w:]+)\])?: (?P<msg>.+)"
    r"|(?P<rule>[A-Z]+[0-9]+) (?:\[\*\] )?(?P<rmsg>.+))$"
)
_ARROW_AT = re.compile(r"^\s*--> (?P<path>[^\s:]+):(?P<line>\d+):\d+")
_RUST_LINT = re.compile(r"#\[(?:warn|deny)\((clippy::[\w]+|[\w]+)\)\]")
_ESLINT_FILE = re.compile(r"^(?P<path>(?:/|[\w.@-]+/)?\S+\.\w+)\s*$")
_ESLINT_ROW = re.compile(
    r"^\s+(?P<line>\d+):\d+\s+(?P<sev>error|warning)\s+(?P<msg>.+?)(?:\s{2,}(?P<rule>[\w@/-]+))?\s*$"
)
_FORMAT = (
    re.compile(r"^Would reformat: (?P<path>\S.*?)\s*$", re.MULTILINE),  # ruff format --check
    # ruff format --check from 0.15 on: "unformatted: File would be reformatted" + an arrow.
    re.compile(
        r"^unformatted: File would be reformatted\s*\n\s*--> (?P<path>\S+?):\d+:\d+", re.MULTILINE
    ),
    re.compile(r"^would reformat (?P<path>\S.*?)\s*$", re.MULTILINE),  # black --check
    re.compile(r"^\[warn\] (?P<path>(?!Code style issues)\S.*?)\s*$", re.MULTILINE),  # prettier
    re.compile(r"^Diff in (?P<path>\S+?)(?: at line \d+|:\d+):?\s*$", re.MULTILINE),  # rustfmt
    re.compile(r"^\+\+\+ (?:b/)?(?P<path>\S+?)(?:\t.*)?$", re.MULTILINE),  # --diff output
    re.compile(r"^ERROR: (?P<path>\S+) Imports are incorrectly sorted", re.MULTILINE),  # isort
)


def parse_diagnostics(output: str, roots: Iterable[Path] = ()) -> list[Diagnostic]:
    """Every problem in `output`, paths relative to one of `roots`, duplicates dropped."""
    text = strip_ansi(output)
    found = list(_from_json(text)) or list(_from_text(text))
    rel = [str(r).rstrip("/") + "/" for r in roots]
    seen: dict[tuple[str, int, str, str], Diagnostic] = {}
    for d in found:
        path = _relative(d.path, rel)
        d = d.model_copy(update={"path": path, "message": normalise_message(d.message)})
        seen.setdefault((d.path, d.line, d.rule, d.message), d)
    return list(seen.values())


def normalise_message(message: str) -> str:
    """The message without what shifts with unrelated edits (`defined on line 12`)."""
    return re.sub(r"\b(line|lines) \d+(?:-\d+)?", r"\1 N", message.strip())


def format_paths(output: str) -> list[str]:
    """Files a format check says it would change (gofmt -l prints bare paths: the caller's case)."""
    text = strip_ansi(output)
    paths: list[str] = []
    for pattern in _FORMAT:
        paths += [m.group("path") for m in pattern.finditer(text)]
    return [p for p in dict.fromkeys(paths) if p != "/dev/null"]


def _relative(path: str, roots: list[str]) -> str:
    path = path.strip()
    for root in roots:
        if path.startswith(root):
            return path[len(root) :]
    return path.removeprefix("./")


# --- JSON ----------------------------------------------------------------------------------------


def _from_json(text: str) -> Iterator[Diagnostic]:
    """ruff and eslint print one JSON array, pyright one object, cargo one object a line."""
    stripped = text.strip()
    start = min((i for i in (stripped.find("["), stripped.find("{")) if i >= 0), default=-1)
    if start >= 0:
        try:
            doc = json.loads(stripped[start:])
        except ValueError:
            doc = None
        if isinstance(doc, list):
            yield from _json_list(doc)
            return
        if isinstance(doc, dict) and "generalDiagnostics" in doc:
            yield from _pyright_json(doc)
            return
    for line in text.splitlines():
        if line.startswith('{"reason":'):
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            if isinstance(msg, dict) and msg.get("reason") == "compiler-message":
                yield from _cargo_message(msg.get("message") or {})


def _json_list(doc: list[Any]) -> Iterator[Diagnostic]:
    for item in doc:
        if not isinstance(item, dict):
            continue
        if "filename" in item and "code" in item:  # ruff
            loc = item.get("location") or {}
            yield Diagnostic(
                path=str(item["filename"]),
                line=int(loc.get("row") or 0),
                rule=str(item.get("code") or ""),
                message=str(item.get("message", "")),
            )
        elif "filePath" in item:  # eslint
            for m in item.get("messages") or []:
                yield Diagnostic(
                    path=str(item["filePath"]),
                    line=int(m.get("line") or 0),
                    rule=str(m.get("ruleId") or ""),
                    message=str(m.get("message", "")),
                    severity="error" if m.get("severity") == 2 else "warning",
                )


def _pyright_json(doc: dict[str, Any]) -> Iterator[Diagnostic]:
    for d in doc.get("generalDiagnostics") or []:
        sev = _SEVERITY.get(str(d.get("severity")))
        if sev is None:
            continue  # information
        start = (d.get("range") or {}).get("start") or {}
        yield Diagnostic(
            path=str(d.get("file", "")),
            line=int(start.get("line", -1)) + 1,
            rule=str(d.get("rule") or ""),
            message=str(d.get("message", "")).splitlines()[0],
            severity=sev,
        )


def _cargo_message(msg: dict[str, Any]) -> Iterator[Diagnostic]:
    sev = _SEVERITY.get(str(msg.get("level")))
    spans = [s for s in msg.get("spans") or [] if s.get("is_primary")]
    if sev is None or not spans:
        return  # notes, and summaries like "aborting due to 2 previous errors"
    code = (msg.get("code") or {}).get("code") or ""
    yield Diagnostic(
        path=str(spans[0].get("file_name", "")),
        line=int(spans[0].get("line_start") or 0),
        rule=str(code),
        message=str(msg.get("message", "")),
        severity=sev,
    )


# --- text ----------------------------------------------------------------------------------------


def _from_text(text: str) -> Iterator[Diagnostic]:
    """Each parser in turn; the lines one parser read are hidden from the ones after it."""
    for parse in (_mypy, _pyright, _tsc, _arrow_blocks, _eslint_stylish, _colon):
        found, text = parse(text)
        yield from found
    for path in format_paths(text):
        yield Diagnostic(path=path, rule="format", message="not formatted")


Parsed = tuple[list[Diagnostic], str]


def _consume(pattern: re.Pattern[str], text: str) -> Parsed:
    found: list[Diagnostic] = []

    def take(m: re.Match[str]) -> str:
        g = m.groupdict()
        found.append(
            Diagnostic(
                path=g["path"],
                line=int(g.get("line") or g.get("line2") or 0),
                rule=(g.get("rule") or "").strip("[]"),
                message=g["msg"],
                severity=_SEVERITY.get(g.get("sev") or "error", "error"),
            )
        )
        return ""

    return found, pattern.sub(take, text)


def _mypy(text: str) -> Parsed:
    return _consume(_MYPY, text)


def _pyright(text: str) -> Parsed:
    return _consume(_PYRIGHT, text)


def _tsc(text: str) -> Parsed:
    return _consume(_TSC, text)


def _colon(text: str) -> Parsed:
    return _consume(_COLON, text)


def _arrow_blocks(text: str) -> Parsed:
    lines = text.splitlines()
    found: list[Diagnostic] = []
    used: set[int] = set()
    for i, line in enumerate(lines):
        head = _ARROW_HEAD.match(line)
        if head is None or i + 1 >= len(lines):
            continue
        at = _ARROW_AT.match(lines[i + 1])
        if at is None:
            continue
        rule = head.group("code") or head.group("rule") or ""
        if head.group("sev") and not rule:
            # rustc names the lint in a note a few lines on: `#[warn(clippy::len_zero)]`.
            block = "\n".join(lines[i + 2 : i + 30])
            lint = _RUST_LINT.search(block)
            rule = lint.group(1) if lint else ""
        found.append(
            Diagnostic(
                path=at.group("path"),
                line=int(at.group("line")),
                rule=rule,
                message=head.group("msg") or head.group("rmsg"),
                severity=_SEVERITY.get(head.group("sev") or "error", "error"),
            )
        )
        used |= {i, i + 1}
    return found, "\n".join(ln for i, ln in enumerate(lines) if i not in used)


def _eslint_stylish(text: str) -> Parsed:
    found: list[Diagnostic] = []
    rest: list[str] = []
    current: str | None = None
    for line in text.splitlines():
        row = _ESLINT_ROW.match(line)
        if row and current is not None:
            found.append(
                Diagnostic(
                    path=current,
                    line=int(row.group("line")),
                    rule=row.group("rule") or "",
                    message=row.group("msg"),
                    severity=_SEVERITY[row.group("sev")],
                )
            )
            continue
        rest.append(line)
        file = _ESLINT_FILE.match(line)
        current = file.group("path") if file and not line.startswith(" ") else None
    return found, "\n".join(rest)
