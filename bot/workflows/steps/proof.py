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
import secrets
import shlex
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from bot.clock import Clock
from bot.git import Workspace
from bot.validation import run_command
from bot.validation.changes import TreeGuard
from bot.workflows.steps.finish_check import is_test
from bot.workflows.steps.workenv import WorkEnv

PROVEN, UNPROVEN, ALREADY_PASSES, NOT_CHECKED = "proven", "unproven", "passes-on-base", "unchecked"

_SUMMARY = re.compile(r"^(FAILED|ERROR) (\S+)(?: - (.*))?$", re.MULTILINE)
_SHORT_SUMMARY = " short test summary info "
_END = re.compile(r"^=*\s*(?:\d+ \w+(?:, )?)+ in [\d.]+s", re.MULTILINE)
_E_LINE = re.compile(r"^E\s+(.+)$", re.MULTILINE)
# The test itself is broken on the base, whatever the fix: no proof.
_OWN_FAULT = re.compile(r"SyntaxError|IndentationError|fixture '[^']+' not found")
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
    if workenv.test.runner != "pytest":
        return Proof(NOT_CHECKED, tests, note=f"the {workenv.test.runner} runner is not checked")
    senv, command = workenv.stage_env, workenv.test.command
    run = f"{command} {' '.join(shlex.quote(t) for t in tests)}"
    guard = TreeGuard(ws.path)  # the head run leaves the change as the agent left it
    before = guard.snapshot()
    head = run_command(
        run, ws.path, env=senv.env, timeout=600, clock=clock, sandbox=senv.sandbox,
        writable=senv.writable,
    )  # fmt: skip
    guard.settle(before)
    head_line = _last_line(head.output)
    if not head.success:
        return Proof(UNPROVEN, tests, base_sha, note=f"the tests fail on this branch: {head_line}")
    base = _on_base(ws, base_sha, tests, run, workenv, clock=clock)
    if base is None:
        return Proof(NOT_CHECKED, tests, note="the base commit could not be checked out")
    exit_code, output = base
    failures = base_failures(output, tests)
    if exit_code == 0 or not failures:
        return Proof(
            ALREADY_PASSES, tests, base_sha,
            note=f"the change's tests ({', '.join(tests)}) already pass on the base commit"
            f" `{base_sha[:12]}`, so they do not show the bug this change fixes",
        )  # fmt: skip
    kinds = {m.group(1) for m in _SUMMARY.finditer(_summary_block(output))}
    if kinds == {"ERROR"} and (fault := own_fault(ws.path, output)):
        return Proof(
            UNPROVEN, tests, base_sha,
            note="the change's tests cannot even run on the base commit for a fault of their"
            f" own ({fault}), so they do not show the bug",
        )  # fmt: skip
    lines = _E_LINE.findall(output)
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


def _on_base(
    ws: Workspace, base_sha: str, tests: list[str], run: str, workenv: WorkEnv, *, clock: Clock
) -> tuple[int, str] | None:
    """Exit code and output of `run` on the base code with the head's test files."""
    senv = workenv.stage_env
    assert senv is not None
    # Named like the workspace (…/<repo>-<job>), no `proof` or sha in it: a test has a
    # harder time telling the base run from the head's by where it runs.
    tmp = senv.data_dir / "worktrees" / secrets.token_hex(6) / ws.path.name
    tmp.parent.mkdir(parents=True, exist_ok=True)
    added = ws.run(["worktree", "add", "--detach", "--quiet", str(tmp), base_sha], check=False)
    if added.returncode != 0:
        return None
    try:
        for test in tests:
            target = tmp / test
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(ws.path / test, target)
        env = dict(senv.env)
        env["PYTHONPATH"] = ":".join(str(p) for p in (tmp / "src", tmp))
        result = run_command(
            run, tmp, env=env, timeout=600, clock=clock, sandbox=senv.sandbox,
            writable=[tmp, *(p for p in senv.writable if p != senv.repo)], readable=[senv.repo],
        )  # fmt: skip
        return result.exit_code, result.output
    finally:
        ws.run(["worktree", "remove", "--force", "--force", str(tmp)], check=False)
        shutil.rmtree(tmp.parent, ignore_errors=True)
        ws.run(["worktree", "prune"], check=False)


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
