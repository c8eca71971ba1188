"""A validated change as review suggestions, for a fork's pull request agentbot cannot push to.

Pure: file texts in, suggestions out. Each changed hunk of a file the head already has becomes
one suggestion on the head lines it replaces (a pure insertion is anchored on the line before
it, repeated, or on the first line, repeated after it); GitHub's "Commit suggestions" then
turns them into one commit. What a suggestion cannot carry exactly goes into the review body
as a patch (`patched`): new, deleted and binary files, files whose final newline changes or
that hold carriage returns, and files with a hunk outside the lines the pull request's diff
shows (GitHub refuses review comments there).

`apply` is GitHub's batch application (every suggestion on the head's own line numbers); the
plan keeps only suggestions whose application gives exactly the validated file.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

MAX_COMMENT = 60_000
"""Characters of one review comment (GitHub caps a body at 65,536)."""

_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")
_TICKS = re.compile(r"`+")

Range = tuple[int, int]
"""Head line numbers, first and last, 1-based and inclusive."""


def fence_for(text: str) -> str:
    """Backticks enough to fence `text`: one more than its longest run, at least three."""
    longest = max((len(m.group(0)) for m in _TICKS.finditer(text)), default=0)
    return "`" * max(3, longest + 1)


@dataclass(frozen=True)
class Suggestion:
    """Replace head lines `start_line`..`line` of `path` with `text` (whole lines)."""

    path: str
    start_line: int
    line: int
    text: str

    def body(self) -> str:
        """The comment: one suggestion block and nothing else (the text guard keeps it whole)."""
        text = self.text if not self.text or self.text.endswith("\n") else self.text + "\n"
        fence = fence_for(text)
        return f"{fence}suggestion\n{text}{fence}"

    def comment(self) -> dict[str, object]:
        """The review comment GitHub takes (`POST /pulls/{n}/reviews`, `comments[]`)."""
        made: dict[str, object] = {
            "path": self.path,
            "line": self.line,
            "side": "RIGHT",
            "body": self.body(),
        }
        if self.start_line != self.line:
            made.update(start_line=self.start_line, start_side="RIGHT")
        return made


@dataclass(frozen=True)
class Plan:
    """How a change reaches the fork: suggestions, and the paths that need a patch instead."""

    suggestions: tuple[Suggestion, ...] = ()
    patched: tuple[str, ...] = ()


def commentable(diff: str) -> dict[str, list[Range]]:
    """The head lines of each file a unified diff shows (where review comments may go)."""
    found: dict[str, list[Range]] = {}
    path = ""
    for line in diff.splitlines():
        if line.startswith("+++ "):
            target = line[4:]
            path = target[2:] if target.startswith("b/") else ""
            continue
        hunk = _HUNK.match(line)
        if hunk and path:
            start, count = int(hunk.group(1)), int(hunk.group(2) or "1")
            if count > 0:
                found.setdefault(path, []).append((start, start + count - 1))
    return found


def _suggestible(old: str | None, new: str | None) -> bool:
    if not old or new is None or "\r" in old or "\r" in new or "\0" in old + new:
        return False
    return old.endswith("\n") == new.endswith("\n")


def _hunks(path: str, old: str, new: str) -> list[Suggestion]:
    a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)
    spans: list[list[int]] = []
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        if tag == "insert":
            # Anchored on the line before (the line after, at the top), which is repeated.
            i1, i2, j1, j2 = (i1 - 1, i1, j1 - 1, j2) if i1 > 0 else (0, 1, j1, j2 + 1)
        if spans and i1 < spans[-1][1]:
            # Two anchors on one line: one suggestion for both.
            spans[-1][1], spans[-1][3] = max(spans[-1][1], i2), max(spans[-1][3], j2)
        else:
            spans.append([i1, i2, j1, j2])
    return [Suggestion(path, i1 + 1, i2, "".join(b[j1:j2])) for i1, i2, j1, j2 in spans]


def _inside(s: Suggestion, ranges: Sequence[Range]) -> bool:
    return any(lo <= s.start_line and s.line <= hi for lo, hi in ranges)


def plan(
    old: Mapping[str, str | None],
    new: Mapping[str, str | None],
    shown: Mapping[str, Sequence[Range]],
) -> Plan:
    """Suggestions for every changed path of `new` (None: deleted) against the head's `old`.

    `shown` is `commentable(<the pull request's diff>)`; a file with any hunk outside it, or
    that a suggestion cannot carry exactly, is listed in `patched` whole.
    """
    suggestions: list[Suggestion] = []
    patched: list[str] = []
    for path in sorted(set(old) | set(new)):
        before, after = old.get(path), new.get(path)
        if before == after:
            continue
        if not _suggestible(before, after):
            patched.append(path)
            continue
        assert before is not None and after is not None
        hunks = _hunks(path, before, after)
        fits = all(_inside(s, shown.get(path, ())) for s in hunks)
        small = all(len(s.body()) <= MAX_COMMENT for s in hunks)
        if fits and small and apply({path: before}, hunks).get(path) == after:
            suggestions.extend(hunks)
        else:
            patched.append(path)
    return Plan(tuple(suggestions), tuple(patched))


def apply(
    files: Mapping[str, str | None], suggestions: Iterable[Suggestion]
) -> dict[str, str | None]:
    """`files` with `suggestions` committed as GitHub does: all at once, on the head's lines.

    A replacement that reaches a file's last line keeps that line's missing final newline.
    """
    out = dict(files)
    by_path: dict[str, list[Suggestion]] = {}
    for s in suggestions:
        by_path.setdefault(s.path, []).append(s)
    for path, found in by_path.items():
        text = out.get(path)
        if text is None:
            raise ValueError(f"a suggestion on {path}, which the head does not have")
        lines = text.splitlines(keepends=True)
        for s in sorted(found, key=lambda s: s.start_line, reverse=True):
            if not 1 <= s.start_line <= s.line <= len(lines):
                raise ValueError(f"suggestion on {path}:{s.start_line}-{s.line} is out of range")
            repl = s.text if not s.text or s.text.endswith("\n") else s.text + "\n"
            if s.line == len(lines) and not lines[-1].endswith("\n"):
                repl = repl.removesuffix("\n")
            lines[s.start_line - 1 : s.line] = repl.splitlines(keepends=True)
        out[path] = "".join(lines)
    return out
