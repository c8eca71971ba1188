"""Proof-carrying fixes: the runner, not the model, checks the regression test (issue #20).

The tests the change adds or edits are run twice with the repository's test command:
on the base commit (the new test files copied onto the base code, in a worktree of
their own) and on the head. A fix is proven when they fail on the base for the right
reason (an assertion, or the behaviour missing: a name the project does not have yet)
and pass on the head. A test that already passes on the base proves nothing; one that
cannot even be collected there for its own fault (a syntax error, an unknown fixture, a
missing third-party module) proves nothing either. The evidence goes into the PR body.

Checked for pytest (the runner whose failure lines say why); other runners get no
verdict, and the PR says so.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from bot.clock import Clock
from bot.git import Workspace
from bot.models import TestResult
from bot.validation import run_command
from bot.validation.parsers import parse_test_counts, strip_ansi
from bot.validation.unittest_counts import parse_unittest
from bot.workflows.steps.finish_check import is_test
from bot.workflows.steps.proof.trees import (
    RESOLVE,
    direct,
    env_for,
    generated,
    lay,
    module_under_test,
    python_of,
    resolved,
    runner_of,
    test_script,
    tree,
)  # fmt: skip
from bot.workflows.steps.workenv import WorkEnv

PROVEN, UNPROVEN, ALREADY_PASSES, NOT_CHECKED = "proven", "unproven", "passes-on-base", "unchecked"

# A test id runs to the reason's ` - `; a parametrized id's brackets may hold spaces.
_SUMMARY = re.compile(r"^(FAILED|ERROR) ((?:[^\s\[]+|\[[^\n]*?\])+)(?: - (.*))?$", re.MULTILINE)
_SHORT_SUMMARY = " short test summary info "
_END = re.compile(r"^=*\s*(?:\d+ \w+(?:, )?)+ in [\d.]+s", re.MULTILINE)
_E_LINE = re.compile(r"^E\s+(.+)$", re.MULTILINE)
# The test itself is broken on the base, whatever the fix: no proof.
_OWN_FAULT = re.compile(r"SyntaxError|IndentationError|fixture '[^']+' not found")
_PY = ("pytest", "unittest")
_NO_MODULE = re.compile(r"ModuleNotFoundError: No module named '([\w.]+)'")


@dataclass(frozen=True)
class Proof:
    """The verdict on the change's tests, and the evidence."""

    status: str
    tests: list[str] = field(default_factory=list)
    """The test files run."""
    base_sha: str = ""
    base_failures: list[tuple[str, str]] = field(default_factory=list)
    """(test id, the failure line on the base)."""
    head_line: str = ""
    """The head run's summary line (`2 passed in 0.1s`)."""
    note: str = ""

    def section(self) -> str:
        """The PR body's section with the evidence."""
        title = "## Proof of the fix"
        files = ", ".join(f"`{t}`" for t in self.tests)
        if self.status == PROVEN:
            rows = "\n".join(
                f"| {_cell(test)} | ❌ {_cell(line)} | ✅ passed |"
                for test, line in self.base_failures
            )
            return (
                f"{title}\nChecked by agentbot, not by the model: the change's tests ({files})"
                f" fail on the base commit `{self.base_sha[:12]}` and pass on this branch"
                f" ({self.head_line or 'passed'}).\n\n| test | on base | on this branch |\n"
                f"| --- | --- | --- |\n{rows}"
            )
        if self.status == NOT_CHECKED:
            return f"{title}\nNot checked: {self.note}"
        return f"{title}\n**Unproven:** {self.note}"


def sent_back(proof: Proof) -> str:
    """The message that sends a test passing on the base back to the agent (once)."""
    return (
        f"agentbot ran your tests on the base commit, without your fix: {proof.note}. A"
        " regression test must fail without the fix (an assertion on the behaviour the issue"
        " describes) and pass with it. Change the test so it does, run it, and call `finish`"
        " again. If it stays as it is, the pull request says the fix is unproven."
    )


def _cell(text: str) -> str:
    return "`" + text.replace("|", "\\|").replace("`", "'")[:160] + "`"


