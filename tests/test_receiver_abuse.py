"""`agentbot serve` under abuse, as a real subprocess: idle and slow clients, big bad bodies.

No timed assertions: each test asserts an outcome (served, closed, bounded memory), with
timeouts only as generous bounds that a broken server would hit and a working one never.
"""

from __future__ import annotations

import os
import resource
import socket
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import httpx
import pytest

from bot.queue.sqlite import SqliteQueue
from tests.test_serve import CLI, SECRET, _free_port, _wait_healthy
from webhooks.app import signature

pytestmark = pytest.mark.slow

BODY = b'{"action": "opened", "repository": {"full_name": "octo/app"}}'


@contextmanager
def serve(tmp_path: Path, *args: str, nofile: int | None = None) -> Iterator[tuple[int, int, Path]]:
    """`agentbot serve --workers 0` on a free port: (port, pid, its log file)."""
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "AGENTBOT_"))}
    env.update(
        GITHUB_WEBHOOK_SECRET=SECRET,
        AGENTBOT_QUEUE=f"sqlite:///{tmp_path / 'queue.db'}",
        AGENTBOT_DATA_DIR=str(tmp_path / "data"),
    )

    def limit_descriptors() -> None:
        if nofile is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))

    log = tmp_path / "serve.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [*CLI, "serve", "--port", str(port), "--workers", "0", *args],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            preexec_fn=limit_descriptors,
        )
        try:
            _wait_healthy(port, proc)
            yield port, proc.pid, log
            assert proc.poll() is None, "serve died"
        finally:
            proc.terminate()
            proc.wait(30)


def post_signed(port: int, timeout: float) -> tuple[int, str]:
    delivery = str(uuid.uuid4())
    headers = {
        "X-GitHub-Event": "issues",
        "X-GitHub-Delivery": delivery,
        "X-Hub-Signature-256": signature(SECRET, BODY),
        "Content-Type": "application/json",
    }
    url = f"http://127.0.0.1:{port}/webhook"
    return httpx.post(url, content=BODY, headers=headers, timeout=timeout).status_code, delivery


class Dribblers:
    """Idle connections, and slow clients sending headers or a body one byte a second."""

    def __init__(self, port: int, idle: int, slow_headers: int, slow_bodies: int) -> None:
        self.stop = threading.Event()
        self.idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(idle)]
        self.slow: list[tuple[socket.socket, bytes]] = []
        head = b"POST /webhook HTTP/1.1\r\nHost: x\r\nX-Hub-Signature-256: sha256=00\r\n"
        for _ in range(slow_headers):
            self.slow.append((socket.create_connection(("127.0.0.1", port)), head * 100))
        for _ in range(slow_bodies):
            s = socket.create_connection(("127.0.0.1", port))
            s.sendall(head + b"Content-Length: 100000\r\n\r\n")
            self.slow.append((s, b"x" * 100_000))
        self.thread = threading.Thread(target=self._drip, daemon=True)
        self.thread.start()

    def _drip(self) -> None:
        at = 0
        while not self.stop.wait(1.0):
            for s, data in self.slow:
                with suppress(OSError):
                    s.send(data[at : at + 1])
            at += 1

    def all(self) -> list[socket.socket]:
        return self.idle + [s for s, _ in self.slow]

    def close(self) -> None:
        self.stop.set()
        self.thread.join()
        for s in self.all():
            s.close()


def closed_by_server(s: socket.socket, within: float) -> bool:
    """Whether the server closes `s` (EOF or reset) before `within` seconds pass."""
    s.settimeout(within)
    try:
        while s.recv(4096):
            pass  # a 408/400 before the close is fine
    except TimeoutError:
        return False
    except OSError:
        return True
    return True


def test_a_signed_delivery_gets_in_past_300_idle_and_slow_clients(tmp_path: Path) -> None:
    # Under a 256-descriptor limit, with timeouts far longer than the test: the delivery
    # can only be served by the connection cap making room, not by the idle ones expiring.
    args = ("--header-timeout", "120", "--body-timeout", "120")
    with serve(tmp_path, *args, nofile=256) as (port, _pid, log):
        crowd = Dribblers(port, idle=300, slow_headers=20, slow_bodies=10)
        try:
            status, delivery = post_signed(port, timeout=60)
            assert status == 202
            # Durable in the store process's spool at the 202, in the queue a moment later.
            queue = SqliteQueue(str(tmp_path / "queue.db"))
            deadline = time.monotonic() + 30
            while queue.get(delivery) is None and time.monotonic() < deadline:
                time.sleep(0.05)
            assert queue.get(delivery) is not None
            assert post_signed(port, timeout=60)[0] == 202
        finally:
            crowd.close()
        lines = log.read_text(errors="replace").splitlines()
        assert len(lines) < 100, "\n".join(lines[-20:])


