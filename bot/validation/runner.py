"""Run one stage command: a shell in its own process group, a timeout, the whole group killed."""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path

from bot.clock import Clock, SystemClock
from bot.models import CommandResult
from bot.sandbox import Sandbox

KILL_GRACE_SECONDS = 2.0
OUTPUT_LIMIT = 200_000
"""Characters of output kept in a report (head and tail); parsers see all of it."""

# Shell words that are not a program we could look up on PATH.
_SHELL_WORDS = frozenset(
    """! [ [[ { ( . : cd test true false exit export set unset if for while case eval exec
    command env time nice timeout echo printf""".split()  # noqa: SIM905 (a word list)
)
_NOT_FOUND = (
    re.compile(r"(?:^|: )(?:line \d+: )?([\w.+-]+): (?:command )?not found$", re.MULTILINE),
    re.compile(r"no such command: `?([\w-]+)`?"),  # cargo clippy / cargo fmt not installed
    re.compile(r"'(cargo-[\w-]+|rustfmt|clippy-driver)' is not installed"),
    re.compile(r"bundler: command not found: ([\w.+-]+)"),
    re.compile(r"python[\d.]*: No module named ([\w.]+)$", re.MULTILINE),  # `python -m pytest`
)


def first_program(command: str) -> str | None:
    """The program a shell command starts with (after `VAR=value` words), if plain enough."""
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    for word in words:
        if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", word):
            continue
        if word in _SHELL_WORDS or any(c in word for c in "$`(){}|;&<>*?"):
            return None
        return word
    return None


def missing_program(command: str, *, cwd: Path, env: Mapping[str, str]) -> str | None:
    """The command's first program if it is not on the stage's PATH (or not a file), else None."""
    program = first_program(command)
    if program is None:
        return None
    if "/" in program:
        path = Path(program) if Path(program).is_absolute() else cwd / program
        return None if os.access(path, os.X_OK) else program
    return None if shutil.which(program, path=env.get("PATH", "")) else program


def missing_in_output(result: CommandResult) -> str | None:
    """The tool a finished command says it could not find (exit 127, cargo subcommands…)."""
    if result.success or result.timed_out:
        return None
    tail = result.output[-4000:]
    for pattern in _NOT_FOUND[1:]:
        if m := pattern.search(tail):
            return m.group(1)
    if result.exit_code == 127 and (m := _NOT_FOUND[0].search(tail)):
        return m.group(1)
    return None


def clip(text: str, limit: int = OUTPUT_LIMIT) -> str:
    """Keep the head and (mostly) the tail of a long output, saying what was cut."""
    if len(text) <= limit:
        return text
    head, tail = limit // 5, limit - limit // 5
    cut = len(text) - head - tail
    return f"{text[:head]}\n[... {cut} characters cut ...]\n{text[-tail:]}"


_NOT_THE_PROJECT = frozenset({".git", ".venv", "venv", "node_modules", ".tox", ".nox"})


def drop_bytecode(cwd: Path, env: Mapping[str, str]) -> None:
    """Forget the bytecode cached for the files under `cwd`: its `__pycache__` folders (and
    their mirror under PYTHONPYCACHEPREFIX, for a caller that still sets it).

    A .pyc is trusted while its source's mtime (whole seconds) and size match: a same-size
    change within the second (`'` to `"` by a formatter, a fix round, a workspace reused by
    the next job) would run the old text. Stages run without a bytecode prefix, as the
    repository's CI does (tests may check where .pyc files land, #25), so the cache sits in
    the tree and is deleted here. Installed packages elsewhere stay cached.
    """
    prefix = env.get("PYTHONPYCACHEPREFIX")
    if prefix:
        shutil.rmtree(Path(prefix, *cwd.resolve().parts[1:]), ignore_errors=True)
    for folder in cwd.rglob("__pycache__"):
        if not _NOT_THE_PROJECT.intersection(folder.relative_to(cwd).parts):
            shutil.rmtree(folder, ignore_errors=True)


def run_command(
    command: str,
    cwd: Path,
    *,
    env: Mapping[str, str],
    timeout: float,
    clock: Clock | None = None,
    grace: float = KILL_GRACE_SECONDS,
    sandbox: Sandbox | None = None,
    writable: Sequence[Path] = (),
    readable: Sequence[Path] = (),
    setup: bool = False,
) -> CommandResult:
    """Run `command` with `sh -c` in `cwd`; on timeout kill its process group (TERM, then KILL).

    stdout and stderr go, interleaved, to one temporary file rather than pipes, so a
    background child that outlives the shell cannot block us by holding a pipe open.
    Whatever the command left running in its group is killed when it ends, too.
    With the job's `sandbox` it runs there, seeing `writable` (`cwd` by default) and
    `readable`; `setup` gives it the setup stage's network (`sandbox.network`).
    """
    clock = clock or SystemClock()
    drop_bytecode(cwd, env)
    argv = ["/bin/sh", "-c", command]
    start = clock.monotonic()
    with tempfile.TemporaryFile() as out:
        if sandbox is not None:
            proc = sandbox.popen(
                argv,
                cwd=cwd,
                env=env,
                writable=writable or [cwd],
                readable=readable,
                setup=setup,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        else:
            proc = subprocess.Popen(
                argv,
                cwd=cwd,
                env=dict(env),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group: one signal reaches every child
            )
        exited, fired = threading.Event(), threading.Event()

        def on_timeout() -> None:
            fired.set()
            _kill_group(proc.pid, signal.SIGTERM)
            if not exited.wait(grace):
                _kill_group(proc.pid, signal.SIGKILL)

        # A timer thread rather than wait(timeout=): that polls, noticing the end of every
        # stage up to 50 ms late; a blocking wait sees it at once.
        timer = threading.Timer(timeout, on_timeout)
        timer.daemon = True
        timer.start()
        try:
            proc.wait()
        finally:
            exited.set()
            timer.cancel()
            timer.join()  # no signal may come after the group id could be reused
            _kill_group(proc.pid, signal.SIGKILL)  # children left behind (daemons, `&` jobs)
        timed_out = fired.is_set()
        drop_bytecode(cwd, env)  # and leave none behind in the checkout
        out.seek(0)
        output = out.read().decode("utf-8", errors="replace")
    if timed_out:
        output += f"\n[agentbot: timed out after {timeout:g}s; process group killed]\n"
    code = proc.returncode
    return CommandResult(
        command=argv,
        exit_code=code,
        output=output,
        success=code == 0 and not timed_out,
        duration_seconds=round(clock.monotonic() - start, 3),
        timed_out=timed_out,
    )


def _kill_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)
