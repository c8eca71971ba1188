"""`agentbot serve` and `agentbot worker`: the GitHub App side of the CLI.

The commands only parse options; `run_server` and `run_workers` do the work with a handler
map (production: `bot.workflows.handlers.HANDLERS`), the seam tests use for their own.
"""

# Over 300 lines: the App's process life (receiver, workers, signals, shutdown) kept in one place.

from __future__ import annotations

import contextlib
import gc
import logging
import os
import signal
import socket
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from bot.cli._app_secrets import check_secret_files, file_mode, jobs_password, webhook_secret
from bot.cli.app import app
from bot.cli.options import MAX_THREADS, finite_float
from bot.config import Settings, load_settings
from bot.db_url import safe_url
from bot.deadline import job_timeout
from bot.errors import ConfigError
from bot.logs import setup_logging

# Imported where used: every CLI command loads this module, and the worker stack
# (githubkit, FastAPI, procrastinate) is slow to import.
if TYPE_CHECKING:
    from bot.models import JobKind
    from bot.ports import Handler
    from bot.queue import JobQueue
    from bot.worker import Metrics, WorkerDeps, WorkerPool
    from bot.worker.intake import Intake
    from webhooks.server import ServerLimits

Handlers = Mapping["JobKind", "Handler"]


def _secrets(settings: Settings, webhook: str) -> list[str]:
    """Every secret this process holds, registered (bot.secrets) before logging starts."""
    from bot.secrets import register_environment

    register_environment(os.environ)  # every value we were started with, whatever its name
    found = [webhook]
    with contextlib.suppress(ConfigError):  # an unreadable key is reported where it is used
        found.append(settings.app_private_key() or "")
    for value in (
        settings.github_token,
        settings.github_app_private_key,
        settings.anthropic_api_key,
        settings.llm_api_key,
    ):
        if value is not None:
            found.append(value.get_secret_value())
    return found


def _start(
    settings: Settings,
    handlers: Handlers | None,
    workers: int,
    lease: float,
    poll: float,
    intake: Intake | None = None,
    queue: JobQueue | None = None,
) -> tuple[JobQueue, Metrics, WorkerPool, WorkerDeps]:
    from bot.queue import open_queue
    from bot.wiring import missing_credentials, worker_deps
    from bot.worker import Metrics, WorkerPool, process_delivery

    if handlers is None:
        from bot.workflows.handlers import HANDLERS

        handlers = HANDLERS

    queue = queue or open_queue(settings.queue)
    metrics = Metrics(queue)
    deps = worker_deps(settings, queue, handlers)
    missing = missing_credentials(settings)
    if missing is not None and workers:
        logging.getLogger("agentbot.worker").warning(
            "%s: every job will fail, with one comment on its issue, until it is set", missing
        )
    if deps.sandbox is not None and workers:
        status = deps.sandbox.status()
        log = logging.getLogger("agentbot.worker")
        if status.ok:
            log.info("%s", status.line())
        else:
            log.warning(
                "%s: local jobs will be refused; AGENTBOT_SANDBOX=none runs them"
                " unsandboxed (unsafe)",
                status.line(),
            )
    pool = WorkerPool(
        queue,
        lambda job: process_delivery(job, deps),
        size=workers,
        lease_seconds=lease,
        poll_seconds=poll,
        metrics=metrics,
        intake=intake,
    )
    return queue, metrics, pool, deps


def _mode(path: Path) -> str:
    """`mode 0600`, and one warning line when others can read the secret in `path`."""
    mode = file_mode(path)
    if mode & 0o044:  # a warning only: Kubernetes mounts secrets 0644 unless told otherwise
        typer.echo(
            f"warning: {path} has mode {mode:04o}: others can read it; run `chmod 600 {path}`",
            err=True,
        )
    return f"mode {mode:04o}"


