"""bot.sandbox with the real bubblewrap: what a command inside can see, reach and leave behind."""

from __future__ import annotations

import os
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.errors import SandboxUnavailable
from bot.sandbox import Sandbox, SandboxPolicy, sandbox_status
from bot.secrets import INHERITED
from bot.tools.shell import SHELL_DEFAULTS, run_bash
from tests.fakes.github import FakeGitHub
from tests.fakes.gitrepo import git

needs_bwrap = pytest.mark.skipif(
    not sandbox_status().ok, reason=f"bubblewrap not usable: {sandbox_status().reason}"
)


class Machine:
    """A data dir with two workspaces, an App key and a queue, like a worker's."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.data = tmp / "data"
        self.ws = self.data / "workspaces" / "octo__app-issue-1"
        self.other = self.data / "workspaces" / "acme__secret-issue-9"
        self.key = tmp / "keys" / "app.pem"
        self.queue = self.data / "agentbot.db"
        for repo in (self.ws, self.other):
            repo.mkdir(parents=True)
            git(repo, "init", "-q", "-b", "main")
            (repo / "app.py").write_text("x = 1\n")
            git(repo, "add", ".")
            git(repo, "commit", "-q", "-m", "init")
        (self.other / "private.txt").write_text("acme's private code\n")
        self.key.parent.mkdir()
        self.key.write_text("-----BEGIN RSA PRIVATE KEY-----\nMIIEfake\n")
        self.queue.write_text("SQLite format 3\0 deliveries of every installation")
        (self.data / "webhook-secret").write_text("whsec-data-dir-secret\n")

    def policy(self, **kw: object) -> SandboxPolicy:
        args: dict[str, object] = {
            "root": self.data / "sandbox",
            "hidden": (self.data, self.key, self.queue),
            "app": True,
            "host_home": Path.home(),
        }
        args.update(kw)
        return SandboxPolicy(**args)  # type: ignore[arg-type]


@pytest.fixture
def machine(tmp_path: Path) -> Machine:
    return Machine(tmp_path)


@pytest.fixture
def sandbox(machine: Machine) -> Iterator[Sandbox]:
    with machine.policy().open("none") as box:
        yield box


def sh(box: Sandbox, ws: Path, command: str, **kw: object) -> tuple[int, str]:
    env = {**{k: v for k, v in os.environ.items() if k in INHERITED}, **SHELL_DEFAULTS}
    run = run_bash(command, cwd=ws, env=env, timeout=60, cap=100_000, sandbox=box)
    return run.exit_code, run.output


@needs_bwrap
def test_nothing_of_the_data_dir_keys_queue_or_other_workspaces_is_visible(
    machine: Machine, sandbox: Sandbox
) -> None:
    for path in (
        machine.key,
        machine.queue,
        machine.data / "webhook-secret",
        machine.other / "private.txt",
        machine.other,
    ):
        code, out = sh(sandbox, machine.ws, f"cat {path} || ls {path}")
        assert code != 0 and "No such file or directory" in out, (path, out)
    code, out = sh(sandbox, machine.ws, f"ls -a {machine.data} {machine.data / 'workspaces'}")
    assert "acme" not in out and "agentbot.db" not in out and "webhook-secret" not in out
    code, out = sh(sandbox, machine.ws, "cat app.py && echo y > new.py && cat new.py")
    assert code == 0 and "x = 1" in out and (machine.ws / "new.py").read_text() == "y\n"


@needs_bwrap
def test_system_is_read_only_and_git_cannot_be_planted(machine: Machine, sandbox: Sandbox) -> None:
    for target in (
        "/usr/agentbot-plant",
        "/etc/agentbot-plant",
        ".git/hooks/pre-commit",
        ".git/config",
        ".git/info/attributes",
    ):
        code, out = sh(sandbox, machine.ws, f"echo x >> {target}")
        assert code != 0 and "Read-only file system" in out, (target, out)
    code, out = sh(sandbox, machine.ws, "git config core.fsmonitor /tmp/evil")
    assert code != 0
    code, out = sh(sandbox, machine.ws, "git replace HEAD HEAD 2>&1; git status --short")
    assert "core.fsmonitor" not in git(machine.ws, "config", "--list")
    assert not (machine.ws / ".git" / "refs" / "replace").exists() or not any(
        (machine.ws / ".git" / "refs" / "replace").iterdir()
    )
    code, out = sh(sandbox, machine.ws, "git log --oneline && git diff --stat")
    assert code == 0 and "init" in out


@needs_bwrap
def test_the_environment_is_the_allowlist_and_runner_files_are_absent(
    machine: Machine, sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    summary = machine.tmp / "runner" / "step_summary"
    summary.parent.mkdir()
    summary.write_text("")
    leaky = {
        "GITHUB_ENV": str(summary),
        "GITHUB_STEP_SUMMARY": str(summary),
        "GITHUB_TOKEN": "ghs_" + "x" * 36,
        "DOCKER_PASS": "dkr-pass-7f3a9c21e8",
        "PATH": os.environ["PATH"],
        "LANG": "C.UTF-8",
    }
    run = run_bash(
        f'env; echo oops >> "$GITHUB_ENV"; echo oops >> {summary}',
        cwd=machine.ws,
        env=leaky,
        timeout=60,
        cap=100_000,
        sandbox=sandbox,
    )
    names = {line.split("=", 1)[0] for line in run.output.splitlines() if "=" in line}
    assert names <= {"PATH", "LANG", "HOME", "TMPDIR", "PWD", "SHLVL", "_", "RUSTUP_HOME"}
    assert "dkr-pass" not in run.output and "ghs_" not in run.output
    assert summary.read_text() == ""
    assert "No such file or directory" in run.output


@needs_bwrap
def test_network_is_off_for_tools_and_on_for_setup(machine: Machine) -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        probe = (
            f"python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), 3);"
            " print('connected')\""
        )
        for network, setup, reaches in (
            ("none", True, False),
            ("setup", False, False),
            ("setup", True, True),
            ("all", False, True),
        ):
            with machine.policy().open(network) as box:  # type: ignore[arg-type]
                env = {"PATH": os.environ["PATH"]}
                proc = box.popen(
                    ["sh", "-c", probe],
                    cwd=machine.ws,
                    env=env,
                    writable=[machine.ws],
                    setup=setup,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                )
                out = proc.communicate(timeout=60)[0].decode()
            assert ("connected" in out) is reaches, (network, setup, out)


@needs_bwrap
def test_the_agents_bash_cannot_reach_github(machine: Machine, sandbox: Sandbox) -> None:
    with FakeGitHub() as gh:
        port = int(gh.url.rsplit(":", 1)[1].split("/")[0])
        command = (
            f"curl -sS --max-time 5 {gh.url}/repos/octo/app; echo curl=$?;"
            f" python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), 5)\""
        )
        code, out = sh(sandbox, machine.ws, command)
        assert gh.calls == []
    assert code != 0 and "curl=7" in out and "ConnectionRefusedError" in out


@needs_bwrap
def test_nothing_outlives_a_command_or_the_job(machine: Machine, sandbox: Sandbox) -> None:
    code, _ = sh(
        sandbox, machine.ws, "setsid sleep 600 & (nohup sleep 601 >/dev/null 2>&1 &); echo $$"
    )
    assert code == 0
    assert _gone("sleep 60[01]")
    # A command still running when the job ends is killed with the whole sandbox.
    started = threading.Event()

    def long_command() -> None:
        started.set()
        sh(sandbox, machine.ws, "setsid sleep 602 & sleep 603")

    thread = threading.Thread(target=long_command)
    thread.start()
    started.wait()
    deadline = time.monotonic() + 30
    while not _alive("sleep 603") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _alive("sleep 603")
    sandbox.close()
    thread.join(timeout=30)
    assert _gone("sleep 60[23]")
    assert not sandbox.dir.exists()
    with pytest.raises(SandboxUnavailable):
        sh(sandbox, machine.ws, "true")


@needs_bwrap
def test_home_and_tmp_are_the_jobs_own(machine: Machine) -> None:
    policy = machine.policy()
    with policy.open() as first, policy.open() as second:
        sh(first, machine.ws, "echo planted > ~/.gitconfig && echo t > /tmp/left")
        code, out = sh(first, machine.ws, "cat ~/.gitconfig /tmp/left")
        assert "planted" in out and "t" in out
        code, out = sh(second, machine.ws, "cat ~/.gitconfig /tmp/left")
        assert code != 0 and "planted" not in out
        assert not (Path.home() / ".gitconfig").read_text(errors="replace").count("planted")
        home = first.home
    assert not home.exists()


@needs_bwrap
def test_proc_shows_only_the_sandbox_and_no_privilege_is_left(
    machine: Machine, sandbox: Sandbox
) -> None:
    code, out = sh(sandbox, machine.ws, "ls /proc | grep -E '^[0-9]+$' | wc -l")
    assert int(out.split()[0]) < 10
    code, out = sh(sandbox, machine.ws, f"cat /proc/{os.getpid()}/environ")
    assert code != 0
    code, out = sh(sandbox, machine.ws, "grep CapEff /proc/self/status")
    assert out.split()[-1] == "0000000000000000"
    code, out = sh(sandbox, machine.ws, "mount -t tmpfs x /mnt || unshare -Ur true || echo denied")
    assert "denied" in out


@needs_bwrap
def test_symlinks_do_not_reach_outside(machine: Machine, sandbox: Sandbox) -> None:
    _, out = sh(
        sandbox,
        machine.ws,
        f"ln -s {machine.key} key.pem && ln -s {machine.other} other && cat key.pem; ls other/",
    )
    assert "MIIEfake" not in out and "private" not in out


@needs_bwrap
def test_a_data_dir_inside_the_checkout_is_hidden_but_its_venv_writable(tmp_path: Path) -> None:
    checkout = tmp_path / "checkout"
    data = checkout / ".agentbot"
    venv = data / "venvs" / "checkout-0123"
    (data / "sessions").mkdir(parents=True)
    (data / "sessions" / "transcript.jsonl").write_text("the job's transcript\n")
    checkout.joinpath("app.py").write_text("x = 1\n")
    policy = SandboxPolicy(root=data / "sandbox", hidden=(data,))
    with policy.open() as box:
        proc = box.popen(
            ["sh", "-c", f"ls -a .agentbot; cat .agentbot/sessions/*; touch {venv}/ok; cat app.py"],
            cwd=checkout,
            env={"PATH": os.environ["PATH"]},
            writable=[checkout, venv],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        out = proc.communicate(timeout=60)[0].decode()
    assert "transcript" not in out and "x = 1" in out
    assert (venv / "ok").exists()


def test_app_mode_refuses_a_job_without_bwrap(machine: Machine, tmp_path: Path) -> None:
    empty = tmp_path / "bin-without-bwrap"
    empty.mkdir()
    with pytest.raises(SandboxUnavailable) as err:
        machine.policy(path=str(empty)).open()
    assert "bwrap not found on PATH" in str(err.value)
    assert "AGENTBOT_SANDBOX=none" in str(err.value)
    # Action mode (not App) falls back, and says which sandbox it has.
    with machine.policy(path=str(empty), app=False).open() as box:
        assert box.kind == "none"
        assert box.status.line().startswith("sandbox: none (bwrap not found on PATH")
    with machine.policy(path=str(empty), mode="none").open() as box:
        assert box.kind == "none" and "unsafe" in box.status.reason


def test_without_bwrap_the_reaper_still_kills_what_a_command_left(
    machine: Machine, tmp_path: Path
) -> None:
    empty = tmp_path / "bin-without-bwrap"
    empty.mkdir()
    with machine.policy(path=str(empty), app=False).open() as box:
        code, out = sh(box, machine.ws, "setsid sleep 604 & echo home=$HOME")
        assert code == 0 and f"home={box.home}" in out
        assert not _alive("sleep 604")


def _gone(pattern: str) -> bool:
    """Whether no process matches, allowing the kernel its teardown of the pid namespace.

    bwrap reports the command's exit as soon as it happens; the namespace's other processes
    are killed by the kernel as its init exits, a moment later (not a timing assertion: the
    bound is only there so that a leak fails instead of hanging).
    """
    deadline = time.monotonic() + 10
    while _alive(pattern):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def _alive(pattern: str) -> bool:
    found = subprocess.run(["pgrep", "-f", pattern], capture_output=True, text=True)
    return bool(found.stdout.strip())


@needs_bwrap
def test_a_read_only_toolbox_reads_but_cannot_write_the_workspace(
    machine: Machine, sandbox: Sandbox
) -> None:
    from bot.tools import Toolbox

    box = Toolbox(machine.ws, sandbox=sandbox, read_only=True)
    seen = box.run("bash", {"command": "cat app.py && git log --oneline && ls /tmp"})
    assert not seen.is_error and "x = 1" in seen.content and "init" in seen.content
    wrote = box.run("bash", {"command": "echo y > app.py; echo z > new.txt; rm -f app.py"})
    assert "Read-only file system" in wrote.content
    assert (machine.ws / "app.py").read_text() == "x = 1\n"
    assert not (machine.ws / "new.txt").exists()
    assert box.run("bash", {"command": "echo scratch > /tmp/s && cat /tmp/s"}).content == "scratch"
    view = box.run("str_replace_based_edit_tool", {"command": "view", "path": "app.py"})
    assert "x = 1" in view.content
    edit = box.run(
        "str_replace_based_edit_tool",
        {"command": "create", "path": "new.txt", "file_text": "z"},
    )
    assert edit.is_error and "read-only" in edit.content
    assert not (machine.ws / "new.txt").exists()
    # The same toolbox, writable, does write: the test above can fail.
    assert (
        not Toolbox(machine.ws, sandbox=sandbox)
        .run("bash", {"command": "echo y > app.py"})
        .is_error
    )
    assert (machine.ws / "app.py").read_text() == "y\n"


@needs_bwrap
def test_a_version_managers_shims_work_without_its_root_variable(
    machine: Machine, sandbox: Sandbox
) -> None:
    # Like pyenv: the shim on PATH execs `<root>/libexec/…`, a folder PATH never names.
    root = machine.tmp / "manager"
    (root / "libexec").mkdir(parents=True)
    (root / "shims").mkdir()
    real = root / "libexec" / "manager"
    real.write_text('#!/bin/sh\necho ran "$@"\n')
    shim = root / "shims" / "tool"
    shim.write_text(f'#!/bin/sh\nexec "{real}" tool "$@"\n')
    for script in (real, shim):
        script.chmod(0o755)
    env = {"PATH": f"{root / 'shims'}:/usr/bin:/bin"}
    proc = sandbox.popen(
        ["tool", "x"], cwd=machine.ws, env=env, writable=[machine.ws], stdout=subprocess.PIPE
    )
    assert proc.communicate(timeout=60)[0].decode().strip() == "ran tool x"
