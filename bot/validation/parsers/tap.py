"""Test counts from TAP output: node:test, tape and node-tap."""

from __future__ import annotations

import re

from bot.models import TestResult
from bot.validation.parsers.common import result

_NODE_COUNT = re.compile(
    r"^(?:#|ℹ) (tests|pass|fail|cancelled|skipped|todo) (\d+)\s*$", re.MULTILINE
)
# `ok 1 - name` (node:test) or `ok 1 name` (mocha's TAP reporter)
_TAP_LINE = re.compile(
    r"^( *)(?:# Subtest: (.*)|(not ok|ok) \d+(?: -)? (.*?)(?: # (?:SKIP|TODO).*)?)$"
)


def parse_node(output: str) -> TestResult | None:
    """node:test (`--test`), TAP or spec reporter: `# tests 5`, `# pass 2`, `# fail 2`…"""
    c = {k: int(v) for k, v in _NODE_COUNT.findall(output)}
    if "tests" not in c or "pass" not in c:
        return None
    failed = c.get("fail", 0) + c.get("cancelled", 0)
    return result(c["pass"], failed, c.get("skipped", 0) + c.get("todo", 0), _node_ids(output))


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
    return result(len(tests) - len(failed), len(failed), skipped, failed)


# node-tap (16+) ends with `# { total: 5, pass: 2, fail: 2, skip: 1 }`, counting leaf tests.
_TAP_TOTALS = re.compile(r"^# \{ total: (\d+)((?:, \w+: \d+)*) \}\s*$", re.MULTILINE)
_TAP_PLAN = re.compile(r"^1\.\.(\d+)\s*(?:#.*)?$", re.MULTILINE)
_TAP_POINT = re.compile(
    r"^( *)(?:# Subtest: (.*)|(not ok|ok)\b(?: \d+)?(?: -)? ?(.*?)(?:\s*# *(SKIP|TODO)\b.*)?)$",
    re.IGNORECASE,
)


def parse_tap(output: str) -> TestResult | None:
    """node-tap's `# { total: 5, pass: 2, fail: 2, skip: 1 }`, else plain TAP: the plan
    `1..N` with its top-level `ok`/`not ok` lines; planned tests that never reported fail."""
    if "# duration_ms" in output:
        return parse_node(output)  # node:test's TAP counts its tests itself
    if re.search(r"^# tests \d+\s*$", output, re.MULTILINE):
        # tape names each test in a comment; mocha's TAP reporter only counts them.
        tape = parse_tape(output)
        return tape if tape is not None and tape.test_count else parse_node(output)
    totals = _TAP_TOTALS.findall(output)
    if totals:
        c = {k: int(v) for k, v in re.findall(r"(\w+): (\d+)", totals[-1][1])}
        skipped = c.get("skip", 0) + c.get("todo", 0)
        return result(c.get("pass", 0), c.get("fail", 0), skipped, _tap_leaf_failures(output))
    plans = _TAP_PLAN.findall(output)
    if not plans:
        return None  # without its plan TAP does not say how many tests there were
    passed = skipped = 0
    failed: list[str] = []
    for line in output.splitlines():
        m = _TAP_POINT.match(line)
        if m is None or m.group(1) or m.group(3) is None:
            continue  # nested lines belong to a top-level test
        if m.group(5):
            skipped += 1
        elif m.group(3).lower() == "ok":
            passed += 1
        else:
            failed.append(m.group(4) or f"test {passed + skipped + len(failed) + 1}")
    # A crash or `Bail out!` leaves planned tests unreported: they did not pass.
    missing = max(0, int(plans[-1]) - passed - skipped - len(failed))
    return result(passed, len(failed) + missing, skipped, failed)


def _tap_leaf_failures(output: str) -> list[str]:
    """Failing node-tap tests that have no subtests of their own, as `file > suite > test`."""
    path: dict[int, str] = {}  # depth -> the subtest open there
    parents: set[int] = set()  # depths whose open subtest has subtests
    ids: list[str] = []
    for line in output.splitlines():
        m = _TAP_POINT.match(line)
        if m is None:
            continue
        depth = len(m.group(1)) // 4
        if m.group(2) is not None:
            path = {d: n for d, n in path.items() if d < depth} | {depth: m.group(2)}
            parents = {d for d in parents if d < depth} | ({depth - 1} if depth else set())
            continue
        if depth not in path:
            continue  # an assertion inside a test, not a test
        if m.group(3).lower() == "not ok" and not m.group(5) and depth not in parents:
            ids.append(" > ".join(path[d] for d in sorted(path) if d <= depth))
        path.pop(depth, None)
        parents.discard(depth)
    return ids