def changed_tests(ws: Workspace, base_sha: str) -> list[str]:
    """The test files the change adds or edits (that still exist)."""
    return [f for f in ws.changed_files(base_sha) if is_test(f) and (ws.path / f).is_file()]


def prove(ws: Workspace, base_sha: str, workenv: WorkEnv | None, *, clock: Clock) -> Proof:
    """Run the change's tests on the base and on the head; see the module doc."""
    tests = changed_tests(ws, base_sha)
    if not tests:
        return Proof(NOT_CHECKED, note="the change adds or edits no test")
    if workenv is None or workenv.stage_env is None or workenv.test is None:
        return Proof(NOT_CHECKED, tests, note="no test command was resolved")
    runner = runner_of(workenv.test.runner, workenv.test.command, ws.path)
    command = direct(runner, tests, test_script(workenv.test.command, ws.path))
    if command is None:
        return Proof(NOT_CHECKED, tests, note=f"the {runner} runner is not checked")
    module = module_under_test(ws.changed_files(base_sha)) if runner in _PY else ""
    head = _run(ws, base_sha, workenv, command, runner, module, head=True, clock=clock)
    if head is None:
        return Proof(NOT_CHECKED, tests, note="the commits could not be checked out")
    if not head.passed:
        return Proof(UNPROVEN, tests, base_sha, note=f"on this branch {head.why}")
    base = _run(ws, base_sha, workenv, command, runner, module, head=False, clock=clock)
    if base is None:
        return Proof(NOT_CHECKED, tests, note="the base commit could not be checked out")
    if module and base.origin and not base.origin_in_tree:
        return Proof(
            NOT_CHECKED, tests, base_sha,
            note=f"`{module}` resolves outside the base checkout ({base.origin}): a compiled"
            " or installed package, so the base's code could not be run (compiled extensions"
            " are not checked)",
        )  # fmt: skip
    return _verdict(ws, base_sha, tests, runner, head, base)


@dataclass(frozen=True)
class _Run:
    """One run of the change's tests in a proof tree."""

    exit_code: int
    output: str
    counts: TestResult | None
    origin: str = ""
    """Where the package under test resolved, relative to the tree when inside it."""
    origin_in_tree: bool = False

    @property
    def passed(self) -> bool:
        """Exit 0 with a read summary of at least one test, none failing."""
        c = self.counts
        return self.exit_code == 0 and c is not None and c.test_count > 0 and c.failed_count == 0

    @property
    def why(self) -> str:
        """Why this run is no pass."""
        if self.counts is None:
            last = _last_line(self.output)
            return f"the runner's summary could not be read (exit {self.exit_code}): {last}"
        if self.counts.test_count == 0:
            return "no test ran"
        return f"the tests fail: {_last_line(self.output)}"


def _run(
    ws: Workspace,
    base_sha: str,
    workenv: WorkEnv,
    command: str,
    runner: str,
    module: str,
    *,
    head: bool,
    clock: Clock,
) -> _Run | None:
    """The change's tests in a fresh tree of the base (with the head's files when `head`)."""
    senv = workenv.stage_env
    assert senv is not None
    changed = ws.changed_files(base_sha)
    with tree(ws, base_sha, senv) as path:
        if path is None:
            return None
        made = [g for g in generated(ws) if not (path / g).exists()]
        lay(ws, path, made)
        if head:
            lay(ws, path, changed, deleted=_deleted(ws, base_sha))
        else:
            lay(ws, path, changed_tests(ws, base_sha))
        env = env_for(senv, path, runner)
        writable = [path, *(p for p in senv.writable if p != senv.repo)]
        origin, inside = "", False
        if module:
            py = shlex.quote(python_of(workenv.test.command if workenv.test else ""))
            resolve = RESOLVE.replace("python", py, 1) + shlex.quote(module)
            found = run_command(
                resolve, path, env=env, timeout=120, clock=clock,
                sandbox=senv.sandbox, writable=writable, readable=[senv.repo, *senv.readable],
            )  # fmt: skip
            origin = resolved(found.output)
            if origin and Path(origin).resolve().is_relative_to(path.resolve()):
                origin, inside = str(Path(origin).resolve().relative_to(path.resolve())), True
        result = run_command(
            command, path, env=env, timeout=600, clock=clock, sandbox=senv.sandbox,
            writable=writable, readable=[senv.repo, *senv.readable],
        )  # fmt: skip
    # A project's own `--color=yes` (humanize's addopts) colours the summary the verdict reads.
    output = strip_ansi(result.output)
    counts = parse_unittest(output) if runner == "unittest" else parse_test_counts(runner, output)
    return _Run(result.exit_code, output, counts, origin, inside)


