"""Bare git repositories served over HTTP on 127.0.0.1 (git's dumb protocol), for submodules.

Not file:// URLs: git refuses the file transport to submodules unless configured, and
agentbot keeps that default (a .gitmodules could otherwise point at the runner's disk).
"""

from __future__ import annotations

import functools
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class GitHttp:
    """A folder served over HTTP: what is put under `root` is fetched at `url`."""

    root: Path
    url: str

    def publish(self, bare: Path) -> str:
        """Write the files the dumb protocol reads for `bare` (under root); its URL."""
        git(bare, "update-server-info")
        return f"{self.url}/{bare.relative_to(self.root).as_posix()}"

    def from_bundle(self, bundle: Path, name: str) -> str:
        """A bare repository `name` holding the bundle's history and refs, served; its URL."""
        bare = self.root / name
        git(self.root, "init", "-q", "--bare", "-b", "main", str(bare))
        git(bare, "fetch", "-q", str(bundle), "refs/heads/*:refs/heads/*")
        return self.publish(bare)


class QuietHandler(SimpleHTTPRequestHandler):
    """Static files, no request log on stderr."""

    def log_message(self, format: str, *args: Any) -> None:
        """Say nothing."""


@contextmanager
def serve(root: Path) -> Iterator[GitHttp]:
    """Serve `root` (made if missing) on a free port of 127.0.0.1 while the block runs."""
    root.mkdir(parents=True, exist_ok=True)
    handler = functools.partial(QuietHandler, directory=str(root))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield GitHttp(root, f"http://127.0.0.1:{server.server_address[1]}")
    finally:
        server.shutdown()
        server.server_close()


def git(cwd: Path, *args: str) -> str:
    """Run git in `cwd` as a fixed author; its stdout, stripped."""
    who = ["-c", "user.name=up", "-c", "user.email=up@example.com"]
    done = subprocess.run(
        ["git", *who, *args],
        cwd=cwd, check=True, capture_output=True, text=True,
    )  # fmt: skip
    return done.stdout.strip()
