"""`agentbot tasks`: the plan listing, JSON, and path:line errors with exit code 2."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from bot.cli import load_app
from bot.cli.app import EXIT_OK, EXIT_USAGE
from bot.tasks_md import parse_tasks

DATA = Path(__file__).parent / "data" / "tasks_md"
FULL = DATA / "synthetic" / "speckit_full.md"
ROOT = Path(__file__).resolve().parents[1]
ROW = re.compile(r"^ *(\d*) +[┌│└ ] [✓○] (T\d{3,}[a-z]?) ")


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(load_app(), ["tasks", *args], env={"COLUMNS": "200"})
    return result.exit_code, result.stdout, result.stderr


def test_listing_shows_phases_batches_and_done_marks() -> None:
    code, out, _ = run(str(FULL))
    assert code == EXIT_OK
    assert "4 phases, 12 tasks: 2 done, 10 to do in 9 batches" in out
    lines = out.splitlines()
    heads = [line for line in lines if line.startswith("Phase ")]
    assert heads == [
        "Phase 1: Setup (Project Initialization)  (line 16, 2/3 done)",
        "Phase 2: Foundational  (line 28, 0/3 done)",
        "Phase 3: User Story 1 - Login (Priority: P1) 🎯 MVP  (line 38, 0/4 done)",
        "Phase 4: Polish  (line 61, 0/2 done)",
    ]
    assert "✓ T001 Create project structure in src/" in out
    assert "┌ ○ T002 [P] [Setup] Add ruff config" in out  # a [P] batch of two, T003 done
    assert "└ ✓ T003 [P] Add mypy config" in out
    assert " 3 ┌ ○ T004 [P] Create User model" in out
    assert " 4   ○ T006 Wire models together" in out  # depends on the [P] pair: runs alone
    assert "T999" not in out and "T998" not in out


def test_listing_numbers_batches_in_execution_order() -> None:
    _, out, _ = run(str(FULL))
    rows = [m.groups() for m in map(ROW.match, out.splitlines()) if m]
    batches = parse_tasks(FULL.read_text(encoding="utf-8")).batches(include_done=True)
    assert [task_id for _, task_id in rows] == [t.id for b in batches for t in b]
    starts = [str(i) for i, b in enumerate(batches, 1) for j in range(len(b)) if j == 0]
    assert [n for n, _ in rows if n] == starts == [str(i) for i in range(1, 11)]


def test_json_lists_phases_tasks_and_batches() -> None:
    code, out, _ = run(str(FULL), "--json")
    assert code == EXIT_OK
    doc = json.loads(out)
    plan = parse_tasks(FULL.read_text(encoding="utf-8"))
    assert doc["path"] == str(FULL)
    assert [(p["number"], p["line"]) for p in doc["phases"]] == [(1, 16), (2, 28), (3, 38), (4, 61)]
    assert doc["phases"][0]["title"] == "Setup (Project Initialization)"
    assert doc["phases"][1]["tasks"] == ["T004", "T005", "T006"]
    assert doc["tasks"] == [t.model_dump() for t in plan.tasks]
    assert doc["batches"][:3] == [["T002"], ["T004", "T005"], ["T006"]]
    assert doc["all_batches"][:2] == [["T001"], ["T002", "T003"]]


def test_corpus_file_lists() -> None:
    path = DATA / "maverick" / "004-implementer-issue-fixer-agents.tasks.md"
    code, out, _ = run(str(path), "--json")
    assert code == EXIT_OK
    doc = json.loads(out)
    assert len(doc["tasks"]) == 101 and len(doc["phases"]) == 10
    assert sum(len(b) for b in doc["batches"]) == sum(not t["done"] for t in doc["tasks"])


def test_parse_error_prints_path_line_message_and_exits_2(tmp_path: Path) -> None:
    bad = tmp_path / "tasks.md"
    bad.write_text("## Phase 1: A\n- [ ] T001 Ok\n- [y] T002 Bad box\n", encoding="utf-8")
    code, out, err = run(str(bad))
    assert code == EXIT_USAGE
    assert err.strip() == f"{bad}:3: bad checkbox [y]: use [ ], [x] or [X]"
    assert out == ""
    code, _, err = run(str(bad), "--json")
    assert code == EXIT_USAGE and err.startswith(f"{bad}:3: ")


def test_dependency_errors_name_their_line(tmp_path: Path) -> None:
    bad = tmp_path / "tasks.md"
    bad.write_text("- [ ] T001 A\n- [ ] T002 B\n  depends on T404\n", encoding="utf-8")
    code, _, err = run(str(bad))
    assert code == EXIT_USAGE
    assert err.strip() == f"{bad}:3: T002 depends on unknown task T404"


def test_missing_file_exits_2(tmp_path: Path) -> None:
    code, out, err = run(str(tmp_path / "nope.md"))
    assert code == EXIT_USAGE
    assert err.strip() == f"{tmp_path / 'nope.md'}: no such file" and out == ""


def test_directory_and_binary_files_exit_2(tmp_path: Path) -> None:
    code, _, err = run(str(tmp_path))
    assert code == EXIT_USAGE and "is a directory" in err
    binary = tmp_path / "tasks.md"
    binary.write_bytes(b"# ok\n\n\xff\xfe broken\n")
    code, _, err = run(str(binary))
    assert code == EXIT_USAGE and err.startswith(f"{binary}:3: not UTF-8")


def test_a_file_without_tasks_exits_2_showing_a_task_line(tmp_path: Path) -> None:
    empty = tmp_path / "tasks.md"
    # prose, an empty file, and checkboxes without a task id: none of them holds a task
    for text in ("# Tasks\n\nNothing yet.\n", "", "## Phase 1\n- [ ] Create the model\n"):
        empty.write_text(text, encoding="utf-8")
        for args in ((), ("--json",)):
            code, out, err = run(str(empty), *args)
            assert code == EXIT_USAGE and out == "", (text, args, out)
            assert err.strip() == (
                f"{empty}: no tasks: a task line looks like `- [ ] T001 Description`"
            ), err


def test_console_script_exit_code_and_stderr(tmp_path: Path) -> None:
    bad = tmp_path / "tasks.md"
    bad.write_bytes(b"- [ ] T001 A\r\n- [ ] T001 B\r\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    code = "from bot.cli import main; main()"
    proc = subprocess.run(
        [sys.executable, "-c", code, "tasks", str(bad)], capture_output=True, text=True, env=env
    )
    assert proc.returncode == EXIT_USAGE
    assert proc.stderr.strip() == f"{bad}:2: duplicate task id T001 (first on line 1)"


def test_help_names_the_argument_and_option() -> None:
    code, out, _ = run("--help")
    assert code == EXIT_OK and "TASKS_MD" in out and "--json" in out