def _deleted(ws: Workspace, base_sha: str) -> list[str]:
    out = ws.git("diff", "--name-only", "-z", "--no-renames", "--diff-filter=D", base_sha)
    return [p for p in out.split("\0") if p]


def _verdict(
    ws: Workspace, base_sha: str, tests: list[str], runner: str, head: _Run, base: _Run
) -> Proof:
    """Proven when the base run fails for the right reason; see the module doc."""
    shown = (
        f"; `{base.origin}` imported from the base checkout, `{head.origin}` on this branch"
        if base.origin
        else ""
    )
    head_line = (_last_line(head.output) + shown)[:300]
    if runner == "pytest":
        failures = base_failures(base.output, tests)
    else:
        failures = [(t, "failed") for t in (base.counts.failed_tests if base.counts else [])]
        if not failures and base.exit_code != 0 and base.counts is not None:
            failures = [(", ".join(tests), _last_line(base.output))]
    if base.exit_code == 0 or not failures:
        return Proof(
            ALREADY_PASSES, tests, base_sha,
            note=f"the change's tests ({', '.join(tests)}) already pass on the base commit"
            f" `{base_sha[:12]}`, so they do not show the bug this change fixes",
        )  # fmt: skip
    kinds = {m.group(1) for m in _SUMMARY.finditer(_summary_block(base.output))}
    pytest_errors_only = runner == "pytest" and kinds == {"ERROR"}
    if (pytest_errors_only or runner != "pytest") and (fault := own_fault(ws.path, base.output)):
        return Proof(
            UNPROVEN, tests, base_sha,
            note="the change's tests cannot even run on the base commit for a fault of their"
            f" own ({fault}), so they do not show the bug",
        )  # fmt: skip
    lines = _E_LINE.findall(base.output)
    evidence = [(test, why or (lines[0] if lines else "failed")) for test, why in failures]
    return Proof(PROVEN, tests, base_sha, evidence, head_line)


def base_failures(output: str, tests: list[str]) -> list[tuple[str, str]]:
    """(test id, why) of the run's failures: read from pytest's last short summary only (a line
    a test prints is in its captured output, before it), for the change's test files only,
    each once. What the test prints can still imitate a summary; the table escapes it."""
    found: dict[str, str] = {}
    for m in _SUMMARY.finditer(_summary_block(output)):
        test = m.group(2)
        if any(test.startswith(f"{t}::") for t in tests) and test not in found:
            found[test] = m.group(3) or ""
    return list(found.items())


def _summary_block(output: str) -> str:
    """From pytest's last `short test summary info` header to the summary line after it (the
    whole output when there is no header): what an exit hook prints after it is not pytest's."""
    start = output.rfind(_SHORT_SUMMARY)
    block = output[start:] if start >= 0 else output
    end = _END.search(block)
    return block[: end.end()] if end else block


def own_fault(repo: Path, output: str) -> str:
    """Why the tests fail on the base through no lack of the fix ("" when they don't)."""
    if found := _OWN_FAULT.search(output):
        return found.group(0)
    for name in _NO_MODULE.findall(output):
        top = name.split(".")[0]
        # A module of the project the fix adds is the missing behaviour; any other is not.
        if not any((repo / d / p).exists() for d in ("", "src") for p in (top, f"{top}.py")):
            return f"No module named '{name}'"
    return ""


def _last_line(output: str) -> str:
    lines = [ln.strip(" =") for ln in output.strip().splitlines() if ln.strip(" =")]
    return lines[-1][:200] if lines else ""
