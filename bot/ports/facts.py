"""A job's GitHub client that asks each fact once and hands the answer to every step.

Routing, the guards and the workflow all need the default branch, the repository's
config, the actor's permission and the issue. Asked of one `FactCache`, each is fetched
at most once per job: the default branch not at all when the delivery named it. A write
on an issue or pull request forgets what was cached about it, so a step never reads back
a state the job itself changed. Lists that a job reads to find its own earlier work (open
pull requests) are not cached.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping

from bot.config import REPO_CONFIG_PATH, RepoConfig
from bot.models.github import Comment, Issue, PullRequest, Repo
from bot.ports.github import GitHubPort, GitHubProxy


class FactCache(GitHubProxy):
    """`inner` with its facts (repo, default branch, files, permissions, issues, pulls) memoised."""

    def __init__(
        self,
        inner: GitHubPort,
        *,
        default_branches: Mapping[str, str] = {},
        files: Mapping[tuple[str, str, str | None], str | None] = {},
    ) -> None:
        super().__init__(inner)
        self._branches = {repo: branch for repo, branch in default_branches.items() if branch}
        self._repos: dict[str, Repo] = {}
        self._files: dict[tuple[str, str, str | None], str | None] = dict(files)
        """(repo, path, ref) -> text (None: absent); seeded with what the door already knows."""
        self._roles: dict[tuple[str, str], str] = {}
        self._issues: dict[tuple[str, int], Issue] = {}
        self._comments: dict[tuple[str, int], list[Comment]] = {}
        self._commented: set[tuple[str, int]] = set()
        self._pulls: dict[tuple[str, int], PullRequest] = {}
        self._lock = threading.Lock()

    # --- facts -------------------------------------------------------------------------------

    def get_repo(self, repo: str) -> Repo:
        """The repository, fetched once (and its default branch remembered)."""
        with self._lock:
            found = self._repos.get(repo)
        if found is None:
            found = self.inner.get_repo(repo)
            with self._lock:
                self._repos[repo] = found
                self._branches.setdefault(repo, found.default_branch)
        return found

    def default_branch(self, repo: str) -> str:
        """The default branch: the delivery's word for it, else one repository fetch."""
        with self._lock:
            known = self._branches.get(repo)
        return known if known is not None else self.get_repo(repo).default_branch

    def get_file(self, repo: str, path: str, ref: str | None = None) -> str | None:
        """A file at a ref, fetched once."""
        key = (repo, path, ref)
        with self._lock:
            if key in self._files:
                return self._files[key]
        text = self.inner.get_file(repo, path, ref)
        with self._lock:
            self._files[key] = text
        return text

    def config(self, repo: str, path: str = REPO_CONFIG_PATH) -> RepoConfig:
        """The repository's config from its default branch (absent: defaults); ConfigError if bad.

        Never from a PR branch: a pull request must not change the bot's rules (DESIGN §4).
        """
        branch = self.default_branch(repo)
        text = self.get_file(repo, path, ref=branch)
        if text is None:
            return RepoConfig()
        return RepoConfig.from_text(text, source=f"{path} on {branch}")

    def permission(self, repo: str, username: str) -> str:
        """The user's role, fetched once per user."""
        key = (repo, username.casefold())
        with self._lock:
            found = self._roles.get(key)
        if found is None:
            found = self.inner.permission(repo, username)
            with self._lock:
                self._roles[key] = found
        return found

    def get_issue(self, repo: str, number: int) -> Issue:
        """The issue as the job first saw it, fetched once."""
        key = (repo, number)
        with self._lock:
            found = self._issues.get(key)
        if found is None:
            found = self.inner.get_issue(repo, number)
            with self._lock:
                self._issues[key] = found
        return found

    def list_issue_comments(self, repo: str, number: int) -> list[Comment]:
        """The issue's comments, fetched once; none asked for when the issue says it has none."""
        key = (repo, number)
        with self._lock:
            if key in self._comments:
                return list(self._comments[key])
            issue = self._issues.get(key)
            known_empty = issue is not None and issue.comments == 0 and key not in self._commented
        found = [] if known_empty else self.inner.list_issue_comments(repo, number)
        with self._lock:
            self._comments[key] = found
        return list(found)

    def get_pull(self, repo: str, number: int) -> PullRequest:
        """The pull request, fetched once."""
        key = (repo, number)
        with self._lock:
            found = self._pulls.get(key)
        if found is None:
            found = self.inner.get_pull(repo, number)
            with self._lock:
                self._pulls[key] = found
        return found

    # --- writes forget what they change ------------------------------------------------------

    def _changed(self, repo: str, number: int) -> None:
        with self._lock:
            self._issues.pop((repo, number), None)
            self._pulls.pop((repo, number), None)

    def create_comment(self, repo: str, number: int, body: str) -> Comment:
        """Forwarded; the issue's cached comments are forgotten."""
        comment = self.inner.create_comment(repo, number, body)
        with self._lock:
            self._comments.pop((repo, number), None)
            self._commented.add((repo, number))
        return comment

    def update_comment(self, repo: str, comment_id: int, body: str) -> Comment:
        """Forwarded; every cached comment list of the repository is forgotten."""
        comment = self.inner.update_comment(repo, comment_id, body)
        with self._lock:
            for key in [k for k in self._comments if k[0] == repo]:
                del self._comments[key]
        return comment

    def add_labels(self, repo: str, number: int, labels: list[str]) -> None:
        """Forwarded; the cached issue is forgotten."""
        self.inner.add_labels(repo, number, labels)
        self._changed(repo, number)

    def remove_label(self, repo: str, number: int, label: str) -> None:
        """Forwarded; the cached issue is forgotten."""
        self.inner.remove_label(repo, number, label)
        self._changed(repo, number)

    def create_pull(
        self, repo: str, *, title: str, head: str, base: str, body: str, draft: bool = False
    ) -> PullRequest:
        """Forwarded; GitHub's answer is the pull request as a GET would give it, so kept."""
        pull = self.inner.create_pull(
            repo, title=title, head=head, base=base, body=body, draft=draft
        )
        with self._lock:
            self._pulls[(repo, pull.number)] = pull
        return pull

    def update_pull(
        self, repo: str, number: int, *, title: str | None = None, body: str | None = None
    ) -> PullRequest:
        """Forwarded; the cached issue is forgotten, the pull request kept as GitHub answered."""
        pull = self.inner.update_pull(repo, number, title=title, body=body)
        self._changed(repo, number)
        with self._lock:
            self._pulls[(repo, number)] = pull
        return pull
