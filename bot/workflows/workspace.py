"""Where a job works: the Action's own checkout, or a fresh clone under the data dir."""

from __future__ import annotations

import shutil

from bot.git import Workspace, clone
from bot.ports import JobEnv


def open_workspace(env: JobEnv, repo: str, name: str) -> Workspace:
    """The checkout to work in: the Action's own, or a fresh clone under the data dir."""
    if env.checkout is not None:
        return Workspace(env.checkout, token=env.github.token())
    dest = env.data_dir / "workspaces" / f"{repo.replace('/', '__')}-{name}"
    if dest.exists():
        # A stale workspace from an earlier attempt: start clean so re-runs are idempotent.
        shutil.rmtree(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    url = f"{env.server_url.rstrip('/')}/{repo}.git"
    return clone(url, dest, token=env.github.token())
