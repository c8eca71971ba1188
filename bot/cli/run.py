"""`agentbot run`: the Action's door to the use case; the job runs here, in the checkout."""

from __future__ import annotations

import os
import re
import secrets
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

import typer

from bot.cli._common import cli_settings, open_sandbox, usage_error
from bot.cli._run_inputs import check_run_inputs, event_payload
from bot.cli.app import EXIT_NEUTRAL, app
from bot.cli.options import EVENT_NAME_HINT, GivenPath, checkout_dir, given
from bot.config import LOGIN, REPO_CONFIG_PATH, RepoConfig, Settings
from bot.errors import ConfigError
from bot.events import Delivery, Ignore
from bot.events.triggers import dispatch_params
from bot.models import Job, JobKind, JobResult, JobStatus
from bot.outbound.text import TextGuard
from bot.ports import GitHubPort, Handler, JobEnv
from bot.report import step_summary
from bot.secrets import redact
from bot.usecase import UseCase
from bot.wiring import dress, github_client, job_env, missing_credentials


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
        str,
        typer.Option(
            envvar="GITHUB_EVENT_NAME",
            callback=given(EVENT_NAME_HINT),
            help="Event name ($GITHUB_EVENT_NAME).",
        ),
    ],
    event_path: Annotated[
        Path,
        typer.Option(
            envvar="GITHUB_EVENT_PATH",
            path_type=GivenPath,
            help="Payload file ($GITHUB_EVENT_PATH).",
        ),
    ],
    repo_dir: Annotated[
        Path,
        checkout_dir("The checkout to work in."),
    ] = Path(),
    config_path: Annotated[
        str, typer.Option("--config", envvar="AGENTBOT_CONFIG", help="Config path in the repo.")
    ] = REPO_CONFIG_PATH,
    dry_run: Annotated[bool, typer.Option("--dry-run", envvar="AGENTBOT_DRY_RUN")] = False,
    label: Annotated[str, typer.Option(envvar="AGENTBOT_LABEL", help="Refuel: label.")] = "",
    limit: Annotated[str, typer.Option(envvar="AGENTBOT_LIMIT", help="Refuel: most issues.")] = "",
    max_usd: Annotated[
        str, typer.Option(envvar="AGENTBOT_MAX_USD", help="Refuel: run budget (USD).")
    ] = "",
    assignee: Annotated[
        str,
        typer.Option(
            envvar="AGENTBOT_ASSIGNEE",
            help="Login whose assignment to an issue starts work (or config `assignee:`).",
        ),
    ] = "",
    neutral_exit_code: Annotated[
        int,
        typer.Option(
            envvar="AGENTBOT_NEUTRAL_EXIT_CODE",
            min=0,
            max=255,
            help="Exit code for 'nothing to do' (78; action.yml sets 0: Actions has no neutral).",
        ),
    ] = EXIT_NEUTRAL,
) -> None:
    """Decide on the Actions event and run its job in the checkout; exit 0, 1 or 78."""
    # The agent's text reaches this log; a line starting `::` would be a workflow command.
    token = _stop_workflow_commands()
    try:
        payload = event_payload(event_path)
        login = assignee.strip()
        if login and not LOGIN.fullmatch(login):
            raise usage_error(f"assignee: {login!r} is not a GitHub login (letters, digits, -)")
        # Checked before any call to GitHub: a bad input is the caller's to fix (exit 2).
        check_run_inputs({"label": label, "limit": limit, "max_usd": max_usd}, config_path)
        from bot.workflows.handlers import HANDLERS  # the workflows load only for a real run

        door = action_door(
            cli_settings(),
            HANDLERS,
            checkout=repo_dir,
            dry_run=dry_run,
            inputs={"label": label, "limit": limit, "max_usd": max_usd},
            config_path=config_path,
            assignee=login,
        )
        try:
            outcome = door.handle(Delivery(event_name, payload, _run_delivery()))
        except ConfigError as exc:
            raise usage_error(str(exc)) from exc
        if isinstance(outcome, Ignore):
            return _neutral(outcome.reason, neutral_exit_code)
        _write_outputs(outputs(outcome))
        # The step summary and the job log leave the job too: both pass the secret scanner.
        # The run page renders it as GitHub does a PR body: cleaned as every text we write.
        summary = TextGuard(mentions=frozenset({outcome.job.actor})).clean(step_summary(outcome))
        _append(os.environ.get("GITHUB_STEP_SUMMARY"), summary)
        typer.echo(redact(outcome_line(outcome)))
        code = outcome.status.exit_code
        raise typer.Exit(neutral_exit_code if code == EXIT_NEUTRAL else code)
    finally:
        if token:
            typer.echo(f"::{token}::")


