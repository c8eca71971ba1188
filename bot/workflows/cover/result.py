"""The end of a /cover run: one commit of test files only, and the result's items."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import PurePosixPath
from typing import Any

from bot.cover.discovery import ChangedMethod
from bot.cover.table import MethodReport
from bot.errors import AgentbotError
from bot.git import Workspace
from bot.outbound.paths import TEST_PATH
from bot.report import commit_scope, subject_line

BODY = "Tests written by agentbot /cover; each fails on a mutant of the method it covers."


def nothing_message(targets: Sequence[str], found: Sequence[ChangedMethod]) -> str:
    """Why there is nothing to cover: no method changed, or none the targets name."""
    if targets and found:
        names = ", ".join(f"`{m.function.qualname}`" for m in found)
        return f"No changed method matches {', '.join(targets)}; changed: {names}."
    return "This pull request adds or changes no function or method /cover can test."


def commit_subject(paths: Sequence[str], covered: Sequence[str]) -> str:
    """`test(<scope>): cover a, b`: the scope is the shared folder, or the one module's name."""
    scope = commit_scope(paths) or (PurePosixPath(paths[0]).stem if len(set(paths)) == 1 else "")
    head = f"test({scope})" if scope else "test"
    return subject_line(f"{head}: cover {', '.join(covered)}")


def squash(ws: Workspace, start: str, paths: Sequence[str], covered: Sequence[str]) -> str:
    """The methods' checkpoint commits as one commit on `start`; "" when there were none.

    Only test files may be in it; the push guard (bot.outbound) then judges it like any
    push: `limits.max_changed_test_lines`, protected paths, file sizes, secrets.
    """
    if ws.head_sha() == start:
        return ""
    ws.git("reset", "--soft", start)
    staged = [p for p in ws.git("diff", "--cached", "--name-only", "-z").split("\0") if p]
    outside = [p for p in staged if not TEST_PATH.search(p)]
    if outside:
        raise AgentbotError(f"refusing to commit non-test files: {', '.join(outside)}")
    return ws.commit(f"{commit_subject(paths, covered)}\n\n{BODY}", all=False)


def _status(r: MethodReport) -> str:
    values = list(r.stages.values())
    if r.failed:
        return "failed"
    if not values:
        return "not run"
    if any(v.startswith("skipped") for v in values):
        return "skipped"
    return (
        "cached" if all(v in ("cached", "done") for v in values) and "cached" in values else "done"
    )


def _detail(r: MethodReport) -> str:
    coverage = (
        f"{r.before.label() if r.before else 'n/a'} → {r.after.label() if r.after else 'n/a'}"
    )
    reason = next((v for v in r.stages.values() if v.startswith(("failed", "skipped"))), "")
    parts = [f"{len(r.tests)} test(s)", f"changed lines {coverage}"]
    if r.mutants:
        parts.append(f"{r.killed}/{r.mutants} mutants killed")
    if r.dropped:
        parts.append(f"{len(r.dropped)} dropped")
    return "; ".join([*parts, reason] if reason else parts)


def items(reports: Sequence[MethodReport]) -> list[dict[str, Any]]:
    """One JobResult item per method (the report's row as data; `status`/`detail` for people)."""
    return [
        {
            "id": r.method_id,
            "status": _status(r),
            "detail": _detail(r),
            "zone": r.zone,
            "tests": r.tests,
            "dropped": r.dropped,
            "before": r.before.label() if r.before else "n/a",
            "after": r.after.label() if r.after else "n/a",
            "mutants": r.mutants,
            "killed": r.killed,
            "stages": r.stages,
            "cost_usd": round(r.cost_usd, 6),
        }
        for r in reports
    ]
