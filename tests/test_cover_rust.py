"""/cover end to end on a Rust crate, where cargo is installed (no coverage tool: n/a)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bot.config import RepoConfig
from bot.cover.runners.rust import parse_cargo_tests
from bot.models import Job, JobKind, JobStatus
from bot.workflows.cover.story import cover
from tests.cover_script import Method, team
from tests.e2e import REPO, world
from tests.fakes.gitrepo import commits, push_files, read_file

BRANCH = "feature/abs"
CARGO = '[package]\nname = "calc"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n'
LIB = "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n"
TEST = "use calc::add;\n\n#[test]\nfn adds() {\n    assert_eq!(add(1, 2), 3);\n}\n"
FILES = {"Cargo.toml": CARGO, ".gitignore": "/target\n", "src/lib.rs": LIB, "tests/calc.rs": TEST}
ABS = (
    "\npub fn abs(x: i32) -> i32 {\n    if x < 0 {\n        -x\n    } else {\n        x\n    }\n}\n"
)
HEAD = LIB + ABS
METHODS = {
    "abs": Method(
        "tests/calc.rs",
        "\n#[test]\nfn abs_works() {\n    assert_eq!(calc::abs(-2), 2);\n"
        "    assert_eq!(calc::abs(3), 3);\n}\n"
        "\n#[test]\nfn abs_runs() {\n    calc::abs(1);\n}\n",
    ),
}


def test_cargo_output_is_read_per_test_and_file() -> None:
    out = (
        "   Compiling calc v0.1.0\n     Running unittests src/lib.rs (target/debug/deps/calc-1)\n"
        "test tests::inner ... ok\n     Running tests/calc.rs (target/debug/deps/calc-2)\n"
        "test adds ... ok\ntest breaks ... FAILED\ntest slow ... ignored\n   Doc-tests calc\n"
        "test src/lib.rs - add (line 3) ... ok\n"
    )
    got = [(r.id, r.passed, r.title) for r in parse_cargo_tests(out)]
    assert got == [
        ("src/lib.rs::tests::inner", True, "inner"),
        ("tests/calc.rs::adds", True, "adds"),
        ("tests/calc.rs::breaks", False, "breaks"),
    ]


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("cargo") is None, reason="no Rust toolchain on this machine")
def test_cover_writes_rust_tests_that_kill_mutants(tmp_path: Path) -> None:
    t, script = team(METHODS)
    with world(tmp_path, script, files=FILES) as w:
        push_files(w.remote, BRANCH, {"src/lib.rs": HEAD}, start="main")
        number = w.gh.add_pull(REPO, head=BRANCH, user="alice").number
        job = Job(kind=JobKind.COVER, repo=REPO, number=number, actor="alice")
        result = cover(job, w.env(RepoConfig()))
        assert result.status == JobStatus.SUCCESS, result.error

        assert commits(w.remote, BRANCH, base="main")[0].subject == "test(src): cover abs"
        tests = read_file(w.remote, BRANCH, "tests/calc.rs") or ""
        assert "fn abs_works()" in tests and "abs_runs" not in tests and "#[test]\n\n" not in tests
        item = result.items[0]
        assert (item["before"], item["after"]) == ("n/a", "n/a")  # no coverage tool for Rust
        assert item["killed"] >= 1 and item["dropped"] == ["tests/calc.rs::abs_runs"]
        assert sum(t.seen.values()) == 4
