"""Repositories: metadata, permissions, file contents."""

from __future__ import annotations

import base64
from typing import Any
from urllib.parse import quote

from githubkit.response import Response
from githubkit.utils import UNSET

from bot.errors import GitHubError
from bot.github.core import RestCore
from bot.github.failures import is_missing
from bot.github.names import ROLES, split_repo
from bot.models.github import Repo


class ReposAPI(RestCore):
    """Repository calls."""

    # --- repositories ----------------------------------------------------------------------

    def permission(self, repo: str, username: str) -> str:
        """The user's role: none, read, triage, write, maintain or admin (unknown user: none)."""
        endpoint = self._shared.kit.rest.repos.get_collaborator_permission_level
        try:
            resp = self._on_repo("GET", repo, endpoint, username)
        except GitHubError as exc:
            if is_missing(exc, 404):
                return "none"
            raise
        data = resp.json()
        # role_name is finer (triage, maintain) but may be a custom role's name; the legacy
        # `permission` field is always one of admin/write/read/none.
        role = data.get("role_name")
        return str(role) if role in ROLES else str(data.get("permission") or "none")

    def get_repo(self, repo: str) -> Repo:
        """Repository metadata."""
        resp = self._on_repo("GET", repo, self._shared.kit.rest.repos.get)
        return Repo.from_api(resp.json())

    def default_branch(self, repo: str) -> str:
        """The repository's default branch."""
        return self.get_repo(repo).default_branch

    def get_file(self, repo: str, path: str, ref: str | None = None) -> str | None:
        """A file's text at `ref` (default branch when None); None if absent or not a file."""
        owner, name = split_repo(repo)
        quoted = quote(path.lstrip("/"), safe="/")

        def fetch(h: dict[str, str]) -> Response[Any]:
            return self._shared.kit.rest.repos.get_content(
                owner, name, quoted, ref=ref if ref is not None else UNSET, headers=h
            )

        try:
            data = self._call("GET", fetch).json()
        except GitHubError as exc:
            if is_missing(exc, 404):
                return None
            raise
        if not isinstance(data, dict) or data.get("type") != "file":
            return None
        if data.get("encoding") == "base64":
            return base64.b64decode(data.get("content") or "").decode("utf-8", "replace")
        # Files over 1 MB come without content; the raw media type returns them whole.
        raw = self._call("GET", lambda h: fetch({**h, "Accept": "application/vnd.github.raw+json"}))
        return raw.text