def _check_listen(host: str, port: int) -> None:
    """Exit with one line when `host:port` cannot be listened on (before any worker starts)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        family, kind, proto, _, address = infos[0]
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind(address)
    except OSError as exc:
        why = exc.strerror or str(exc)
        typer.echo(f"error: cannot listen on {host}:{port}: {why} (--host, --port)", err=True)
        raise typer.Exit(2) from None


LEASE_SECONDS = finite_float(
    300.0,
    low=0.1,
    high=86400,
    unit="seconds",
    help="Seconds a claimed job stays held without a heartbeat (renewed every third).",
)
POLL_SECONDS = finite_float(
    1.0, low=0.01, high=3600, unit="seconds", help="Idle workers poll this often."
)


@app.command()
def serve(
    host: str = typer.Option("127.0.0.1", help="Interface to listen on."),
    port: int = typer.Option(8080, min=1, max=65535, help="Port to listen on."),
    workers: int = typer.Option(
        2, min=0, max=MAX_THREADS, help="Embedded worker threads (0: receive only)."
    ),
    lease_seconds: float = LEASE_SECONDS,
    poll_seconds: float = POLL_SECONDS,
    header_timeout: float = finite_float(
        5.0,
        low=0.1,
        high=3600,
        unit="seconds",
        envvar="AGENTBOT_HEADER_TIMEOUT",
        help="Seconds to send request headers.",
    ),
    body_timeout: float = finite_float(
        10.0,
        low=0.1,
        high=3600,
        unit="seconds",
        envvar="AGENTBOT_BODY_TIMEOUT",
        help="Seconds to send a request body.",
    ),
    max_connections: int = typer.Option(
        1000, min=1, envvar="AGENTBOT_MAX_CONNECTIONS", help="Open connections at most."
    ),
    max_large_bodies: int = typer.Option(
        2, min=1, envvar="AGENTBOT_MAX_LARGE_BODIES", help="Bodies over 1 MB read at once."
    ),
) -> None:
    """Receive GitHub App webhooks (POST /webhook) and run their jobs on the queue."""
    from webhooks.server import ServerLimits

    job_timeout()  # a bad value stops the App here, not each of its jobs
    _check_listen(host, port)
    run_server(
        host=host,
        port=port,
        workers=workers,
        lease_seconds=lease_seconds,
        poll_seconds=poll_seconds,
        limits=ServerLimits(
            header_timeout=header_timeout,
            body_timeout=body_timeout,
            max_connections=max_connections,
            max_large_bodies=max_large_bodies,
        ),
    )


def run_server(
    *,
    host: str,
    port: int,
    workers: int,
    lease_seconds: float,
    poll_seconds: float,
    handlers: Handlers | None = None,
    limits: ServerLimits | None = None,
) -> None:
    """The receiver and `workers` embedded workers running `handlers`, until stopped."""
    import uvicorn

    from bot.queue import open_queue
    from bot.wiring import app_auth
    from bot.worker.intake import Intake
    from webhooks.app import create_app
    from webhooks.server import ServerLimits, guarded_protocol, quiet_repeats
    from webhooks.store_process import StoreProcess

    limits = limits or ServerLimits()
    settings = load_settings()
    # Every setting and secret file is checked before anything is made: a refused start
    # leaves no queue or secret behind.
    check_secret_files(settings)
    app_auth(settings)
    settings.check_queue_folder()
    queue = open_queue(settings.queue)  # a bad AGENTBOT_QUEUE stops serve before any file
    secret, path, created = webhook_secret(settings)
    password, password_path, _ = jobs_password(settings)
    setup_logging(json_lines=True, secrets=[*_secrets(settings, secret), password])
    log = logging.getLogger("agentbot.serve")
    if path is not None:
        what = "created a new" if created else "using the"
        typer.echo(
            f"{what} webhook secret in {path} ({_mode(path)}): give that value to the App's"
            " webhook settings, or set GITHUB_WEBHOOK_SECRET",
            err=True,
        )
    # The embedded workers give way to the receiver while deliveries arrive, and wake as
    # soon as one is stored (bot.worker.intake.Intake).
    intake = Intake()
    queue, metrics, pool, deps = _start(
        settings, handlers, workers, lease_seconds, poll_seconds, intake, queue
    )
    if pool.workers and deps.github_for is None:
        log.warning("no GitHub credentials configured: deliveries are stored, jobs will fail")
    if password_path is not None:
        typer.echo(
            f"jobs page: any user name, the password in {password_path} ({_mode(password_path)}),"
            " or set AGENTBOT_JOBS_PASSWORD",
            err=True,
        )
    # Deliveries are committed by a process of their own, off the receiver's GIL.
    store = StoreProcess(settings.queue)
    store.start()
    web = create_app(
        queue=queue,
        secret=secret,
        jobs_password=password,
        metrics=metrics,
        settings=settings,
        intake=intake,
        limits=limits,
        store=store,
    )
    log.info(
        "serving on http://%s:%d with %d workers, queue %s",
        host,
        port,
        workers,
        safe_url(settings.queue),
    )
    pool.start()
    # Everything imported so far lives as long as the process: keep it out of the cyclic
    # GC's full collections, which otherwise pause the receiver (p99) under load.
    gc.collect()
    gc.freeze()
    quiet_repeats()
    # uvicorn shuts down on SIGTERM (systemd, Docker, Kubernetes), then raises it again under
    # the handler it found: the default one would end the process before the shutdown below
    # (running jobs handed over, the store process stopped) and exit 143. Under this one the
    # shutdown runs and serve exits 0, as on a clean stop.
    signal.signal(signal.SIGTERM, lambda *_: None)
    try:
        uvicorn.run(
            web,
            host=host,
            port=port,
            http=guarded_protocol(limits),
            timeout_keep_alive=int(max(1, limits.header_timeout)),
            log_config=None,
            access_log=False,
            server_header=False,
        )
    finally:
        # A job still running after the wait has its lease released: taken over at once.
        pool.stop(timeout=10)
        store.stop()
        queue.close()


@app.command()
def worker(
    concurrency: int = typer.Option(
        2, min=1, max=MAX_THREADS, help="Worker threads in this process."
    ),
    lease_seconds: float = LEASE_SECONDS,
    poll_seconds: float = POLL_SECONDS,
) -> None:
    """Run workers only, on the configured queue (scale out: many on one PostgreSQL queue)."""
    job_timeout()  # a bad value stops the workers here, not each of their jobs
    run_workers(concurrency=concurrency, lease_seconds=lease_seconds, poll_seconds=poll_seconds)


def run_workers(
    *, concurrency: int, lease_seconds: float, poll_seconds: float, handlers: Handlers | None = None
) -> None:
    """`concurrency` workers running `handlers` on the configured queue, until SIGINT/SIGTERM."""
    from bot.wiring import app_auth

    settings = load_settings()
    app_auth(settings)  # a bad App key is named before the queue is made, as in serve
    settings.check_queue_folder()
    setup_logging(json_lines=True, secrets=_secrets(settings, ""))
    log = logging.getLogger("agentbot.worker")
    queue, _metrics, pool, deps = _start(
        settings, handlers, concurrency, lease_seconds, poll_seconds
    )
    if deps.github_for is None:
        log.warning("no GitHub credentials configured: jobs will fail until they are")
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    log.info("%d workers on queue %s", concurrency, safe_url(settings.queue))
    pool.start()
    stop.wait()
    pool.stop(timeout=10)
    queue.close()
