"""/cover end to end on JavaScript with jest (istanbul) and TypeScript with vitest (V8)."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from bot.config import RepoConfig
from bot.models import Job, JobKind, JobStatus
from bot.workflows.cover.story import cover
from tests.cover_script import Method, team
from tests.cover_tools import JEST_VERSION, VITEST_VERSION, jest_modules, vitest_modules
from tests.e2e import REPO, world
from tests.fakes.gitrepo import commits, push_files, read_file

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]  # many real test runs

BRANCH = "feature/calc"
PACKAGE = (
    '{"name": "calc", "version": "1.0.0", "scripts": {"test": "jest"},'
    f' "devDependencies": {{"jest": "{JEST_VERSION}"}}}}\n'
)
CALC = "function add(a, b) {\n  return a + b;\n}\n\nmodule.exports = { add };\n"
TEST = (
    "const { add } = require('../src/calc');\n\n"
    "test('adds', () => {\n  expect(add(1, 2)).toBe(3);\n});\n"
)
FILES = {
    "package.json": PACKAGE,
    ".gitignore": "node_modules\n",
    "src/calc.js": CALC,
    "test/calc.test.js": TEST,
}
HEAD = """function add(a, b) {
  return a + b;
}

function double(x) {
  return add(x, x);
}

const isPositive = (x) => x > 0;

module.exports = { add, double, isPositive };
"""
TEST_FILE = "test/calc.test.js"

METHODS = {
    "double": Method(
        TEST_FILE,
        "\ntest('doubles', () => {\n  expect(require('../src/calc').double(4)).toBe(8);\n});\n",
    ),
    "isPositive": Method(
        TEST_FILE,
        "\ntest('tells positives', () => {\n  const { isPositive } = require('../src/calc');\n"
        "  expect(isPositive(1)).toBe(true);\n  expect(isPositive(0)).toBe(false);\n});\n"
        "\ntest('calls isPositive', () => {\n  require('../src/calc').isPositive(3);\n});\n",
    ),
}


def test_cover_writes_jest_tests_that_kill_mutants(tmp_path: Path) -> None:
    modules = jest_modules()
    t, script = team(METHODS)
    setup = f"ln -sfn {shlex.quote(str(modules))} node_modules"
    config = RepoConfig.from_text(f"validation:\n  setup: {setup}\n")
    with world(tmp_path, script, files=FILES) as w:
        push_files(w.remote, BRANCH, {"src/calc.js": HEAD}, start="main")
        number = w.gh.add_pull(REPO, head=BRANCH, user="alice").number
        job = Job(kind=JobKind.COVER, repo=REPO, number=number, actor="alice")
        result = cover(job, w.env(config))
        assert result.status == JobStatus.SUCCESS, result.error

        new = commits(w.remote, BRANCH, base="main")
        assert new[0].subject == "test(src): cover double, isPositive"
        tests = read_file(w.remote, BRANCH, TEST_FILE) or ""
        assert "'doubles'" in tests and "'tells positives'" in tests
        assert "calls isPositive" not in tests
        items = {i["id"].split("::")[1]: i for i in result.items}
        assert (items["double"]["before"], items["double"]["after"]) == ("0%", "100%")
        assert items["isPositive"]["after"] == "100%" and items["isPositive"]["killed"] >= 2
        assert items["isPositive"]["dropped"] == [f"{TEST_FILE}::calls isPositive"]
        assert "0% → 100%" in w.gh.comments_on(REPO, number)[-1].body
        assert sum(t.seen.values()) == 8


TS_PACKAGE = (
    '{"name": "calc", "version": "1.0.0", "type": "module", "scripts": {"test": "vitest run"},'
    f' "devDependencies": {{"vitest": "{VITEST_VERSION}",'
    f' "@vitest/coverage-v8": "{VITEST_VERSION}"}}}}\n'
)
TS_CALC = "export function add(a: number, b: number): number {\n  return a + b;\n}\n"
TS_TEST = (
    "import { expect, test } from 'vitest';\nimport { add } from '../src/calc';\n\n"
    "test('adds', () => {\n  expect(add(1, 2)).toBe(3);\n});\n"
)
TS_HEAD = TS_CALC + (
    "\nexport class Shop {\n  total(prices: number[]): number {\n"
    "    return prices.reduce((sum, p) => sum + p, 0);\n  }\n}\n"
)
TS_METHODS = {
    "Shop.total": Method(
        "test/calc.test.ts",
        "\nimport { Shop } from '../src/calc';\n\ntest('totals', () => {\n"
        "  expect(new Shop().total([1, 2, 3])).toBe(6);\n});\n",
    ),
}


def test_cover_writes_vitest_tests_for_a_typescript_method(tmp_path: Path) -> None:
    modules = vitest_modules()
    t, script = team(TS_METHODS)
    setup = f"ln -sfn {shlex.quote(str(modules))} node_modules"
    config = RepoConfig.from_text(f"validation:\n  setup: {setup}\n")
    files = {
        "package.json": TS_PACKAGE,
        ".gitignore": "node_modules\n",
        "src/calc.ts": TS_CALC,
        "test/calc.test.ts": TS_TEST,
    }
    with world(tmp_path, script, files=files) as w:
        push_files(w.remote, BRANCH, {"src/calc.ts": TS_HEAD}, start="main")
        number = w.gh.add_pull(REPO, head=BRANCH, user="alice").number
        job = Job(kind=JobKind.COVER, repo=REPO, number=number, actor="alice")
        result = cover(job, w.env(config))
        assert result.status == JobStatus.SUCCESS, result.error

        assert commits(w.remote, BRANCH, base="main")[0].subject == "test(src): cover Shop.total"
        assert "'totals'" in (read_file(w.remote, BRANCH, "test/calc.test.ts") or "")
        item = result.items[0]
        assert item["after"] == "100%" and item["killed"] >= 1 and item["dropped"] == []
        assert sum(t.seen.values()) == 4
