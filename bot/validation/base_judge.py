"""The change cannot redefine its judge: validation runs with the base's judge files (issue #25).

The files that define a stage's command or its runner's behaviour (`bot.judge_files`) are
put back to the base commit's version while the stages run and the change's own version
afterwards, so a Makefile recipe rewritten to `true` or a pytest plugin loaded through
`pytest.toml` cannot turn the verdict. The change to them is reported, for people to see
(the workflows open a draft labelled `agent-unverified` naming the files).
"""

from __future__ import annotations

import fnmatch
import posixpath
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from bot import treefs
from bot.git import runner
from bot.judge_files import MAKEFILE, changed_judge, is_judge_file, judge_part, make_includes
from bot.validation.changes import git
from bot.validation.judge_refs import referenced

_Saved = tuple[str, bytes] | None
"""(`file`, bytes) or (`link`, target) as the change left a path; None when it had none."""


def base_bytes(repo: Path, base: str, rel: str) -> bytes | None:
    """The file `rel` at commit `base` (None when the base has no such file); judge files are
    text, read as UTF-8."""
    proc = runner.run(["cat-file", "blob", f"{base}:{rel}"], cwd=repo, timeout=300.0, check=False)
    return proc.stdout.encode() if proc.returncode == 0 else None


def judge_changes(repo: Path, base: str) -> list[str]:
    """The judge files whose judging part the working tree changed since `base`."""
    tracked = git(repo, "diff", "--name-only", "-z", "--no-renames", "--no-ext-diff", base)
    untracked = git(repo, "ls-files", "--others", "--exclude-standard", "-z")
    changed = [n for n in dict.fromkeys((tracked + untracked).split("\0")) if n]
    included = _included(repo, base, changed)
    on_base = git(repo, "ls-tree", "-r", "--name-only", "-z", base).split("\0")
    judges = {n for n in [*on_base, *changed] if n and is_judge_file(n)}

    def texts(rel: str) -> list[bytes]:
        return [d for d in (base_bytes(repo, base, rel), _head(repo, rel)) if d is not None]

    reached = referenced([n for n in changed if not is_judge_file(n)], judges, texts)
    # A Python module a conftest loads is judged as a conftest is: by its hooks, not its
    # fixtures; a script a command runs, whole.
    modules = {n for n in reached if n.endswith(".py")}
    names = [n for n in changed if is_judge_file(n) or n in included or n in reached]
    files = {n: (base_bytes(repo, base, n), _head(repo, n)) for n in names}
    found = changed_judge(files, also=included | (reached - modules))
    hooks = [n for n in modules if _hooks_differ(*files[n])]
    return sorted({*found, *hooks})


def _hooks_differ(base: bytes | None, head: bytes | None) -> bool:
    """Whether a module a conftest loads changed in what a conftest's judge part holds."""
    return judge_part("conftest.py", base or b"") != judge_part("conftest.py", head or b"")


def _included(repo: Path, base: str, changed: list[str]) -> set[str]:
    """The changed paths a Makefile includes, on the base or in the change."""
    makefiles = {n for n in changed if MAKEFILE.search(n)} | {
        n for n in ("Makefile", "makefile", "GNUmakefile") if (repo / n).is_file()
    }
    found: set[str] = set()
    for makefile in makefiles:
        folder = posixpath.dirname(makefile)
        for data in (base_bytes(repo, base, makefile), _head(repo, makefile)):
            text = (data or b"").decode("utf-8", "replace")
            for pattern in make_includes(text):
                where = posixpath.normpath(posixpath.join(folder, pattern))
                found |= {n for n in changed if fnmatch.fnmatchcase(n, where)}
                if "/" not in pattern:  # `*.mk` from a variable: anywhere
                    found |= {
                        n for n in changed if fnmatch.fnmatchcase(n.rsplit("/", 1)[-1], pattern)
                    }
    return found


def _head(repo: Path, rel: str) -> bytes | None:
    what = treefs.kind(repo, rel)
    if what == "file":
        return treefs.read_bytes(repo, rel)
    return b"\0link" if what == "link" else None


def _save(repo: Path, rel: str) -> _Saved:
    what = treefs.kind(repo, rel)
    if what == "file":
        return "file", treefs.read_bytes(repo, rel)
    if what == "link":
        return "link", treefs.readlink(repo, rel).encode()
    return None


def _put(repo: Path, rel: str, saved: _Saved) -> None:
    treefs.remove(repo, rel, prune=False)
    if saved is None:
        return
    if saved[0] == "file":
        treefs.write_bytes(repo, rel, saved[1])
    else:
        treefs.symlink(repo, rel, saved[1].decode())


@contextmanager
def judged_by_base(repo: Path, base: str | None) -> Iterator[list[str]]:
    """Within the block the judge files are the base's; yields the ones the change altered."""
    if base is None:
        yield []
        return
    changed = judge_changes(repo, base)
    saved = {rel: _save(repo, rel) for rel in changed}
    try:
        for rel in changed:
            data = base_bytes(repo, base, rel)
            _put(repo, rel, None if data is None else ("file", data))
        yield changed
    finally:
        for rel, was in saved.items():
            _put(repo, rel, was)


def judge_note(files: list[str]) -> str:
    """The report's line naming the judge files the change altered."""
    named = ", ".join(f"`{f}`" for f in files)
    return (
        f"the change edits how it is judged ({named}): validated with the base commit's"
        " version of them; a person must review these edits"
    )
