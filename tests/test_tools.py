"""The workspace tools: editor commands, confinement, bash limits and change tracking."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from bot.models import AgentOutput, AgentStatus
from bot.tools import (
    BASH_TOOL,
    EDITOR_TOOL,
    FINISH_TOOL,
    Toolbox,
    ToolOutcome,
    cap_text,
    tool_definitions,
)

EDIT = EDITOR_TOOL["name"]


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com"}
    env |= {"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    return subprocess.run(
        ["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True
    ).stdout


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (root / "src" / "pkg" / "deep.py").write_text("x = 1\n")
    (root / ".hidden").write_text("h")
    (root / "README.md").write_text("# demo\n")
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-qm", "init")
    return root


@pytest.fixture
def box(ws: Path) -> Toolbox:
    return Toolbox(ws, bash_timeout=10)


def edit(box: Toolbox, **input: Any) -> ToolOutcome:
    return box.run(EDIT, input)


def bash(box: Toolbox, command: str) -> ToolOutcome:
    return box.run("bash", {"command": command})


# --- editor --------------------------------------------------------------------------------


def test_view_file_numbers_lines_and_honours_view_range(box: Toolbox, ws: Path) -> None:
    (ws / "long.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))

    full = edit(box, command="view", path="src/calc.py")
    part = edit(box, command="view", path="long.txt", view_range=[3, 4])
    to_end = edit(box, command="view", path="long.txt", view_range=[9, -1])

    assert not full.is_error
    assert full.content == "     1\tdef add(a, b):\n     2\t    return a - b"
    assert part.content == "     3\tline 3\n     4\tline 4"
    assert to_end.content == "     9\tline 9\n    10\tline 10"
    assert edit(box, command="view", path="long.txt", view_range=[0, 2]).is_error
    assert edit(box, command="view", path="long.txt", view_range=[5, 2]).is_error
    assert edit(box, command="view", path="long.txt", view_range="1-2").is_error


def test_view_directory_lists_two_levels_without_hidden(box: Toolbox, ws: Path) -> None:
    (ws / "src" / "pkg" / "sub").mkdir()
    (ws / "src" / "pkg" / "sub" / "third.py").write_text("")

    out = edit(box, command="view", path=".").content

    lines = out.splitlines()[1:]
    assert lines == ["README.md", "src/", "src/calc.py", "src/pkg/"]
    assert ".hidden" not in out and ".git" not in out and "third.py" not in out


def test_view_refuses_binary_and_reports_missing(box: Toolbox, ws: Path) -> None:
    (ws / "img.bin").write_bytes(b"\x89PNG\0\0\0data")
    assert "binary" in edit(box, command="view", path="img.bin").content
    missing = edit(box, command="view", path="nope.py")
    assert missing.is_error and "does not exist" in missing.content


@pytest.mark.parametrize("command", ["view", "str_replace", "insert", "create"])
def test_a_fifo_or_a_sparse_giant_is_refused_without_blocking(
    box: Toolbox, ws: Path, command: str
) -> None:
    # The hostile-model trial's H10 and H5: the editor runs in the bot's own process.
    os.mkfifo(ws / "pipe")
    with (ws / "giant").open("wb") as fh:
        fh.truncate(64 * 1024**3)
    args = {"old_str": "a", "new_str": "b", "insert_line": 0, "file_text": "x"}
    for name in ("pipe", "giant"):
        got = edit(box, command=command, path=name, **args)
        assert got.is_error, got.content
        assert "regular file" in got.content or "inspect it with bash" in got.content


def test_create_writes_new_files_with_parents_and_says_when_it_overwrites(
    box: Toolbox, ws: Path
) -> None:
    made = edit(box, command="create", path="tests/unit/test_calc.py", file_text="a\r\nb\n")
    again = edit(box, command="create", path="README.md", file_text="# new\n")

    assert "created" in made.content and not made.is_error
    assert (ws / "tests/unit/test_calc.py").read_bytes() == b"a\r\nb\n"
    assert "overwritten" in again.content
    assert (ws / "README.md").read_text() == "# new\n"
    assert box.files_modified == {Path("tests/unit/test_calc.py"), Path("README.md")}
    assert edit(box, command="create", path="x.py").is_error  # no file_text
    assert edit(box, command="create", path="src", file_text="x").is_error


def test_str_replace_needs_exactly_one_match(box: Toolbox, ws: Path) -> None:
    (ws / "dup.py").write_text("x = 1\ny = 2\nx = 1\nx = 1\n")

    ok = edit(box, command="str_replace", path="src/calc.py", old_str="a - b", new_str="a + b")
    none = edit(box, command="str_replace", path="src/calc.py", old_str="a * b", new_str="")
    many = edit(box, command="str_replace", path="dup.py", old_str="x = 1", new_str="x = 2")

    assert not ok.is_error
    assert "     2\t    return a + b" in ok.content
    assert (ws / "src/calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    assert none.is_error and "not found" in none.content
    assert many.is_error and "3 times" in many.content and "lines 1, 3, 4" in many.content
    assert (ws / "dup.py").read_text() == "x = 1\ny = 2\nx = 1\nx = 1\n"
    assert box.files_modified == {Path("src/calc.py")}
    assert edit(box, command="str_replace", path="dup.py", old_str="").is_error


def test_str_replace_keeps_crlf_files_crlf(box: Toolbox, ws: Path) -> None:
    (ws / "win.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    out = edit(box, command="str_replace", path="win.txt", old_str="one\ntwo", new_str="1\n2")
    assert not out.is_error
    assert (ws / "win.txt").read_bytes() == b"1\r\n2\r\nthree\r\n"


def test_insert_after_a_line(box: Toolbox, ws: Path) -> None:
    (ws / "f.txt").write_text("a\nb")

    top = edit(box, command="insert", path="f.txt", insert_line=0, insert_text="start")
    mid = edit(box, command="insert", path="f.txt", insert_line=2, new_str="middle\n")
    end = edit(box, command="insert", path="f.txt", insert_line=4, insert_text="end\n")

    assert not (top.is_error or mid.is_error or end.is_error), (top, mid, end)
    assert (ws / "f.txt").read_text() == "start\na\nmiddle\nb\nend\n"
    assert edit(box, command="insert", path="f.txt", insert_line=99, insert_text="x").is_error
    assert edit(box, command="insert", path="f.txt", insert_line="1", insert_text="x").is_error


def test_bad_commands_are_errors_not_exceptions(box: Toolbox) -> None:
    assert "unknown command" in edit(box, command="delete", path="README.md").content
    assert "undo_edit" in edit(box, command="undo_edit", path="README.md").content
    assert "path" in edit(box, command="view").content
    assert box.run("nope", {}).is_error
    assert box.run(EDIT, "view README.md").is_error  # type: ignore[arg-type]


# --- confinement -------------------------------------------------------------------------


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    secret = tmp_path / "outside.txt"
    secret.write_text("TOP SECRET\n")
    return secret


@pytest.mark.parametrize("command", ["view", "str_replace", "insert", "create"])
@pytest.mark.parametrize("how", ["dotdot", "absolute", "symlink", "symlinked_dir"])
def test_paths_outside_the_workspace_are_refused(
    box: Toolbox, ws: Path, outside: Path, command: str, how: str
) -> None:
    (ws / "link.txt").symlink_to(outside)
    (ws / "linkdir").symlink_to(outside.parent)
    path = {
        "dotdot": "../outside.txt",
        "absolute": str(outside),
        "symlink": "link.txt",
        "symlinked_dir": "linkdir/outside.txt",
    }[how]
    all_args: dict[str, dict[str, Any]] = {
        "view": {},
        "str_replace": {"old_str": "TOP", "new_str": "PWNED"},
        "insert": {"insert_line": 0, "insert_text": "PWNED"},
        "create": {"file_text": "PWNED"},
    }
    args = all_args[command]

    out = edit(box, command=command, path=path, **args)

    assert out.is_error, out
    assert "outside the workspace" in out.content
    assert "TOP SECRET" not in out.content
    assert outside.read_text() == "TOP SECRET\n"
    assert box.files_modified == set()


@pytest.mark.parametrize("path", [".git/hooks/pre-commit", ".git/config", "gitlink/config"])
def test_nothing_under_git_can_be_written(box: Toolbox, ws: Path, path: str) -> None:
    (ws / "gitlink").symlink_to(ws / ".git")
    before = (ws / ".git" / "config").read_text()

    out = edit(box, command="create", path=path, file_text="[core]\n\tfsmonitor = evil\n")

    assert out.is_error and "`.git` is read-only" in out.content
    assert not (ws / ".git" / "hooks" / "pre-commit").exists()
    assert (ws / ".git" / "config").read_text() == before
    assert not edit(box, command="view", path=".git/config").is_error


def test_etc_passwd_is_refused(box: Toolbox) -> None:
    out = edit(box, command="view", path="/etc/passwd")
    assert out.is_error and "root:" not in out.content


def test_absolute_and_dotted_paths_inside_are_accepted(box: Toolbox, ws: Path) -> None:
    inside = edit(box, command="view", path=str(ws / "src" / "calc.py"))
    dotted = edit(box, command="view", path="src/pkg/../calc.py")
    (ws / "alias.py").symlink_to(ws / "src" / "calc.py")
    via_link = edit(box, command="str_replace", path="alias.py", old_str="-", new_str="+")

    assert not inside.is_error and not dotted.is_error and not via_link.is_error
    assert "+" in (ws / "src" / "calc.py").read_text()
    assert box.files_modified == {Path("src/calc.py")}


# --- bash -----------------------------------------------------------------------------------


def test_bash_environment_is_the_allowlist(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "ghs_" + "a" * 36)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-xyz")
    monkeypatch.setenv("MY_SECRET", "s")
    monkeypatch.setenv("aws_secret_access_key", "s")
    monkeypatch.setenv("DB_PASSWORD", "p")
    monkeypatch.setenv("AGENTBOT_WEBHOOK_SECRET", "w")
    monkeypatch.setenv("INNOCENT_URL", "https://user:hunter2@example.com/x")
    monkeypatch.setenv("HARMLESS_SETTING", "visible")
    box = Toolbox(ws)

    out = bash(box, "env")

    names = {line.split("=", 1)[0] for line in out.content.splitlines() if "=" in line}
    assert not out.is_error
    assert "PATH" in names and "HARMLESS_SETTING" not in names
    assert not [n for n in names if any(w in n.upper() for w in ("TOKEN", "KEY", "SECRET"))]
    assert "DB_PASSWORD" not in names and "INNOCENT_URL" not in names
    assert "hunter2" not in out.content and "ghs_" not in out.content
    assert "GIT_TERMINAL_PROMPT" in names


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    # A zombie waiting for a reaper counts as gone: it runs no code.
    stat = Path(f"/proc/{pid}/stat")
    return not stat.exists() or stat.read_text().rsplit(")", 1)[1].split()[0] == "Z"


def _wait_gone(pid: int, seconds: float = 3.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if _gone(pid):
            return True
        time.sleep(0.05)
    return _gone(pid)


def test_timeout_kills_the_command_and_its_children(ws: Path) -> None:
    box = Toolbox(ws, bash_timeout=1)
    started = time.monotonic()

    out = bash(box, "sleep 100 & echo $! > child.pid; sleep 100")

    assert time.monotonic() - started < 5
    assert out.is_error and "timed out after 1 s" in out.content
    child = int((ws / "child.pid").read_text())
    assert _wait_gone(child), f"child {child} survived the timeout"


def test_background_processes_do_not_outlive_the_call(box: Toolbox, ws: Path) -> None:
    out = bash(box, "sleep 100 > /dev/null 2>&1 & echo $!")
    assert not out.is_error
    assert _wait_gone(int(out.content.strip()))


def test_huge_output_is_capped_keeping_head_and_tail(ws: Path) -> None:
    box = Toolbox(ws, output_cap=30_000)

    out = bash(box, "echo START; head -c 10000000 /dev/zero | tr '\\0' x; echo; echo END")

    assert len(out.content) < 30_500
    assert out.content.startswith("START\nxxx")
    assert out.content.rstrip().endswith("xxx\nEND")
    assert "bytes cut from the middle (10,000,011 in total)" in out.content


def test_bash_reports_exit_codes_and_runs_each_call_fresh_in_the_workspace(
    box: Toolbox, ws: Path
) -> None:
    failed = bash(box, "echo oops >&2; exit 3")
    bash(box, "cd src && export FOO=1")
    where = bash(box, "pwd; echo ${FOO:-unset}")

    assert failed.content == "oops\n[exit code 3]" and not failed.is_error
    assert where.content == f"{ws.resolve()}\nunset"
    assert bash(box, "true").content == "(no output)"
    assert "fresh shell" in box.run("bash", {"restart": True}).content
    assert box.run("bash", {}).is_error


def test_bash_changes_are_tracked_in_git(box: Toolbox, ws: Path) -> None:
    (ws / "dirty.txt").write_text("before\n")  # already untracked before the call
    bash(box, "echo '# more' >> README.md; echo new > made.txt; rm src/pkg/deep.py")
    bash(box, "mkdir -p __pycache__ && touch __pycache__/x.pyc; cat README.md > /dev/null")

    assert box.files_modified == {Path("README.md"), Path("made.txt"), Path("src/pkg/deep.py")}
    bash(box, "echo after >> dirty.txt")
    assert Path("dirty.txt") in box.files_modified


def test_bash_changes_are_tracked_outside_git(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "a.txt").write_text("a")
    box = Toolbox(tmp_path / "plain")

    bash(box, "echo b > b.txt; echo more >> a.txt")

    assert box.files_modified == {Path("a.txt"), Path("b.txt")}


def test_bash_in_a_subdirectory_of_a_repo_reports_workspace_relative_paths(ws: Path) -> None:
    box = Toolbox(ws / "src")
    bash(box, "echo '# x' >> calc.py")
    assert box.files_modified == {Path("calc.py")}


# --- schemas and helpers ----------------------------------------------------------------------


def test_finish_tool_schema_is_self_contained_and_matches_agent_output() -> None:
    schema = FINISH_TOOL["input_schema"]
    text = json.dumps(schema)
    good = AgentOutput(status=AgentStatus.NEEDS_INFO, summary="s", question="which?")

    assert "$ref" not in text and "$defs" not in text
    assert FINISH_TOOL["name"] == "finish"
    assert schema["properties"]["status"]["enum"] == ["OK", "BLOCKED", "NEEDS_INFO", "FAIL"]
    assert set(schema["required"]) == {"status", "summary"}
    jsonschema.validate(good.model_dump(mode="json"), schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"status": "DONE", "summary": "s"}, schema)


def test_tool_definitions_append_finish() -> None:
    assert tool_definitions(("bash", EDIT)) == [BASH_TOOL, EDITOR_TOOL, FINISH_TOOL]
    with pytest.raises(ValueError, match="unknown tools"):
        tool_definitions(("computer",))


def test_cap_text_keeps_head_and_tail() -> None:
    text = "H" * 1000 + "M" * 5000 + "T" * 1000
    out = cap_text(text, 1000)
    assert len(out) < 1100
    assert out.startswith("H" * 400) and out.endswith("T" * 400)
    assert "characters cut from the middle (7,000 in total)" in out
    assert cap_text("short", 1000) == "short"
