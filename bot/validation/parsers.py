"""Test counts and failing test ids from test runners' text output (pure functions).

Each parser reads the summary a runner prints and returns a `TestResult` whose
`passed_count + failed_count == test_count`; skipped, pending, todo and xfail cases are
`skipped_count`, outside the total. Errors outside a test (pytest collection errors,
cargo/go build failures inside a test run) count as failures, so they can never pass
silently. A parser returns None when the output holds no summary it knows.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from bot.models import TestResult

RUNNERS = (
    "pytest", "unittest", "jest", "vitest", "go", "cargo", "rspec", "mocha", "node", "tape",
)  # fmt: skip

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")

# What runners print when they found no test at all (some exit non-zero on it).
_NO_TESTS = re.compile(
    r"^\s*(?:no tests ran in [\d.]+s"  # pytest (exit 5)
    r"|No tests found, exiting with code \d"  # jest
    r"|No test files found, exiting with code \d"  # vitest
    r"|Error: No test files found"  # mocha
    r"|Error: no test specified"  # the `npm init` default test script
    r"|No examples found\."  # rspec
    r"|Ran 0 tests in [\d.]+s)",  # unittest (exit 5 since Python 3.12)
    re.MULTILINE,
)


def strip_ansi(text: str) -> str:
    """The text without terminal colour codes."""
    return _ANSI.sub("", text)


def says_no_tests(output: str) -> bool:
    """True if the output is a runner saying it found no tests (not a failure to run them)."""
    return bool(_NO_TESTS.search(strip_ansi(output)))


def _result(passed: int, failed: int, skipped: int, failed_ids: list[str]) -> TestResult:
    return TestResult(
        passed=failed == 0,
        test_count=passed + failed,
        passed_count=passed,
        failed_count=failed,
        skipped_count=skipped,
        failed_tests=list(dict.fromkeys(failed_ids)),
    )


def _counts(pairs: list[tuple[str, str]]) -> dict[str, int]:
    out: dict[str, int] = {}
    for number, word in pairs:
        out[word] = out.get(word, 0) + int(number)
    return out


# --- pytest ----------------------------------------------------------------------------------

_PYTEST_SUMMARY = re.compile(
    r"^=*\s*((?:\d+ (?:passed|failed|errors?|skipped|xfailed|xpassed|deselected|warnings?|rerun)"
    r"(?:, )?)+|no tests ran) in [\d.]+s",
    re.MULTILINE,
)
_PYTEST_PAIR = re.compile(r"(\d+) (passed|failed|errors?|skipped|xfailed|xpassed)\b")
_PYTEST_FAILED = re.compile(r"^(?:FAILED|ERROR) (.+?)(?: - .*)?$", re.MULTILINE)


def parse_pytest(output: str) -> TestResult | None:
    """`N failed, M passed, K skipped, E errors in Xs` (the last such line); errors are failures."""
    found = _PYTEST_SUMMARY.findall(output)
    if not found:
        return None
    c = _counts(_PYTEST_PAIR.findall(found[-1]))
    passed = c.get("passed", 0) + c.get("xpassed", 0)
    failed = c.get("failed", 0) + c.get("error", 0) + c.get("errors", 0)
    skipped = c.get("skipped", 0) + c.get("xfailed", 0)
    return _result(passed, failed, skipped, _PYTEST_FAILED.findall(output))


_UNITTEST_RAN = re.compile(
    r"^Ran (\d+) tests? in [\d.]+s\n\n(OK|FAILED)(?: \((.*)\))?", re.MULTILINE
)
_UNITTEST_FAILED = re.compile(r"^(?:FAIL|ERROR): (\S+) \(([\w.]+?)\)", re.MULTILINE)


def parse_unittest(output: str) -> TestResult | None:
    """`Ran 4 tests in 0.001s` then `FAILED (failures=1, errors=1, skipped=1)` or `OK (...)`."""
    found = _UNITTEST_RAN.findall(output)
    if not found:
        return None
    ran, _, detail = found[-1]
    c = {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", detail)}
    skipped = c.get("skipped", 0) + c.get("expected failures", 0)
    failed = c.get("failures", 0) + c.get("errors", 0) + c.get("unexpected successes", 0)
    # unittest's id is `module.Class.test`; the class part is what it prints in parentheses.
    ids = [
        f"{cls}.{name}" if not cls.endswith(name) else cls
        for name, cls in _UNITTEST_FAILED.findall(output)
    ]
    return _result(int(ran) - skipped - failed, failed, skipped, ids)


# --- jest and vitest -------------------------------------------------------------------------

_JEST_TESTS = re.compile(r"^Tests:\s+(.*\d+ total)\s*$", re.MULTILINE)
_JEST_PAIR = re.compile(r"(\d+) (failed|passed|skipped|todo|total)\b")
_JEST_FAILED = re.compile(r"^  ● (.+?)\s*$", re.MULTILINE)
_JEST_SUITE_FAILED = re.compile(
    r"^FAIL (\S+).*\n(?:\s*\n)*\s*● Test suite failed to run", re.MULTILINE
)


def parse_jest(output: str) -> TestResult | None:
    """`Tests: 2 failed, 1 skipped, 2 passed, 5 total`; a suite that failed to run is a failure."""
    if "No tests found, exiting with code" in output:
        return _result(0, 0, 0, [])
    found = _JEST_TESTS.findall(output)
    suites = _JEST_SUITE_FAILED.findall(output)
    if not found and not suites:
        return None
    c = _counts(_JEST_PAIR.findall(found[-1])) if found else {}
    ids = [t for t in _JEST_FAILED.findall(output) if t != "Test suite failed to run"]
    failed = c.get("failed", 0) + len(suites)
    return _result(c.get("passed", 0), failed, c.get("skipped", 0) + c.get("todo", 0), ids + suites)


_VITEST_TESTS = re.compile(r"^\s*Tests\s+(.*)\(\d+\)\s*$", re.MULTILINE)
_VITEST_FILES = re.compile(r"^\s*Test Files\s+(.*)\(\d+\)\s*$", re.MULTILINE)
_VITEST_PAIR = re.compile(r"(\d+) (failed|passed|skipped|todo)\b")
_VITEST_FAILED = re.compile(r"^ FAIL  (.+?)\s*$", re.MULTILINE)


def parse_vitest(output: str) -> TestResult | None:
    """`Tests  2 failed | 2 passed | 1 skipped (5)`; failed files with no test count as failures."""
    if "No test files found, exiting with code" in output:
        return _result(0, 0, 0, [])
    tests, files = _VITEST_TESTS.findall(output), _VITEST_FILES.findall(output)
    if not tests and not files:
        return None
    c = _counts(_VITEST_PAIR.findall(tests[-1])) if tests else {}
    ids = _VITEST_FAILED.findall(output)
    failed = c.get("failed", 0)
    if failed == 0 and files and _counts(_VITEST_PAIR.findall(files[-1])).get("failed", 0):
        # A file that failed to load has no test lines of its own; it still failed.
        failed = max(1, len(ids))
    return _result(c.get("passed", 0), failed, c.get("skipped", 0) + c.get("todo", 0), ids)


# --- mocha and node:test ---------------------------------------------------------------------

_MOCHA_COUNT = re.compile(r"^\s+(\d+) (passing|failing|pending)\b", re.MULTILINE)
_MOCHA_ENTRY = re.compile(r"^  (\d+)\) (.*)$")


def parse_mocha(output: str) -> TestResult | None:
    """`2 passing`, `1 pending`, `2 failing`; ids from the numbered failure list after them."""
    if "Error: No test files found" in output:
        return _result(0, 0, 0, [])
    c = _counts(_MOCHA_COUNT.findall(output))
    if "passing" not in c:
        return None
    ids: list[str] = []
    lines = output.splitlines()
    start = next((i for i, ln in enumerate(lines) if re.match(r"^\s+\d+ failing", ln)), len(lines))
    i = start + 1
    while i < len(lines):
        m = _MOCHA_ENTRY.match(lines[i])
        if m:
            # A title spans lines (suite, then test) and ends with ':'.
            parts, text = [], m.group(2)
            while True:
                parts.append(text.strip().rstrip(":"))
                if text.rstrip().endswith(":") or i + 1 >= len(lines):
                    break
                i += 1
                text = lines[i]
            ids.append(" ".join(parts))
        i += 1
    return _result(c["passing"], c.get("failing", 0), c.get("pending", 0), ids)


_NODE_COUNT = re.compile(
    r"^(?:#|ℹ) (tests|pass|fail|cancelled|skipped|todo) (\d+)\s*$", re.MULTILINE
)
_TAP_LINE = re.compile(r"^( *)(?:# Subtest: (.*)|(not ok|ok) \d+ - (.*?)(?: # (?:SKIP|TODO).*)?)$")


def parse_node(output: str) -> TestResult | None:
    """node:test (`--test`), TAP or spec reporter: `# tests 5`, `# pass 2`, `# fail 2`…"""
    c = {k: int(v) for k, v in _NODE_COUNT.findall(output)}
    if "tests" not in c or "pass" not in c:
        return None
    failed = c.get("fail", 0) + c.get("cancelled", 0)
    return _result(c["pass"], failed, c.get("skipped", 0) + c.get("todo", 0), _node_ids(output))


def _node_ids(output: str) -> list[str]:
    """Failing leaf tests as `suite > test`; a suite failing only through a child is left out."""
    lines = output.splitlines()
    path: dict[int, str] = {}
    ids: list[str] = []
    for i, line in enumerate(lines):
        m = _TAP_LINE.match(line)
        if not m:
            continue
        depth = len(m.group(1)) // 4
        if m.group(2) is not None:
            path[depth] = m.group(2)
            continue
        if m.group(3) == "not ok":
            block = "\n".join(lines[i + 1 : i + 12])
            if "failureType: 'subtestsFailed'" not in block:
                ids.append(" > ".join([path[d] for d in range(depth) if d in path] + [m.group(4)]))
    if not ids and "✖ failing tests:" in output:
        # The spec reporter lists failing tests (without their suite) at the end.
        tail = output.split("✖ failing tests:", 1)[1]
        ids = re.findall(r"^✖ (.*?) \([\d.]+m?s\)\s*$", tail, re.MULTILINE)
    return ids


_TAPE_TEST = re.compile(r"^# (?!(?:tests|pass|fail|todo|skip)\s+\d+\s*$|ok\s*$)(.+?)\s*$")


def parse_tape(output: str) -> TestResult | None:
    """tape's TAP: `# name` opens a test, `not ok N msg` fails it; ids are the test names."""
    summary = re.findall(r"^# (tests|pass|fail) +(\d+)\s*$", output, re.MULTILINE)
    if "tests" not in dict(summary):
        return None
    tests: list[str] = []
    failed: list[str] = []
    skipped = 0
    for line in output.splitlines():
        if line.startswith("# SKIP "):
            skipped += 1
        elif (m := _TAPE_TEST.match(line)) is not None:
            tests.append(m.group(1))
        elif line.startswith("not ok ") and tests and (not failed or failed[-1] != tests[-1]):
            failed.append(tests[-1])
    # tape counts assertions, not tests: a test is the unit a change can break or fix.
    return _result(len(tests) - len(failed), len(failed), skipped, failed)


