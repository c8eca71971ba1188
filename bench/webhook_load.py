"""Webhook load: `agentbot serve` against the floor (a bare FastAPI endpoint that only checks
the signature), same uvicorn settings, same clients, payload and machine, alternating. Run:

    .venv/bin/python -m bench.webhook_load [--duration 30] [--clients 16] [--workers 2] [--runs 3]
        [--baseline PATH]

`--baseline PATH` (a checkout of an earlier agentbot, e.g. `git worktree add /tmp/old HEAD~3`)
runs that version's serve in each run as well, before or after this one in turn, and prints
the median of serve/baseline: a change's effect measured side by side, which this host's
noise (the floor itself moves by a third between runs) hides when runs are compared.

Prints, per run and as medians over `--runs`, throughput, p50/p99 latency, errors, lost
deliveries (answered 2xx but not in the queue afterwards), the server's CPU per request
(serve's store process included), and the clients' CPU as a share of one core (near
100 %: the clients were the limit, not the server). Targets (issue #31): serve >= 0.8x
the floor's throughput, p99 <= 2x the floor's, 0 lost. Clients are raw asyncio HTTP/1.1
keep-alive connections in this process, apart from the servers.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SECRET = "bench-webhook-secret-0001"  # serve refuses one under 16 characters

FLOOR = r"""
import hashlib, hmac, sys
import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

secret = sys.argv[2].encode()
app = FastAPI()

@app.post("/webhook")
async def webhook(request: Request):
    body = await request.body()
    want = "sha256=" + hmac.new(secret, body, hashlib.sha256).hexdigest()
    got = request.headers.get("x-hub-signature-256", "")
    if not hmac.compare_digest(want.encode(), got.encode()):
        return JSONResponse({"error": "bad signature"}, status_code=401)
    delivery = request.headers.get("x-github-delivery")
    return JSONResponse({"job_id": delivery, "duplicate": False}, status_code=202)

@app.get("/healthz")
async def healthz():
    return {"status": "ok"}

uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_config=None, access_log=False,
            server_header=False)
