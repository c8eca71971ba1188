"""What the job commands share: settings and logging, a job's ports, printing a result."""

from __future__ import annotations

import json
import logging
import os
import re
import subprocess
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import NoReturn
from urllib.parse import urlsplit

import typer

from bot.cli.app import EXIT_USAGE
from bot.config import RepoConfig, Settings, load_settings
from bot.errors import ConfigError
from bot.logs import setup_logging
from bot.models import Job, JobResult
from bot.ports import FactCache, JobEnv
from bot.queue import JobQueue
from bot.report import step_summary
from bot.sandbox import Sandbox, SandboxPolicy, SandboxStatus
from bot.secrets import redact, register_environment, without_credentials
from bot.wiring import dress, github_client, job_env, missing_credentials

_REPO = r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+"
_REF = re.compile(rf"^(?P<repo>{_REPO})#(?P<number>\d{{1,10}})$")
_MAX_NUMBER = 2**31 - 1
"""GitHub's issue and pull request numbers are 32-bit."""


def repo_ok(repo: str) -> bool:
    """True for an `OWNER/REPO` GitHub could have made."""
    from bot.events.payloads import is_repo_name

    return is_repo_name(repo)


def usage_error(message: str) -> typer.Exit:
    """Print `message` to stderr and return the exit to raise (code 2)."""
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(EXIT_USAGE)


def parse_issue_ref(ref: str) -> tuple[str, int]:
    """`OWNER/REPO#N` -> (repo, N); a clear usage error otherwise."""
    found = _REF.match(ref.strip())
    if not found or not repo_ok(found["repo"]) or not 1 <= int(found["number"]) <= _MAX_NUMBER:
        raise usage_error(f"expected OWNER/REPO#NUMBER (e.g. octo/app#7), got {ref!r}")
    return found["repo"], int(found["number"])


def check_repo_name(repo: str) -> str:
    """`OWNER/REPO` or a usage error."""
    if not repo_ok(repo):
        raise usage_error(f"expected OWNER/REPO (e.g. octo/app), got {repo!r}")
    return repo


def cli_settings() -> Settings:
    """Settings from the environment, and human-readable logging that redacts their secrets."""
    settings = load_settings()
    register_environment(os.environ)  # every value we were started with, whatever its name
    secrets = [
        s.get_secret_value()
        for s in (settings.github_token, settings.anthropic_api_key, settings.llm_api_key)
        if s is not None
    ]
    setup_logging(json_lines=False, level=logging.INFO, secrets=secrets)
    return settings


@contextmanager
def command_env(repo: str, *, checkout: Path | None, dry_run: bool) -> Iterator[JobEnv]:
    """The ports of a job the CLI runs for `repo`, its config read once from the default
    branch, with the job's sandbox (killed when the job ends)."""
    settings = cli_settings()
    missing = missing_credentials(settings)
    if missing is not None:  # before the first request: nothing is posted for a job that can't run
        raise usage_error(f"{missing}; `agentbot doctor` checks the whole setup")
    echo = _echo_redacted
    github = FactCache(dress(github_client(settings, repo), dry_run=dry_run, echo=echo))
    try:
        config = github.config(repo)
    except ConfigError as exc:
        raise usage_error(str(exc)) from exc
    with open_sandbox(settings, config) as sandbox:
        yield job_env(
            settings,
            github,
            config,
            checkout=checkout,
            dry_run=dry_run,
            echo=echo,
            sandbox=sandbox,
        )


def open_sandbox(settings: Settings, config: RepoConfig) -> Sandbox:
    """A job's sandbox as the CLI and the Action open it (the runner's temp folder hidden).

    Where bwrap does not work they fall back to no sandbox (the runner, or this machine, is
    then the boundary) and say so in one line, in the job log and the step summary.
    """
    runner_temp = os.environ.get("RUNNER_TEMP")
    policy = SandboxPolicy.for_settings(settings, app=False, runner_temp=runner_temp)
    sandbox = policy.open(config.sandbox.network)
    if not sandbox.status.ok:
        fallback_notice(sandbox.status, os.environ.get("GITHUB_STEP_SUMMARY"))
    return sandbox


def fallback_notice(status: SandboxStatus, summary: str | None) -> None:
    """One line, in the job log and the step summary: this job runs without a sandbox."""
    line = (
        f"agentbot: no sandbox ({status.reason}); the runner is the isolation boundary for this job"
    )
    typer.echo(line, err=True)
    if summary:
        with Path(summary).open("a", encoding="utf-8") as f:
            f.write(f"> [!WARNING]\n> {line}\n\n")


def _echo_redacted(text: str) -> None:
    """What a dry run would post, printed with secrets redacted (stdout is a job log)."""
    typer.echo(redact(text))


def print_result(result: JobResult, *, as_json: bool = False) -> None:
    """The outcome for a person (markdown summary) or a program (JSON)."""
    if as_json:
        typer.echo(redact(json.dumps(result.model_dump(mode="json"), indent=2)))
    else:
        typer.echo(redact(step_summary(result)))