# --- go, cargo, rspec ------------------------------------------------------------------------

_GO_RESULT = re.compile(r"^(\s*)--- (PASS|FAIL|SKIP): (\S+)")
_GO_PKG = re.compile(r"^(ok|FAIL|\?) *\t(\S+)(.*)$")  # `ok  \tpkg\t0.01s`


def parse_go(output: str) -> TestResult | None:
    """`go test [-v]`: leaf tests (subtests, not their parents) per package; build failures fail."""
    pending: list[tuple[str, str]] = []  # (status, name) until the package line names them
    results: list[tuple[str, str]] = []  # (status, pkg.name)
    packages = tested = 0
    for line in output.splitlines():
        m = _GO_RESULT.match(line)
        if m:
            pending.append((m.group(2), m.group(3)))
            continue
        p = _GO_PKG.match(line)
        if p:
            packages += 1
            tested += p.group(1) != "?"
            pkg, rest = p.group(2), p.group(3)
            if "[build failed]" in rest or "[setup failed]" in rest:
                pending.append(("FAIL", "[build failed]"))
            names = {n for _, n in pending}
            for status, name in pending:
                if not any(other.startswith(name + "/") for other in names):
                    results.append((status, f"{pkg}.{name}" if not name.startswith("[") else pkg))
            pending = []
    if not packages:
        return None
    failed = [n for s, n in results if s == "FAIL"]
    passed = sum(1 for s, _ in results if s == "PASS")
    res = _result(passed, len(failed), sum(1 for s, _ in results if s == "SKIP"), failed)
    if tested and "=== RUN" not in output:
        # Without -v go prints no line per passing test: the pass count is unknown, not 0.
        if not failed:
            return None
        res = res.model_copy(update={"error_message": "pass counts need `go test -v`"})
    return res