def action_door(
    settings: Settings,
    handlers: Mapping[JobKind, Handler],
    *,
    checkout: Path,
    dry_run: bool,
    inputs: Mapping[str, Any],
    config_path: str = REPO_CONFIG_PATH,
    assignee: str = "",
) -> UseCase:
    """The use case as the Action runs it: token client, this checkout, the step's inputs."""

    def client(delivery: Delivery) -> GitHubPort:
        assert delivery.repo is not None
        return dress(github_client(settings, delivery.repo), dry_run=dry_run, echo=_say)

    def env(github: GitHubPort, config: RepoConfig) -> JobEnv:
        # The job's sandbox; the use case closes it when the job ends.
        sandbox = open_sandbox(settings, config)
        return job_env(
            settings,
            github,
            config,
            checkout=checkout,
            dry_run=dry_run,
            echo=_say,
            sandbox=sandbox,
        )

    def with_inputs(job: Job) -> Job:
        if job.kind != JobKind.REFUEL:
            return job
        # The action's label/limit/max-usd inputs, checked like workflow_dispatch inputs.
        given, problem = dispatch_params(inputs)
        if problem:
            raise ConfigError(problem)
        return job.model_copy(update={"params": {**given, **job.params}})

    return UseCase(
        github_for=client,
        handlers=handlers,
        make_env=env,
        decided=with_inputs,
        config_path=config_path,
        missing_credentials=lambda: missing_credentials(settings),
        known_files=lambda delivery: checkout_config(checkout, delivery, config_path),
        job_link=lambda job: _run_url(settings.github_server_url),
        assignee=assignee,
    )


# Events whose run is on the default branch: GITHUB_SHA is that branch's last commit.
_ON_DEFAULT_BRANCH = ("issues", "issue_comment")


def checkout_config(
    checkout: Path, delivery: Delivery, config_path: str
) -> dict[tuple[str, str, str | None], str | None]:
    """The config at the default branch's commit, read from the checkout's git objects.

    Only for events that run on the default branch, and only by GITHUB_SHA (set by the
    runner, not by anything in the repository): whatever the workspace holds or has checked
    out, that commit's file is the one the API would return. Anything else: {} (ask GitHub).
    """
    sha = os.environ.get("GITHUB_SHA", "")
    branch = delivery.default_branch
    if (
        delivery.event_name not in _ON_DEFAULT_BRANCH
        or delivery.repo is None
        or not branch
        or os.environ.get("GITHUB_REF") != f"refs/heads/{branch}"
        or not re.fullmatch(r"[0-9a-f]{40}", sha)
    ):
        return {}
    git = ["git", "-C", str(checkout)]
    if subprocess.run(
        [*git, "cat-file", "-e", f"{sha}^{{commit}}"], capture_output=True
    ).returncode:
        return {}  # the checkout does not hold that commit (a shallow or other clone)
    shown = subprocess.run([*git, "show", f"{sha}:{config_path}"], capture_output=True)
    text = shown.stdout.decode("utf-8", "replace") if shown.returncode == 0 else None
    if text is None:
        exists = subprocess.run(
            [*git, "cat-file", "-e", f"{sha}:{config_path}"], capture_output=True
        )
        if exists.returncode == 0:
            return {}  # there but unreadable: let the API say
    return {(delivery.repo, config_path, branch): text}


def _stop_workflow_commands() -> str:
    """On a runner, turn workflow commands off until `::token::`; the token, or ""."""
    if os.environ.get("GITHUB_ACTIONS") != "true":
        return ""
    token = secrets.token_hex(16)
    typer.echo(f"::stop-commands::{token}")
    return token


def _run_delivery() -> str:
    """This workflow run's attempt as a delivery id (`run-<id>.<attempt>`), "" outside Actions.

    A re-run is the same event again (bot.workflows.steps.answered)."""
    run_id, attempt = os.environ.get("GITHUB_RUN_ID", ""), os.environ.get("GITHUB_RUN_ATTEMPT", "1")
    if os.environ.get("GITHUB_ACTIONS") != "true" or not run_id.isdigit():
        return ""
    return f"run-{run_id}.{attempt if attempt.isdigit() else '1'}"


def _run_url(server_url: str) -> str:
    """This workflow run's page (the check run's link), "" outside Actions."""
    repo, run_id = os.environ.get("GITHUB_REPOSITORY"), os.environ.get("GITHUB_RUN_ID")
    if not repo or not run_id:
        return ""
    return f"{server_url.rstrip('/')}/{repo}/actions/runs/{run_id}"


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


def _say(text: str) -> None:
    """What a dry run would post, printed with secrets redacted (stdout is the job log)."""
    typer.echo(redact(text))


def outcome_line(result: JobResult) -> str:
    """The job's one log line: kind, status, its pull request, and why when it did not succeed."""
    why = (result.error or "").strip().splitlines()[0][:300] if result.error else ""
    said = " ".join(
        x for x in (result.pr_url, "" if result.status == JobStatus.SUCCESS else why) if x
    )
    return f"agentbot {result.job.kind.value}: {result.status.value} {said}".rstrip()
