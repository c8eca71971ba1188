"""The /cover table, the red-zone message, commit subjects and runner commands (pure parts)."""

from __future__ import annotations

from pathlib import Path

from bot.clock import FakeClock
from bot.cover.coverage import ChangedCoverage
from bot.cover.runners import JestRunner, PytestRunner, RSpecRunner, VitestRunner, runner_for
from bot.cover.table import MethodReport, cover_table, red_zone_message
from bot.validation.environment import build_stage_env
from bot.validation.profiles import detect_profile
from bot.workflows.cover.result import commit_subject


def test_the_table_has_a_row_per_method_with_its_stages_and_cost() -> None:
    done = MethodReport(
        "calc.py::clamp", "clamp", "green", "new",
        tests=["t::a", "t::b"], dropped=["t::c"],
        before=ChangedCoverage(2, 5), after=ChangedCoverage(5, 5), mutants=6, killed=5,
        stages={"analyzer": "cached", "test_architect": "cached", "test_writer": "done",
                "reviewer": "done"},
        cost_usd=0.0123,
    )  # fmt: skip
    skipped = MethodReport(
        "calc.py::log", "log", "yellow", "modified",
        stages={"analyzer": "skipped: nothing testable: it only logs"},
    )  # fmt: skip
    failed = MethodReport(
        "a|b.py::f", "f", "red", "new", stages={"reviewer": "failed: 1 test(s) fail | on head"}
    )
    table = cover_table([done, skipped, failed, MethodReport("x::g", "g", "green", "new")])
    rows = table.splitlines()
    assert rows[0] == (
        "| method | zone | tests added | changed-line coverage | mutants killed | stages | cost |"
    )
    assert rows[2] == (
        "| `clamp` (new) | 🟢 green | 2 | 40% → 100% (5/5 lines) | 5/6 | cached: analyzer,"
        " test_architect | $0.0123 |"
    )
    assert rows[3] == (
        "| `log` (modified) | 🟡 yellow | 0 | n/a → n/a | — |"
        " analyzer skipped: nothing testable: it only logs | $0.0000 |"
    )
    assert "reviewer failed: 1 test(s) fail \\| on head" in rows[4]
    assert "| not run |" in rows[5]
    assert "- `t::c` (for `clamp`)" in table
    assert failed.failed == "reviewer" and done.failed == ""


def test_red_zone_message_names_each_method_and_the_way_on() -> None:
    text = red_zone_message([("big", "calc.py", 202, 101)], "/cover")
    assert "`red_zone_new_code`" in text
    assert "- `big` in `calc.py`: 202 lines, cyclomatic complexity 101" in text
    assert "`/cover --force`" in text


def test_commit_subjects() -> None:
    assert commit_subject(["calc.py"], ["add", "sub"]) == "test(calc): cover add, sub"
    assert commit_subject(["src/a.js", "src/b.js"], ["f"]) == "test(src): cover f"
    assert commit_subject(["a.py", "lib/b.py"], ["f", "g"]) == "test: cover f, g"
    long = commit_subject(["calc.py"], [f"method_{i}" for i in range(20)])
    assert len(long) <= 72 and long.endswith("…")


def _runner(tmp_path: Path, files: dict[str, str], language: str, test: str | None = None):  # type: ignore[no-untyped-def]
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    senv = build_stage_env(
        tmp_path, detect_profile(tmp_path), tmp_path / "data", {}, use_venv=False
    )
    return runner_for(language, tmp_path, senv, test_command=test, timeout=60, clock=FakeClock())


def test_runner_choice_and_commands(tmp_path: Path) -> None:
    py = _runner(
        tmp_path,
        {"pyproject.toml": ""},
        "python",
        "X=1 /v/bin/python3 -m pytest -x tests -p no:foo",
    )
    assert isinstance(py, PytestRunner) and py.python == "/v/bin/python3"
    (tmp_path / "tests").mkdir()
    cmd = py.command(["tests/test_a.py"], "o", ["calc.py"])
    assert cmd.startswith("X=1 /v/bin/python3 -m coverage run --data-file=o/.coverage")
    assert "-x -p no:foo -o junit_family=xunit1 --junitxml=o/junit.xml tests/test_a.py" in cmd
    assert " tests " not in cmd  # the configured test path gives way to the chosen files
    assert py.command([], "o", []).endswith(
        "-x tests -p no:foo -o junit_family=xunit1 --junitxml=o/junit.xml"
    )
    default = _runner(tmp_path, {}, "python", "make test")
    assert isinstance(default, PytestRunner) and default.python == "python"

    jest = _runner(tmp_path, {"package.json": '{"devDependencies": {"jest": "29"}}'}, "javascript")
    assert isinstance(jest, JestRunner) and not isinstance(jest, VitestRunner)
    assert "--collectCoverageFrom=src/a.js" in jest.command(["t.test.js"], "o", ["src/a.js"])
    vitest = _runner(
        tmp_path, {"package.json": '{"devDependencies": {"vitest": "2"}}'}, "typescript"
    )
    assert isinstance(vitest, VitestRunner)
    assert vitest.command([], "o", []) == "vitest run --reporter=json --outputFile=o/results.json"
    assert _runner(tmp_path, {"package.json": "{}"}, "javascript") is None

    (tmp_path / "o").mkdir()
    rspec = _runner(tmp_path, {"Gemfile": ""}, "ruby")
    assert isinstance(rspec, RSpecRunner) and rspec.bundler
    cmd = rspec.command(["spec/a_spec.rb"], "o", [])
    assert "RUBYOPT=-r./o/agentbot_cover.rb bundle exec rspec" in cmd
    assert (tmp_path / "o" / "agentbot_cover.rb").read_text().startswith("# Written by agentbot")
    assert _runner(tmp_path, {}, "go") is None


def test_result_items_say_what_happened_to_each_method() -> None:
    from bot.workflows.cover.result import items

    done = MethodReport(
        "a.py::f", "f", "green", "new", tests=["t::x"], before=ChangedCoverage(0, 2),
        after=ChangedCoverage(2, 2), mutants=3, killed=2, stages={"analyzer": "done"},
    )  # fmt: skip
    cached = MethodReport("a.py::g", "g", "green", "new", stages={"analyzer": "cached"})
    skipped = MethodReport("a.py::h", "h", "green", "new", stages={"analyzer": "skipped: dull"})
    failed = MethodReport("a.py::i", "i", "green", "new", stages={"reviewer": "failed: boom"})
    got = items([done, cached, skipped, failed, MethodReport("a.py::j", "j", "red", "new")])
    assert [i["status"] for i in got] == ["done", "cached", "skipped", "failed", "not run"]
    assert got[0]["detail"] == "1 test(s); changed lines 0% → 100%; 2/3 mutants killed"
    assert got[2]["detail"].endswith("; skipped: dull")
    assert got[3]["detail"].endswith("; failed: boom")