_CARGO_RESULT = re.compile(
    r"^test result: \w+\. (\d+) passed; (\d+) failed; (\d+) ignored; (\d+) measured",
    re.MULTILINE,
)
_CARGO_FAILED = re.compile(r"^test (.+?) \.\.\. FAILED\s*$", re.MULTILINE)


def parse_cargo(output: str) -> TestResult | None:
    """Sum of every `test result:` line (unit, integration and doc tests)."""
    found = _CARGO_RESULT.findall(output)
    if not found:
        return None
    passed = sum(int(p) for p, _, _, _ in found)
    failed = sum(int(f) for _, f, _, _ in found)
    ignored = sum(int(i) for _, _, i, _ in found)
    return _result(passed, failed, ignored, _CARGO_FAILED.findall(output))


_RSPEC_SUMMARY = re.compile(
    r"^(\d+) examples?, (\d+) failures?(?:, (\d+) pending)?"
    r"(?:, (\d+) errors? occurred outside of examples)?",
    re.MULTILINE,
)
_RSPEC_FAILED = re.compile(r"^rspec \S+ # (.*?)\s*$", re.MULTILINE)


def parse_rspec(output: str) -> TestResult | None:
    """`5 examples, 2 failures, 2 pending`; errors outside examples are failures."""
    found = _RSPEC_SUMMARY.findall(output)
    if not found:
        return None
    examples, failures, pending, errors = (int(x or 0) for x in found[-1])
    passed = examples - failures - pending
    return _result(passed, failures + errors, pending, _RSPEC_FAILED.findall(output))


