"""`agentbot serve`, `agentbot worker` and `agentbot jobs`: the GitHub App side of the CLI."""

from __future__ import annotations

import gc
import json
import os
import secrets
import signal
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import typer

from bot.cli.app import EXIT_OK, EXIT_USAGE, app

# Imported where used: every CLI command loads this module, and the worker stack
# (githubkit, FastAPI, procrastinate) is slow to import.
if TYPE_CHECKING:
    from bot.config import Settings
    from bot.llm import LLM
    from bot.queue import JobQueue, JobRecord
    from bot.worker import GitHubFor, Metrics, WorkerDeps, WorkerPool
    from bot.worker.loop import Intake

SECRET_FILE = "webhook-secret"  # noqa: S105 (a file name, not a secret)


def _safe_url(url: str) -> str:
    """The queue URL without a password, for messages."""
    parts = urlsplit(url)
    if parts.password:
        netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
        return parts._replace(netloc=netloc).geturl()
    return url


def webhook_secret(settings: Settings) -> tuple[str, Path | None, bool]:
    """(secret, file it lives in or None for the variable, True if just created).

    Without GITHUB_WEBHOOK_SECRET a random secret is created once in
    AGENTBOT_DATA_DIR/webhook-secret (mode 0600, never overwritten) so `serve` works out of
    the box; the App's settings page must then be given that value.
    """
    if settings.github_webhook_secret is not None:
        value = settings.github_webhook_secret.get_secret_value()
        if value:
            return value, None, False
    from bot.errors import ConfigError

    path = settings.data_dir / SECRET_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    created = False
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        pass
    else:
        with os.fdopen(fd, "w") as f:
            f.write(secrets.token_hex(32) + "\n")
        created = True
    value = path.read_text().strip()
    if not value:
        raise ConfigError(f"{path} is empty: delete it to get a new secret", path=str(path))
    return value, path, created


def _secrets(settings: Settings, webhook: str) -> list[str]:
    found = [webhook]
    for value in (
        settings.github_token,
        settings.github_app_private_key,
        settings.anthropic_api_key,
        settings.llm_api_key,
    ):
        if value is not None:
            found.append(value.get_secret_value())
    return found


def github_for(settings: Settings) -> GitHubFor | None:
    """How workers get a client for a delivery: App auth, else token auth, else None."""
    from bot.github import AppAuth, GitHub, TokenAuth

    key = settings.app_private_key()
    if settings.github_app_id and key:
        root = GitHub(auth=AppAuth(settings.github_app_id, key), api_url=settings.github_api_url)

        def for_app(installation: int | None, repo: str) -> GitHub:
            return root.for_installation(
                installation if installation is not None else root.installation_for_repo(repo)
            )

        return for_app
    if settings.github_token is not None and settings.github_token.get_secret_value():
        client = GitHub(
            auth=TokenAuth(settings.github_token.get_secret_value()),
            api_url=settings.github_api_url,
        )
        return lambda installation, repo: client
    return None


def llm_factory(settings: Settings) -> Callable[[str], LLM]:
    """Model name -> LLM adapter, from the provider settings (AGENTBOT_MODEL overrides)."""
    from bot.llm import make_llm
    from bot.models import LLMProviderConfig

    def make(model: str) -> LLM:
        chosen = settings.model or model
        if settings.provider == "anthropic":
            key = settings.anthropic_api_key
            cfg = LLMProviderConfig(
                provider="anthropic",
                model=chosen,
                api_key=key.get_secret_value() if key else "",
                base_url=settings.anthropic_base_url,
            )
        else:
            key = settings.llm_api_key
            cfg = LLMProviderConfig(
                provider="custom",
                model=chosen,
                api_key=key.get_secret_value() if key else "",
                base_url=settings.llm_base_url,
            )
        return make_llm(cfg)

    return make


