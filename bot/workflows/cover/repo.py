"""What /cover reads from the repository: the changed methods, and the coverage of their files."""

from __future__ import annotations

from collections.abc import Sequence

from bot import treefs
from bot.cover.coverage import LineCoverage
from bot.cover.discovery import ChangedMethod, SourcePair, changed_lines, discover
from bot.cover.languages import language_for
from bot.git import Workspace
from bot.outbound.paths import TEST_PATH
from bot.workflows.cover.context import CoverContext


def changed_methods(ws: Workspace, base: str) -> list[ChangedMethod]:
    """The functions and methods `base..HEAD` added or changed, outside test files."""
    diffs = changed_lines(ws.git("diff", "-U0", "--no-color", base, "HEAD"))
    sources: dict[str, SourcePair] = {}
    for path in diffs:
        if TEST_PATH.search(path) or language_for(path) is None:
            continue
        if treefs.kind(ws.path, path) != "file":
            continue
        before = ws.run(["show", f"{base}:{path}"], check=False)
        old = before.stdout.encode() if before.returncode == 0 else None
        sources[path] = SourcePair(treefs.read_bytes(ws.path, path), old)
    return discover(diffs, sources)


def measure(ctx: CoverContext, methods: Sequence[ChangedMethod]) -> tuple[LineCoverage, set[str]]:
    """Run every test of each language with coverage of its changed files.

    Returns the merged reports and the languages whose coverage was measured.
    """
    merged: LineCoverage = {}
    measured: set[str] = set()
    for language, runner in ctx.runners.items():
        files = sorted({m.path for m in methods if m.language == language})
        if not files:
            continue
        got = runner.run(coverage_of=files)
        if got.timed_out or (got.problem and not got.tests):
            ctx.warn(f"coverage not measured for {language}: {got.problem or 'the run timed out'}")
            continue
        if got.failing():
            names = ", ".join(t.id for t in got.failing()[:5])
            ctx.warn(f"{len(got.failing())} existing test(s) fail on the PR head: {names}")
        if got.coverage is None:
            ctx.warn(f"coverage not measured for {language}: the run wrote no coverage report")
            continue
        merged.update(got.coverage)
        measured.add(language)
    return merged, measured