PARSERS: dict[str, Callable[[str], TestResult | None]] = {
    "pytest": parse_pytest,
    "unittest": parse_unittest,
    "jest": parse_jest,
    "vitest": parse_vitest,
    "go": parse_go,
    "cargo": parse_cargo,
    "rspec": parse_rspec,
    "mocha": parse_mocha,
    "node": parse_node,
    "tape": parse_tape,
}


def parse_test_counts(runner: str, output: str) -> TestResult | None:
    """Counts from `runner`'s output (`auto` tries each parser); None if no summary is found."""
    text = strip_ansi(output)
    if runner == "auto":
        for each in PARSERS.values():
            res = each(text)
            if res is not None:
                return _consistent(res)
        return None
    parse = PARSERS.get(runner)
    if parse is None:
        raise ValueError(f"unknown test runner {runner!r}; known: {', '.join(RUNNERS)}")
    res = parse(text)
    if res is None:
        # A wrapper (make, tox, coverage, `uv run`) may run another runner than the one its
        # command names: search its output for any runner's summary.
        return parse_test_counts("auto", text)
    return _consistent(res)


def _consistent(res: TestResult) -> TestResult:
    """A run that named a failed test did not pass, whatever summary line came last (code
    under test can print one, from an exit hook, after the runner's own)."""
    if not res.passed or not res.failed_tests:
        return res
    failed = max(res.failed_count, len(res.failed_tests))
    return res.model_copy(
        update={
            "passed": False,
            "failed_count": failed,
            "test_count": res.passed_count + failed,
        }
    )


def infer_runner(command: str, default: str) -> str:
    """The runner a test command names (`pytest -q` -> pytest), else `default`."""
    words = re.findall(r"[\w:.-]+", command)
    for word, runner in (
        ("pytest", "pytest"),
        ("vitest", "vitest"),
        ("jest", "jest"),
        ("mocha", "mocha"),
        ("rspec", "rspec"),
        ("tape", "tape"),
        ("py.test", "pytest"),
    ):
        if word in words:
            return runner
    if "unittest" in words:
        return "unittest"
    if re.search(r"\bnode\b.*--test\b", command):
        return "node"
    if re.search(r"\bgo\s+test\b", command):
        return "go"
    if re.search(r"\bcargo\s+test\b", command):
        return "cargo"
    return default