def git_out(repo_dir: Path, *args: str) -> str:
    """Run a read-only git command in `repo_dir` (no secrets involved)."""
    proc = subprocess.run(["git", *args], cwd=repo_dir, capture_output=True, text=True)
    if proc.returncode != 0:
        # git's first line says why; the rest is advice about access rights.
        why = next((ln.strip() for ln in proc.stderr.splitlines() if ln.strip()), "")
        raise usage_error(f"{repo_dir} is not a usable git checkout: {why}")
    return proc.stdout.strip()


def require_pushed(repo_dir: Path, branch: str) -> None:
    """Exit 2 unless the checkout is clean and `branch` holds nothing origin lacks (a job
    starts from the pushed branch, so local work would be silently left out)."""
    if git_out(repo_dir, "status", "--porcelain"):
        raise usage_error(f"{repo_dir} has uncommitted changes: commit and push them first")
    git_out(repo_dir, "fetch", "--quiet", "origin", branch)
    if git_out(repo_dir, "rev-list", f"origin/{branch}..HEAD"):
        raise usage_error(f"branch {branch} has commits origin does not: push them first")


def repo_from_origin(repo_dir: Path, servers: Sequence[str]) -> str:
    """`owner/name` from the checkout's origin URL (https, ssh, or a path under a `file://`
    server), which must be on one of the GitHub `servers` (`github_servers`)."""
    url = git_out(repo_dir, "remote", "get-url", "origin")
    path = _path_on(url, servers)
    if path is None:
        where = ", ".join(map(without_credentials, servers))
        raise usage_error(
            f"origin {without_credentials(url)!r} is not on GitHub ({where}): name the"
            " repository with --github-repo OWNER/REPO, or set GITHUB_SERVER_URL to your"
            " GitHub's address"
        )
    parts = path.strip("/").removesuffix(".git").split("/")
    if len(parts) != 2 or not all(re.fullmatch(r"[A-Za-z0-9_.-]+", p) for p in parts):
        raise usage_error(
            f"cannot tell OWNER/REPO from origin {without_credentials(url)!r}; pass --github-repo"
        )
    return f"{parts[0]}/{parts[1]}"


def github_servers(settings: Settings) -> list[str]:
    """Where a repository's origin may be: `GITHUB_SERVER_URL`, and the host of a
    `GITHUB_API_URL` set apart from it (GHES users often set only that)."""
    servers = [settings.github_server_url]
    api = urlsplit(settings.github_api_url)
    if api.hostname and api.hostname != "api.github.com":
        port = f":{api.port}" if api.port else ""
        servers.append(f"{api.scheme}://{api.hostname.removeprefix('api.')}{port}")
    return servers


def _path_on(url: str, servers: Sequence[str]) -> str | None:
    """The repository's path in a git remote URL on one of the servers (its host, `www.`
    or `ssh.` of it; or a path under a `file://` server's folder), else None."""
    if "://" in url:
        parsed = urlsplit(url)
        host, path = parsed.hostname, parsed.path
    else:
        scp = re.fullmatch(r"(?:[^@/]+@)?([^:/]+):(.*)", url)  # git@github.com:owner/repo
        host, path = (scp[1].lower(), scp[2]) if scp else (None, url)
    for server_url in servers:
        server = urlsplit(server_url)
        if server.scheme == "file":
            for base in (server_url.rstrip("/") + "/", server.path.rstrip("/") + "/"):
                if url.startswith(base) and base != "/":
                    return url[len(base) :]
        elif host is not None and server.hostname is not None:
            names = {server.hostname, f"www.{server.hostname}", f"ssh.{server.hostname}"}
            if host in names:
                return path
    return None


def run_on_checkout(
    job: Job,
    run: Callable[[Job, JobEnv], JobResult],
    repo_dir: Path,
    *,
    dry_run: bool,
    as_json: bool,
) -> NoReturn:
    """Run a job on a local checkout (the job's sandbox too), print its result, exit with it."""
    with command_env(job.repo, checkout=repo_dir, dry_run=dry_run) as env:
        result = run(job, env)
    print_result(result, as_json=as_json)
    raise typer.Exit(result.status.exit_code)


def pushed_branch(repo_dir: Path, github_repo: str | None) -> tuple[str, str]:
    """The checkout's branch, clean and pushed, and its OWNER/REPO; exit 2 otherwise."""
    branch = git_out(repo_dir, "rev-parse", "--abbrev-ref", "HEAD")
    if branch == "HEAD":
        raise usage_error(f"{repo_dir} is not on a branch: check out the branch to work on")
    if github_repo:
        repo = check_repo_name(github_repo)
    else:  # before the fetch: an origin elsewhere is named, not fetched
        repo = repo_from_origin(repo_dir, github_servers(load_settings()))
    require_pushed(repo_dir, branch)
    return branch, repo


def missing_sqlite_file(url: str) -> Path | None:
    """The file of an SQLite queue URL when it does not exist yet (else None)."""
    from bot.db_url import sqlite_file
    from bot.queue.sqlite import queue_file_exists

    path = sqlite_file(url)
    return None if path is None or queue_file_exists(path) else path


@contextmanager
def reading_queue(url: str) -> Iterator[JobQueue]:
    """The queue for a command that only reads it: opened if it exists, never made."""
    # A SQLite file that is not there is named (exit 2): the settings may point elsewhere.
    from bot.queue import open_queue

    queue = open_queue(url, create=False)
    try:
        yield queue
    finally:
        queue.close()
