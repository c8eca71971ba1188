"""Coverage reports and per-test results: real pytest and coverage.py output, lcov, SimpleCov."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from bot.cover.coverage import (
    changed_coverage,
    parse_coverage_py,
    parse_lcov,
    parse_simplecov,
)
from bot.cover.results import parse_jest_json, parse_junit, parse_rspec_json


def test_real_pytest_and_coverage_py_reports(tmp_path: Path) -> None:
    (tmp_path / "calc.py").write_text(
        "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    if a:\n        return a - b\n"
        "    return 0\n"
    )
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test_calc.py").write_text(
        "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n\n\n"
        "class TestMore:\n    def test_bad(self):\n        assert add(1, 1) == 3\n"
    )
    out = tmp_path / "out"
    out.mkdir()
    py = sys.executable
    subprocess.run(
        [py, "-m", "coverage", "run", f"--data-file={out}/.cov", "-m", "pytest", "-q",
         "-p", "no:cacheprovider", "-o", "junit_family=xunit1", f"--junitxml={out}/j.xml"],
        cwd=tmp_path, capture_output=True, check=False, env={"PYTHONPATH": str(tmp_path)},
    )  # fmt: skip
    subprocess.run(
        [py, "-m", "coverage", "json", f"--data-file={out}/.cov", "-o", f"{out}/c.json"],
        cwd=tmp_path, capture_output=True, check=True,
    )  # fmt: skip
    results = parse_junit((out / "j.xml").read_text(), str(tmp_path))
    assert [(r.file, r.name, r.passed, r.line, r.title) for r in results] == [
        ("tests/test_calc.py", "test_add", True, 4, "test_add"),
        ("tests/test_calc.py", "TestMore::test_bad", False, 9, "test_bad"),
    ]
    cov = parse_coverage_py((out / "c.json").read_text(), str(tmp_path))
    assert cov["calc.py"].covered == {1, 2, 5}
    assert cov["calc.py"].executable == {1, 2, 5, 6, 7, 8}
    changed = changed_coverage(cov, "calc.py", range(1, 9))
    assert (changed.covered, changed.executable, changed.label()) == (3, 6, "50%")


def test_a_file_no_test_loaded_counts_as_uncovered() -> None:
    got = changed_coverage({}, "lib/new.rb", [3, 4, 5])
    assert (got.covered, got.executable) == (0, 3)
    assert changed_coverage({}, "x.py", []).label() == "n/a"


def test_lcov_paths_are_made_relative_and_records_merged() -> None:
    text = (
        "TN:\nSF:/repo/src/add.js\nFN:1,add\nDA:1,1\nDA:2,4\nDA:3,0\nend_of_record\n"
        "SF:src/other.js\nDA:1,0\nend_of_record\nSF:/repo/src/add.js\nDA:3,2\nend_of_record\n"
    )
    cov = parse_lcov(text, "/repo")
    assert cov["src/add.js"].executable == {1, 2, 3} and cov["src/add.js"].covered == {1, 2, 3}
    assert cov["src/other.js"].covered == frozenset()


def test_simplecov_resultset_and_plain_coverage_shapes() -> None:
    resultset = {
        "RSpec": {"coverage": {"/repo/lib/calc.rb": {"lines": [None, 1, 0, None]}}, "timestamp": 1},
        "Other": {"coverage": {"/repo/lib/calc.rb": {"lines": [None, 0, 3, None]}}},
    }
    cov = parse_simplecov(json.dumps(resultset), "/repo")
    assert cov["lib/calc.rb"].executable == {2, 3} and cov["lib/calc.rb"].covered == {2, 3}
    plain = parse_simplecov(json.dumps({"/repo/lib/a.rb": [1, None, 0]}), "/repo")
    assert plain["lib/a.rb"].executable == {1, 3} and plain["lib/a.rb"].covered == {1}


def test_jest_and_rspec_json_results() -> None:
    jest = {
        "testResults": [
            {
                "name": "/repo/test/add.test.js",
                "assertionResults": [
                    {"title": "adds", "fullName": "add adds", "status": "passed",
                     "location": {"line": 4, "column": 3}},
                    {"title": "later", "fullName": "add later", "status": "todo"},
                    {"title": "breaks", "fullName": "add breaks", "status": "failed",
                     "location": None},
                ],
            }
        ]
    }  # fmt: skip
    got = parse_jest_json(json.dumps(jest), "/repo")
    assert [(r.id, r.passed, r.line, r.title) for r in got] == [
        ("test/add.test.js::add adds", True, 4, "adds"),
        ("test/add.test.js::add breaks", False, None, "breaks"),
    ]
    rspec = {
        "examples": [
            {"description": "adds", "full_description": "Calc#add adds", "status": "passed",
             "file_path": "./spec/calc_spec.rb", "line_number": 5},
            {"description": "p", "full_description": "Calc p", "status": "pending",
             "file_path": "./spec/calc_spec.rb", "line_number": 9},
        ]
    }  # fmt: skip
    got = parse_rspec_json(json.dumps(rspec), "/repo")
    assert [(r.id, r.passed, r.line) for r in got] == [
        ("spec/calc_spec.rb::Calc#add adds", True, 5)
    ]


def test_go_events_and_cover_profile(tmp_path: Path) -> None:
    from bot.cover.coverage import parse_go_cover
    from bot.cover.results import parse_go_json

    (tmp_path / "calc").mkdir()
    (tmp_path / "calc" / "calc_test.go").write_text(
        "package calc\n\nfunc TestA(t *testing.T) {}\n\nfunc TestB(t *testing.T) {}\n"
    )
    events = "\n".join(
        json.dumps(e)
        for e in [
            {"Action": "run", "Package": "ex.com/m/calc", "Test": "TestA"},
            {"Action": "pass", "Package": "ex.com/m/calc", "Test": "TestA"},
            {"Action": "pass", "Package": "ex.com/m/calc", "Test": "TestA/sub"},
            {"Action": "fail", "Package": "ex.com/m/calc", "Test": "TestB"},
            {"Action": "fail", "Package": "ex.com/m/calc"},
            {"Action": "fail", "Package": "ex.com/m/broken"},
        ]
    )
    got = parse_go_json(events + "\nnot json\n", "ex.com/m", tmp_path)
    assert [(r.id, r.passed, r.line) for r in got] == [
        ("calc/calc_test.go::TestA", True, 3),
        ("calc/calc_test.go::TestB", False, 5),
        ("broken::ex.com/m/broken", False, None),
    ]
    profile = "mode: set\nex.com/m/calc/calc.go:3.24,5.2 1 1\nex.com/m/calc/calc.go:7.10,8.3 1 0\n"
    cov = parse_go_cover(profile, "ex.com/m")
    assert cov["calc/calc.go"].executable == {3, 4, 5, 7, 8}
    assert cov["calc/calc.go"].covered == {3, 4, 5}
