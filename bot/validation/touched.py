"""A fixer keeps only what the change touched: its edits to lines the change left alone are
undone, so a repository not formatted to its own config gets no re-formatting noise."""

from __future__ import annotations

from difflib import SequenceMatcher
from pathlib import Path

from bot import treefs
from bot.validation.changes import git


def touched_lines(base: list[str], now: list[str]) -> set[int]:
    """Indexes of the lines of `now` the change wrote (a deletion touches both neighbours)."""
    found: set[int] = set()
    for tag, _, _, j1, j2 in SequenceMatcher(None, base, now, autojunk=False).get_opcodes():
        if tag != "equal":
            found |= set(range(j1, j2)) if j2 > j1 else {j1 - 1, j1}
    return found


def only_touched(base: str | None, before: str, after: str) -> str:
    """`after` (a fixer's output on `before`) with each edit off the change's lines undone;
    a file the change created (`base` None) keeps every edit."""
    if base is None:
        return after
    pre, post = before.splitlines(keepends=True), after.splitlines(keepends=True)
    touched = touched_lines(base.splitlines(keepends=True), pre)
    out: list[str] = []
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, pre, post, autojunk=False).get_opcodes():
        if tag == "replace" and i2 - i1 == j2 - j1:  # line for line: judged line by line
            out += [post[j1 + k] if i1 + k in touched else pre[i1 + k] for k in range(i2 - i1)]
            continue
        near = set(range(i1, i2)) if i2 > i1 else {i1 - 1, i1}
        out += post[j1:j2] if tag == "equal" or near & touched else pre[i1:i2]
    return "".join(out)


def read_texts(repo: Path, paths: list[str]) -> dict[str, str]:
    """The text of each path that is a readable UTF-8 file (others are left to the fixer)."""
    found = {}
    for rel in paths:
        try:
            found[rel] = treefs.read_bytes(repo, rel).decode()
        except (OSError, ValueError, treefs.UnsafePath):
            continue
    return found


def keep_touched(repo: Path, base_sha: str, before: dict[str, str]) -> list[str]:
    """Undo a fixer's edits off the change's lines in each file of `before`; the paths kept
    as the fixer left them only in part."""
    trimmed = []
    for rel, text in before.items():
        now = read_texts(repo, [rel]).get(rel)
        if now is None or now == text:
            continue
        exists = git(repo, "ls-tree", "--name-only", base_sha, "--", rel, check=False).strip()
        base = git(repo, "show", f"{base_sha}:{rel}", check=False) if exists else None
        kept = only_touched(base, text, now)
        if kept != now:
            treefs.write_bytes(repo, rel, kept.encode())
            trimmed.append(rel)
    return trimmed
