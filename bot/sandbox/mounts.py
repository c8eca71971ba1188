"""The bubblewrap command line for one sandboxed command: namespaces, mounts, masks.

What a command sees is built from nothing (bwrap's empty root), one mount at a time, in
order of depth so that a deeper mount always wins: the system directories read-only, the
toolchain directories on PATH read-only, the job's own HOME and /tmp, the paths the caller
makes writable or readable, and an empty tmpfs (or /dev/null) over every hidden path that
one of those would otherwise show (the data dir inside a checkout, a key under /opt). A
repository's `.git` is always read-only: the agent cannot plant hooks, config or replace
refs there, so the bot's own git never meets them.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bot.git.harden import git_dirs

SYSTEM_DIRS = (
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc",
    "/opt",
    "/nix",
)
"""Read-only inside every sandbox (a symlink such as /bin -> usr/bin is kept a symlink)."""

MASKED = (
    ("/etc", "shadow*"),
    ("/etc", "gshadow*"),
    ("/etc", "sudoers"),
    ("/etc/ssh", "ssh_host_*key"),
)
"""Files under /etc that hold secrets of the machine (folder, glob): /dev/null inside."""

TMP, VAR_TMP = "/tmp", "/var/tmp"  # noqa: S108 (the sandbox's own, bound to the job's tmp)

NAMESPACES = (
    "--unshare-user",
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--hostname",
    "sandbox",
    "--die-with-parent",
    "--new-session",
    "--cap-drop",
    "ALL",
)


@dataclass(frozen=True)
class Plan:
    """Everything one command's mounts depend on."""

    cwd: Path
    home: Path
    tmp: Path
    writable: tuple[Path, ...] = ()
    readable: tuple[Path, ...] = ()
    tools: tuple[Path, ...] = ()
    hidden: tuple[Path, ...] = ()
    network: bool = False
    disable_userns: bool = False
    system: tuple[str, ...] = field(default=SYSTEM_DIRS)


def inside(path: Path, roots: Iterable[Path]) -> bool:
    """Whether `path` is one of `roots` or below one of them."""
    return any(path == root or path.is_relative_to(root) for root in roots)


def bwrap_args(plan: Plan) -> list[str]:
    """bwrap's options for `plan` (the command follows them)."""
    args = list(NAMESPACES)
    if not plan.network:
        args.append("--unshare-net")
    if plan.disable_userns:
        args.append("--disable-userns")
    args += ["--proc", "/proc", "--dev", "/dev"]
    system_args, system_dirs = _system(plan.system)
    args += system_args
    shown = list(system_dirs)  # trees visible inside, where a hidden path needs a mask
    args += ["--ro-bind-try", "/sys", "/sys", *_resolv_conf()]
    # (depth, order at equal depth, mount args): parents first, masks before binds.
    mounts: list[tuple[int, int, list[str]]] = []
    for tool in plan.tools:
        if not inside(tool, shown):
            mounts.append((len(tool.parts), 2, ["--ro-bind-try", str(tool), str(tool)]))
            shown.append(tool)
    for secret in _masked():
        mounts.append((len(secret.parts), 1, ["--ro-bind", os.devnull, str(secret)]))
    mounts.append((1, 2, ["--bind", str(plan.tmp), TMP]))
    mounts.append((2, 3, ["--symlink", TMP, VAR_TMP]))
    binds = [(plan.home, "--bind")]
    binds += [(p, "--ro-bind") for p in plan.readable]
    binds += [(p, "--bind") for p in plan.writable]
    for path, how in binds:
        mounts.append((len(path.parts), 2, [how, str(path), str(path)]))
        shown.append(path)
    for path in plan.hidden:
        if path.exists() and inside(path, shown):
            mask = ["--tmpfs", str(path)] if path.is_dir() else ["--ro-bind", os.devnull, str(path)]
            mounts.append((len(path.parts), 1, mask))
    for repo in (*plan.readable, *plan.writable):
        for git_path in _git_paths(repo):
            mounts.append((len(git_path.parts), 4, ["--ro-bind", str(git_path), str(git_path)]))
    for _, _, mount in sorted(mounts, key=lambda m: (m[0], m[1])):
        args += mount
    args += ["--chdir", str(plan.cwd)]
    return args


@functools.cache
def _system(names: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[Path, ...]]:
    """The mounts of the system directories (a symlink stays a symlink), and those shown."""
    args: list[str] = []
    shown: list[Path] = []
    for name in names:
        system = Path(name)
        if system.is_symlink():
            args += ["--symlink", str(system.readlink()), name]
        elif system.is_dir():
            args += ["--ro-bind", name, name]
            shown.append(system)
    return tuple(args), tuple(shown)


@functools.cache
def _masked() -> tuple[Path, ...]:
    """The MASKED files on this machine; only root (outside) could read them anyway."""
    if os.geteuid() != 0:
        return ()
    return tuple(secret for folder, pattern in MASKED for secret in Path(folder).glob(pattern))


@functools.cache
def _resolv_conf() -> tuple[str, ...]:
    """/etc/resolv.conf often links into /run, which is not shown: show its target."""
    link = Path("/etc/resolv.conf")
    if not link.is_symlink():
        return ()
    target = link.resolve()
    if inside(target, [Path(d) for d in SYSTEM_DIRS]):
        return ()
    return ("--ro-bind-try", str(target), str(target))


def _git_paths(repo: Path) -> Sequence[Path]:
    """A repository's `.git`: the directory, or a worktree's file and the git dirs it names."""
    dot = repo / ".git"
    if not dot.exists():
        return []
    dirs = git_dirs(repo)
    if dirs is None or dot.is_dir():
        return [dot]
    gitdir, common = dirs
    named = [common] if gitdir.is_relative_to(common) else [gitdir, common]
    return [dot, *(p for p in named if p.exists())]
