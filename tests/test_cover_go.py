"""/cover end to end on a Go module, where the Go toolchain is installed (`go test -json`)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bot.config import RepoConfig
from bot.models import Job, JobKind, JobStatus
from bot.workflows.cover.story import cover
from tests.cover_script import Method, team
from tests.e2e import REPO, world
from tests.fakes.gitrepo import commits, push_files, read_file

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("go") is None, reason="no Go toolchain on this machine"),
]

BRANCH = "feature/abs"
CALC = "package calc\n\nfunc Add(a, b int) int {\n\treturn a + b\n}\n"
TEST = (
    'package calc\n\nimport "testing"\n\nfunc TestAdd(t *testing.T) {\n'
    '\tif Add(1, 2) != 3 {\n\t\tt.Fatal("add")\n\t}\n}\n'
)
FILES = {"go.mod": "module example.com/calc\n\ngo 1.19\n", "calc.go": CALC, "calc_test.go": TEST}
HEAD = CALC + "\nfunc Abs(x int) int {\n\tif x < 0 {\n\t\treturn -x\n\t}\n\treturn x\n}\n"
METHODS = {
    "Abs": Method(
        "calc_test.go",
        "\nfunc TestAbs(t *testing.T) {\n\tif Abs(-2) != 2 || Abs(3) != 3 || Abs(0) != 0 {\n"
        '\t\tt.Fatal("abs")\n\t}\n}\n'
        "\nfunc TestAbsRuns(t *testing.T) {\n\tAbs(1)\n}\n",
    ),
}


def test_cover_writes_go_tests_that_kill_mutants(tmp_path: Path) -> None:
    t, script = team(METHODS)
    with world(tmp_path, script, files=FILES) as w:
        push_files(w.remote, BRANCH, {"calc.go": HEAD}, start="main")
        number = w.gh.add_pull(REPO, head=BRANCH, user="alice").number
        job = Job(kind=JobKind.COVER, repo=REPO, number=number, actor="alice")
        result = cover(job, w.env(RepoConfig()))
        assert result.status == JobStatus.SUCCESS, result.error

        assert commits(w.remote, BRANCH, base="main")[0].subject == "test(calc): cover Abs"
        tests = read_file(w.remote, BRANCH, "calc_test.go") or ""
        assert "func TestAbs(" in tests and "TestAbsRuns" not in tests
        item = result.items[0]
        assert (item["before"], item["after"]) == ("0%", "100%")
        # `x < 0` -> `x <= 0` and `0` -> `1` change nothing Abs returns: only `-x` -> `x` dies.
        assert (item["mutants"], item["killed"]) == (3, 1)
        assert item["dropped"] == ["calc_test.go::TestAbsRuns"]
        assert sum(t.seen.values()) == 4
