"""Read-only git queries the outbound checks judge on, blind to what a workspace can plant.

Every command runs with replace objects and grafts off, no global or system config, no
global attributes file, no external diff or textconv, no colour and fixed prefixes, so a
`git replace` of the base, a graft, or a config key the agent wrote cannot change what is
seen. Renames are never detected: a rename is its old path deleted and its new path added.
Attributes are read from the judged commit itself (a temporary index), never from the
working tree.
"""

from __future__ import annotations

import codecs
import re
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bot.errors import GitError
from bot.git import Workspace
from bot.git.runner import child_env

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

HARDENED = {
    "GIT_NO_REPLACE_OBJECTS": "1",
    "GIT_GRAFT_FILE": "/dev/null",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_ATTR_NOSYSTEM": "1",
}
_CONFIG = ("-c", "core.attributesFile=/dev/null", "-c", "core.quotePath=true")
_DIFF = (
    "diff-tree",
    "-r",
    "--no-renames",
    "--no-ext-diff",
    "--no-textconv",
    "--no-color",
    "--no-relative",
)
_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@")


@dataclass(frozen=True)
class Change:
    """One path changed between two trees: modes and blob ids on each side."""

    path: str
    status: str
    """A (added), M (modified), D (deleted), T (type changed)."""
    old_mode: str
    new_mode: str
    old_sha: str
    new_sha: str


@dataclass(frozen=True)
class Commit:
    """A commit to be pushed, with its parents."""

    sha: str
    parents: tuple[str, ...]


class GitView:
    """Hardened read-only queries on one workspace's object store."""

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws

    def git(self, *args: str, stdin: str | None = None, env: dict[str, str] | None = None) -> str:
        """Run `git *args` hardened; GitError on failure."""
        got = self.ws.run([*_CONFIG, *args], stdin=stdin, env={**HARDENED, **(env or {})})
        return got.stdout

    def rev(self, ref: str) -> str:
        """The commit sha `ref` names, with replace objects off."""
        return self.git("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}").strip()

    def commits(self, base: str, head: str) -> list[Commit]:
        """Every commit reachable from `head` and not from `base`, oldest first."""
        out = self.git("rev-list", "--reverse", "--parents", f"{base}..{head}")
        return [
            Commit(parts[0], tuple(parts[1:]))
            for parts in (line.split() for line in out.splitlines())
        ]

    def raw_commit(self, sha: str) -> str:
        """The commit object as stored: headers (author, committer) and message."""
        return self.git("cat-file", "commit", sha)

    def changes(self, old: str, new: str) -> list[Change]:
        """Paths that differ between two tree-ish, renames as delete + add."""
        out = self.git(*_DIFF, "-z", "--raw", old, new)
        fields = out.split("\0")
        found = []
        for meta, path in zip(fields[0::2], fields[1::2], strict=False):
            if not meta.startswith(":"):
                break
            old_mode, new_mode, old_sha, new_sha, status = meta[1:].split()
            found.append(Change(path, status[0], old_mode, new_mode, old_sha, new_sha))
        return found

    def sizes(self, shas: Sequence[str]) -> dict[str, int]:
        """Blob id -> size in bytes."""
        wanted = sorted({s for s in shas if s and set(s) != {"0"}})
        if not wanted:
            return {}
        out = self.git(
            "cat-file", "--batch-check=%(objectname) %(objectsize)", stdin="\n".join(wanted) + "\n"
        )
        sizes = {}
        for line in out.splitlines():
            sha, _, size = line.partition(" ")
            if size.isdigit():
                sizes[sha] = int(size)
        return sizes

    def blobs(self, shas: Sequence[str]) -> Iterator[tuple[str, bytes]]:
        """(sha, content) of each blob, read in one `cat-file --batch`."""
        wanted = list(dict.fromkeys(shas))
        if not wanted:
            return
        proc = subprocess.run(
            ["git", *_CONFIG, "cat-file", "--batch"],
            cwd=self.ws.path,
            env=child_env(extra=HARDENED),
            input=("\n".join(wanted) + "\n").encode(),
            capture_output=True,
            check=False,
        )
        if proc.returncode != 0:
            raise GitError("git cat-file --batch failed", operation="cat-file")
        data, pos = proc.stdout, 0
        while pos < len(data):
            end = data.index(b"\n", pos)
            header = data[pos:end].split()
            pos = end + 1
            if len(header) < 3:  # "<sha> missing"
                continue
            size = int(header[2])
            yield header[0].decode(), data[pos : pos + size]
            pos += size + 1

    def attributes(self, treeish: str, paths: Sequence[str]) -> dict[str, dict[str, str]]:
        """path -> {attribute: value} for diff and linguist-generated, as the .gitattributes
        files of `treeish` set them (and nothing else: a throwaway git dir sharing this
        one's objects, so `.git/info/attributes` in the workspace does not count)."""
        if not paths:
            return {}
        objects = self.ws.path / self.git("rev-parse", "--git-common-dir").strip() / "objects"
        with tempfile.TemporaryDirectory(prefix="agentbot-attr-") as tmp:
            env = {
                "GIT_DIR": tmp,
                "GIT_OBJECT_DIRECTORY": str(objects.resolve()),
                "GIT_INDEX_FILE": str(Path(tmp) / "index"),
            }
            self.git("init", "--quiet", "--bare", tmp, env={"GIT_DIR": tmp})
            self.git("read-tree", treeish, env=env)
            out = self.git(
                "check-attr",
                "--cached",
                "-z",
                "--stdin",
                "diff",
                "linguist-generated",
                stdin="\0".join(paths) + "\0",
                env=env,
            )
        fields = out.split("\0")
        attrs: dict[str, dict[str, str]] = {}
        for path, name, value in zip(fields[0::3], fields[1::3], fields[2::3], strict=False):
            attrs.setdefault(path, {})[name] = value
        return attrs

    def patch(self, old: str, new: str, paths: Sequence[str]) -> dict[str, Lines]:
        """path -> its changed lines, every file read as text (binary included)."""
        if not paths:
            return {}
        out = self.git(
            "--literal-pathspecs",
            *_DIFF,
            "-p",
            "-U0",
            "--text",
            "--src-prefix=a/",
            "--dst-prefix=b/",
            old,
            new,
            "--",
            *paths,
        )
        return parse_patch(out)


