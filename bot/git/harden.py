"""What makes the bot's own git ignore everything an agent can plant (DESIGN §13).

Every git command the bot runs (not only the network ones) gets:
- `HARDENED_ENV`: no global or system config (`~/.gitconfig`, trace2 targets, filter drivers
  and hooks set there), no system attributes, no replace objects, no grafts;
- `HARDENED_CONFIG` on its command line: hooks and fsmonitor off, no global attributes file,
  no `ext::` transport, TLS verified;
- a repository config without the keys an agent could have planted to run code, divert the
  token or redirect git (`PLANTABLE`): they are removed before the command whenever the
  config files changed since the last check (`ConfigGuard`), which costs one `stat` per
  command otherwise. Removing an `includeIf` that actions/checkout (v6) wrote also deletes
  the credentials file it pointed to.

Inside the sandbox the agent cannot write `.git` at all; this is what keeps the bot safe
when it runs without one (and against whatever was in the checkout before the job).
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import threading
from pathlib import Path

HARDENED_ENV: dict[str, str] = {
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_ATTR_NOSYSTEM": "1",
    "GIT_NO_REPLACE_OBJECTS": "1",
    "GIT_GRAFT_FILE": os.devnull,
    "GIT_TERMINAL_PROMPT": "0",  # never wait for a person: no prompt, no askpass, no editor
    "GIT_ASKPASS": "",
    "SSH_ASKPASS": "",
    "GIT_EDITOR": "true",
    "GIT_PAGER": "cat",
}
"""Set for every git command the bot runs."""

HARDENED_CONFIG: tuple[tuple[str, str], ...] = (
    ("core.hooksPath", os.devnull),
    ("core.fsmonitor", "false"),
    ("core.attributesFile", os.devnull),
    ("protocol.ext.allow", "never"),
    ("http.sslVerify", "true"),
    ("push.gpgSign", "false"),
    ("advice.graftFileDeprecated", "false"),
    # The bot's commands ignore repository code, so whose files they are does not matter
    # (a container job's checkout belongs to another uid; its safe.directory is global).
    ("safe.directory", "*"),
)
"""Command-line config of every git command the bot runs."""

PLANTABLE = re.compile(
    r"^(?:(?:http|https|url|credential|include|includeif|protocol|filter|alias|pager|gpg"
    r"|sequence|trace2|uploadpack|receive|transfer|pack|sendemail|mergetool|difftool"
    r"|submodule|lfs|instaweb|web|man|browser)\..*"
    r"|core\.(?:fsmonitor|hookspath|sshcommand|gitproxy|askpass|pager|editor|worktree"
    r"|attributesfile|alternaterefscommand|alternaterefsprefixes)"
    r"|diff\.(?:external|.*\.(?:textconv|command))|merge\..*\.driver"
    r"|remote\..*\.(?:proxy|receivepack|uploadpack|vcs|pushurl))$",
    re.IGNORECASE,
)
"""Local config keys that run code, divert the token or redirect git; never kept."""

_CHECKOUT_CREDENTIALS = re.compile(r"^git-credentials-[0-9a-f-]+\.config$")


def git_dirs(cwd: Path) -> tuple[Path, Path] | None:
    """(git dir, common dir) of the repository at or above `cwd`, read without running git."""
    for folder in (cwd, *cwd.parents):
        dot = folder / ".git"
        if dot.is_dir():
            return dot, dot
        if dot.is_file():
            try:
                text = dot.read_text(encoding="utf-8", errors="replace").strip()
            except OSError:
                return None
            if not text.startswith("gitdir:"):
                return None
            gitdir = (folder / text.removeprefix("gitdir:").strip()).resolve()
            common = gitdir
            with contextlib.suppress(OSError):
                common = (gitdir / (gitdir / "commondir").read_text().strip()).resolve()
            return gitdir, common
    return None


def config_files(cwd: Path) -> list[Path]:
    """The repository config files git reads for `cwd` (local and per-worktree)."""
    dirs = git_dirs(cwd)
    if dirs is None:
        return []
    gitdir, common = dirs
    return [common / "config", gitdir / "config.worktree"]


def _signature(files: list[Path]) -> tuple[tuple[int, int, int], ...]:
    sig = []
    for path in files:
        try:
            st = path.stat()
        except OSError:
            sig.append((0, 0, 0))
        else:
            sig.append((st.st_ino, st.st_size, st.st_mtime_ns))
    return tuple(sig)


class ConfigGuard:
    """Removes planted keys from a repository's config when its files changed."""

    def __init__(self) -> None:
        self._seen: dict[Path, tuple[tuple[int, int, int], ...]] = {}
        self._lock = threading.Lock()

    def ensure_clean(self, cwd: Path, env: dict[str, str]) -> list[str]:
        """Scrub the config of the repository at `cwd` if it changed; the keys removed."""
        files = config_files(cwd)
        if not files:
            return []
        with self._lock:
            if self._seen.get(files[0]) == _signature(files):
                return []
            removed = scrub(cwd, env)
            self._seen[files[0]] = _signature(files)
            return removed


def scrub(cwd: Path, env: dict[str, str]) -> list[str]:
    """Unset every PLANTABLE key of the local and worktree config; return their names."""
    listed = _git(cwd, env, "config", "--list", "--show-scope", "--name-only", "--includes")
    removed = []
    for line in listed.splitlines():
        scope, _, key = line.partition("\t")
        if scope not in ("local", "worktree") or not PLANTABLE.match(key):
            continue
        if key.lower().startswith(("include.", "includeif.")):
            _forget_included(cwd, env, scope, key)
        _git(cwd, env, "config", f"--{scope}", "--unset-all", key)
        removed.append(key)
    return removed


def _forget_included(cwd: Path, env: dict[str, str], scope: str, key: str) -> None:
    """Delete the credentials file actions/checkout (v6) includes: it holds the token."""
    for value in _git(cwd, env, "config", f"--{scope}", "--get-all", key).splitlines():
        path = Path(value.strip())
        if not path.is_absolute() or not _CHECKOUT_CREDENTIALS.match(path.name):
            continue
        with contextlib.suppress(OSError):
            if "extraheader" in path.read_text(encoding="utf-8", errors="replace").lower():
                path.unlink()


def _git(cwd: Path, env: dict[str, str], *args: str) -> str:
    proc = subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )
    return proc.stdout
