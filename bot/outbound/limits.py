"""The limits, judged on exactly what would be pushed: commits, or a tree, against a base.

Rules (each refusal names its rule, the file and the number):
- `limits.protected_paths`: no path under a protected glob is added, edited, deleted, or
  renamed (a rename is a deletion plus an addition); nor a symlink pointing into one.
- `limits.allow_test_deletion`: no test file is deleted (a renamed test counts as deleted).
- `limits.max_file_bytes`: no file is added, or grows, past this size.
- `limits.max_changed_lines` / `limits.max_changed_test_lines`: changed lines outside
  tests and docs, and in tests and docs. A line counts once per LONG_LINE characters, so
  one 5 MB line is not "one line"; a file a reviewer cannot read in the diff (binary, or
  marked `-diff`, `binary` or `linguist-generated` in the judged commit's
  .gitattributes) counts at least one line per BYTES_PER_LINE bytes of its new content.
- `submodules`: no gitlink is added, changed or removed (a pinned commit nobody reviews).
- `symlinks`: no symlink points outside the repository.
- `secrets`: no added line, file name or commit object holds a secret (bot.outbound.scan).
- `merge commits`: the pushed commits are a straight line (every one diffed to one parent).
- `bidi`: no added line holds a bidirectional control character ("Trojan Source": code
  that reads differently from how it runs).
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from dataclasses import dataclass

from bot.config import Limits
from bot.outbound.gitview import EMPTY_TREE, Change, GitView, Lines
from bot.outbound.paths import glob_prefix, kind_of, protected_by
from bot.outbound.scan import Scanner

LONG_LINE = 200
_BIDI = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f")
"""Characters per counted line: a longer line counts once for every LONG_LINE begun."""
BYTES_PER_LINE = 80
"""Bytes per counted line for a file the diff does not show."""
BINARY_SNIFF = 8000
"""Like git: a NUL byte in the first 8000 bytes makes a file binary."""

_TEST_RULE = "limits.allow_test_deletion"
LINE_RULES = ("limits.max_changed_lines", "limits.max_changed_test_lines")
GITLINK, SYMLINK = "160000", "120000"
REGULAR = ("100644", "100755")


@dataclass(frozen=True)
class Violation:
    """One broken rule: which, where, and by how much."""

    rule: str
    path: str
    detail: str

    def __str__(self) -> str:
        return f"{self.rule}: `{self.path}` {self.detail}"


def _ceil(n: int, d: int) -> int:
    return -(-n // d)


def line_weight(text: str) -> int:
    """How many lines one changed line counts as."""
    return max(1, _ceil(len(text), LONG_LINE))


class Judge:
    """Applies the limits to changes in one workspace's object store."""

    def __init__(
        self, view: GitView, limits: Limits, scanner: Scanner, uncounted: tuple[str, ...] = ()
    ) -> None:
        self.view, self.limits, self.scanner = view, limits, scanner
        self.uncounted = uncounted
        """Path prefixes left out of the line counts."""

    def change(self, old: str, new: str, *, count_lines: bool = True) -> list[Violation]:
        """Everything wrong with going from tree-ish `old` to tree-ish `new`."""
        changes = self.view.changes(old, new)
        if not changes:
            return []
        sizes = self.view.sizes([c.old_sha for c in changes] + [c.new_sha for c in changes])
        big = self.limits.max_file_bytes
        readable = [
            c for c in changes if sizes.get(c.old_sha, 0) <= big and sizes.get(c.new_sha, 0) <= big
        ]
        contents = dict(self.view.blobs([c.new_sha for c in readable if c.status != "D"]))
        patch = self.view.patch(old, new, [c.path for c in readable])
        found = [v for c in changes for v in self._structure(c, sizes, contents)]
        found += self._secrets(patch)
        found += _bidi(patch)
        for c in readable:  # fail closed: content the scan did not see is not pushed
            changed = c.old_sha != c.new_sha and sizes.get(c.new_sha, 0)
            if c.status != "D" and changed and c.path not in patch:
                found.append(Violation("secrets", c.path, "could not be read for the scan"))
        if count_lines:
            opaque = self._opaque(new, readable, contents)
            found += self._lines(changes, sizes, patch, opaque)
        return found

    def commits(self, base: str, head: str, *, per_commit_lines: bool) -> list[Violation]:
        """Everything wrong with pushing `head` where `base` is already on the remote.

        Each commit is judged against its parent; lines are counted per commit
        (`per_commit_lines`, the Implementer's one commit per task) or over base..head.
        """
        found: list[Violation] = []
        commits = self.view.commits(base, head)
        # One commit on the base: its own diff is the whole push, lines included.
        single = len(commits) == 1 and commits[0].parents == (self.view.rev(base),)
        for commit in commits:
            if len(commit.parents) > 1:
                found.append(
                    Violation("merge commits", commit.sha[:12], "is a merge; push a straight line")
                )
                continue
            parent = commit.parents[0] if commit.parents else EMPTY_TREE
            found += self.change(parent, commit.sha, count_lines=per_commit_lines or single)
            for finding in self.scanner.find(self.view.raw_commit(commit.sha)):
                where = f"commit {commit.sha[:12]}"
                found.append(
                    Violation(
                        "secrets", where, f"holds a secret ({finding.kind}) on line {finding.line}"
                    )
                )
        if commits and not per_commit_lines and not single:
            found += [v for v in self.change(base, head) if v.rule in LINE_RULES]
        return _unique(found)

    # --- rules -------------------------------------------------------------------------

    def _structure(
        self, c: Change, sizes: dict[str, int], contents: dict[str, bytes]
    ) -> list[Violation]:
        lim = self.limits
        found = []
        pattern = protected_by(c.path, lim.protected_paths)
        if pattern is not None:
            how = {"A": "adds", "D": "deletes"}.get(c.status, "changes")
            found.append(
                Violation(
                    "limits.protected_paths",
                    c.path,
                    f"is protected ({pattern}): the change {how} it",
                )
            )
        if GITLINK in (c.old_mode, c.new_mode):
            found.append(
                Violation(
                    "submodules", c.path, "is a submodule: agentbot does not change submodules"
                )
            )
        new_size, old_size = sizes.get(c.new_sha, 0), sizes.get(c.old_sha, 0)
        if not lim.allow_test_deletion and c.old_mode in REGULAR and kind_of(c.path) == "test":
            if c.status == "D" or c.new_mode not in REGULAR:
                found.append(
                    Violation(_TEST_RULE, c.path, "is a test file and the change deletes it")
                )
            elif old_size and not new_size:
                found.append(
                    Violation(_TEST_RULE, c.path, "is a test file and the change empties it")
                )
        if c.status != "D" and new_size > lim.max_file_bytes >= old_size:
            found.append(
                Violation(
                    "limits.max_file_bytes",
                    c.path,
                    f"is {new_size:,} bytes, over the limit of {lim.max_file_bytes:,}",
                )
            )
        if c.new_mode == SYMLINK and c.status != "D":
            found += self._symlink(c.path, contents.get(c.new_sha, b""))
        for finding in self.scanner.find(c.path):
            found.append(Violation("secrets", c.path, f"has a secret in its name ({finding.kind})"))
        return found

    def _symlink(self, path: str, target_bytes: bytes) -> list[Violation]:
        target = target_bytes.decode("utf-8", "replace")
        resolved = posixpath.normpath(posixpath.join(posixpath.dirname(path), target))
        if target.startswith("/") or resolved == ".." or resolved.startswith("../"):
            return [Violation("symlinks", path, "points outside the repository")]
        # Only leading `..` may climb: after a name, `..` climbs from wherever that name
        # resolves, and another link can make that outside the repository (`d/u -> ..`,
        # `x -> d/u/d/u/../../../../etc`) although the lexical target stays inside.
        names = target.split("/")
        while names and names[0] == "..":
            names.pop(0)
        if ".." in names:
            return [Violation("symlinks", path, "climbs with `..` after a name, maybe out")]
        pattern = protected_by(resolved, self.limits.protected_paths)
        if pattern is not None:
            return [Violation("limits.protected_paths", path, f"is a symlink into {pattern}")]
        # A symlink where a protected folder would be (`.github` -> `ci/`) stands in for it.
        for pattern in self.limits.protected_paths:
            if glob_prefix(pattern).casefold().startswith(path.casefold() + "/"):
                return [
                    Violation("limits.protected_paths", path, f"is a symlink in place of {pattern}")
                ]
        return []

    def _secrets(self, patch: dict[str, Lines]) -> list[Violation]:
        found = []
        for path, lines in patch.items():
            if not lines.added:
                continue
            text = "\n".join(t for _, t in lines.added)
            for finding in self.scanner.find(text):
                number = lines.added[finding.line - 1][0]
                found.append(
                    Violation("secrets", path, f"line {number} adds a secret ({finding.kind})")
                )
        return found

    def _opaque(self, new: str, changes: Sequence[Change], contents: dict[str, bytes]) -> set[str]:
        """Paths whose content a reviewer does not see in the pull request's diff."""
        kept = [c for c in changes if c.status != "D"]
        attrs = self.view.attributes(new, [c.path for c in kept])
        opaque = set()
        for c in kept:
            a = attrs.get(c.path, {})
            hidden = a.get("diff") == "unset" or a.get("linguist-generated") in ("set", "true")
            if hidden or b"\0" in contents.get(c.new_sha, b"")[:BINARY_SNIFF]:
                opaque.add(c.path)
        return opaque

    def _lines(
        self,
        changes: Sequence[Change],
        sizes: dict[str, int],
        patch: dict[str, Lines],
        opaque: set[str],
    ) -> list[Violation]:
        per_file: dict[str, int] = {}
        for c in changes:
            if c.path.startswith(self.uncounted):
                continue
            lines = patch.get(c.path)
            if lines is None:  # too big to read: by its bytes
                counted = _ceil(
                    max(sizes.get(c.old_sha, 0), sizes.get(c.new_sha, 0)), BYTES_PER_LINE
                )
            else:
                counted = sum(line_weight(t) for _, t in lines.added)
                counted += sum(line_weight(t) for t in lines.deleted)
                if c.path in opaque:
                    counted = max(counted, _ceil(sizes.get(c.new_sha, 0), BYTES_PER_LINE))
            if c.status in ("A", "D"):
                counted = max(counted, 1)  # ten thousand empty files are not nothing
            per_file[c.path] = counted
        found = []
        for rule, kinds, limit, what in (
            (
                "limits.max_changed_lines",
                ("source",),
                self.limits.max_changed_lines,
                "outside tests and docs",
            ),
            (
                "limits.max_changed_test_lines",
                ("test", "doc"),
                self.limits.max_changed_test_lines,
                "in tests and docs",
            ),
        ):
            files = {p: n for p, n in per_file.items() if kind_of(p) in kinds}
            total = sum(files.values())
            if total > limit:
                largest = max(files, key=lambda p: files[p])
                found.append(
                    Violation(
                        rule,
                        largest,
                        f"({files[largest]:,} lines) is the largest of {total:,} changed lines"
                        f" {what}, over the limit of {limit:,}",
                    )
                )
        return found


def _unique(found: list[Violation]) -> list[Violation]:
    return list(dict.fromkeys(found))


def _bidi(patch: dict[str, Lines]) -> list[Violation]:
    """Added lines with bidirectional control characters, one violation per file."""
    found = []
    for path, lines in patch.items():
        for number, text in lines.added:
            if _BIDI.intersection(text):
                found.append(
                    Violation("bidi", path, f"line {number} adds a bidi control character")
                )
                break
    return found
