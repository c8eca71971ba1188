"""`agentbot doctor`: check this machine's setup, one line per part; exit 0 only if all pass."""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import typer

from bot.cli.app import EXIT_FAILED, EXIT_OK, app
from bot.config import REPO_CONFIG_PATH, RepoConfig, Settings, load_settings
from bot.deadline import job_timeout
from bot.errors import AgentbotError, ConfigError

DOCTOR_CONNECT_SECONDS = 5.0
"""How long the GitHub check retries an unreachable host: doctor answers in seconds."""


@dataclass(frozen=True)
class Check:
    """One line of the report."""

    name: str
    ok: bool
    detail: str

    def line(self) -> str:
        """`ok    github: token (4999/5000 requests left this hour)`."""
        return f"{'ok' if self.ok else 'FAIL':<5} {self.name}: {self.detail}"


def check_llm(settings: Settings) -> Check:
    """The provider is configured and its key is present (not called: that costs money)."""
    from bot.wiring import missing_credentials

    missing = missing_credentials(settings)
    where = "Anthropic" if settings.provider == "anthropic" else settings.llm_base_url
    model = settings.model or f"{RepoConfig().model} (the default; repos may choose another)"
    if missing is not None:
        return Check("llm", False, missing)
    return Check("llm", True, f"{settings.provider} at {where}, model {model}, key set")


def check_github(settings: Settings) -> Check:
    """Credentials exist and GitHub answers with them, within a few seconds."""
    from bot.wiring import github_root

    bounded = settings.model_copy(
        update={
            "connect_retry_seconds": min(settings.connect_retry_seconds, DOCTOR_CONNECT_SECONDS)
        }
    )
    try:
        client = github_root(bounded)
    except ConfigError as exc:
        return Check("github", False, str(exc))
    if client is None:
        return Check(
            "github",
            False,
            "no credentials: set GITHUB_TOKEN, or GITHUB_APP_ID and GITHUB_APP_PRIVATE_KEY"
            " (or GITHUB_APP_PRIVATE_KEY_PATH)",
        )
    client.max_retry_seconds = 10.0  # a rate-limited GitHub is reported, not waited out
    try:
        who = client.whoami()
    except AgentbotError as exc:
        return Check("github", False, str(exc))
    return Check("github", True, f"{settings.github_api_url} as {who}")


def check_data_dir(settings: Settings) -> Check:
    """The data dir exists (created if not) and takes a file."""
    data = settings.data_dir
    try:
        data.mkdir(mode=0o700, parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=data, prefix=".doctor-"):
            pass
    except OSError as exc:
        return Check("data dir", False, f"{data} is not writable: {exc.strerror}")
    return Check("data dir", True, f"{data} is writable")


def check_queue(settings: Settings) -> Check:
    """The queue opens and answers; one not made yet is not made here (serve makes it)."""
    from bot.cli._common import missing_sqlite_file
    from bot.db_url import safe_url, url_password, without_password
    from bot.queue import open_queue
    from bot.queue.sqlite import SqliteQueue

    try:
        settings.check_queue_folder()  # as serve and worker refuse it
        missing = missing_sqlite_file(settings.queue)
    except ConfigError as exc:  # a folder this user cannot enter: the other checks still run
        return Check("queue", False, str(exc))
    if missing is not None:
        return _queue_to_make(missing)
    url, password = safe_url(settings.queue), url_password(settings.queue)
    try:
        queue = open_queue(settings.queue, create=False)
        try:
            queue.ping()
            if isinstance(queue, SqliteQueue):  # serve and the workers must write it too
                queue.check_writable()
        finally:
            queue.close()
    except AgentbotError as exc:
        return Check("queue", False, without_password(str(exc), password))
    except ValueError:  # what a URL parser says of it may quote the password: say what to do
        return Check("queue", False, f"{url}: AGENTBOT_QUEUE is not a URL this can read")
    except Exception as exc:  # a driver's own error: still one line, never a traceback
        return Check(
            "queue", False, without_password(f"{url}: {type(exc).__name__}: {exc}", password)
        )
    return Check("queue", True, f"{url} answers")


def _queue_to_make(path: Path) -> Check:
    """Whether `agentbot serve` could make the queue `path` (its nearest folder takes files)."""
    folder = path.absolute().parent
    while not os.path.lexists(folder):
        folder = folder.parent
    cannot = f"there is no queue at {path}, and `agentbot serve` could not create it"
    if not folder.is_dir():
        return Check("queue", False, f"{cannot}: {folder} is not a folder")
    if not os.access(folder, os.W_OK | os.X_OK):
        return Check("queue", False, f"{cannot}: {folder} is not writable by uid {os.getuid()}")
    return Check("queue", True, f"there is no queue at {path} yet: `agentbot serve` creates it")


def check_sandbox(settings: Settings) -> Check:
    """Jobs can be confined here (bubblewrap), or the operator chose to run them without."""
    from bot.sandbox.status import sandbox_status

    status = sandbox_status(settings.sandbox)
    if status.ok:
        return Check("sandbox", True, status.reason)
    if settings.sandbox == "none":
        return Check("sandbox", True, f"off by choice: {status.reason}")
    return Check("sandbox", False, f"{status.reason}; the App refuses jobs without one")


def check_job_timeout() -> Check:
    """`AGENTBOT_JOB_TIMEOUT` reads (serve and worker refuse to start otherwise)."""
    try:
        seconds = job_timeout()
    except ConfigError as exc:
        return Check("job timeout", False, str(exc))
    return Check("job timeout", True, f"a job is stopped after {seconds:g} s")


def check_repo_config(repo: Path, named: bool) -> Check | None:
    """The checkout's `.github/agentbot.yml` parses; outside a git checkout None, or a failed
    check when the folder was named with `--repo`."""
    inside = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "--show-toplevel"],
        capture_output=True,
        text=True,
        check=False,
    )
    if inside.returncode != 0:
        return Check("repo config", False, f"{repo}: not a git checkout") if named else None
    top = Path(inside.stdout.strip())
    path = top / REPO_CONFIG_PATH
    if not path.is_file():
        return Check("repo config", True, f"no {REPO_CONFIG_PATH} in {top}: all defaults")
    try:
        RepoConfig.from_file(path)
    except ConfigError as exc:
        return Check("repo config", False, str(exc))
    return Check("repo config", True, f"{path} is valid")


@app.command()
def doctor(
    repo: Annotated[
        Path,
        typer.Option(
            "--repo",
            exists=True,
            file_okay=False,
            help="Check this checkout's .github/agentbot.yml.",
        ),
    ] = Path(),
) -> None:
    """Check the LLM key, GitHub, data dir, queue, sandbox, job timeout and repo config; exit 0
    if all pass."""
    settings = load_settings()
    checks: list[Callable[[], Check | None]] = [
        lambda: check_llm(settings),
        lambda: check_github(settings),
        lambda: check_data_dir(settings),
        lambda: check_queue(settings),
        lambda: check_sandbox(settings),
        check_job_timeout,
        lambda: check_repo_config(repo, named=repo != Path()),
    ]
    failed = 0
    for run in checks:
        result = run()
        if result is None:
            continue
        failed += not result.ok
        typer.echo(result.line())
    typer.echo("all checks passed" if not failed else f"{failed} check(s) failed")
    raise typer.Exit(EXIT_OK if not failed else EXIT_FAILED)
