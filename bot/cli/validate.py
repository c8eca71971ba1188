"""`agentbot validate`: run the validation pipeline on a checkout and print its report."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from bot.cli._common import fallback_notice
from bot.cli._files import private_dir
from bot.cli.app import EXIT_FAILED, EXIT_OK, EXIT_USAGE, app
from bot.cli.options import checkout_dir
from bot.config import REPO_CONFIG_PATH, RepoConfig, load_settings
from bot.errors import ConfigError
from bot.models import QualityGateResult, ValidationReport
from bot.sandbox import SandboxPolicy
from bot.validation import resolve_base, run_validation

_STYLE = {
    "passed": "green",
    "failed": "red",
    "timed_out": "red",
    "skipped": "yellow",
    "preexisting": "yellow",
    "unverified": "yellow",
}


def _fail(message: str) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(EXIT_USAGE)


def _egg_info(repo: Path) -> set[Path]:
    """The `*.egg-info` folders in a checkout, down to three levels (`lib/python/x.egg-info`:
    setuptools writes it beside the packages, wherever `package_dir` puts them)."""
    found = [p for depth in range(3) for p in repo.glob("*/" * depth + "*.egg-info")]
    return {p for p in found if p.is_dir() and not p.is_symlink()}


def _note(gate: QualityGateResult, report: ValidationReport) -> str:
    parts = []
    if gate.gate_name == "test" and report.tests is not None:
        t = report.tests
        counts = f"{t.passed_count}/{t.test_count} passed"
        parts.append(counts + (f", {t.skipped_count} skipped" if t.skipped_count else ""))
    if gate.auto_fixed:
        parts.append("auto-fixed")
    if gate.warning:
        parts.append(gate.warning)
    if gate.source:
        parts.append(f"from {gate.source}")
    if gate.preexisting_count:
        parts.append(f"{gate.preexisting_count} pre-existing")
    if gate.status == "failed" and (gate.new_issues or gate.issues_found):
        parts.append("new: " + ", ".join((gate.new_issues or gate.issues_found)[:5]))
    elif gate.status == "failed" and gate.command_result is not None:
        # The first line is usually the first problem (ruff, mypy, prettier, gofmt, eslint).
        lines = [ln.strip() for ln in gate.command_result.output.splitlines() if ln.strip()]
        parts.append(lines[0][:160] if lines else f"exit {gate.command_result.exit_code}")
    return "; ".join(parts)


def _print_report(console: Console, report: ValidationReport) -> None:
    table = Table(title=f"validation ({report.profile})", title_justify="left")
    for col in ("stage", "status", "duration", "summary"):
        table.add_column(col, no_wrap=col != "summary")
    for gate in report.gates:
        secs = gate.command_result.duration_seconds if gate.command_result else 0.0
        table.add_row(
            gate.gate_name,
            Text(gate.status, style=_STYLE[gate.status]),
            f"{secs:.1f}s",
            _note(gate, report),
        )
    console.print(table)
    if report.new_failures:
        console.print(f"new failures: {', '.join(report.new_failures)}")
    if report.preexisting_failures:
        console.print(
            "pre-existing failures (also fail on the base commit, not counted): "
            + ", ".join(report.preexisting_failures)
        )
    for warning in report.warnings:
        console.print(Text(f"warning: {warning}", style="yellow"))
    if report.failing_gate is not None:
        verdict = Text("FAILED", "bold red")
    elif report.unverified:  # a stage could not run: no pass, whatever else passed
        verdict = Text("UNVERIFIED", "bold yellow")
    elif not report.passed:
        verdict = Text("FAILED", "bold red")
    else:
        verdict = Text("PASSED", style="bold green")
    console.print(Text("gate ").append(verdict).append(f" in {report.duration_seconds:.1f}s"))


@app.command()
def validate(
    repo: Annotated[
        Path,
        checkout_dir("The checkout to validate."),
    ] = Path(),
    fix: Annotated[
        bool,
        typer.Option(
            "--fix",
            help="Run the safe fixers on what is judged (the change since --base, else the"
            " whole tree), re-check.",
        ),
    ] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the ValidationReport as JSON.")
    ] = False,
    base: Annotated[
        str | None,
        typer.Option("--base", help="Base ref: check the change since it; only new problems fail."),
    ] = None,
) -> None:
    """Run format -> lint -> typecheck -> test on a checkout; exit 0 if the gate passes, else 1
    (a stage that could not run, `unverified`, is no pass)."""
    if not repo.is_dir():
        raise _fail(f"{repo}: not a directory")
    try:
        config = RepoConfig.from_file(repo / REPO_CONFIG_PATH)
        settings = load_settings()
    except ConfigError as exc:
        raise _fail(str(exc)) from None
    base_sha = None
    if base is not None:
        base_sha = resolve_base(repo, base)
        if base_sha is None:
            raise _fail(f"--base {base}: no such commit in {repo}")
    # Progress goes to stderr, so `--json` leaves stdout to the report alone.
    progress = Console(stderr=True, highlight=False, markup=False)

    def on_stage(gate: QualityGateResult) -> None:
        if not as_json:
            progress.print(f"  {gate.gate_name}: {gate.status}", style=_STYLE[gate.status])

    private_dir(settings.data_dir)
    policy = SandboxPolicy.for_settings(settings, app=False)
    had = _egg_info(repo)
    try:
        with policy.open(config.sandbox.network) as sandbox:
            if not sandbox.status.ok:
                fallback_notice(sandbox.status, None)
            report = run_validation(
                repo,
                config.validation,
                data_dir=settings.data_dir,
                base_sha=base_sha,
                fix=fix,
                env=os.environ,
                on_stage=on_stage,
                sandbox=sandbox,
            )
    finally:
        # The setup stage's editable install writes `<name>.egg-info` into the checkout; the
        # venv (in the data dir) does not need it. This is the user's tree: only ours go.
        for made in sorted(_egg_info(repo) - had):
            shutil.rmtree(made, ignore_errors=True)
    if as_json:
        typer.echo(report.model_dump_json(indent=2))
    else:
        _print_report(Console(highlight=False, markup=False), report)
    raise typer.Exit(EXIT_OK if report.passed and not report.unverified else EXIT_FAILED)
