"""Keep a fixer's edits only where the change touched a file (issue #26 item 9).

A formatter run on a changed file rewrites all of it; the PR must carry the change, not a
re-format of lines nobody touched.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from pathlib import Path

from bot import treefs
from bot.validation.compare import LineMap


def touched_lines(change: LineMap) -> set[int]:
    """The 1-based lines of the changed file that the change wrote or sits beside."""
    lines: set[int] = set()
    for _old_start, _old_count, new_start, new_count in change.hunks:
        if new_count:
            lines.update(range(new_start, new_start + new_count))
        else:  # a deletion: the lines on either side of where it was
            lines.update((new_start, new_start + 1))
    return lines


def keep_touched(before: str, after: str, touched: set[int]) -> str:
    """`after` (the fixer's output) with its edits to untouched lines of `before` undone."""
    old = before.splitlines(keepends=True)
    new = after.splitlines(keepends=True)
    out: list[str] = []
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            out += old[i1:i2]
            continue
        if tag == "replace" and i2 - i1 == j2 - j1:  # line for line: judged line by line
            out += [new[j1 + k] if i1 + k + 1 in touched else old[i1 + k] for k in range(i2 - i1)]
            continue
        # An insertion touches the lines around it; an edit, the lines it replaces.
        span = range(i1 + 1, i2 + 1) if i2 > i1 else range(i1, i1 + 2)
        out += new[j1:j2] if any(line in touched for line in span) else old[i1:i2]
    return "".join(out)


def read_texts(repo: Path, paths: list[str]) -> dict[str, str]:
    """The text of each of `paths` in `repo` now (unreadable or binary ones left out)."""
    texts = {}
    for rel in paths:
        try:  # never through a link the change planted: treefs refuses to follow one
            texts[rel] = treefs.read_bytes(repo, rel).decode("utf-8")
        except (OSError, ValueError, treefs.UnsafePath):
            continue
    return texts


def only_touched(
    repo: Path, pre: Mapping[str, str], fixed: set[str], maps: Mapping[str, LineMap]
) -> set[str]:
    """Undo the fixers' edits outside the change's hunks; returns the files left unchanged."""
    same = set()
    for rel in fixed:
        change = maps.get(rel)
        if rel not in pre or change is None:
            continue
        now = read_texts(repo, [rel]).get(rel)
        if now is None:
            continue
        text = keep_touched(pre[rel], now, touched_lines(change))
        treefs.write_bytes(repo, rel, text.encode("utf-8"))
        if text == pre[rel]:
            same.add(rel)
    return same
