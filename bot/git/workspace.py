"""The Workspace: one checkout (clone or worktree) driven through the git CLI."""

# Over 300 lines: the one git facade workflows hold; the git work is in its siblings.

from __future__ import annotations

import shlex
import shutil
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from bot.errors import GitError
from bot.git import branches, changes, history, runner
from bot.git.runner import Completed
from bot.secrets import redact, register

# `git worktree add/remove` on one repository from several threads race on its admin
# files; one lock per repository (keyed by its common git dir) serialises them.
_worktree_locks: dict[str, threading.Lock] = {}
_worktree_locks_guard = threading.Lock()


PushGuard = Callable[["Workspace", str], None]
"""Judges a commit before it is pushed; raises to refuse (bot.outbound.guard.PushGuard)."""


class Workspace:
    """A git checkout the bot works in; every method is one or a few git commands."""

    push_guard: PushGuard | None = None
    """Called with the exact commit before every push; without one, push() refuses."""

    def __init__(
        self,
        path: Path,
        *,
        token: str | None = None,
        timeout: float = 600,
        remote_url: str | None = None,
    ) -> None:
        self.path = Path(path).resolve()
        self.token = token
        self.timeout = timeout
        # Pushes with a lease: branch -> the remote sha we last saw ("" = must not exist).
        # Only branches prepare_branch chose (ours) get one; other pushes are plain.
        self.leases: dict[str, str] = {}
        self._remote_url = remote_url
        if remote_url is None:
            # Read now, before an agent could edit .git/config: network commands go to this
            # URL (never to whatever `origin` says later) and the token is scoped to it.
            # The first command also removes persisted credentials (actions/checkout's
            # extraheader) and other planted config, before any agent can read .git/config.
            got = self.run(["config", "--get", "remote.origin.url"], check=False).stdout
            self._remote_url = runner.split_credentials(got.strip())[0] or None

    @property
    def token(self) -> str | None:
        """Sent (per command, never stored) to `origin` on fetch, push and ls-remote.

        Assign a fresh one when an installation token nears expiry; every form of it is
        registered as a secret, so no log, transcript or error shows it.
        """
        return self._token

    @token.setter
    def token(self, value: str | None) -> None:
        for form in runner.token_secrets(value):
            register(form)
        self._token = value

    @property
    def remote(self) -> str:
        """Where fetch and push go: the origin URL seen when the workspace was opened."""
        return self._remote_url or "origin"

    def __repr__(self) -> str:
        return f"Workspace({str(self.path)!r})"

    # -- running git ---------------------------------------------------------------------

    def git(self, *args: str, check: bool = True) -> str:
        """Run `git *args` here and return stdout; GitError with stderr on failure."""
        return self.run(list(args), check=check).stdout

    def run(
        self,
        args: Sequence[str],
        *,
        check: bool = True,
        stdin: str | None = None,
        env: Mapping[str, str] | None = None,
        operation: str = "",
    ) -> Completed:
        """Run git here (hardened, bot.git.harden); the token only for network commands."""
        config: list[tuple[str, str]] = []
        if runner.subcommand(args) in runner.NETWORK_COMMANDS and self.token and self._remote_url:
            config = runner.auth_config(self._remote_url, self.token)
        return runner.run(
            args,
            cwd=self.path,
            timeout=self.timeout,
            config=config,
            env=env,
            stdin=stdin,
            operation=operation,
            check=check,
        )

    def error(
        self,
        args: Sequence[str],
        result: Completed,
        *,
        operation: str,
        recoverable: bool = True,
        hint: str = "",
    ) -> GitError:
        """The GitError for a failed `run(args, check=False)`, redacted."""
        return runner.failure(
            result,
            shown=redact(shlex.join(["git", *args])),
            operation=operation,
            recoverable=recoverable,
            hint=hint,
        )

    def succeeds(self, *args: str) -> bool:
        """True when `git *args` exits 0 (a question, not an action)."""
        return self.run(list(args), check=False).returncode == 0

    def rev(self, ref: str) -> str:
        """The commit sha `ref` names; GitError if it names none."""
        return self.git("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}").strip()

    def git_path(self, name: str) -> Path:
        """Where git keeps `name` (index, MERGE_HEAD, ...) for this checkout or worktree."""
        return self.path / self.git("rev-parse", "--git-path", name).strip()

    # -- refs and branches ---------------------------------------------------------------

    def head_sha(self) -> str:
        """The sha of HEAD."""
        return self.rev("HEAD")

    def current_branch(self) -> str:
        """The checked-out branch's short name, or "HEAD" when detached."""
        got = self.run(["symbolic-ref", "--quiet", "--short", "HEAD"], check=False)
        return got.stdout.strip() if got.returncode == 0 else "HEAD"

    def remote_heads(self) -> dict[str, str]:
        """Every branch on origin: name -> sha (one ls-remote)."""
        heads = {}
        for line in self.git("ls-remote", "--heads", self.remote).splitlines():
            sha, _, ref = line.partition("\t")
            heads[ref.removeprefix("refs/heads/")] = sha
        return heads

    def remote_branch_exists(self, branch: str) -> bool:
        """Whether origin has `branch` (asks the remote, not the tracking refs)."""
        found = self.git("ls-remote", "--heads", self.remote, f"refs/heads/{branch}")
        return bool(found.strip())

    def fetch(self, ref: str | None = None) -> None:
        """Fetch origin (all branches, pruned), or one branch / ref / sha."""
        # Explicit refspecs: the remote is a URL, so origin's configured refspec is not used.
        if ref is None:
            self.git("fetch", "--prune", self.remote, "+refs/heads/*:refs/remotes/origin/*")
        elif ref.startswith("refs/"):
            self.git("fetch", self.remote, f"+{ref}:{ref}")
        elif len(ref) == 40 and all(c in "0123456789abcdef" for c in ref):
            self.git("fetch", self.remote, ref)
        else:
            self.git("fetch", self.remote, f"+refs/heads/{ref}:refs/remotes/origin/{ref}")

    def checkout(self, ref: str) -> None:
        """Check out a branch or commit."""
        self.git("checkout", ref)

    def switch(self, branch: str, *, at: str) -> None:
        """Check out local `branch`, created or moved to `at` (its local commits dropped)."""
        self.git("checkout", "--quiet", "-B", branch, at)

    def delete_branch(self, branch: str) -> None:
        """Delete local `branch` if it exists (never the remote one)."""
        self.git("branch", "-D", branch, check=False)

    def tracked_files(self) -> list[str]:
        """Every path git tracks at HEAD and in the index."""
        return [p for p in self.git("ls-files", "-z").split("\0") if p]

    def prepare_branch(self, preferred: str, *, base: str) -> str:
        """Check out the branch to work on and return its name (DESIGN §6).

        On origin `preferred` is reused if every commit it has beyond `base` is ours
        (author and committer BOT_EMAIL; a branch with none counts as ours) and rebased onto
        `base` when base moved (kept as it was if that conflicts). Someone else's branch is
        left alone: `preferred-2`, `-3`, ... are tried the same way. A name free on origin
        becomes a new branch at `base`. The chosen branch is leased for push().
        """
        return branches.prepare_branch(self, preferred, base=base)

    def push(self, branch: str, *, force_with_lease: bool = True) -> None:
        """Push local `branch` to origin; with a lease (may rewrite) only on branches we own.

        A branch is ours when prepare_branch chose it; the lease is the remote sha seen then
        (or after our last push), so any push by someone else in between makes git refuse:
        GitError(operation="push", recoverable=False). Other branches get a plain push.
        The commit pushed is the one `push_guard` judged (by sha, not by the ref).
        """
        branches.push(self, branch, force_with_lease=force_with_lease)

    # -- changes (bot.git.changes) -------------------------------------------------------

    def changed_files(self, base: str) -> list[str]:
        """Paths changed since `base`: commits, staged, unstaged and untracked (not ignored).

        `base` is compared from where HEAD forked off it (like a pull request's diff); a
        rename lists both paths.
        """
        return changes.paths_of(
            changes.diff_against(self, base, "--no-renames", "--name-only", "-z")
        )

    def diff(self, base: str) -> str:
        """The unified diff since `base`, working tree (untracked files too) included."""
        return changes.diff_against(self, base, "--no-color", "-M")

    def has_changes(self) -> bool:
        """Whether the index or working tree differs from HEAD (untracked files count)."""
        return bool(self.git("status", "--porcelain", "-z", "--untracked-files=normal"))

    def log_messages(self, base: str) -> list[str]:
        """Commit subjects in base..HEAD, oldest first."""
        return self.git("log", "--reverse", "--format=%s", f"{base}..HEAD").splitlines()

    # -- history (bot.git.history) -------------------------------------------------------

    def commit(self, message: str, *, paths: list[str] | None = None, all: bool = True) -> str:
        """Commit as the bot and return the new sha (DESIGN §6, seed 001 FR-024a).

        What is committed: the working-tree state of `paths` if given; else everything
        (`all`); else the index as staged. With `paths`, other staged changes stay staged and
        out of the commit. No hook runs (DESIGN §13). GitError if nothing to commit or git
        refuses.
        """
        return history.commit(self, message, paths=paths, everything=all)

    def merge(self, ref: str) -> None:
        """Merge `ref` into HEAD; a conflict is aborted: GitError(recoverable=False)."""
        history.merge(self, ref)

    def cherry_pick(self, sha: str) -> str:
        """Apply commit `sha` onto HEAD, return the new sha; a conflict is aborted and raised."""
        return history.cherry_pick(self, sha)

    def apply_changes(self, sha: str) -> None:
        """Bring commit `sha`'s changes into the working tree, uncommitted.

        A conflict leaves the tree as it was and raises GitError(recoverable=False).
        """
        history.apply_changes(self, sha)

    def reset_hard(self, ref: str, *, clean: bool = False) -> None:
        """Point the branch at `ref` and discard local changes (untracked files too if `clean`)."""
        self.git("reset", "--hard", "--quiet", ref)
        if clean:
            self.git("clean", "-fd", "--quiet")

    # -- worktrees -----------------------------------------------------------------------

    def add_worktree(self, path: Path, *, branch: str, start: str) -> Workspace:
        """A new worktree at `path` on branch `branch`, created or reset at `start`.

        A worktree left at `path` by an earlier attempt is removed first (a task's retry).
        """
        path = Path(path).resolve()
        with self._worktree_lock():
            self.git("worktree", "prune")
            if path in self.worktrees()[1:]:
                self.git("worktree", "remove", "--force", "--force", str(path))
            self.git("worktree", "add", "--quiet", "-B", branch, str(path), start)
        return Workspace(path, token=self.token, timeout=self.timeout, remote_url=self._remote_url)

    def remove_worktree(self, path: Path) -> None:
        """Remove the worktree at `path` (its changes are discarded; its branch stays)."""
        path = Path(path).resolve()
        with self._worktree_lock():
            self.git("worktree", "prune")
            if path not in self.worktrees()[1:]:
                if path.exists():
                    raise GitError(
                        f"{path} is not a linked worktree of {self.path}; not removing it",
                        operation="worktree",
                        recoverable=False,
                    )
                return
            got = self.run(["worktree", "remove", "--force", "--force", str(path)], check=False)
            if got.returncode != 0:
                # A locked or half-written worktree: drop the directory, then its admin entry.
                shutil.rmtree(path, ignore_errors=True)
                self.git("worktree", "prune")

    def worktrees(self) -> list[Path]:
        """Paths of this repository's worktrees, the main one first."""
        out = self.git("worktree", "list", "--porcelain", "-z")
        prefix = "worktree "
        return [Path(f[len(prefix) :]).resolve() for f in out.split("\0") if f.startswith(prefix)]

    def _worktree_lock(self) -> threading.Lock:
        common = self.path / self.git("rev-parse", "--git-common-dir").strip()
        key = str(common.resolve())
        with _worktree_locks_guard:
            return _worktree_locks.setdefault(key, threading.Lock())


def clone(
    url: str,
    dest: Path,
    *,
    token: str | None = None,
    branch: str | None = None,
    timeout: float = 600,
) -> Workspace:
    """Clone `url` (https://, http://, file://) into `dest` and return its Workspace.

    The token (or one embedded in `url`) goes to this git process only, as a header scoped to
    the URL; the URL stored in .git/config carries no credentials.
    """
    clean, embedded = runner.split_credentials(url)
    token = token or embedded
    for form in runner.token_secrets(token):
        register(form)
    dest = Path(dest).resolve()
    dest.parent.mkdir(parents=True, exist_ok=True)
    args = ["clone", "--quiet"]
    if branch:
        args += ["--branch", branch]
    args += ["--", clean, str(dest)]
    runner.run(
        args,
        cwd=dest.parent,
        timeout=timeout,
        config=runner.auth_config(clean, token) if token else (),
        operation="clone",
    )
    return Workspace(dest, token=token, timeout=timeout, remote_url=clean)
