"""`agentbot stats`: where agentbot's pull requests ended and what each merged one cost."""

from __future__ import annotations

import json

import typer

from bot.cli._common import check_repo_name, missing_sqlite_file, reading_queue, usage_error
from bot.cli.app import app
from bot.cli.options import REPO_HINT, non_empty
from bot.config import Settings, load_settings
from bot.queue import JobQueue, open_queue


def backfill(settings: Settings, queue: JobQueue, repos: list[str]) -> int:
    """Read agentbot's pull requests of `repos` through the API into the queue; how many."""
    from bot.github import GitHub
    from bot.stats.outcomes import from_api, ours
    from bot.wiring import github_client

    stored = 0
    for repo in repos:
        client = github_client(settings, repo)
        assert isinstance(client, GitHub)
        for pr in client.list_pulls(repo, state="all"):
            known = queue.pull(repo, pr.number)
            if known is None and not ours(pr.user, pr.head_ref):
                continue
            reviews = client.list_pull_reviews(repo, pr.number)
            commits = client.list_pull_commits(repo, pr.number)
            queue.save_pull(from_api(repo, pr, reviews, commits, known=known))
            stored += 1
    return stored


@app.command()
def stats(
    repo: str | None = typer.Option(
        None, callback=non_empty(REPO_HINT), help="Only this repository (owner/name)."
    ),
    do_backfill: bool = typer.Option(
        False, "--backfill", help="First read agentbot's pull requests through the API."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a summary."),
) -> None:
    """Outcomes of agentbot's pull requests, cost per job and per merged PR (the App's queue)."""
    from bot.worker.outcomes import load_stats

    settings = load_settings()
    repos = [check_repo_name(repo)] if repo else []
    if do_backfill:  # it writes what it reads into the queue
        known = _backfill_repos(settings, repos)
        queue = open_queue(settings.queue)
        try:
            n = backfill(settings, queue, known)
            if not as_json:
                typer.echo(f"backfilled {n} pull request(s) from {len(known)} repositories")
        finally:
            queue.close()
    with reading_queue(settings.queue) as queue:
        figures = load_stats(queue, repo or None)
    if as_json:
        typer.echo(json.dumps(figures, indent=2, default=str))
        return
    typer.echo(stats_text(figures))


def _backfill_repos(settings: Settings, repos: list[str]) -> list[str]:
    """The repositories to backfill, checked before the queue is made (exit 2 otherwise)."""
    from bot.errors import NoCredentials
    from bot.wiring import github_root

    if github_root(settings) is None:  # before the queue is made: a refusal leaves nothing
        raise usage_error(str(NoCredentials()))
    if repos:
        return repos
    known: list[str] = []
    if missing_sqlite_file(settings.queue) is None:
        with reading_queue(settings.queue) as queue:
            known = sorted({j.repo for j in queue.list(100_000) if j.repo})
    if not known:  # "backfilled 0 from 0 repositories" would read as done
        raise usage_error(
            "--backfill: the queue names no repository yet: name one with --repo OWNER/REPO"
        )
    return known


def stats_text(f: dict[str, object]) -> str:
    """A short plain-text summary of the figures."""

    def usd(v: object) -> str:
        return "-" if v is None else f"${float(str(v)):.2f}"

    lines = [
        f"pull requests: {f['merged']} merged ({f['zero_touch']} zero-touch),"
        f" {f['closed']} closed unmerged, {f['open']} open",
        f"cost per merged PR: {usd(f['cost_per_merged_pr_usd'])};"
        f" cost per job: {usd(f['cost_per_job_usd'])} over {f['jobs']} jobs",
    ]
    by_kind = f["by_kind"]
    assert isinstance(by_kind, dict)
    for kind, g in by_kind.items():
        lines.append(
            f"  {kind:<10} {g['merged']} merged, {g['closed']} closed, {g['open']} open;"
            f" {usd(g['cost_per_merged_pr_usd'])} per merged PR"
        )
    return "\n".join(lines)
