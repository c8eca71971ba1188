"""Where a job works: the Action's own checkout, or a fresh clone under the data dir."""

from __future__ import annotations

import shutil

from bot.git import Workspace, clone
from bot.instructions import pin_default_branch
from bot.ports import JobEnv
from bot.workflows.steps.limits import push_guard


def open_workspace(env: JobEnv, repo: str, name: str) -> Workspace:
    """The checkout to work in: the Action's own, or a fresh clone under the data dir.

    Its pushes are judged from the commit checked out now, with the repository's limits,
    until the workflow names the base it works from (`push_guard`).
    """
    if env.checkout is not None:
        ws = Workspace(env.checkout, token=env.github.token())
    else:
        dest = env.data_dir / "workspaces" / f"{repo.replace('/', '__')}-{name}"
        if dest.exists():
            # A stale workspace from an earlier attempt: start clean so re-runs are idempotent.
            shutil.rmtree(dest)
        dest.parent.mkdir(parents=True, exist_ok=True)
        url = f"{env.server_url.rstrip('/')}/{repo}.git"
        ws = clone(url, dest, token=env.github.token())
    ws.push_guard = push_guard(ws.head_sha(), env.config.limits)
    # Repository instructions are read at origin/HEAD: make it the default branch here too.
    pin_default_branch(ws, env.github.default_branch(repo))
    return ws