def _start(
    settings: Settings, workers: int, lease: float, poll: float, intake: Intake | None = None
) -> tuple[JobQueue, Metrics, WorkerPool, WorkerDeps]:
    from bot.queue import open_queue
    from bot.worker import Metrics, WorkerDeps, WorkerPool, process_delivery

    queue = open_queue(settings.queue)
    metrics = Metrics(queue)
    deps = WorkerDeps(
        queue=queue,
        github_for=github_for(settings),
        llm_factory=llm_factory(settings),
        data_dir=settings.data_dir,
        server_url=settings.github_server_url,
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


LEASE_HELP = "Seconds a claimed job stays held without a heartbeat (renewed every third)."


@app.command()
def serve(
    host: str = typer.Option("127.0.0.1", help="Interface to listen on."),
    port: int = typer.Option(8080, help="Port to listen on."),
    workers: int = typer.Option(2, min=0, help="Embedded worker threads (0: receive only)."),
    lease_seconds: float = typer.Option(300.0, min=0.1, help=LEASE_HELP),
    poll_seconds: float = typer.Option(1.0, min=0.01, help="Idle workers poll this often."),
) -> None:
    """Receive GitHub App webhooks (POST /webhook) and run their jobs on the queue."""
    import logging

    import uvicorn

    from bot.config import Settings
    from bot.logs import setup_logging
    from bot.worker.loop import Intake
    from webhooks.app import create_app

    settings = Settings()
    secret, path, created = webhook_secret(settings)
    setup_logging(json_lines=True, secrets=_secrets(settings, secret))
    log = logging.getLogger("agentbot.serve")
    if path is not None:
        what = "created a new" if created else "using the"
        typer.echo(
            f"{what} webhook secret in {path} (mode 0600): give that value to the App's"
            " webhook settings, or set GITHUB_WEBHOOK_SECRET",
            err=True,
        )
    # The embedded workers give way to the receiver while deliveries arrive, and wake as
    # soon as one is stored (bot.worker.loop.Intake).
    intake = Intake()
    queue, metrics, pool, deps = _start(settings, workers, lease_seconds, poll_seconds, intake)
    if pool.workers and deps.github_for is None:
        log.warning("no GitHub credentials configured: deliveries are stored, jobs will fail")
    web = create_app(queue=queue, secret=secret, metrics=metrics, settings=settings, intake=intake)
    log.info(
        "serving on http://%s:%d with %d workers, queue %s",
        host,
        port,
        workers,
        _safe_url(settings.queue),
    )
    pool.start()
    # Everything imported so far lives as long as the process: keep it out of the cyclic
    # GC's full collections, which otherwise pause the receiver (p99) under load.
    gc.collect()
    gc.freeze()
    try:
        uvicorn.run(
            web, host=host, port=port, log_config=None, access_log=False, server_header=False
        )
    finally:
        # Running jobs are abandoned to their leases (another worker takes them over).
        pool.stop(timeout=10)
        queue.close()


@app.command()
def worker(
    concurrency: int = typer.Option(2, min=1, help="Worker threads in this process."),
    lease_seconds: float = typer.Option(300.0, min=0.1, help=LEASE_HELP),
    poll_seconds: float = typer.Option(1.0, min=0.01, help="Idle workers poll this often."),
) -> None:
    """Run workers only, on the configured queue (scale out: many on one PostgreSQL queue)."""
    import logging

    from bot.config import Settings
    from bot.logs import setup_logging

    settings = Settings()
    setup_logging(json_lines=True, secrets=_secrets(settings, ""))
    queue, _metrics, pool, deps = _start(settings, concurrency, lease_seconds, poll_seconds)
    if deps.github_for is None:
        logging.getLogger("agentbot.worker").warning(
            "no GitHub credentials configured: jobs will fail until they are"
        )
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    logging.getLogger("agentbot.worker").info(
        "%d workers on queue %s", concurrency, _safe_url(settings.queue)
    )
    pool.start()
    stop.wait()
    pool.stop(timeout=10)
    queue.close()


def _outcome(job: JobRecord) -> str:
    if job.result is not None:
        return f"{job.result.status.value}: {job.result.summary or job.result.error}"
    return job.error or job.decision


@app.command()
def jobs(
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
    limit: int = typer.Option(50, min=1, help="Newest N jobs."),
    state: str = typer.Option("", help="Only jobs in this state."),
) -> None:
    """List the jobs in the queue, newest first."""
    from bot.config import Settings
    from bot.queue import JobState, open_queue

    settings = Settings()
    try:
        wanted = JobState(state) if state else None
    except ValueError:
        states = ", ".join(s.value for s in JobState)
        typer.echo(f"error: state must be one of {states}", err=True)
        raise typer.Exit(EXIT_USAGE) from None
    url = settings.queue
    if url.startswith("sqlite:///") and not Path(url[len("sqlite:///") :]).exists():
        records: list[JobRecord] = []  # do not create a queue file just to list it
    else:
        queue = open_queue(url)
        try:
            records = queue.list(limit, wanted)
        finally:
            queue.close()
    if as_json:
        typer.echo(json.dumps([r.model_dump(mode="json") for r in records], indent=2))
        raise typer.Exit(EXIT_OK)
    from rich.console import Console
    from rich.table import Table

    table = Table("job", "state", "event", "repo", "#", "kind", "cost", "tries", "age", "outcome")
    now = datetime.now(UTC)
    for r in records:
        age = int((now - r.received_at).total_seconds())
        table.add_row(
            r.id,
            r.state.value,
            r.event_name,
            r.repo,
            "" if r.number is None else str(r.number),
            r.kind,
            f"${r.cost_usd:.2f}",
            str(r.attempts),
            f"{age}s" if age < 120 else f"{age // 60}m",
            _outcome(r),
        )
    if not records:
        typer.echo("no jobs")
        return
    Console(width=200).print(table)
