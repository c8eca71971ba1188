"""Real git repositories for tests: bare remotes in tmp dirs, and git over HTTP on 127.0.0.1.

Typical use in an end-to-end test:

    remote = make_remote(tmp_path, {"src/app.py": "x = 1\\n", "README.md": "# demo\\n"})
    url = file_url(remote)                      # "file:///.../remote.git": clone() accepts it
    ...                                         # the code under test clones, commits, pushes
    assert branch_sha(remote, "agentbot/fix-issue-1") is not None
    assert read_file(remote, "agentbot/fix-issue-1", "src/app.py") == "x = 2\\n"
    assert commits(remote, "agentbot/fix-issue-1", base="main")[0].subject.startswith("fix")

Someone else pushing (a human, another bot) is `push_files(remote, "branch", {...})`.
For token-authenticated HTTP (what GitHub does), serve the directory holding the bare repos:

    with serve_http(tmp_path, token="ghs_x") as server:
        clone(server.url("remote.git"), dest, token="ghs_x")

Every helper runs git with a fixed identity and without the caller's GIT_DIR and friends, so
they work the same inside a git hook, in CI and on a laptop.
"""

from __future__ import annotations

import base64
import os
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote

HUMAN = ("Human Dev", "human@example.com")
"""The default author of helper commits: someone who is not the bot."""

_DROP = {"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_COMMON_DIR"}


