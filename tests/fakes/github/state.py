"""The fake GitHub's state: plain dataclasses that tests seed and inspect, and git look-ups."""

from __future__ import annotations

import hashlib
import subprocess
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from urllib.parse import unquote, urlsplit

ROLES = ("none", "read", "triage", "write", "maintain", "admin")
"""Repository roles, weakest first."""


@dataclass
class User:
    """A GitHub account; `type` is User, Bot or Organization."""

    login: str
    id: int
    type: str = "User"


@dataclass
class Label:
    """A repository label."""

    name: str
    id: int
    color: str = "ededed"
    description: str | None = None


@dataclass
class PullInfo:
    """What makes an issue a pull request."""

    head_ref: str
    head_sha: str
    head_repo: str
    """`owner/name`, or "" for a deleted fork."""
    base_ref: str
    base_sha: str
    id: int
    draft: bool = False
    merged: bool = False
    maintainer_can_modify: bool = False
    requested_reviewers: list[str] = field(default_factory=list)
    reviews: list[tuple[str, str]] = field(default_factory=list)
    """Submitted reviews, oldest first: (reviewer login, state such as APPROVED)."""
    commits: list[tuple[str, str]] = field(default_factory=list)
    """The pull request's commits, oldest first: (sha, author login)."""


@dataclass
class IssueState:
    """An issue, or a pull request when `pull` is set (they share numbers, as on GitHub)."""

    number: int
    id: int
    title: str
    body: str
    user: str
    created_at: str
    updated_at: str
    state: str = "open"
    locked: bool = False
    labels: list[str] = field(default_factory=list)
    assignees: list[str] = field(default_factory=list)
    closed_at: str | None = None
    pull: PullInfo | None = None


@dataclass
class CommentState:
    """An issue or pull request comment."""

    id: int
    repo: str
    issue_number: int
    body: str
    user: str
    created_at: str
    updated_at: str


@dataclass
class CheckRunState:
    """A check run."""

    id: int
    repo: str
    name: str
    head_sha: str
    status: str
    conclusion: str | None
    started_at: str
    completed_at: str | None = None
    title: str | None = None
    summary: str | None = None
    app_id: int | None = None


@dataclass
class Dispatch:
    """A recorded `workflow_dispatch`."""

    repo: str
    workflow: str
    ref: str
    inputs: dict[str, Any]
    at: float


@dataclass
class RepoState:
    """A repository and everything in it."""

    owner: str
    name: str
    id: int
    default_branch: str = "main"
    clone_url: str = ""
    """A `file://` bare repository makes branches and files real (`git` looks them up)."""
    private: bool = False
    fork: bool = False
    description: str | None = None
    created_at: str = "2025-01-01T00:00:00Z"
    files: dict[tuple[str, str], str] = field(default_factory=dict)
    """(ref, path) -> text; set by tests, checked before the bare repository."""
    branches: dict[str, str] = field(default_factory=dict)
    """branch -> sha set by tests, checked before the bare repository."""
    labels: dict[str, Label] = field(default_factory=dict)
    permissions: dict[str, str] = field(default_factory=dict)
    """login -> role; the owner is admin unless set otherwise."""
    issues: dict[int, IssueState] = field(default_factory=dict)

    @property
    def full_name(self) -> str:
        """`owner/name`."""
        return f"{self.owner}/{self.name}"

    def next_number(self) -> int:
        """Issues and pull requests share one sequence."""
        return max(self.issues, default=0) + 1

    def git_dir(self) -> str | None:
        """The bare repository path when clone_url is `file://`."""
        if not self.clone_url.startswith("file://"):
            return None
        return unquote(urlsplit(self.clone_url).path)

    def branch_sha(self, branch: str) -> str | None:
        """The commit a branch points at: seeded, else from git, else synthesized.

        Without a bare repository every branch "exists" (a stable fake sha); with one, a
        branch git does not know is missing, as GitHub would say.
        """
        if branch in self.branches:
            return self.branches[branch]
        git_dir = self.git_dir()
        if git_dir is None:
            return hashlib.sha1(f"{self.full_name}:{branch}".encode()).hexdigest()
        out = _git(git_dir, "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}^{{commit}}")
        return out.strip() if out is not None else None

    def read(self, path: str, ref: str | None) -> str | list[str] | None:
        """A file's text, a directory's entry names, or None."""
        ref = ref or self.default_branch
        path = path.strip("/")
        if (ref, path) in self.files:
            return self.files[(ref, path)]
        prefix = f"{path}/" if path else ""
        names = sorted(
            {
                p[len(prefix) :].split("/")[0]
                for r, p in self.files
                if r == ref and p.startswith(prefix)
            }
        )
        if names:
            return names
        git_dir = self.git_dir()
        if git_dir is None:
            return None
        kind = _git(git_dir, "cat-file", "-t", f"{ref}:{path}")
        if kind is None:
            return None
        if kind.strip() == "tree":
            listing = _git(git_dir, "ls-tree", "--name-only", f"{ref}:{path}") or ""
            return listing.splitlines()
        return _git(git_dir, "show", f"{ref}:{path}")


def _git(git_dir: str, *args: str) -> str | None:
    """stdout of a git command on the bare repository, or None when it fails."""
    proc = subprocess.run(
        ["git", f"--git-dir={git_dir}", *args], capture_output=True, text=True, check=False
    )
    return proc.stdout if proc.returncode == 0 else None


def iso(moment: datetime) -> str:
    """GitHub's timestamp format."""
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")
