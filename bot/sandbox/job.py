"""One job's sandbox: every command the repository or the model controls runs through it.

A job gets one `Sandbox` (`SandboxPolicy.open`): a throwaway HOME and /tmp of its own, the
network rule of its repository, and, with bubblewrap, a fresh set of namespaces for each
command (user, pid, mount, ipc, uts and, unless the rule allows it, net). A command sees
the system read-only, its own workspace (and the caches the caller names) writable, `.git`
read-only, and nothing of the data dir, the keys, the queue or any other workspace. When
a command ends its pid namespace ends with it and the kernel kills what it started (`setsid`
included); `close()` at job end kills whatever still runs and deletes HOME and /tmp.

Without a working bwrap (`kind == "none"`) the same calls run the command directly, with
the same allowlisted environment and throwaway HOME and TMPDIR, under a reaper that kills
what it leaves behind: the machine (an ephemeral runner) is then the isolation boundary.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import IO, TYPE_CHECKING, Literal

from bot.errors import SandboxUnavailable
from bot.sandbox import reaper
from bot.sandbox.mounts import Plan, bwrap_args, inside
from bot.sandbox.status import SandboxKind, SandboxStatus
from bot.secrets import TOOLCHAIN, confined_env

if TYPE_CHECKING:
    from bot.sandbox.policy import SandboxPolicy

NetworkMode = Literal["none", "setup", "all"]
"""`sandbox.network` in .github/agentbot.yml: when sandboxed commands may use the network."""

Stream = int | IO[bytes] | None


class Sandbox:
    """One job's sandbox (see the module doc); `popen` runs a command in it."""

    def __init__(self, status: SandboxStatus, *, policy: SandboxPolicy, network: NetworkMode):
        self.status = status
        self.network = network
        self.policy = policy
        policy.root.mkdir(parents=True, exist_ok=True)
        self.dir = Path(tempfile.mkdtemp(prefix="job-", dir=policy.root)).resolve()
        self.home = self.dir / "home"
        self.tmp = self.dir / "tmp"
        for folder in (self.home, self.tmp):
            folder.mkdir(mode=0o700)
        self.hidden = tuple(p.resolve() for p in policy.hidden)
        self._procs: weakref.WeakSet[subprocess.Popen[bytes]] = weakref.WeakSet()
        self._tool_cache: dict[tuple[str, ...], tuple[Path, ...]] = {}
        self._lock = threading.Lock()
        self._closed = False

    @property
    def kind(self) -> SandboxKind:
        """`bwrap`, or `none` when the machine is the boundary."""
        return self.status.kind

    def network_for(self, *, setup: bool) -> bool:
        """Whether a command may use the network: `setup` stages under `setup`, all under `all`."""
        return self.network == "all" or (setup and self.network == "setup")

    def environment(self, env: Mapping[str, str]) -> dict[str, str]:
        """What a command really gets: `env` checked again, with the job's HOME and TMPDIR."""
        final = confined_env(env)
        home = self.policy.host_home
        if home is not None and "RUSTUP_HOME" not in final and (home / ".rustup").is_dir():
            # HOME moves to the job's: rustup's shims would no longer find the toolchains.
            final["RUSTUP_HOME"] = str(home / ".rustup")
        final["HOME"] = str(self.home)
        final["TMPDIR"] = "/tmp" if self.kind == "bwrap" else str(self.tmp)  # noqa: S108
        return final

    def argv(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        writable: Sequence[Path] = (),
        readable: Sequence[Path] = (),
        setup: bool = False,
    ) -> list[str]:
        """The full command line that runs `argv` in this sandbox from `cwd`."""
        if self.kind != "bwrap":
            # The reaper needs Linux (a child subreaper, /proc); elsewhere the command runs as is.
            if not sys.platform.startswith("linux"):
                return list(argv)
            return [sys.executable, "-I", "-S", reaper.__file__, *argv]
        asked = [Path(p).absolute() for p in (*writable, *readable)]
        guarded = (*self.hidden, *asked)
        rw = tuple(t for p in writable if (t := _bind_target(Path(p), guarded)) is not None)
        ro = tuple(t for p in readable if (t := _bind_target(Path(p), guarded)) is not None)
        where = Path(cwd).resolve()
        if not inside(where, rw + ro):
            raise ValueError(f"{where} is not among the paths this command may see")
        plan = Plan(
            cwd=where,
            home=self.home,
            tmp=self.tmp,
            writable=rw,
            readable=ro,
            tools=self._tools(env, rw + ro),
            hidden=self.hidden,
            network=self.network_for(setup=setup),
            disable_userns=self.status.disable_userns,
        )
        assert self.status.bwrap is not None
        return [self.status.bwrap, *bwrap_args(plan), "--", *argv]

    def popen(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        writable: Sequence[Path] = (),
        readable: Sequence[Path] = (),
        setup: bool = False,
        stdin: Stream = subprocess.DEVNULL,
        stdout: Stream = None,
        stderr: Stream = None,
    ) -> subprocess.Popen[bytes]:
        """Start `argv` in the sandbox, in a session of its own (killpg reaches all of it).

        `writable` paths (the workspace, its venv and caches) are created if missing; `cwd`
        must be one of them or of `readable`. `setup` asks for the setup stage's network.
        """
        for path in writable:
            Path(path).mkdir(parents=True, exist_ok=True)
        full = self.argv(argv, cwd=cwd, env=env, writable=writable, readable=readable, setup=setup)
        with self._lock:
            if self._closed:
                raise SandboxUnavailable("the job's sandbox is closed", reason="closed")
            proc = subprocess.Popen(
                full,
                cwd=cwd,
                env=self.environment(env),
                stdin=stdin,
                stdout=stdout,
                stderr=stderr,
                start_new_session=True,
            )
            self._procs.add(proc)
        return proc

    def close(self) -> None:
        """Kill everything still running in the sandbox and delete its HOME and /tmp."""
        with self._lock:
            self._closed = True
            running = [p for p in self._procs if p.returncode is None]
        # Taken first: `setsid` children left the process group but are still descendants.
        left = reaper.tree([p.pid for p in running])
        for proc in running:
            # The reaper (no bwrap) cleans up on TERM; bwrap's namespaces die with it.
            _signal_group(proc.pid, signal.SIGTERM)
        for proc in running:
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                _signal_group(proc.pid, signal.SIGKILL)
                proc.wait()
        _kill_all(left)
        _remove_tree(self.dir)

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _tools(self, env: Mapping[str, str], shown: tuple[Path, ...]) -> tuple[Path, ...]:
        """Toolchain directories to show read-only: PATH, toolchain roots, our interpreter."""
        candidates = [p for p in env.get("PATH", "").split(os.pathsep) if p]
        candidates += [v for k, v in env.items() if k in TOOLCHAIN and v.startswith("/")]
        if "RUSTUP_HOME" not in env and self.policy.host_home is not None:
            candidates.append(str(self.policy.host_home / ".rustup"))
        key = tuple(candidates)
        if key not in self._tool_cache:
            self._tool_cache[key] = self._toolchain_dirs(candidates)
        return tuple(t for t in self._tool_cache[key] if not inside(t, shown))

    def _toolchain_dirs(self, candidates: list[str]) -> tuple[Path, ...]:
        # The interpreter running agentbot: setup builds the workspace's venv from it.
        candidates = [*candidates, sys.prefix, sys.base_prefix]
        candidates.append(str(Path(sys.executable).resolve().parent))
        candidates += _manager_roots(candidates)
        home = self.policy.host_home
        found: set[Path] = set()
        for raw in candidates:
            path = Path(raw)
            try:  # a service user may not read every PATH entry: that one is not shown
                if not path.is_absolute() or not path.is_dir():
                    continue
                path = path.resolve()
            except OSError:
                continue
            too_wide = path == Path("/") or (home is not None and home.is_relative_to(path))
            if not too_wide and not inside(path, self.hidden):
                found.add(path)
        # One mount per tree: a folder inside another one shown adds nothing but time.
        return tuple(sorted(p for p in found if not inside(p, found - {p})))


