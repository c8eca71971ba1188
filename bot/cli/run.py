"""`agentbot run`: the GitHub Action entry, deciding on the event and running the job here."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated, Any

import typer

from bot.cli._common import build_env, config_or_exit, settings_and_github, usage_error
from bot.cli.app import EXIT_NEUTRAL, app
from bot.events import Ignore, decide, repo_full_name
from bot.events.triggers import dispatch_params
from bot.guards import check_job
from bot.jobs import NoHandler, get_handler
from bot.models import JobKind, JobResult
from bot.report import step_summary


def _payload(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise usage_error(f"cannot read the event payload {path}: {exc.strerror}") from exc
    except json.JSONDecodeError as exc:
        raise usage_error(f"{path}:{exc.lineno}: the event payload is not valid JSON") from exc
    if not isinstance(data, dict):
        raise usage_error(f"{path}: the event payload is not a JSON object")
    return data


def outputs(result: JobResult) -> dict[str, str]:
    """The action's outputs (action.yml) for a result."""
    u = result.usage
    return {
        "status": result.status.value,
        "pr-url": result.pr_url,
        "cost-usd": f"{result.cost_usd:.4f}",
        "input-tokens": str(
            u.input_tokens + u.cache_creation_input_tokens + u.cache_read_input_tokens
        ),
        "output-tokens": str(u.output_tokens),
        "turns": str(result.turns),
    }


def _append(path: str | None, text: str) -> None:
    if path:
        with Path(path).open("a", encoding="utf-8") as f:
            f.write(text)


def _write_outputs(values: dict[str, str]) -> None:
    # Single-line values only: none of ours can hold a newline, so `key=value` is safe.
    _append(os.environ.get("GITHUB_OUTPUT"), "".join(f"{k}={v}\n" for k, v in values.items()))


@app.command()
def run(
    event_name: Annotated[
        str, typer.Option(envvar="GITHUB_EVENT_NAME", help="Event name ($GITHUB_EVENT_NAME).")
    ],
    event_path: Annotated[
        Path, typer.Option(envvar="GITHUB_EVENT_PATH", help="Payload file ($GITHUB_EVENT_PATH).")
    ],
    repo_dir: Annotated[Path, typer.Option("--repo", help="The checkout to work in.")] = Path(),
    config_path: Annotated[
        str, typer.Option("--config", envvar="AGENTBOT_CONFIG", help="Config path in the repo.")
    ] = ".github/agentbot.yml",
    dry_run: Annotated[bool, typer.Option("--dry-run", envvar="AGENTBOT_DRY_RUN")] = False,
    label: Annotated[str, typer.Option(envvar="AGENTBOT_LABEL", help="Refuel: label.")] = "",
    limit: Annotated[str, typer.Option(envvar="AGENTBOT_LIMIT", help="Refuel: most issues.")] = "",
    max_usd: Annotated[
        str, typer.Option(envvar="AGENTBOT_MAX_USD", help="Refuel: run budget (USD).")
    ] = "",
    neutral_exit_code: Annotated[
        int,
        typer.Option(
            envvar="AGENTBOT_NEUTRAL_EXIT_CODE",
            help="Exit code for 'nothing to do' (78; action.yml sets 0: Actions has no neutral).",
        ),
    ] = EXIT_NEUTRAL,
) -> None:
    """Decide on the Actions event and run its job in the checkout; exit 0, 1 or 78."""
    payload = _payload(event_path)
    repo = repo_full_name(payload) or os.environ.get("GITHUB_REPOSITORY", "")
    if not repo:
        raise usage_error("the event names no repository and GITHUB_REPOSITORY is not set")
    if "repository" not in payload:
        # `schedule` payloads carry no repository; the runner's variable names it.
        payload["repository"] = {"full_name": repo}
    settings, github = settings_and_github(repo)
    default = github.default_branch(repo)
    config = config_or_exit(github, repo, default, config_path)
    decision = decide(event_name, payload, config, default_branch=default)
    if isinstance(decision, Ignore):
        if decision.reply and decision.number is not None and not dry_run:
            github.create_comment(repo, decision.number, decision.reply)
        return _neutral(decision.reason, neutral_exit_code)
    job = decision
    if job.kind == JobKind.REFUEL:
        # The action's label/limit/max-usd inputs, checked like workflow_dispatch inputs.
        given, problem = dispatch_params({"label": label, "limit": limit, "max_usd": max_usd})
        if problem:
            raise usage_error(problem)
        job = job.model_copy(update={"params": {**given, **job.params}})
    refusal = check_job(github, job, config)
    if refusal is not None:
        if refusal.comment and job.number is not None and not dry_run:
            github.create_comment(job.repo, job.number, refusal.comment)
        return _neutral(refusal.reason, neutral_exit_code)
    try:
        handler = get_handler(job.kind)
    except NoHandler:
        return _neutral(f"agentbot cannot run {job.kind.value} jobs yet", neutral_exit_code)
    env = build_env(settings, github, config, checkout=repo_dir, dry_run=dry_run)
    result = handler(job, env)
    _write_outputs(outputs(result))
    _append(os.environ.get("GITHUB_STEP_SUMMARY"), step_summary(result))
    typer.echo(f"agentbot {job.kind.value}: {result.status.value} {result.pr_url or result.error}")
    code = result.status.exit_code
    raise typer.Exit(neutral_exit_code if code == EXIT_NEUTRAL else code)


def _neutral(reason: str, code: int) -> None:
    typer.echo(f"agentbot: nothing to do: {reason}")
    _write_outputs(
        {
            "status": "neutral",
            "pr-url": "",
            "cost-usd": "0",
            "input-tokens": "0",
            "output-tokens": "0",
            "turns": "0",
        }
    )
    raise typer.Exit(code)
