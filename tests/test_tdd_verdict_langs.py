"""RED judged from real node:test, go test and cargo test runs (each skipped without its tool)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from bot.tdd.skeleton import project_modules, write_skeleton
from bot.tdd.verdict import SuiteRun, judge_red
from bot.validation import parse_test_counts

pytestmark = pytest.mark.slow


def run(root: Path, command: list[str], runner: str) -> SuiteRun:
    got = subprocess.run(command, cwd=root, capture_output=True, text=True, timeout=300)
    out = got.stdout + got.stderr
    return SuiteRun(out, got.returncode, parse_test_counts(runner, out))


def judged(root: Path, language: str, command: list[str], runner: str) -> tuple[bool, str]:
    verdict = judge_red(language, run(root, command, runner), 0, project_modules(root, language))
    return verdict.ok, verdict.reason.split(":")[0]


JS_HEAD = 'const { test } = require("node:test");\nconst assert = require("node:assert/strict");\n'


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
@pytest.mark.parametrize(
    ("test", "expected"),
    [
        ('const { toRoman } = require("../src/roman_numerals.js");\n'
         'test("1", () => { assert.equal(toRoman(1), "I"); });\n', (True, "missing name")),
        ('const { toRoman } = require("../src/roman.js");\n'
         'test("1", () => { assert.equal(toRoman(1), "I"); });\n', (True, "missing name")),
        ('test("1", () => { assert.equal(1, 2); });\n', (True, "assertion")),
        ('test("1", () => {{ assert.equal(1, 2); });\n', (False, "syntax error in the test")),
        ('const h = require("./helpers");\ntest("1", () => { assert.ok(h); });\n',
         (False, "import error of the test file itself")),
        ('const h = require("left-pad");\ntest("1", () => { assert.ok(h); });\n',
         (False, "import error of the test file itself")),
        ('test("1", () => { assert.equal(1, 1); });\n', (False, "overshoot")),
    ],
)  # fmt: skip
def test_node_red(tmp_path: Path, test: str, expected: tuple[bool, str]) -> None:
    write_skeleton(tmp_path, "js", "Roman Numerals")
    (tmp_path / "test" / "roman.test.js").write_text(JS_HEAD + test)
    assert judged(tmp_path, "js", ["node", "--test"], "node") == expected


GO_TEST = 'package roman_numerals\n\nimport "testing"\n\nfunc TestOne(t *testing.T) {\n%s}\n'


@pytest.mark.skipif(shutil.which("go") is None, reason="go is not installed")
@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ('\tif ToRoman(1) != "I" {\n\t\tt.Fatal("want I")\n\t}\n', (True, "missing name")),
        ('\tif 1 != 2 {\n\t\tt.Fatal("want 2")\n\t}\n', (True, "assertion")),
        ("\tif 1 != 2 {\n", (False, "syntax error in the test")),
        ("\tt.Log()\n", (False, "overshoot")),
    ],
)
def test_go_red(tmp_path: Path, body: str, expected: tuple[bool, str]) -> None:
    write_skeleton(tmp_path, "go", "Roman Numerals")
    (tmp_path / "roman_test.go").write_text(GO_TEST % body)
    command = ["go", "test", "-v", "./..."]
    assert judged(tmp_path, "go", command, "go") == expected


@pytest.mark.skipif(shutil.which("cargo") is None, reason="cargo is not installed")
def test_rust_red(tmp_path: Path) -> None:
    write_skeleton(tmp_path, "rust", "Roman Numerals")
    (tmp_path / "tests").mkdir()
    test = tmp_path / "tests" / "roman.rs"
    cargo = ["cargo", "test", "--no-fail-fast", "--offline", "-q"]
    use = "use roman_numerals::to_roman;\n\n"
    test.write_text(use + '#[test]\nfn one() {\n    assert_eq!(to_roman(1), "I");\n}\n')
    assert judged(tmp_path, "rust", cargo, "cargo") == (True, "missing name")
    (tmp_path / "src" / "lib.rs").write_text(
        'pub fn to_roman(n: usize) -> String {\n    "V".repeat(n)\n}\n'
    )
    assert judged(tmp_path, "rust", cargo, "cargo") == (True, "assertion")
    test.write_text(
        use + '#[test]\nfn one() {\n    assert_eq!(to_roman(1), "I")\n    let x = 1;\n}\n'
    )
    assert judged(tmp_path, "rust", cargo, "cargo") == (False, "syntax error in the test")
    test.write_text("use helpers::x;\n\n#[test]\nfn one() {\n    x();\n}\n")
    assert judged(tmp_path, "rust", cargo, "cargo") == (
        False, "import error of the test file itself",
    )  # fmt: skip
