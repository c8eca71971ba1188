"""The stage runner: real subprocesses, timeouts that kill the whole process group."""

from __future__ import annotations

import os
import time
from pathlib import Path

from bot.clock import FakeClock
from bot.models import CommandResult
from bot.validation.runner import (
    clip,
    first_program,
    missing_in_output,
    missing_program,
    run_command,
)

ENV = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/tmp")}


def alive(pid: int) -> bool:
    """True if the process runs (a zombie waiting for its reaper counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


def wait_gone(pid: int, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not alive(pid)


def test_output_is_stdout_and_stderr_interleaved_and_the_exit_code_kept(tmp_path: Path) -> None:
    result = run_command("echo out; echo err >&2; exit 3", tmp_path, env=ENV, timeout=10)
    assert result.output == "out\nerr\n"
    assert (result.exit_code, result.success, result.timed_out) == (3, False, False)
    assert result.command == ["/bin/sh", "-c", "echo out; echo err >&2; exit 3"]
    ok = run_command("pwd", tmp_path, env=ENV, timeout=10)
    assert ok.success and ok.output.strip() == str(tmp_path)


def test_the_environment_is_exactly_the_one_given(tmp_path: Path) -> None:
    result = run_command("env", tmp_path, env={**ENV, "ONLY_THIS": "1"}, timeout=10)
    names = {line.split("=", 1)[0] for line in result.output.splitlines()}
    assert "ONLY_THIS" in names
    assert names <= set(ENV) | {"ONLY_THIS", "PWD", "SHLVL", "_", "OLDPWD"}


def test_stdin_is_closed_so_a_prompt_does_not_hang(tmp_path: Path) -> None:
    result = run_command("read answer; echo got:$answer", tmp_path, env=ENV, timeout=5)
    assert not result.timed_out and "got:" in result.output


def test_timeout_kills_the_process_group_children_included(tmp_path: Path) -> None:
    started = time.monotonic()
    result = run_command("sleep 100 & echo $! > child.pid; sleep 100", tmp_path, env=ENV, timeout=1)
    assert time.monotonic() - started < 8
    assert result.timed_out and not result.success
    assert "timed out after 1s" in result.output
    assert wait_gone(int((tmp_path / "child.pid").read_text()))


def test_a_child_ignoring_sigterm_is_killed_after_the_grace(tmp_path: Path) -> None:
    cmd = "sh -c 'trap \"\" TERM; echo $$ > child.pid; while :; do sleep 0.1; done'"
    result = run_command(cmd, tmp_path, env=ENV, timeout=1, grace=0.5)
    assert result.timed_out
    assert wait_gone(int((tmp_path / "child.pid").read_text()))


def test_a_background_child_left_running_is_killed_when_the_command_ends(tmp_path: Path) -> None:
    # The shell exits at once; its child holds stdout open. We neither hang nor leak it.
    started = time.monotonic()
    result = run_command("sleep 100 & echo $! > child.pid", tmp_path, env=ENV, timeout=30)
    assert time.monotonic() - started < 5
    assert result.success
    assert wait_gone(int((tmp_path / "child.pid").read_text()))


def test_duration_comes_from_the_clock(tmp_path: Path) -> None:
    result = run_command("true", tmp_path, env=ENV, timeout=5, clock=FakeClock())
    assert result.duration_seconds == 0.0


def test_first_program_and_missing_program(tmp_path: Path) -> None:
    assert first_program("ruff check .") == "ruff"
    assert first_program("FOO=1 BAR=2 pytest -q") == "pytest"
    assert first_program("cd sub && make") is None
    assert first_program("$HOME/bin/tool") is None
    assert first_program("unbalanced 'quote") == "unbalanced"
    path = {"PATH": "/usr/bin:/bin"}
    assert missing_program("sh -c true", cwd=tmp_path, env=path) is None
    assert missing_program("no-such-tool-xyz --x", cwd=tmp_path, env=path) == "no-such-tool-xyz"
    assert missing_program("./run.sh", cwd=tmp_path, env=path) == "./run.sh"
    (tmp_path / "run.sh").write_text("#!/bin/sh\n")
    (tmp_path / "run.sh").chmod(0o755)
    assert missing_program("./run.sh", cwd=tmp_path, env=path) is None


def _failed(output: str, code: int = 1) -> CommandResult:
    return CommandResult(
        command=["sh"], exit_code=code, output=output, success=False, duration_seconds=0
    )


def test_missing_in_output_recognises_what_shells_and_cargo_say() -> None:
    assert missing_in_output(_failed("sh: 1: jest: not found\n", 127)) == "jest"
    assert missing_in_output(_failed("bash: line 1: tsc: command not found\n", 127)) == "tsc"
    assert missing_in_output(_failed("error: no such command: `clippy`\n", 101)) == "clippy"
    assert missing_in_output(_failed("bundler: command not found: rspec\n", 127)) == "rspec"
    # A test that fails saying "not found" is a failing test, not a missing tool.
    assert missing_in_output(_failed("AssertionError: user: not found\n", 1)) is None


def test_clip_keeps_head_and_tail() -> None:
    text = "".join(f"{i:05d}\n" for i in range(10_000))
    clipped = clip(text, 6_000)
    assert len(clipped) < 6_100 and "characters cut" in clipped
    assert clipped.startswith("00000\n") and clipped.endswith("09999\n")
    assert clip("short", 10) == "short"
