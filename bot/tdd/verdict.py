"""The runner's verdicts on a phase (pure): RED for the right reason, overshoot, GREEN.

A RED is accepted only when the new test ran and failed on the code under test: an
assertion, or a name, attribute or module of the project that does not exist yet. A
syntax error, an import of something that is neither installed nor the project's, or a
fixture error is the test's own fault: the Tester is told so and tries again. A suite that
passes at once with one more test is an overshoot. Reasons are read from the runner's own
output, per language, since the text is all every runner prints.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass

from bot.models import TestResult
from bot.validation.parsers import strip_ansi

RIGHT_REASONS = ("assertion", "missing name", "error in the code under test")
OVERSHOOT = "overshoot"
NO_NEW_TEST = "no new test was collected: name and place it as the runner expects"
ENVIRONMENT = "environment problem"
"""A RED whose run did not execute the new test (the runner could not start, its summary
could not be read): rejected, and not the Tester's to fix."""
_CANNOT_START = re.compile(
    r"(?:^|: )(?:line \d+: )?[\w./+-]+: (?:command )?not found$"
    r"|No module named (?:pytest|unittest)$",
    re.M,
)
EXCERPT = 3000


@dataclass(frozen=True)
class SuiteRun:
    """One run of the repository's test command."""

    output: str
    exit_code: int
    counts: TestResult | None
    timed_out: bool = False

    @property
    def green(self) -> bool:
        """Every test passed (and the runner said so, when its summary could be read)."""
        ok = self.exit_code == 0 and not self.timed_out
        return ok and (self.counts is None or self.counts.passed)

    @property
    def total(self) -> int:
        """Tests the runner counted (0 when its summary could not be read)."""
        return self.counts.test_count if self.counts is not None else 0


@dataclass(frozen=True)
class Verdict:
    """What the runner says of a phase: accepted or not, why, and the evidence."""

    ok: bool
    reason: str
    detail: str = ""

    def tell(self) -> str:
        """The message for the agent whose work was judged."""
        head = f"The runner's verdict: {self.reason}."
        return f"{head}\n\n```\n{self.detail}\n```" if self.detail else head


def excerpt(output: str, limit: int = EXCERPT) -> str:
    """The end of a run's output (where runners put failures and summaries)."""
    text = strip_ansi(output).strip()
    return text if len(text) <= limit else "…\n" + text[-limit:]


def judge_red(language: str, run: SuiteRun, before: int, project: Collection[str]) -> Verdict:
    """RED verified: the new test fails for the right reason (`before`: tests counted before)."""
    detail = excerpt(run.output)
    if run.timed_out:
        return Verdict(False, "the test run timed out", detail)
    if run.green:
        if run.total > before:
            return Verdict(False, OVERSHOOT + ": the new test passes without any new code", detail)
        return Verdict(False, NO_NEW_TEST, detail)
    if run.counts is not None and run.counts.failed_count == 0:
        return Verdict(False, NO_NEW_TEST, detail)  # red, yet no test failed: none ran
    if run.counts is not None and run.counts.failed_count > 1:
        return Verdict(False, "more than one test fails: write exactly one new test", detail)
    text = strip_ansi(run.output)
    if run.counts is None and (run.exit_code in (126, 127) or _CANNOT_START.search(text)):
        return Verdict(False, f"{ENVIRONMENT}: the test runner could not start", detail)
    reason = _LANGUAGES.get(language, _python)(text, set(project))
    if reason is None and run.counts is None:
        why = "the runner's summary could not be read, so the new test was not seen to run"
        return Verdict(False, f"{ENVIRONMENT}: {why}", detail)
    if reason is None:
        return Verdict(True, "error in the code under test", detail)
    return Verdict(reason in RIGHT_REASONS, reason, detail)


def judge_green(run: SuiteRun, at_least: int = 0) -> Verdict:
    """GREEN verified: the whole suite passes, by its exit code and by the runner's counts of
    at least `at_least` tests (the RED run's: a run that collected or ran fewer is no proof)."""
    if run.green and run.counts is None:
        return Verdict(False, "the runner's summary could not be read", excerpt(run.output))
    if run.green and run.total < at_least:
        return Verdict(
            False,
            f"only {run.total} test(s) ran, {at_least} expected: every test must run",
            excerpt(run.output),
        )
    if run.green:
        return Verdict(True, "green")
    if run.timed_out:
        return Verdict(False, "the test run timed out", excerpt(run.output))
    failed = ", ".join(run.counts.failed_tests[:5]) if run.counts else ""
    return Verdict(False, "tests fail" + (f": {failed}" if failed else ""), excerpt(run.output))


# --- per language: the reason a red run gives, or None for "some other error" --------------

