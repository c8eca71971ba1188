"""The test-file diff check: edits, additions, deletions seen and undone; links not followed."""

from __future__ import annotations

import subprocess
from pathlib import Path

from bot.git import Workspace
from bot.workflows.tdd import files


def repo(tmp: Path) -> Workspace:
    root = tmp / "repo"
    (root / "tests").mkdir(parents=True)
    (root / "tests" / "test_a.py").write_text("def test_a():\n    assert 1\n")
    (root / "a.py").write_text("A = 1\n")
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    ws = Workspace(root)
    ws.commit("init")
    return ws


def test_edits_additions_and_deletions_of_tests_are_seen_and_undone(tmp_path: Path) -> None:
    ws = repo(tmp_path)
    before = files.snapshot(ws)
    (ws.path / "tests" / "test_a.py").write_text("def test_a():\n    pass\n")
    (ws.path / "tests" / "test_b.py").write_text("def test_b():\n    pass\n")
    (ws.path / "a.py").write_text("A = 2\n")  # code: not a test change
    assert files.test_changes(ws, before) == ["tests/test_a.py", "tests/test_b.py"]
    files.restore(ws, before, files.test_changes(ws, before))
    assert files.test_changes(ws, before) == []
    assert not (ws.path / "tests" / "test_b.py").exists()
    (ws.path / "tests" / "test_a.py").unlink()
    assert files.test_changes(ws, before) == ["tests/test_a.py"]


def test_a_link_left_for_a_test_is_replaced_never_written_through(tmp_path: Path) -> None:
    ws = repo(tmp_path)
    before = files.snapshot(ws)
    outside = tmp_path / "host.txt"
    outside.write_text("host\n")
    test = ws.path / "tests" / "test_a.py"
    test.unlink()
    test.symlink_to(outside)
    assert files.test_changes(ws, before) == ["tests/test_a.py"]
    files.restore(ws, before, ["tests/test_a.py"])
    assert outside.read_text() == "host\n"
    assert not test.is_symlink() and "def test_a" in test.read_text()


def test_the_runners_part_of_its_config_is_guarded_like_the_tests(tmp_path: Path) -> None:
    ws = repo(tmp_path)
    pyproject = ws.path / "pyproject.toml"
    pyproject.write_text(
        '[project]\nname = "a"\n\n[tool.pytest.ini_options]\ntestpaths = ["tests"]\n'
    )
    (ws.path / "package.json").write_text('{"name": "a", "scripts": {"test": "jest"}}\n')
    ws.commit("config")
    before = files.snapshot(ws)
    text = pyproject.read_text()
    # Another section of pyproject.toml may change (a dependency); the runner's may not.
    pyproject.write_text(text.replace('name = "a"\n', 'name = "a"\ndependencies = []\n'))
    assert files.test_changes(ws, before) == []
    pyproject.write_text(text + 'addopts = "--co"\n')
    (ws.path / "pytest.ini").write_text("[pytest]\naddopts = --co\n")
    (ws.path / "setup.cfg").write_text("[tool:pytest]\naddopts = --co\n")
    (ws.path / "package.json").write_text('{"name": "a", "scripts": {"test": "true"}}\n')
    touched = files.test_changes(ws, before)
    assert touched == ["package.json", "pyproject.toml", "pytest.ini", "setup.cfg"]
    files.restore(ws, before, touched)
    assert pyproject.read_text() == text and not (ws.path / "pytest.ini").exists()
    assert files.test_changes(ws, before) == []