@dataclass
class Lines:
    """The changed lines of one file in a patch."""

    added: list[tuple[int, str]] = field(default_factory=list)
    """(line number in the new file, text) of every added line."""
    deleted: list[str] = field(default_factory=list)


def parse_patch(patch: str) -> dict[str, Lines]:
    """The added and deleted lines of a `-U0` patch, per path."""
    found: dict[str, Lines] = {}
    lines, number, header = Lines(), 0, True
    for line in patch.split("\n"):
        if line.startswith("diff --git "):
            header, lines = True, Lines()
        elif header and line.startswith(("--- ", "+++ ")):
            # git ends a name holding a space with a tab, so patch tools can parse it.
            name = unquote(line[4:].removesuffix("\t"))
            if name[:2] in ("a/", "b/"):
                found[name[2:]] = lines  # a deletion names only a/, an addition only b/
        elif line.startswith("@@"):
            header = False
            hunk = _HUNK.match(line)
            number = int(hunk.group(1)) if hunk else 0
        elif header:
            continue
        elif line.startswith("+"):
            lines.added.append((number, line[1:]))
            number += 1
        elif line.startswith("-"):
            lines.deleted.append(line[1:])
    return found


def unquote(name: str) -> str:
    """A path as git prints it, C-quoted when it holds special characters, made plain."""
    if len(name) >= 2 and name.startswith('"') and name.endswith('"'):
        raw = codecs.escape_decode(name[1:-1].encode("latin-1", "backslashreplace"))[0]
        return bytes(raw).decode("utf-8", "replace")
    return name
