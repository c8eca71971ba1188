"""What the job commands share: settings and logging, a job's ports, printing a result."""

from __future__ import annotations

import json
import logging
import re
import subprocess
from pathlib import Path

import typer

from bot.cli.app import EXIT_USAGE
from bot.config import Settings
from bot.errors import ConfigError
from bot.logs import setup_logging
from bot.models import JobResult
from bot.ports import FactCache, JobEnv
from bot.report import step_summary
from bot.wiring import dress, github_client, job_env

_REF = re.compile(r"^(?P<repo>[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)#(?P<number>\d+)$")


def usage_error(message: str) -> typer.Exit:
    """Print `message` to stderr and return the exit to raise (code 2)."""
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(EXIT_USAGE)


def parse_issue_ref(ref: str) -> tuple[str, int]:
    """`OWNER/REPO#N` -> (repo, N); a clear usage error otherwise."""
    found = _REF.match(ref.strip())
    if not found:
        raise usage_error(f"expected OWNER/REPO#NUMBER (e.g. octo/app#7), got {ref!r}")
    return found["repo"], int(found["number"])


def check_repo_name(repo: str) -> str:
    """`OWNER/REPO` or a usage error."""
    if not re.fullmatch(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+", repo):
        raise usage_error(f"expected OWNER/REPO (e.g. octo/app), got {repo!r}")
    return repo


def cli_settings() -> Settings:
    """Settings from the environment, and human-readable logging that redacts their secrets."""
    settings = Settings()
    secrets = [
        s.get_secret_value()
        for s in (settings.github_token, settings.anthropic_api_key, settings.llm_api_key)
        if s is not None
    ]
    setup_logging(json_lines=False, level=logging.INFO, secrets=secrets)
    return settings


def command_env(repo: str, *, checkout: Path | None, dry_run: bool) -> JobEnv:
    """The ports of a job the CLI runs for `repo`, its config read once from the default branch."""
    settings = cli_settings()
    github = FactCache(dress(github_client(settings, repo), dry_run=dry_run, echo=typer.echo))
    try:
        config = github.config(repo)
    except ConfigError as exc:
        raise usage_error(str(exc)) from exc
    return job_env(settings, github, config, checkout=checkout, dry_run=dry_run, echo=typer.echo)


def print_result(result: JobResult, *, as_json: bool = False) -> None:
    """The outcome for a person (markdown summary) or a program (JSON)."""
    if as_json:
        typer.echo(json.dumps(result.model_dump(mode="json"), indent=2))
    else:
        typer.echo(step_summary(result))


def git_out(repo_dir: Path, *args: str) -> str:
    """Run a read-only git command in `repo_dir` (no secrets involved)."""
    proc = subprocess.run(["git", *args], cwd=repo_dir, capture_output=True, text=True)
    if proc.returncode != 0:
        raise usage_error(f"{repo_dir} is not a usable git checkout: {proc.stderr.strip()}")
    return proc.stdout.strip()


def repo_from_origin(repo_dir: Path) -> str:
    """`owner/name` from the checkout's origin URL (https, ssh or a local path)."""
    url = git_out(repo_dir, "remote", "get-url", "origin")
    found = re.search(r"[:/]([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+?)(?:\.git)?/?$", url)
    if not found:
        raise usage_error(f"cannot tell OWNER/REPO from origin {url!r}; pass --github-repo")
    return f"{found[1]}/{found[2]}"
