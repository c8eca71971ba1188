"""Which problems a change introduced: the workspace's diagnostics minus the base commit's.

A diagnostic is identified by file + rule + message. Its line is matched too, moved by
the diff: a problem on base line 40 of a file whose change added three lines above it
is the same problem on line 43. What the diff rewrote maps nowhere, so a problem there
matches a base problem of the same file, rule and message only while the base has one
left over (a second identical finding in a file is new). Pure functions.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from bot.models import Diagnostic

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", re.MULTILINE)


@dataclass(frozen=True)
class LineMap:
    """Base line -> workspace line for one file, from a `git diff -U0` hunk list."""

    hunks: tuple[tuple[int, int, int, int], ...] = ()
    """(base start, base count, new start, new count) per hunk, in order."""

    def new_line(self, line: int) -> int | None:
        """Where base line `line` is now; None if the change rewrote or removed it."""
        shift = 0
        for old_start, old_count, new_start, new_count in self.hunks:
            # git -U0 names the line *before* an insertion (count 0) or a deletion's place.
            old_end = old_start + old_count if old_count else old_start + 1
            if line < (old_start if old_count else old_end):
                break
            if old_count and line < old_end:
                return None
            shift = (new_start + new_count if new_count else new_start + 1) - old_end
        return line + shift


def parse_unified_zero(diff: str) -> dict[str, LineMap]:
    """Line maps per file (workspace path) from the text of `git diff -U0`."""
    maps: dict[str, LineMap] = {}
    path: str | None = None
    hunks: list[tuple[int, int, int, int]] = []
    for line in diff.splitlines():
        if line.startswith("diff --git "):
            if path is not None:
                maps[path] = LineMap(tuple(hunks))
            path, hunks = None, []
        elif line.startswith("+++ "):
            name = line[4:].strip()
            path = name[2:] if name.startswith("b/") else None
        elif (m := _HUNK.match(line)) is not None:
            old_count = int(m.group(2)) if m.group(2) is not None else 1
            new_count = int(m.group(4)) if m.group(4) is not None else 1
            hunks.append((int(m.group(1)), old_count, int(m.group(3)), new_count))
    if path is not None:
        maps[path] = LineMap(tuple(hunks))
    return maps


def new_problems(
    head: Sequence[Diagnostic],
    base: Sequence[Diagnostic],
    line_maps: Mapping[str, LineMap],
) -> tuple[list[Diagnostic], list[Diagnostic]]:
    """(new, pre-existing): the workspace's diagnostics split by whether the base had them."""
    unmatched = list(range(len(head)))
    left = list(base)
    # First pass: same file, rule, message, and the base line moved by the diff.
    for i in list(unmatched):
        h = head[i]
        for j, b in enumerate(left):
            if b.key() != h.key():
                continue
            moved = line_maps[b.path].new_line(b.line) if b.path in line_maps else b.line
            if moved == h.line or (b.line == 0 and h.line == 0):
                unmatched.remove(i)
                del left[j]
                break
    # Second pass: what the diff rewrote, matched by count of file + rule + message.
    spare = Counter(b.key() for b in left)
    new: list[Diagnostic] = []
    for i in unmatched:
        key = head[i].key()
        if spare[key] > 0:
            spare[key] -= 1
        else:
            new.append(head[i])
    pre = [d for d in head if d not in new]
    return new, pre
