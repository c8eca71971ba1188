"""Test counts from go test, cargo test and cargo-nextest output."""

from __future__ import annotations

import json
import re

from bot.models import TestResult
from bot.validation.parsers.common import result

_GO_RESULT = re.compile(r"^(\s*)--- (PASS|FAIL|SKIP): (\S+)")
_GO_PKG = re.compile(r"^(ok|FAIL|\?) *\t(\S+)(.*)$")  # `ok  \tpkg\t0.01s`


def parse_go(output: str) -> TestResult | None:
    """`go test [-v|-json]`: leaf tests (subtests, not their parents) per package; build
    failures fail."""
    if _GO_EVENT.search(output):
        return _parse_go_json(output)
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
    res = result(passed, len(failed), sum(1 for s, _ in results if s == "SKIP"), failed)
    if tested and "=== RUN" not in output:
        # Without -v go prints no line per passing test: the pass count is unknown, not 0.
        if not failed:
            return None
        res = res.model_copy(update={"error_message": "pass counts need `go test -v`"})
    return res


_GO_EVENT = re.compile(r'^\{.*"Action":\s*"(?:pass|fail|skip)"', re.MULTILINE)


def _parse_go_json(output: str) -> TestResult:
    """`go test -json`: each leaf test's last pass/fail/skip event; a package that failed
    with no failing test of its own (a build failure, a panic outside tests) fails itself."""
    final: dict[tuple[str, str], str] = {}
    failed_pkgs: list[str] = []
    for line in output.splitlines():
        if not line.startswith("{"):
            # go 1.19-1.23 print a build failure as text, not as an event.
            p = _GO_PKG.match(line)
            if p and ("[build failed]" in p.group(3) or "[setup failed]" in p.group(3)):
                failed_pkgs.append(p.group(2))
            continue
        try:
            event = json.loads(line)
        except ValueError:
            continue
        action = event.get("Action") if isinstance(event, dict) else None
        pkg, test = (event.get("Package"), event.get("Test")) if action else (None, None)
        if action not in ("pass", "fail", "skip") or not isinstance(pkg, str):
            continue
        if isinstance(test, str):
            final[(pkg, test)] = action
        elif action == "fail":
            failed_pkgs.append(pkg)
    parents = {(pkg, name.rsplit("/", 1)[0]) for pkg, name in final if "/" in name}
    leaves = [(pkg, name, a) for (pkg, name), a in final.items() if (pkg, name) not in parents]
    failed = [f"{pkg}.{name}" for pkg, name, a in leaves if a == "fail"]
    with_failures = {pkg for pkg, _, a in leaves if a == "fail"}
    failed += [pkg for pkg in dict.fromkeys(failed_pkgs) if pkg not in with_failures]
    passed = sum(1 for *_, a in leaves if a == "pass")
    return result(passed, len(failed), sum(1 for *_, a in leaves if a == "skip"), failed)


_CARGO_RESULT = re.compile(
    r"^test result: \w+\. (\d+) passed; (\d+) failed; (\d+) ignored; (\d+) measured",
    re.MULTILINE,
)
_CARGO_FAILED = re.compile(r"^test (.+?) \.\.\. FAILED\s*$", re.MULTILINE)


def parse_cargo(output: str) -> TestResult | None:
    """Sum of every `test result:` line (unit, integration and doc tests)."""
    if _NEXTEST_SUMMARY.search(output):
        # nextest shows a failed test's own libtest output, `test result:` lines included.
        return parse_nextest(output)
    found = _CARGO_RESULT.findall(output)
    if not found:
        return None
    passed = sum(int(p) for p, _, _, _ in found)
    failed = sum(int(f) for _, f, _, _ in found)
    ignored = sum(int(i) for _, _, i, _ in found)
    return result(passed, failed, ignored, _CARGO_FAILED.findall(output))


_NEXTEST_SUMMARY = re.compile(
    r"^\s*Summary \[[^\]\n]*\] +(?:(\d+)/)?(\d+) tests? run: (.*)$", re.MULTILINE
)
_NEXTEST_PAIR = re.compile(r"(\d+) (passed|failed|exec failed|timed out|skipped)\b")
_NEXTEST_FAILED = re.compile(
    r"^\s*(FAIL|LEAK-FAIL|EXECFAIL|TIMEOUT|ABORT|SIG[A-Z]+) +\[[^\]\n]*\]"
    r"(?: \(\s*\d+/\d+\))? +(.+?)\s*$",
    re.MULTILINE,
)


def parse_nextest(output: str) -> TestResult | None:
    """cargo-nextest's `Summary [ 0.021s] 14 tests run: 13 passed, 1 failed, 177 skipped`;
    failed, exec failed and timed out fail; tests a cancelled run (`8/10`) left are skipped
    after a failure (fail-fast) and failed otherwise."""
    found = list(_NEXTEST_SUMMARY.finditer(output))
    if not found:
        return None
    ran, total, rest = found[-1].groups()
    # `(1 slow, 1 flaky)` and `(1 due to being leaky)` qualify a count; they add nothing.
    c: dict[str, int] = {}
    for n, word in _NEXTEST_PAIR.findall(re.sub(r"\([^)]*\)", "", rest)):
        c[word] = c.get(word, 0) + int(n)
    timed_out = c.get("timed out", 0)
    failed = c.get("failed", 0) + c.get("exec failed", 0) + timed_out
    skipped = c.get("skipped", 0)
    unrun = int(total) - int(ran) if ran else 0
    if failed:
        skipped += unrun  # fail-fast stopped after a failure: the run is red already
    else:
        failed = unrun  # cancelled (a signal) with nothing failed: still not a pass
    # After the summary nextest lists the final state of each failed test; before it,
    # `TRY n FAIL` lines are retries that may have passed later (they do not match).
    tail = output[found[-1].end() :]
    listed = _NEXTEST_FAILED.findall(tail) or _NEXTEST_FAILED.findall(output)
    ids = [name for status, name in listed if status != "TIMEOUT" or timed_out]
    return result(c.get("passed", 0), failed, skipped, ids)
