"""Test-count parsers on outputs recorded from real runs (tests/data/runner_outputs)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.validation import parse_test_counts, says_no_tests
from bot.validation.parsers import RUNNERS, infer_runner

DATA = Path(__file__).parent / "data" / "runner_outputs"

# file stem -> (runner, passed, failed, skipped, failing ids). Counted by hand from the files.
EXPECTED: dict[str, tuple[str, int, int, int, list[str]]] = {
    "pytest_q_pass": ("pytest", 3, 0, 0, []),
    "pytest_q_fail": (
        "pytest", 0, 2, 0, ["tests/test_bad.py::test_add", "tests/test_bad.py::test_upper"],
    ),
    # passed 2, failed test_param[2] + the fixture error; skipped 1 + xfailed 1
    "pytest_q_mixed": (
        "pytest", 2, 2, 2,
        ["tests/test_mixed.py::test_param[2]", "tests/test_mixed.py::test_error"],
    ),
    "pytest_plain_mixed": (
        "pytest", 2, 2, 2,
        ["tests/test_mixed.py::test_param[2]", "tests/test_mixed.py::test_error"],
    ),
    "pytest_q_collect": ("pytest", 0, 1, 0, ["tests/test_broken.py"]),
    "pytest_q_none": ("pytest", 0, 0, 0, []),
    # leaves only: TestAddTable and TestSub are parents of subtests
    "go_v_pass": ("go", 3, 0, 0, []),
    "go_v_mixed": (
        "go", 4, 2, 1, ["example.com/demo/util.TestDouble", "example.com/demo/util.TestSub/bad"],
    ),
    "go_plain_mixed": (
        "go", 0, 2, 0, ["example.com/demo/util.TestDouble", "example.com/demo/util.TestSub/bad"],
    ),
    "go_v_none": ("go", 0, 0, 0, []),
    # unit 2 + integration 1 + doc 1
    "cargo_pass": ("cargo", 4, 0, 0, []),
    "cargo_mixed": ("cargo", 1, 2, 1, ["tests::panics", "tests::adds_wrong"]),
    "cargo_none": ("cargo", 0, 0, 0, []),
    "rspec_pass": ("rspec", 2, 0, 0, []),
    "rspec_mixed": ("rspec", 1, 2, 2, ["Calc subtracts", "Calc divides"]),
    "rspec_none": ("rspec", 0, 0, 0, []),
    "jest_pass": ("jest", 3, 0, 0, []),
    "jest_mixed": ("jest", 2, 2, 1, ["calc › adds wrong", "throws"]),
    "jest_suite_error": ("jest", 3, 1, 0, ["test/broken.test.js"]),
    "jest_none": ("jest", 0, 0, 0, []),
    "npm_jest_mixed": ("jest", 2, 2, 1, ["calc › adds wrong", "throws"]),
    "vitest_pass": ("vitest", 3, 0, 0, []),
    "vitest_mixed": (
        "vitest", 2, 2, 1,
        ["test/calc.test.js > calc > adds wrong", "test/calc.test.js > throws"],
    ),
    "vitest_none": ("vitest", 0, 0, 0, []),
    "mocha_pass": ("mocha", 3, 0, 0, []),
    "mocha_mixed": ("mocha", 2, 2, 1, ["throws", "calc adds wrong"]),
    "mocha_none": ("mocha", 0, 0, 0, []),
    "node_tap_pass": ("node", 3, 0, 0, []),
    "node_tap_mixed": ("node", 2, 2, 1, ["calc > adds wrong", "throws"]),
    "node_tap_none": ("node", 0, 0, 0, []),
    "node_spec_pass": ("node", 3, 0, 0, []),
    "node_spec_mixed": ("node", 2, 2, 1, ["adds wrong", "throws"]),
    # tape counts assertions; a test (`# name`) is what passes or fails.
    "tape_pass": ("tape", 3, 0, 0, []),
    "tape_mixed": ("tape", 2, 2, 1, ["adds wrong", "throws"]),
    # unittest: failures + errors fail, skipped is outside the total.
    "unittest_mixed": (
        "unittest", 1, 2, 1, ["tests.test_a.TestA.test_err", "tests.test_a.TestA.test_bad"],
    ),
    "unittest_v_pass": ("unittest", 2, 0, 0, []),
    "unittest_none": ("unittest", 0, 0, 0, []),
    # `make test` running unittest, read with the profile's default runner (pytest): a
    # wrapper's output is searched for any runner's summary (#25).
    "make_unittest_mixed": (
        "pytest", 1, 2, 1, ["tests.test_a.TestA.test_err", "tests.test_a.TestA.test_bad"],
    ),
    # node-tap counts leaf tests (`calc` only holds subtests); ids carry the file.
    "tap_pass": ("tap", 3, 0, 0, []),
    "tap_mixed": (
        "tap", 2, 2, 1, ["test/calc.test.js > calc > adds wrong", "test/calc.test.js > throws"],
    ),
    "npm_tap_mixed": (
        "tap", 2, 2, 1, ["test/calc.test.js > calc > adds wrong", "test/calc.test.js > throws"],
    ),
    # mocha's TAP reporter read as tap: its `# tests`/`# pass` counts (skips go unsaid)
    "mocha_tap_mixed": ("tap", 1, 1, 0, ["calc adds wrong"]),
    # plain TAP (perl Test::More): the plan and its ok / not ok lines
    "perl_tap_pass": ("tap", 2, 0, 0, []),
    "perl_tap_mixed": ("tap", 2, 2, 1, ["adds wrong", "upcases wrong"]),
    # planned 4, reported 1 before dying: the 3 never reported are not passes
    "perl_tap_crash": ("tap", 1, 3, 0, []),
    "minitest_pass": ("minitest", 3, 0, 0, []),
    "minitest_mixed": ("minitest", 2, 2, 1, ["TestCalc#test_adds_wrong", "TestCalc#test_raises"]),
    "minitest_none": ("minitest", 0, 0, 0, []),
    # `rake test` (Rake::TestTask) around minitest (SEED=4242 orders the failures)
    "rake_minitest_mixed": (
        "minitest", 2, 2, 1, ["TestCalc#test_adds_wrong", "TestCalc#test_raises"],
    ),
    # `make test` running `go test ./...` with GOFLAGS=-v (what the gate adds to a wrapper)
    "make_go_flags_mixed": ("go", 3, 1, 0, ["example.com/demo/calc.TestAddWrong"]),
    "make_go_plain_mixed": ("go", 0, 1, 0, ["example.com/demo/calc.TestAddWrong"]),
    # `go test -json`: leaf test events counted; a package that does not build fails
    "go_json_mixed": (
        "go", 3, 2, 0, ["example.com/demo/calc.TestAddWrong", "example.com/demo/broken"],
    ),
    "go_json_pass_and_fail": ("go", 3, 1, 0, ["example.com/demo/calc.TestAddWrong"]),
    # cargo-nextest: outputs from nextest's own docs (not recorded here, see README.md)
    "nextest_pass": ("nextest", 14, 0, 177, []),
    "nextest_leak_fail": (
        "nextest", 0, 1, 26, ["fixture-project::basic test_subprocess_doesnt_exit_leak_fail"],
    ),
    # a retry passed: the first try's libtest `test result: FAILED` is not the verdict
    "nextest_flaky": ("nextest", 1, 0, 25, []),
}  # fmt: skip


def manifest() -> dict[str, dict[str, str]]:
    with (DATA / "manifest.tsv").open() as f:
        return {row["file"]: row for row in csv.DictReader(f, delimiter="\t")}


def test_every_recorded_output_is_in_the_manifest_and_has_expectations() -> None:
    recorded = {p.stem for p in DATA.glob("*.txt")}
    assert recorded == {f.removesuffix(".txt") for f in manifest()}
    assert recorded - set(EXPECTED) == {
        "go_plain_pass", "npm_default_none", "perl_tap_noplan", "minitest_broken",
    }  # fmt: skip
    # Each runner is covered by a passing run and by a run with failures.
    for runner in RUNNERS:
        cases = [(p, f) for r, p, f, _, _ in EXPECTED.values() if r == runner]
        assert any(f == 0 and p > 0 for p, f in cases), runner
        assert any(f > 0 for _, f in cases), runner


@pytest.mark.parametrize("stem", sorted(EXPECTED))
def test_recorded_output_counts(stem: str) -> None:
    runner, passed, failed, skipped, ids = EXPECTED[stem]
    result = parse_test_counts(runner, (DATA / f"{stem}.txt").read_text())
    assert result is not None
    assert (result.passed_count, result.failed_count, result.skipped_count) == (
        passed,
        failed,
        skipped,
    )
    assert result.test_count == passed + failed
    assert result.failed_tests == ids
    assert result.passed is (failed == 0)
    # A run with failures never exited 0 in the recording.
    code = int(manifest()[f"{stem}.txt"]["exit_code"])
    assert (code != 0) if failed else True


@pytest.mark.parametrize("stem", sorted(EXPECTED))
def test_auto_finds_the_same_counts(stem: str) -> None:
    text = (DATA / f"{stem}.txt").read_text()
    assert parse_test_counts("auto", text) == parse_test_counts(EXPECTED[stem][0], text)


def test_no_tests_messages_are_recognised() -> None:
    for stem in (
        "pytest_q_none", "jest_none", "vitest_none", "mocha_none", "rspec_none", "unittest_none",
    ):  # fmt: skip
        assert says_no_tests((DATA / f"{stem}.txt").read_text()), stem
    assert says_no_tests((DATA / "npm_default_none.txt").read_text())  # `npm init`'s script
    for stem in ("pytest_q_fail", "jest_mixed", "cargo_mixed", "pytest_q_collect"):
        assert not says_no_tests((DATA / f"{stem}.txt").read_text()), stem


def test_unreadable_output_gives_none_not_zero() -> None:
    assert parse_test_counts("pytest", "ImportError: cannot import name 'x'\n") is None
    assert parse_test_counts("cargo", "error[E0425]: cannot find value `x`\n") is None
    assert parse_test_counts("auto", "Segmentation fault\n") is None
    # Plain `go test` prints no line per passing test: the pass count is unknown.
    assert parse_test_counts("go", (DATA / "go_plain_pass.txt").read_text()) is None
    plain = parse_test_counts("go", (DATA / "go_plain_mixed.txt").read_text())
    assert plain is not None and plain.error_message == "pass counts need `go test -v`"
    with pytest.raises(ValueError, match="unknown test runner"):
        parse_test_counts("nose", "")


def test_colour_codes_do_not_hide_the_summary() -> None:
    text = "\x1b[31m\x1b[1m1 failed\x1b[0m, \x1b[32m2 passed\x1b[0m\x1b[31m in 0.10s\x1b[0m\n"
    result = parse_test_counts("pytest", text)
    assert result is not None and (result.passed_count, result.failed_count) == (2, 1)


@given(
    passed=st.integers(0, 500),
    failed=st.integers(0, 50),
    errors=st.integers(0, 5),
    skipped=st.integers(0, 20),
    xfailed=st.integers(0, 5),
)
def test_pytest_summary_counts_add_up(
    passed: int, failed: int, errors: int, skipped: int, xfailed: int
) -> None:
    parts = [
        f"{n} {word}"
        for n, word in (
            (failed, "failed"),
            (passed, "passed"),
            (skipped, "skipped"),
            (xfailed, "xfailed"),
            (errors, "error" if errors == 1 else "errors"),
        )
        if n
    ]
    line = ", ".join(parts) if parts else "no tests ran"
    result = parse_test_counts("pytest", f"{'=' * 10} {line} in 1.23s {'=' * 10}\n")
    assert result is not None
    assert result.passed_count == passed
    assert result.failed_count == failed + errors
    assert result.skipped_count == skipped + xfailed
    assert result.test_count == result.passed_count + result.failed_count


def test_infer_runner_from_the_test_command() -> None:
    assert infer_runner("pytest -q", "auto") == "pytest"
    assert infer_runner("python -m pytest tests/", "auto") == "pytest"
    assert infer_runner("npx vitest run", "auto") == "vitest"
    assert infer_runner("./node_modules/.bin/jest --ci", "auto") == "jest"
    assert infer_runner("mocha 'test/**/*.js'", "auto") == "mocha"
    assert infer_runner("node --test test/", "auto") == "node"
    assert infer_runner("go test -race ./...", "auto") == "go"
    assert infer_runner("cargo test --workspace", "auto") == "cargo"
    assert infer_runner("bundle exec rspec", "auto") == "rspec"
    assert infer_runner("npm test", "jest") == "jest"  # the profile knows the script
    assert infer_runner("make check", "auto") == "auto"
    assert infer_runner("coverage run -m unittest discover && coverage xml", "auto") == "unittest"


def test_a_failed_test_named_keeps_the_run_red_whatever_summary_comes_last() -> None:
    # The code under test printed `1 passed` from an exit hook after pytest's own summary.
    out = "FAILED tests/t.py::test_one - assert '' == 'I'\n1 failed in 0.02s\n\n1 passed in 0.01s\n"
    for runner in ("pytest", "auto"):
        got = parse_test_counts(runner, out)
        assert got is not None and not got.passed
        assert got.failed_tests == ["tests/t.py::test_one"] and got.failed_count == 1
        assert got.test_count == got.passed_count + got.failed_count