def test_idle_and_slow_clients_are_closed_after_the_timeouts(tmp_path: Path) -> None:
    with serve(tmp_path, "--header-timeout", "1", "--body-timeout", "2") as (port, _pid, _log):
        crowd = Dribblers(port, idle=30, slow_headers=5, slow_bodies=5)
        try:
            # Each is closed after its timeout; 60 s is a bound for a loaded machine.
            assert all(closed_by_server(s, within=60) for s in crowd.all())
            assert post_signed(port, timeout=60)[0] == 202
        finally:
            crowd.close()


def _status_kb(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise AssertionError(f"no {field} for {pid}")


def _bad_big_post(port: int, size: int, statuses: list[int]) -> None:
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.sendall(
            b"POST /webhook HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"X-GitHub-Event: issues\r\nX-GitHub-Delivery: "
            + str(uuid.uuid4()).encode()
            + b"\r\nX-Hub-Signature-256: sha256="
            + b"0" * 64
            + b"\r\nContent-Length: "
            + str(size).encode()
            + b"\r\n\r\n"
        )
        chunk = b"x" * (1024 * 1024)
        with suppress(OSError):  # a 503 may close the connection before the body is sent
            for _ in range(size // len(chunk)):
                s.sendall(chunk)
        s.settimeout(120)
        try:
            reply = s.recv(64)
        except OSError:
            reply = b""
        statuses.append(int(reply.split()[1]) if reply else 0)


@pytest.mark.skipif(not Path("/proc/self/clear_refs").exists(), reason="needs Linux /proc")
def test_12_badly_signed_24_mb_bodies_keep_memory_bounded(tmp_path: Path) -> None:
    # A long body timeout: on a loaded machine the bodies waiting their turn are not cut off,
    # so every one is read (and refused) and the peak is the one of reading them all.
    with serve(tmp_path, "--body-timeout", "120") as (port, pid, log):
        assert post_signed(port, timeout=60)[0] == 202  # warm: everything a request needs
        Path(f"/proc/{pid}/clear_refs").write_text("5")  # resets the peak (VmHWM)
        before = _status_kb(pid, "VmRSS")
        statuses: list[int] = []
        threads = [
            threading.Thread(target=_bad_big_post, args=(port, 24 * 1024 * 1024, statuses))
            for _ in range(12)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        peak = _status_kb(pid, "VmHWM")
        assert statuses == [401] * 12, (statuses, log.read_text(errors="replace")[-2000:])
        growth_mb = (peak - before) / 1024
        assert growth_mb < 150, f"RSS grew by {growth_mb:.0f} MB"
        assert post_signed(port, timeout=60)[0] == 202


def test_serve_defaults_are_the_receivers_defaults() -> None:
    import inspect

    from bot.cli.serve import serve as serve_command
    from webhooks.server import GuardedH11Protocol, ServerLimits, guarded_protocol

    defaults = {
        name: p.default.default for name, p in inspect.signature(serve_command).parameters.items()
    }
    limits = ServerLimits()
    assert defaults["header_timeout"] == limits.header_timeout == 5.0
    assert defaults["body_timeout"] == limits.body_timeout == 10.0
    assert defaults["max_connections"] == limits.max_connections
    assert defaults["max_large_bodies"] == limits.max_large_bodies == 2
    protocol = guarded_protocol(limits)
    assert issubclass(protocol, GuardedH11Protocol) and protocol.limits == limits
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    assert 16 <= protocol.cap <= min(limits.max_connections, soft)


def test_bodies_trickled_on_every_connection_do_not_keep_a_delivery_out(tmp_path: Path) -> None:
    """Every connection busy with a body sent a byte a second: the slowest makes room."""
    args = ("--max-connections", "16", "--body-timeout", "120")
    with serve(tmp_path, *args) as (port, _pid, log):
        crowd = Dribblers(port, idle=0, slow_headers=0, slow_bodies=24)
        try:
            time.sleep(2.5)  # every body has been arriving longer than SLOW_BODY
            assert post_signed(port, timeout=60)[0] == 202
        finally:
            crowd.close()
        assert "closed the slowest body" in log.read_text(errors="replace")