_PY_SYNTAX = re.compile(r"^E?\s*(?:SyntaxError|IndentationError|TabError)\b", re.M)
_PY_FIXTURE = re.compile(r"fixture '[\w]+' not found|^_* ERROR at (?:setup|teardown) of ", re.M)
_PY_NO_MODULE = re.compile(r"No module named '([\w.]+)'")
_PY_NO_NAME = re.compile(r"cannot import name '(\w+)' from '([\w.]+)'")
_PY_ASSERT = re.compile(r"^E\s+(?:AssertionError\b|assert\b)", re.M)
_PY_MISSING = re.compile(
    r"^E\s+(?:NameError|AttributeError|NotImplementedError|ModuleNotFoundError)\b", re.M
)


def _python(text: str, project: set[str]) -> str | None:
    if _PY_SYNTAX.search(text) or "SyntaxError: " in text:
        return "syntax error in the test"
    if _PY_FIXTURE.search(text):
        return "fixture error"
    for module in _PY_NO_MODULE.findall(text):
        if module.split(".")[0] not in project:
            return (
                f"import error of the test file itself: `{module}` is neither installed nor"
                f" part of the project ({', '.join(sorted(project)) or 'no package yet'})"
            )
    for name, module in _PY_NO_NAME.findall(text):
        if module.split(".")[0] not in project:
            return f"import error of the test file itself: `{name}` from `{module}`"
    if _PY_NO_MODULE.search(text) or _PY_NO_NAME.search(text):
        return "missing name"
    if _PY_ASSERT.search(text):
        return "assertion"
    if _PY_MISSING.search(text):
        return "missing name"
    if "ERROR collecting" in text or "Interrupted: " in text:
        return "the test file could not be collected"
    return None


_JS_SYNTAX = re.compile(r"SyntaxError: (?!The requested module .* does not provide an export)")
_JS_MISSING = re.compile(
    r"does not provide an export named|is not a function|is not a constructor|is not defined"
    r"|Cannot read propert(?:y|ies) of undefined"
)
_JS_NO_MODULE = re.compile(r"Cannot find (?:module|package) '([^']+)'")
_JS_ASSERT = re.compile(r"AssertionError|ERR_ASSERTION|expect\(received\)|Expected:")


_JS_REQUIRER = re.compile(r"Require stack:\s*\n[#\s]*- (\S+)")
_TEST_DIR = re.compile(r"(?:^|/)(?:tests?|__tests__|spec)/[^/]*$")


def _js(text: str, project: set[str]) -> str | None:
    if _JS_SYNTAX.search(text):
        return "syntax error in the test"
    requirer = _JS_REQUIRER.search(text)
    in_tests = bool(requirer and _TEST_DIR.search(requirer[1]))
    for spec in _JS_NO_MODULE.findall(text):
        # `../src/x` from a test folder is the code under test, not written yet; `./helper`
        # from a test folder, or a package that is not installed, is the test's own fault.
        if spec.startswith("./") and in_tests:
            return f"import error of the test file itself: cannot find `{spec}`"
        if not spec.startswith(".") and spec.split("/")[0] not in project:
            return f"import error of the test file itself: cannot find `{spec}`"
    if _JS_NO_MODULE.search(text) or _JS_MISSING.search(text):
        return "missing name"
    if _JS_ASSERT.search(text):
        return "assertion"
    return None


def _go(text: str, project: set[str]) -> str | None:
    if re.search(r"syntax error|expected '[^']+', found", text):
        return "syntax error in the test"
    if re.search(r"undefined: \w+|has no field or method", text):
        return "missing name"
    if re.search(r"no required module provides package|cannot find package", text):
        return "import error of the test file itself"
    return "assertion" if "--- FAIL" in text else None


_RS_MISSING = re.compile(
    r"cannot find (?:function|value|type|struct|macro) `|no (?:function|method) .*named"
    r"|unresolved import `(?:crate|super)::"
)
_RS_IMPORT = re.compile(r"unresolved import `(\w+)::")


def _rust(text: str, project: set[str]) -> str | None:
    if re.search(r"^error: expected |^error: mismatched closing delimiter", text, re.M):
        return "syntax error in the test"
    if _RS_MISSING.search(text):
        return "missing name"
    # An integration test imports the crate by name: a missing item of it is the code's.
    if any(name in project for name in _RS_IMPORT.findall(text)):
        return "missing name"
    if re.search(r"unresolved import|can't find crate", text):
        return "import error of the test file itself"
    return "assertion" if re.search(r"panicked at|assertion `?left == right", text) else None


_LANGUAGES = {
    "python": _python,
    "js": _js,
    "ts": _js,
    "javascript": _js,
    "typescript": _js,
    "go": _go,
    "rust": _rust,
}