def git(cwd: Path, *args: str, author: tuple[str, str] = HUMAN, input: str | None = None) -> str:
    """Run git in `cwd` as `author` and return stdout; AssertionError (with stderr) on failure."""
    env = {k: v for k, v in os.environ.items() if k not in _DROP}
    name, email = author
    env.update(
        GIT_AUTHOR_NAME=name,
        GIT_AUTHOR_EMAIL=email,
        GIT_COMMITTER_NAME=name,
        GIT_COMMITTER_EMAIL=email,
        GIT_TERMINAL_PROMPT="0",
    )
    proc = subprocess.run(
        ["git", "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false", *args],
        cwd=cwd,
        env=env,
        input=input,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, f"git {' '.join(args)} failed in {cwd}:\n{proc.stderr}"
    return proc.stdout


def write_files(root: Path, files: Mapping[str, str | None]) -> None:
    """Write `files` (relative path -> text) under `root`; a None value deletes the file."""
    for rel, text in files.items():
        target = root / rel
        if text is None:
            target.unlink(missing_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)


def make_remote(
    tmp_path: Path,
    files: Mapping[str, str],
    default_branch: str = "main",
    *,
    name: str = "remote.git",
    message: str = "initial commit",
) -> Path:
    """A bare repository `tmp_path/name` whose `default_branch` holds one commit of `files`."""
    bare = tmp_path / name
    git(tmp_path, "init", "--quiet", "--bare", "-b", default_branch, str(bare))
    with tempfile.TemporaryDirectory(dir=tmp_path) as seed:
        work = Path(seed)
        git(work, "init", "--quiet", "-b", default_branch)
        write_files(work, files)
        git(work, "add", "--all")
        git(work, "commit", "--quiet", "--allow-empty", "-m", message)
        git(work, "push", "--quiet", str(bare), f"HEAD:refs/heads/{default_branch}")
    return bare


def file_url(path: Path) -> str:
    """The file:// URL of a local repository (what `clone()` and `JobEnv.server_url` accept)."""
    return path.resolve().as_uri()


def server_url(tmp_path: Path) -> str:
    """A `GITHUB_SERVER_URL`-style base: `{server_url}/{owner}/{repo}.git` is a local path."""
    return tmp_path.resolve().as_uri()


def make_github_remote(tmp_path: Path, full_name: str, files: Mapping[str, str]) -> Path:
    """A bare remote at `tmp_path/owner/repo.git`, so `server_url(tmp_path)` clones it."""
    owner, repo = full_name.split("/")
    (tmp_path / owner).mkdir(parents=True, exist_ok=True)
    return make_remote(tmp_path / owner, files, name=f"{repo}.git")


def push_files(
    remote: Path,
    branch: str,
    files: Mapping[str, str | None],
    *,
    message: str = "human change",
    start: str | None = None,
    author: tuple[str, str] = HUMAN,
) -> str:
    """Commit `files` on `branch` of `remote` as `author` and push; returns the new sha.

    The branch grows from its current tip, or from `start` (default: the remote's HEAD) when
    it doesn't exist yet. None deletes a file. This is "someone else pushed" in a test.
    """
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "w"
        git(Path(tmp), "clone", "--quiet", file_url(remote), str(work))
        if branch_sha(remote, branch) is not None:
            git(work, "checkout", "--quiet", "-B", branch, f"origin/{branch}")
        else:
            git(work, "checkout", "--quiet", "-B", branch, f"origin/{start}" if start else "HEAD")
        write_files(work, files)
        git(work, "add", "--all")
        git(work, "commit", "--quiet", "--allow-empty", "-m", message, author=author)
        git(work, "push", "--quiet", "origin", f"HEAD:refs/heads/{branch}", author=author)
        return git(work, "rev-parse", "HEAD").strip()


def branch_sha(remote: Path, branch: str) -> str | None:
    """The sha of `branch` in `remote`, or None if it doesn't exist."""
    out = git(remote, "for-each-ref", "--format=%(objectname)", f"refs/heads/{branch}")
    return out.strip() or None


def branches(remote: Path) -> list[str]:
    """The branch names of `remote`, sorted."""
    return sorted(git(remote, "for-each-ref", "--format=%(refname:short)", "refs/heads").split())


def read_file(remote: Path, branch: str, path: str) -> str | None:
    """The text of `path` at the tip of `branch` in `remote` (None if absent), no clone needed."""
    proc = subprocess.run(
        ["git", "cat-file", "-p", f"refs/heads/{branch}:{path}"],
        cwd=remote,
        capture_output=True,
        text=True,
    )
    return proc.stdout if proc.returncode == 0 else None


def read_tree(remote: Path, branch: str) -> dict[str, str]:
    """Every file at the tip of `branch` in `remote`: path -> text."""
    names = git(remote, "ls-tree", "-r", "-z", "--name-only", f"refs/heads/{branch}")
    return {
        p: git(remote, "cat-file", "-p", f"refs/heads/{branch}:{p}") for p in names.split("\0") if p
    }


def clone_branch(remote: Path, branch: str, dest: Path) -> Path:
    """A plain checkout of `branch` at `dest` (for tests that want to run the code in it)."""
    git(dest.parent, "clone", "--quiet", "--branch", branch, file_url(remote), str(dest))
    return dest


@dataclass(frozen=True)
class Commit:
    """One commit as tests look at it."""

    sha: str
    subject: str
    body: str
    author_name: str
    author_email: str
    committer_email: str


def commits(remote: Path, branch: str, *, base: str | None = None) -> list[Commit]:
    """Commits of `branch` (only those not on `base` if given), newest first."""
    rng = f"refs/heads/{base}..refs/heads/{branch}" if base else f"refs/heads/{branch}"
    out = git(remote, "log", "--format=%H%x1f%s%x1f%b%x1f%an%x1f%ae%x1f%ce%x1e", rng)
    found = []
    for record in out.split("\x1e"):
        if record.strip():
            sha, subject, body, name, email, cemail = record.strip("\n").split("\x1f")
            found.append(Commit(sha, subject, body.strip(), name, email, cemail))
    return found


# -- git over HTTP (smart protocol) on 127.0.0.1 -------------------------------------------


def _backend() -> str:
    exec_path = subprocess.run(
        ["git", "--exec-path"], capture_output=True, text=True, check=True
    ).stdout.strip()
    return str(Path(exec_path) / "git-http-backend")


@dataclass
class GitHttpServer:
    """A running `git http-backend` server; `url(name)` is a repository under its root."""

    root: Path
    port: int
    token: str | None
    authorizations: list[str] = field(default_factory=list)
    """The Authorization header of every request ("" when absent), in order."""
    refused: int = 0
    """Requests answered 401."""

    def url(self, name: str) -> str:
        """The http:// URL of the repository `root/name`."""
        return f"http://127.0.0.1:{self.port}/{name}"


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def log_message(self, format: str, *args: object) -> None:
        """Quiet: tests read `GitHttpServer.authorizations` instead."""

    def _authorized(self, header: str) -> bool:
        token = self.server.state.token
        if token is None:
            return True
        scheme, _, value = header.partition(" ")
        if scheme.lower() != "basic":
            return False
        try:
            _user, _, password = base64.b64decode(value).decode().partition(":")
        except ValueError:
            return False
        return password == token

    def _serve(self) -> None:
        state = self.server.state
        # All of them, comma-joined: a test sees it when two headers were sent.
        header = ", ".join(self.headers.get_all("Authorization") or [])
        state.authorizations.append(header)
        if not self._authorized(header):
            state.refused += 1
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="git"')
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        path, _, query = self.path.partition("?")
        env = {
            "PATH": os.environ.get("PATH", ""),
            "GIT_PROJECT_ROOT": str(state.root),
            "GIT_HTTP_EXPORT_ALL": "1",
            "REQUEST_METHOD": self.command,
            "PATH_INFO": unquote(path),
            "QUERY_STRING": query,
            "REMOTE_USER": "x-access-token",  # authenticated: enables receive-pack (push)
            "REMOTE_ADDR": "127.0.0.1",
            "CONTENT_TYPE": self.headers.get("Content-Type", ""),
        }
        for name, var in (
            ("Content-Encoding", "HTTP_CONTENT_ENCODING"),
            ("Git-Protocol", "GIT_PROTOCOL"),
        ):
            if self.headers.get(name):
                env[var] = self.headers[name]
        body = self._body()
        env["CONTENT_LENGTH"] = str(len(body))
        proc = subprocess.run([_backend()], input=body, env=env, capture_output=True)
        head, _, payload = proc.stdout.partition(b"\r\n\r\n")
        if not _:
            head, _, payload = proc.stdout.partition(b"\n\n")
        status, headers = 200, []
        for line in head.decode("latin-1").splitlines():
            key, _, value = line.partition(":")
            if key.lower() == "status":
                status = int(value.split()[0])
            elif key:
                headers.append((key, value.strip()))
        self.send_response(status)
        for key, value in headers:
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def _body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks: list[bytes] = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    state: GitHttpServer


@contextmanager
def serve_http(root: Path, *, token: str | None = None) -> Iterator[GitHttpServer]:
    """Serve the bare repositories under `root` over smart HTTP on 127.0.0.1 (a free port).

    With `token`, every request must carry `Authorization: Basic base64(user:token)` (any
    user, as GitHub accepts for tokens) or gets 401; pushes are allowed when authorised.
    """
    assert shutil.which("git"), "git is needed"
    server = _Server(("127.0.0.1", 0), _Handler)
    server.state = GitHttpServer(root=root.resolve(), port=server.server_address[1], token=token)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
