"""The bot's own reads and writes in a workspace never follow a link a sandboxed command left."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from bot import treefs
from bot.clock import FakeClock
from bot.git import Workspace
from bot.session import Session
from bot.validation.changes import TreeGuard
from bot.workflows.steps.agents import commit_session
from tests.test_validation_gate import make_repo


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, Path]:
    root, outside = tmp_path / "tree", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "secret").write_text("host secret\n")
    return root, outside


def test_a_write_through_a_folder_turned_link_lands_inside_and_replaces_the_link(
    tree: tuple[Path, Path],
) -> None:
    root, outside = tree
    (root / "pwn").symlink_to(outside)
    treefs.write_bytes(root, "pwn/evil.pth", b"import os\n")
    assert sorted(p.name for p in outside.iterdir()) == ["secret"]
    assert not (root / "pwn").is_symlink()
    assert (root / "pwn" / "evil.pth").read_bytes() == b"import os\n"


def test_a_write_to_a_link_replaces_the_link_not_its_target(tree: tuple[Path, Path]) -> None:
    root, outside = tree
    (root / ".gitignore").symlink_to(outside / "secret")
    treefs.write_bytes(root, ".gitignore", b"*\n")
    assert (outside / "secret").read_text() == "host secret\n"
    assert not (root / ".gitignore").is_symlink()


def test_reads_refuse_links_on_the_way_or_at_the_end_fifos_and_huge_files(
    tree: tuple[Path, Path],
) -> None:
    root, outside = tree
    (root / "calc.py").symlink_to(outside / "secret")
    (root / "d").symlink_to(outside)
    os.mkfifo(root / "pipe")
    with (root / "sparse").open("wb") as fh:
        fh.truncate(treefs.MAX_READ + 1)
    for rel in ("calc.py", "d/secret", "pipe", "sparse"):
        with pytest.raises(treefs.UnsafePath):
            treefs.read_bytes(root, rel)
    assert treefs.kind(root, "calc.py") == "link"
    assert treefs.kind(root, "d/secret") == "missing"
    assert treefs.kind(root, "pipe") == "special"
    (root / "ok.txt").write_text("fine")
    assert treefs.read_text(root, "ok.txt") == "fine"


def test_paths_leaving_the_tree_are_refused(tree: tuple[Path, Path]) -> None:
    root, _ = tree
    for rel in ("../outside/secret", "/etc/passwd", ""):
        with pytest.raises(treefs.UnsafePath):
            treefs.write_bytes(root, rel, b"x")


def test_remove_under_a_link_leaves_the_target_and_prunes_empty_folders(
    tree: tuple[Path, Path],
) -> None:
    root, outside = tree
    (root / "d").symlink_to(outside)
    treefs.remove(root, "d/secret")
    assert (outside / "secret").exists()
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "b" / "f").write_text("x")
    treefs.remove(root, "a/b/f")
    assert not (root / "a").exists()
    treefs.remove(root, "d")
    assert not (root / "d").is_symlink() and (outside / "secret").exists()


def test_settle_puts_a_file_back_inside_when_the_stage_made_its_folder_a_link(
    tmp_path: Path,
) -> None:
    # The hostile-model trial's H1: conftest.py swapped `pwn/` for a link to the bot's
    # site-packages, and settle restored `pwn/evil.pth` through it (a .pth runs at start-up).
    repo, _ = make_repo(tmp_path, "repo", {"a.py": "x = 1\n"})
    victim = tmp_path / "site-packages"
    victim.mkdir()
    (repo / "pwn").mkdir()
    (repo / "pwn" / "evil.pth").write_text("import os\n")
    guard = TreeGuard(repo)
    before = guard.snapshot()
    (repo / "pwn" / "evil.pth").unlink()
    (repo / "pwn").rmdir()
    (repo / "pwn").symlink_to(victim)
    guard.settle(before)
    assert list(victim.iterdir()) == []
    assert (repo / "pwn" / "evil.pth").read_text() == "import os\n"


def test_snapshot_does_not_block_on_a_fifo_nor_read_a_sparse_giant(tmp_path: Path) -> None:
    repo, _ = make_repo(tmp_path, "repo", {"a.py": "x = 1\n"})
    os.mkfifo(repo / "pipe")
    with (repo / "giant").open("wb") as fh:
        fh.truncate(64 * 1024**3)
    done: list[object] = []
    worker = threading.Thread(target=lambda: done.append(TreeGuard(repo).snapshot()))
    worker.start()
    worker.join(timeout=20)
    if not done:  # unblock the reader so the test process can end
        os.close(os.open(repo / "pipe", os.O_WRONLY | os.O_NONBLOCK))
    assert done, "snapshot blocked on a FIFO"


def test_session_artifacts_are_copied_inside_not_through_a_planted_link(tmp_path: Path) -> None:
    # The hostile-model trial's H8: `.agents-work` linked to another workspace.
    repo, _ = make_repo(tmp_path, "repo", {"a.py": "x = 1\n"})
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (repo / ".agents-work").symlink_to(elsewhere)
    session = Session.create(tmp_path / "data", "octo-calc-issue-7", FakeClock())
    session.append_transcript({"role": "issue_fixer", "text": "transcript"})
    commit_session(Workspace(repo), session)
    assert list(elsewhere.iterdir()) == []
    assert (repo / ".agents-work" / session.name / "transcript.jsonl").is_file()
