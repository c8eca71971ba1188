"""`agentbot tdd KATA.md`: red-green-refactor cycles on a local directory (DESIGN §8.4)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, cast

import typer

from bot.cli._common import cli_settings, open_sandbox, usage_error
from bot.cli._files import private_dir
from bot.cli.app import EXIT_FAILED, EXIT_OK, app
from bot.cli.options import MAX_COUNT, GivenPath
from bot.config import REPO_CONFIG_PATH, RepoConfig
from bot.errors import AgentbotError, ConfigError, KataParseError
from bot.input_files import read_input
from bot.ports import GitHubPort, JobEnv
from bot.tdd.kata import parse_kata
from bot.tdd.skeleton import LANGUAGES, detect_language, is_empty
from bot.tdd.table import coverage_list, cycle_table, rejections
from bot.wiring import llm_factory, missing_credentials


@app.command()
def tdd(
    kata_md: Annotated[
        Path, typer.Argument(metavar="KATA.md", path_type=GivenPath, help="The kata to build.")
    ],
    repo_dir: Annotated[
        Path,
        typer.Option(
            "--repo",
            path_type=GivenPath,
            help="The project: a git checkout, or an empty or new folder (it gets a skeleton).",
        ),
    ] = Path(),
    language: Annotated[
        str | None,
        typer.Option(help="python, js, ts, rust or go (default: from the project's files)."),
    ] = None,
    max_cycles: Annotated[
        int,
        typer.Option(min=1, max=MAX_COUNT, help="Stop once the branch holds this many cycles."),
    ] = 20,
) -> None:
    """Build the kata test first: one `feat` commit per requirement, `refactor` commits between.

    Commits stay in the local repository; nothing is pushed. A re-run continues after the
    last cycle on the branch.
    """
    try:
        kata = parse_kata(read_input(kata_md).decode("utf-8"), kata_md)
    except FileNotFoundError:
        raise usage_error(f"{kata_md}: no such file") from None
    except OSError as exc:
        raise usage_error(f"{kata_md}: cannot read: {exc.strerror or exc}") from None
    except KataParseError as exc:
        raise usage_error(f"{kata_md}: {exc}") from exc
    except UnicodeDecodeError as exc:
        raise usage_error(f"{kata_md}: not UTF-8 text (byte {exc.start})") from None
    if language is not None and language not in LANGUAGES:
        raise usage_error(f"--language {language}: use one of {', '.join(LANGUAGES)}")
    root = repo_dir.resolve()
    if root.exists() and not root.is_dir():
        raise usage_error(f"--repo {repo_dir}: not a directory")
    if root.exists() and not (root / ".git").exists() and not is_empty(root):
        # `git init` and a skeleton there would mix the kata into someone's files.
        raise usage_error(
            f"--repo {repo_dir} is not a git checkout and not empty: run `git init` there"
            " yourself, or give an empty or new folder"
        )
    lang = language or ("python" if not root.exists() or is_empty(root) else detect_language(root))
    try:
        config = RepoConfig.from_file(root / REPO_CONFIG_PATH)
    except ConfigError as exc:
        raise usage_error(str(exc)) from exc
    settings = cli_settings()
    missing = missing_credentials(settings)
    if missing is not None:  # before the first request, as every job command
        raise usage_error(f"{missing}; `agentbot doctor` checks the whole setup")
    from bot.workflows.tdd.local import run_local  # loads only when it runs

    private_dir(settings.data_dir)

    with open_sandbox(settings, config) as sandbox:
        env = JobEnv(
            # A local session never talks to GitHub: nothing it runs reads this port.
            github=cast(GitHubPort, None),
            config=config,
            llm_factory=llm_factory(settings),
            data_dir=settings.data_dir.resolve(),
            sandbox=sandbox,
        )
        try:
            state = run_local(env, root, kata, language=lang, max_cycles=max_cycles)
        except AgentbotError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(EXIT_FAILED) from exc
    typer.echo(cycle_table(state) + "\n\n" + coverage_list(state))
    if rejected := rejections(state):
        typer.echo("\nRejected by the runner:\n" + rejected)
    if state.stopped and not state.done:
        typer.echo(f"\nStopped: {state.stopped}. Run again to continue.")
        raise typer.Exit(EXIT_FAILED)
    raise typer.Exit(EXIT_OK)
