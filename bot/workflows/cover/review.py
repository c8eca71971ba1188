"""The reviewer stage of /cover: agentbot itself proves the new tests test something.

The changed test files must pass on the pull request's head and hold new tests; then they
run once per mutant of the method, and each new test that no mutant makes fail is removed
from its file (a file the writer created and so emptied goes). No model is involved.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from bot import treefs
from bot.cover.discovery import ChangedMethod
from bot.cover.languages import language_for
from bot.cover.metadata import WrittenTests
from bot.cover.mutation import equivalent, mutants, replace_source
from bot.cover.prune import drop_tests
from bot.cover.results import CaseResult
from bot.cover.runners import SuiteRunner
from bot.errors import CoverStageError
from bot.workflows.cover.context import CoverContext


@dataclass
class Review:
    """What the reviewer kept and dropped, and the mutants it ran."""

    kept: list[CaseResult] = field(default_factory=list)
    dropped: list[CaseResult] = field(default_factory=list)
    mutants: int = 0
    killed: int = 0
    files: list[str] = field(default_factory=list)
    """The test files left changed (an emptied new file is gone)."""


def review(
    ctx: CoverContext, method: ChangedMethod, runner: SuiteRunner, tests: WrittenTests
) -> Review:
    """Run, mutate, drop; CoverStageError("reviewer", …) when the tests cannot be trusted."""
    first = runner.run(tests.files)
    if first.timed_out or first.problem:
        why = "timed out" if first.timed_out else first.problem
        raise _fail(method, f"the test run errored ({why}): {first.output[-800:]}")
    failing = first.failing()
    if failing:
        names = ", ".join(t.id for t in failing[:5])
        raise _fail(method, f"{len(failing)} test(s) fail on the PR head: {names}")
    new = [t for t in first.tests if t.id not in set(tests.existing)]
    if not new:
        raise _fail(method, f"no new test found in {', '.join(tests.files)}")
    kills, total, killed = _mutate(
        ctx, method, runner, tests.files, new, timeout=max(30.0, 5 * first.duration + 10)
    )
    dropped = [t for t in new if total and kills[t.id] == 0]
    files = _drop(ctx, method, runner, tests, new, dropped) if dropped else list(tests.files)
    kept = [t for t in new if t not in dropped]
    return Review(kept=kept, dropped=dropped, mutants=total, killed=killed, files=files)


_TELLS = (
    "the new tests fail on an equivalent copy of the code (a comment added at its end): they"
    " tell the file apart (its bytes, hash or time), not its behaviour, so no mutant can judge"
    " them"
)


def _fail(method: ChangedMethod, reason: str) -> CoverStageError:
    return CoverStageError("reviewer", method.id, reason)


def _mutate(
    ctx: CoverContext,
    method: ChangedMethod,
    runner: SuiteRunner,
    files: list[str],
    new: list[CaseResult],
    *,
    timeout: float,
) -> tuple[dict[str, int], int, int]:
    """Run the test files on each mutant: kills per new test, mutants made, mutants killed."""
    lang = language_for(method.path)
    fn = method.function
    try:
        original = treefs.read_bytes(ctx.ws_path, method.path)
    except OSError as exc:  # the repository's own tests replaced it (a link, a FIFO)
        why = f"{method.path} is no longer a plain file after the test run: {exc}"
        raise _fail(method, why) from None
    found = mutants(original, lang, fn.start_line, fn.end_line) if lang else []
    kills = {t.id: 0 for t in new}
    killed = 0
    try:
        if found:
            replace_source(ctx.ws_path, method.path, equivalent(original, method.path))
            control = runner.run(files, timeout=timeout)
            if {t.id for t in control.tests if not t.passed} & kills.keys() or control.timed_out:
                raise _fail(method, _TELLS)
        for mutant in found:
            replace_source(ctx.ws_path, method.path, mutant.apply(original))
            got = runner.run(files, timeout=timeout)
            failed = {t.id for t in got.tests if not t.passed} & kills.keys()
            for test_id in failed:
                kills[test_id] += 1
            killed += bool(failed or got.timed_out)
    finally:
        replace_source(ctx.ws_path, method.path, original)
    if not found:
        ctx.warn(f"{method.id}: no mutant could be made; its tests are kept unproven")
    return kills, len(found), killed


def _drop(
    ctx: CoverContext,
    method: ChangedMethod,
    runner: SuiteRunner,
    tests: WrittenTests,
    new: list[CaseResult],
    dropped: list[CaseResult],
) -> list[str]:
    """Remove the tests that test nothing; returns the test files still changed."""
    remaining = list(tests.files)
    for file in tests.files:
        lang = language_for(file)
        mine = [t for t in dropped if t.file == file]
        if lang is None or not mine:
            continue
        kept_new = [t for t in new if t.file == file and t not in mine]
        held = [i for i in tests.existing if i.startswith(f"{file}::")]
        if not kept_new and not held and not ctx.tracked(file):
            treefs.remove(ctx.ws_path, file, prune=False)
            remaining.remove(file)
            continue
        kept = drop_tests(treefs.read_bytes(ctx.ws_path, file), lang, mine)
        treefs.write_bytes(ctx.ws_path, file, kept)
    if remaining:
        again = runner.run(remaining)
        if again.failing() or again.problem or again.timed_out:
            raise _fail(method, "the tests left after dropping the useless ones fail")
        if {t.id for t in again.tests} & {t.id for t in dropped}:
            raise _fail(method, "a test that tests nothing could not be removed")
    return remaining
