"""tap, cargo-nextest, minitest and plain go test: counted, wrapped, or unrecognised (#25)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from bot.validation.native import counted_go_test
from bot.validation.parsers import infer_runner, parse_test_counts

DATA = Path(__file__).parent / "data" / "runner_outputs"


def read(stem: str) -> str:
    return (DATA / f"{stem}.txt").read_text()


@pytest.mark.parametrize(
    ("runner", "stem"),
    [
        ("tap", "perl_tap_noplan"),  # died before its plan: how many tests is unknown
        ("minitest", "minitest_broken"),  # a LoadError before any test ran
        ("go", "go_plain_pass"),  # `ok pkg` lines only: passes unknown
    ],
)
def test_a_run_without_its_summary_is_unrecognised_not_a_pass(runner: str, stem: str) -> None:
    assert parse_test_counts(runner, read(stem)) is None
    assert parse_test_counts("auto", read(stem)) is None


def test_a_summary_cut_from_the_output_is_unrecognised() -> None:
    for runner, stem, summary in (
        ("tap", "tap_pass", "# { total:"),
        ("minitest", "minitest_pass", "3 runs,"),
        ("nextest", "nextest_pass", "     Summary ["),
    ):
        text = read(stem)
        assert parse_test_counts(runner, text) is not None
        cut = "".join(ln for ln in text.splitlines(True) if not ln.startswith(summary))
        if runner == "tap":  # node-tap's nested TAP still has its plan: the top level counts
            got = parse_test_counts(runner, cut)
            assert got is not None and got.test_count == 1
            continue
        assert parse_test_counts(runner, cut) is None, stem


def test_wrappers_are_read_with_the_runner_they_run() -> None:
    # `npm test` -> tap, `rake test` -> minitest, `make test` -> go: read as the profile's
    # runner or any other, the wrapper's output gives the runner's own counts.
    for stem in ("npm_tap_mixed", "rake_minitest_mixed", "make_go_flags_mixed"):
        for runner in ("pytest", "auto"):
            got = parse_test_counts(runner, read(stem))
            assert got is not None and got.failed_count > 0 and got.passed_count > 0, stem


def test_cargo_reads_a_nextest_run_by_its_summary_not_libtests_lines() -> None:
    # The first try's captured `test result: FAILED` must not fail a run nextest passed.
    got = parse_test_counts("cargo", read("nextest_flaky"))
    assert got is not None and got.passed and got.passed_count == 1


def test_node_test_tap_read_as_tap_keeps_node_counts() -> None:
    assert parse_test_counts("tap", read("node_tap_mixed")) == parse_test_counts(
        "node", read("node_tap_mixed")
    )


def test_infer_runner_names_the_new_runners() -> None:
    assert infer_runner("cargo nextest run --workspace", "auto") == "cargo"  # reads nextest too
    assert infer_runner("npx tap", "auto") == "tap"
    assert infer_runner("ruby -Itest -e 'require \"minitest/autorun\"'", "auto") == "minitest"


@pytest.mark.parametrize(
    ("command", "counted"),
    [
        ("go test ./...", "go test -v ./..."),
        ("go test -race ./... && go vet ./...", "go test -v -race ./... && go vet ./..."),
        ("go test -v ./...", "go test -v ./..."),
        ("make test", 'GOFLAGS="${GOFLAGS:-} -v" make test'),
    ],
)
def test_plain_go_test_is_made_verbose(command: str, counted: str) -> None:
    assert counted_go_test(command) == counted


def test_a_wrapped_plain_go_test_is_counted_once_made_verbose(tmp_path: Path) -> None:
    """Real go and make: `make test` around a plain `go test` gives counts with the gate's
    GOFLAGS, and none without (the recording's make_go_* files show the same)."""
    if subprocess.run(["sh", "-c", "command -v go && command -v make"]).returncode:
        pytest.skip("go or make is not installed")
    (tmp_path / "go.mod").write_text("module example.com/w\n\ngo 1.19\n")
    (tmp_path / "w_test.go").write_text(
        'package w\n\nimport "testing"\n\nfunc TestA(t *testing.T) {}\n'
        "func TestB(t *testing.T) {}\n"
    )
    (tmp_path / "Makefile").write_text("test:\n\tgo test ./...\n")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "GOCACHE": str(tmp_path / ".c"),
           "GOPATH": str(tmp_path / ".p"), "GOFLAGS": "-mod=mod"}  # fmt: skip

    def run(command: str) -> str:
        done = subprocess.run(
            ["sh", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout + done.stderr

    assert parse_test_counts("go", run("make test")) is None
    got = parse_test_counts("go", run(counted_go_test("make test")))
    assert got is not None and (got.passed_count, got.failed_count) == (2, 0)


def test_discovery_gives_a_go_repositorys_own_plain_test_commands_verbose(
    tmp_path: Path,
) -> None:
    from bot.config import ValidationConfig
    from bot.validation.discovery import candidates
    from bot.validation.profiles import detect_profile

    (tmp_path / "go.mod").write_text("module example.com/w\n\ngo 1.19\n")
    (tmp_path / "Makefile").write_text("test:\n\tgo test ./...\n")
    ci = tmp_path / ".github" / "workflows"
    ci.mkdir(parents=True)
    (ci / "ci.yml").write_text(
        "on: push\njobs:\n  t:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - run: go test -race ./...\n"
    )
    found = candidates(tmp_path, ValidationConfig(), detect_profile(tmp_path))["test"]
    commands = {s.source: (s.command, s.runner) for s in found}
    assert commands["Makefile"] == ('GOFLAGS="${GOFLAGS:-} -v" make test', "go")
    assert ("go test -v -race ./...", "go") in commands.values()
    assert commands["default"] == ("go test -v ./...", "go")
    configured = ValidationConfig(test="go test ./...")
    spec = candidates(tmp_path, configured, detect_profile(tmp_path))["test"][0]
    assert (spec.source, spec.command) == ("agentbot.yml", "go test -v ./...")


def test_a_cancelled_nextest_run_is_not_a_pass() -> None:
    # The summary grammar of nextest's own tests: `M/N tests run` when it stopped early.
    line = "     Summary [   0.500s] {} tests run: {}, 0 skipped\n"
    stopped = parse_test_counts("nextest", line.format("3/10", "3 passed"))
    assert stopped is not None and not stopped.passed and stopped.failed_count == 7
    fail_fast = parse_test_counts("nextest", line.format("4/10", "3 passed, 1 failed"))
    assert fail_fast is not None and (fail_fast.failed_count, fail_fast.skipped_count) == (1, 6)


def test_unittests_expected_failures_are_not_failures_and_no_count_is_negative() -> None:
    from bot.validation.parsers import parse_unittest

    out = "Ran 5 tests in 0.010s\n\nOK (skipped=1, expected failures=2)\n"
    parsed = parse_unittest(out)
    assert parsed is not None
    assert (parsed.passed_count, parsed.failed_count, parsed.skipped_count) == (2, 0, 3)
    odd = parse_unittest("Ran 1 test in 0.001s\n\nOK (skipped=80)\n")
    assert odd is not None and odd.passed_count == 0