"""


@dataclass
class Stats:
    """What one phase measured."""

    latencies: list[float] = field(default_factory=list)
    acked: list[str] = field(default_factory=list)
    errors: int = 0
    seconds: float = 0.0
    cpu_seconds: float = 0.0
    """CPU the server process used while measured (user + system)."""
    client_cpu_seconds: float = 0.0
    """CPU the load generator (this process) used while measured."""

    @property
    def client_busy(self) -> float:
        """Share of one core the clients used: near 1.0, they, not the server, were the limit."""
        return self.client_cpu_seconds / self.seconds if self.seconds else 0.0

    @property
    def cpu_ms_per_request(self) -> float:
        return self.cpu_seconds * 1000 / len(self.latencies) if self.latencies else 0.0

    @property
    def throughput(self) -> float:
        return len(self.acked) / self.seconds if self.seconds else 0.0

    def pct(self, q: float) -> float:
        if not self.latencies:
            return float("nan")
        data = sorted(self.latencies)
        return data[min(len(data) - 1, int(q * len(data)))] * 1000


def payload() -> bytes:
    """A realistic `issues.labeled` delivery (the vendored example when present)."""
    path = ROOT / "tests/data/webhooks/issues.json"
    if path.exists():
        for item in json.loads(path.read_text()):
            if item.get("action") == "labeled":
                return json.dumps(item["payload"]).encode()
    return json.dumps({"action": "labeled", "padding": "x" * 6000}).encode()


async def client(port: int, body: bytes, sig: str, until: float, stats: Stats) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    head = (
        "POST /webhook HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nX-GitHub-Event: issues\r\n"
        f"X-Hub-Signature-256: {sig}\r\nX-GitHub-Delivery: "
    )
    while time.perf_counter() < until:
        delivery = uuid.uuid4().hex
        started = time.perf_counter()
        try:
            writer.write(f"{head}{delivery}\r\n\r\n".encode() + body)
            await writer.drain()
            status = int((await reader.readline()).split()[1])
            length, close = 0, False
            while (line := await reader.readline()) not in (b"\r\n", b""):
                name, _, value = line.decode("latin-1").partition(":")
                if name.lower() == "content-length":
                    length = int(value)
                elif name.lower() == "connection" and "close" in value.lower():
                    close = True
            await reader.readexactly(length)
        except (OSError, asyncio.IncompleteReadError, IndexError, ValueError):
            stats.errors += 1
            writer.close()
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            continue
        stats.latencies.append(time.perf_counter() - started)
        if 200 <= status < 300:
            stats.acked.append(delivery)
        else:
            stats.errors += 1
        if close:
            writer.close()
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.close()


def cpu_seconds(pid: int | None) -> float:
    """User + system CPU time so far of a process and its children (serve's store
    process), from Linux /proc."""
    if pid is None:
        return 0.0
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    total = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        children = []
    return total + sum(cpu_seconds(int(child)) for child in children)


async def load(
    port: int, clients: int, seconds: float, warmup: float, pid: int | None = None
) -> Stats:
    body = payload()
    sig = "sha256=" + __import__("hmac").new(SECRET.encode(), body, "sha256").hexdigest()
    await asyncio.gather(
        *(client(port, body, sig, time.perf_counter() + warmup, Stats()) for _ in range(clients))
    )
    stats = Stats()
    cpu = cpu_seconds(pid)
    client_cpu = time.process_time()
    started = time.perf_counter()
    until = started + seconds
    await asyncio.gather(*(client(port, body, sig, until, stats) for _ in range(clients)))
    stats.seconds = time.perf_counter() - started
    stats.cpu_seconds = cpu_seconds(pid) - cpu
    stats.client_cpu_seconds = time.process_time() - client_cpu
    return stats


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_healthy(port: int, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"server exited with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                if s.recv(64).startswith(b"HTTP/1.1 200"):
                    return
        except OSError:
            pass
        time.sleep(0.1)
    raise SystemExit("server did not start")


def run_phase(argv: list[str], env: dict[str, str], port: int, args: argparse.Namespace) -> Stats:
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_healthy(port, proc)
        return asyncio.run(load(port, args.clients, args.duration, args.warmup, proc.pid))
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)


def lost(db: Path, acked: list[str]) -> int:
    """Deliveries answered 2xx that the queue does not hold."""
    conn = sqlite3.connect(db)
    found = 0
    for i in range(0, len(acked), 500):
        chunk = acked[i : i + 500]
        marks = ",".join("?" * len(chunk))
        query = f"SELECT count(*) FROM jobs WHERE delivery_id IN ({marks})"
        found += conn.execute(query, chunk).fetchone()[0]
    conn.close()
    return len(acked) - found


def phase(args: argparse.Namespace, root: Path | None) -> tuple[Stats, int]:
    """serve from the checkout `root` (None: the floor) on a fresh port and a fresh queue:
    (stats, lost)."""
    tmp = Path(tempfile.mkdtemp(prefix="agentbot-bench-"))
    db = tmp / "queue.db"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "AGENTBOT_"))}
    env.update(
        PYTHONPATH=str(root or ROOT),
        GITHUB_WEBHOOK_SECRET=SECRET,
        AGENTBOT_QUEUE=f"sqlite:///{db}",
        AGENTBOT_DATA_DIR=str(tmp / "data"),
    )
    try:
        port = free_port()
        if root is None:
            return run_phase([sys.executable, "-c", FLOOR, str(port), SECRET], env, port, args), 0
        serve_cmd = [sys.executable, "-c", "from bot.cli import main; main()", "serve"]
        serve_cmd += ["--port", str(port), "--workers", str(args.workers)]
        stats = run_phase(serve_cmd, env, port, args)
        return stats, lost(db, stats.acked)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    """Run both phases `--runs` times and print each run and the medians."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=30.0, help="seconds per phase")
    parser.add_argument("--warmup", type=float, default=2.0, help="seconds before measuring")
    parser.add_argument("--clients", type=int, default=16, help="concurrent connections")
    parser.add_argument("--workers", type=int, default=2, help="serve's embedded workers")
    parser.add_argument("--runs", type=int, default=3, help="floor+serve pairs (medians)")
    parser.add_argument("--baseline", type=Path, help="an earlier checkout's serve, side by side")
    args = parser.parse_args()
    if args.baseline is not None and not (args.baseline / "bot" / "cli").is_dir():
        parser.error(f"--baseline: {args.baseline} is not a checkout of agentbot")

    print(f"clients={args.clients} duration={args.duration:.0f}s workers={args.workers}")
    head = f"{'':12}{'req/s':>8}{'p50 ms':>8}{'p99 ms':>8}{'errors':>7}{'lost':>5}"
    print(f"{head}{'cpu ms/req':>11}{'client cpu':>11}{'ratio':>7}")
    ratios, p50s, p99s, p99_ratios, total_lost, versus = [], [], [], [], 0, []
    for run in range(1, args.runs + 1):
        floor, _ = phase(args, None)
        rows = [(f"floor #{run}", floor, "-", "")]
        order = [ROOT] if args.baseline is None else [ROOT, args.baseline]
        if run % 2 == 0:
            order.reverse()  # each goes first in every other run
        phases = {root: phase(args, root) for root in order}
        for root, (stats, missing) in phases.items():
            ratio = stats.throughput / floor.throughput if floor.throughput else 0.0
            total_lost += missing
            name = "serve" if root == ROOT else "baseline"
            rows.append((f"{name} #{run}", stats, str(missing), f"{ratio:.2f}"))
        serve, _ = phases[ROOT]
        ratios.append(serve.throughput / floor.throughput if floor.throughput else 0.0)
        p50s.append(serve.pct(0.5))
        p99s.append(serve.pct(0.99))
        p99_ratios.append(serve.pct(0.99) / floor.pct(0.99))
        if args.baseline is not None:
            versus.append(serve.throughput / (phases[args.baseline][0].throughput or 1.0))
        for name, s, gone, r in rows:
            line = f"{name:12}{s.throughput:>8.0f}{s.pct(0.5):>8.1f}{s.pct(0.99):>8.1f}"
            line += f"{s.errors:>7}{gone:>5}{s.cpu_ms_per_request:>11.2f}"
            print(f"{line}{s.client_busy:>10.0%}{r:>8}", flush=True)
    med = statistics.median
    if versus:
        print(f"median serve/baseline throughput: {med(versus):.3f}x")
    print(f"median serve/floor throughput: {med(ratios):.2f}x (target >= 0.80)")
    print(f"median serve/floor p99: {med(p99_ratios):.2f}x (target <= 2.0)")
    print(f"median serve p50 {med(p50s):.1f} ms, p99 {med(p99s):.1f} ms")
    print(f"lost: {total_lost} (target 0)")


if __name__ == "__main__":
    main()
