"""A fixer's edits off the lines a change touched are undone (real git, real ruff format)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from bot.validation.touched import keep_touched, only_touched, read_texts

MESSY = """\
\"\"\"Messy.\"\"\"

A = {'a':1}


def f() -> int:
    \"\"\"F.\"\"\"
    return 1


B = {'b':2}
"""


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@e", *args],
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def test_a_formatter_keeps_only_the_touched_line_and_the_changes_own_file(
    tmp_path: Path,
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "messy.py").write_text(MESSY)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    base = git(repo, "rev-parse", "HEAD").strip()
    # The change edits one line of a file not formatted to the repo's config, adds a file.
    (repo / "messy.py").write_text(MESSY.replace("{'b':2}", "{'b':3}"))
    (repo / "fresh.py").write_text("C = {'c':1}\n")
    prior = read_texts(repo, ["messy.py", "fresh.py"])
    ruff = Path(sys.executable).parent / "ruff"
    subprocess.run([str(ruff), "format", "-q", "messy.py", "fresh.py"], cwd=repo, check=True)

    assert keep_touched(repo, base, prior) == ["messy.py"]

    fixed = (repo / "messy.py").read_text()
    assert 'B = {"b": 3}' in fixed  # the touched line is formatted
    assert "A = {'a':1}" in fixed  # the untouched one stays as the repository has it
    assert (repo / "fresh.py").read_text() == 'C = {"c": 1}\n'  # the change's own file


def test_an_edit_next_to_a_deletion_counts_as_touched() -> None:
    base = "a\nx\nb\nc\n"
    before = "a\nb\nc\n"  # the change deleted `x`
    after = "a\nB\nC\n"  # a fixer rewrote the line after the deletion, and one beyond
    assert only_touched(base, before, after) == "a\nB\nc\n"
    assert only_touched(None, before, after) == after
