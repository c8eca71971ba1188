"""The Dockerfile, checked without a Docker engine (none on this machine): base image, git,
non-root USER, the CMD the CLI accepts, EXPOSE, and a HEALTHCHECK that works."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import typer
import uvicorn

from bot.cli import load_app
from bot.queue.sqlite import SqliteQueue
from webhooks.app import create_app

ROOT = Path(__file__).resolve().parents[1]


def instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with continuation lines joined and comments dropped."""
    text = (ROOT / "Dockerfile").read_text()
    joined = re.sub(r"\\\n\s*", " ", text)
    out = []
    for line in joined.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            out.append((word.upper(), rest.strip()))
    return out


def exec_form(args: str) -> list[str]:
    value = json.loads(args)
    assert isinstance(value, list) and all(isinstance(v, str) for v in value), args
    return value


def test_base_image_git_and_install() -> None:
    ins = instructions()
    assert ins[0] == ("FROM", "python:3.11-slim")
    runs = " ".join(a for k, a in ins if k == "RUN")
    assert "apt-get install" in runs and " git " in f"{runs} "
    assert re.search(r"pip install \"?\.(\[postgres\])?\"?", runs)


def test_runs_as_a_non_root_user() -> None:
    users = [a for k, a in instructions() if k == "USER"]
    assert users, "no USER instruction: the container would run as root"
    assert users[-1].split(":")[0] not in ("root", "0")
    runs = " ".join(a for k, a in instructions() if k == "RUN")
    assert "useradd" in runs and users[-1] in runs


def test_cmd_is_agentbot_serve_on_all_interfaces_and_the_cli_accepts_it() -> None:
    (cmd,) = [exec_form(a) for k, a in instructions() if k == "CMD"]
    assert cmd[:2] == ["agentbot", "serve"]
    assert cmd[cmd.index("--host") + 1] == "0.0.0.0"
    exposed = [a for k, a in instructions() if k == "EXPOSE"]
    assert exposed == [cmd[cmd.index("--port") + 1]] == ["8080"]
    command = typer.main.get_command(load_app())
    ctx = command.make_context("agentbot", cmd[1:], resilient_parsing=False)
    sub = ctx.command.get_command(ctx, cmd[1])  # type: ignore[attr-defined]
    assert sub is not None
    parsed = sub.make_context("serve", cmd[2:], parent=ctx)
    assert parsed.params["host"] == "0.0.0.0" and parsed.params["port"] == 8080


def test_dockerignore_keeps_the_build_context_small_but_complete() -> None:
    ignored = (ROOT / ".dockerignore").read_text().split()
    for heavy in (".git", ".venv", "tests"):
        assert heavy in ignored
    copied = " ".join(a for k, a in instructions() if k == "COPY")
    for needed in ("pyproject.toml", "README.md", "bot", "webhooks"):
        assert needed in copied and needed not in ignored


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def live(tmp_path: Path) -> Iterator[int]:
    queue = SqliteQueue(tmp_path / "q.db")
    port = _free_port()
    server = uvicorn.Server(
        uvicorn.Config(create_app(queue=queue, secret="s"), port=port, log_level="warning")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.02)
    yield port
    server.should_exit = True
    thread.join(10)
    queue.close()


def test_healthcheck_command_passes_against_a_live_server(live: int) -> None:
    (check,) = [a for k, a in instructions() if k == "HEALTHCHECK"]
    assert "/healthz" in check
    argv = exec_form(check[check.index("CMD") + 3 :].strip())
    argv = [a.replace("127.0.0.1:8080", f"127.0.0.1:{live}") for a in argv]
    assert argv[0] == "python"
    ok = subprocess.run(["python3", *argv[1:]], capture_output=True, timeout=30)
    assert ok.returncode == 0, ok.stderr
    down = [a.replace(f"127.0.0.1:{live}", f"127.0.0.1:{_free_port()}") for a in argv]
    assert subprocess.run(["python3", *down[1:]], capture_output=True).returncode != 0
