"""What the job commands share: settings to clients, the job env, printing a result."""

from __future__ import annotations

import json
import logging
import re
import subprocess
from pathlib import Path

import typer

from bot.cli.app import EXIT_USAGE
from bot.cli.serve import github_for, llm_factory
from bot.config import REPO_CONFIG_PATH, RepoConfig, Settings
from bot.errors import ConfigError
from bot.github import GitHub
from bot.logs import setup_logging
from bot.models import JobResult
from bot.ports import JobEnv
from bot.ports.recording import dry_run as recording
from bot.report import step_summary
from bot.worker.process import load_config

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


def settings_and_github(repo: str) -> tuple[Settings, GitHub]:
    """Settings from the environment and a GitHub client acting for `repo`."""
    settings = Settings()
    secrets = [
        s.get_secret_value()
        for s in (settings.github_token, settings.anthropic_api_key, settings.llm_api_key)
        if s is not None
    ]
    setup_logging(json_lines=False, level=logging.INFO, secrets=secrets)
    make = github_for(settings)
    if make is None:
        raise usage_error(
            "no GitHub credentials: set GITHUB_TOKEN (or GITHUB_APP_ID and"
            " GITHUB_APP_PRIVATE_KEY / GITHUB_APP_PRIVATE_KEY_PATH)"
        )
    return settings, make(None, repo)


def build_env(
    settings: Settings,
    github: GitHub,
    config: RepoConfig,
    *,
    checkout: Path | None,
    dry_run: bool,
) -> JobEnv:
    """The JobEnv for one job run from the CLI or the Action."""
    env = JobEnv(
        github=github,
        config=config,
        llm_factory=llm_factory(settings),
        data_dir=settings.data_dir.resolve(),
        server_url=settings.github_server_url,
        checkout=checkout.resolve() if checkout else None,
        echo=typer.echo,
    )
    return recording(env) if dry_run else env


def config_or_exit(
    github: GitHub, repo: str, branch: str, path: str = REPO_CONFIG_PATH
) -> RepoConfig:
    """load_config with a bad config turned into exit 2 naming the key and line."""
    try:
        return load_config(github, repo, branch, path)
    except ConfigError as exc:
        raise usage_error(str(exc)) from exc


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