def _manager_roots(candidates: list[str]) -> list[str]:
    """The roots of version managers (pyenv, rbenv) whose `shims` folders are on PATH.

    A shim execs `<root>/libexec/…`; without the root shown, every shimmed tool fails in
    the sandbox when the caller did not also pass PYENV_ROOT/RBENV_ROOT.
    """
    roots: list[str] = []
    for raw in candidates:
        path = Path(raw)
        if path.name != "shims":
            continue
        for parent in list(path.parents)[:3]:
            with contextlib.suppress(OSError):
                if (parent / "libexec").is_dir():
                    roots.append(str(parent))
                    break
    return roots


def _signal_group(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


def _kill_all(pids: list[int], *, wait: float = 5.0) -> None:
    """SIGKILL what is left of `pids` and wait, bounded, until none of them or theirs lives.

    bwrap's outer process exits at once on TERM, while its namespace's init learns of it
    only through the parent-death signal; the namespace is empty once that init is gone.
    """
    deadline = time.monotonic() + wait
    while alive := reaper.tree(pids):
        for pid in alive:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        if time.monotonic() > deadline:
            return
        time.sleep(0.01)


def _remove_tree(root: Path) -> None:
    """Delete a job's folder, even where the agent took away the write permission."""
    if not root.exists():
        return
    for folder in [root, *(p for p in root.rglob("*") if p.is_dir() and not p.is_symlink())]:
        with contextlib.suppress(OSError):
            folder.chmod(stat.S_IRWXU)
    shutil.rmtree(root, ignore_errors=True)


def _bind_target(path: Path, guarded: Sequence[Path]) -> Path | None:
    """Where to mount `path`: its real place, or None when a symlink below the data dir or
    below another path this command sees leads there; such a link is a stage's doing (a
    test replaced the agent's cache or node_modules), and following it on the host would
    mount whatever it names (the data dir) over the masks."""
    absolute = path.absolute()
    resolved = absolute.resolve()
    if resolved == absolute:
        return resolved
    for part in (absolute, *absolute.parents):
        if part.is_symlink() and any(part != g and inside(part, [g]) for g in guarded):
            return None
    return resolved
