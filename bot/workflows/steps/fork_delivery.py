"""A pull request's branch, a fork's included: check it out, and get a validated commit back.

Our own branches (and people's branches in the repository) are fetched from origin and
pushed to as before. A fork's branch is fetched from the fork's clone URL into a private
ref (`FORK_HEAD`), never into `origin/*`: the default branch's config and instructions are
read there. What is trusted (config, instructions, gate commands, limits) comes from the
base repository's default branch (the gate reads the repository's own commands from a
checkout of it, `JobEnv.commands_from`); the fork's code only ever runs in the sandbox.

A validated commit goes back one of two ways (DESIGN amendment, issue #27):

- pushed to the fork's branch, when the pull request allows edits from maintainers and the
  credential may push there (an App installation token may; the Action's `GITHUB_TOKEN`
  may not): the same outbound check (`Workspace.push_guard`) judges it first;
- else a review of suggestions (`bot.followup.suggestions`): one per changed hunk, and
  the files a suggestion cannot carry as a patch in the review's body. The same outbound
  check judges the commit first, and the GitHub client's text guard the review's text.
  The workspace then returns to the fork's head: the next change is suggested on its own.
"""

from __future__ import annotations

import logging
import shutil
from dataclasses import dataclass
from pathlib import Path

from bot.errors import AgentbotError, GitError
from bot.followup.suggestions import Plan, commentable, fence_for, plan
from bot.git import Workspace
from bot.models.github import PullRequest
from bot.ports import JobEnv
from bot.workflows.steps.flow import Refused

log = logging.getLogger("agentbot.job")

FORK_HEAD = "refs/agentbot/fork-head"
"""Where a fork's branch is fetched to (outside `refs/remotes/origin/`)."""

MAX_REVIEW_BODY = 60_000
"""Characters of a review body (GitHub caps it at 65,536)."""

NO_EDITS = "the pull request does not allow edits from maintainers"
NO_PUSH = (
    "agentbot's credential may not push to the fork (an App installation token may;"
    " the Action's `GITHUB_TOKEN` may not)"
)


@dataclass
class Branch:
    """The pull request's branch as a job works on it."""

    repo: str
    """The base repository (`owner/name`)."""
    pr: PullRequest
    fork: Workspace | None = None
    """The same checkout with the fork as its remote; None for a branch of `repo`."""
    seen: str = ""
    """The branch's commit on its remote, as this job last saw or pushed it."""


@dataclass(frozen=True)
class Delivered:
    """How a commit reached the pull request: `pushed`, or a `review` (its URL and why)."""

    how: str
    url: str = ""
    why: str = ""


def check_out(env: JobEnv, ws: Workspace, repo: str, pr: PullRequest) -> Branch:
    """Fetch the pull request's head and switch `ws` to a local branch named like it."""
    if not pr.from_fork(repo):
        ws.fetch()
        ws.switch(pr.head_ref, at=f"origin/{pr.head_ref}")
        return Branch(repo, pr, None, ws.head_sha())
    if not pr.head_repo or not pr.head_ref:
        raise Refused(f"pull request #{pr.number} comes from a deleted fork; nothing to work on")
    ws.fetch()
    url = f"{env.server_url.rstrip('/')}/{pr.head_repo}.git"
    fork = Workspace(ws.path, token=ws.token, timeout=ws.timeout, remote_url=url)
    fork.git("fetch", "--no-tags", fork.remote, f"+refs/heads/{pr.head_ref}:{FORK_HEAD}")
    ws.switch(pr.head_ref, at=FORK_HEAD)
    env.commands_from = trusted_tree(env, ws, repo)
    return Branch(repo, pr, fork, ws.head_sha())


def trusted_tree(env: JobEnv, ws: Workspace, repo: str) -> Path:
    """The base's default branch checked out beside `ws` (read only by the bot: the gate
    takes the repository's own commands from there, never from the fork)."""
    path = env.data_dir / "trusted" / f"{repo.replace('/', '__')}-{ws.path.name}"
    path.parent.mkdir(parents=True, exist_ok=True)
    ws.git("worktree", "prune")
    if path.exists():
        ws.run(["worktree", "remove", "--force", "--force", str(path)], check=False)
        shutil.rmtree(path, ignore_errors=True)
        ws.git("worktree", "prune")
    default = env.github.default_branch(repo)
    ws.git("worktree", "add", "--quiet", "--detach", str(path), f"origin/{default}")
    return path


def deliver(env: JobEnv, ws: Workspace, branch: Branch, *, report: str) -> Delivered:
    """Get `ws`'s HEAD (one validated commit on `branch.seen`) to the pull request.

    `report` (the gate table, the proof) goes into a review's body; a push carries none.
    """
    name = branch.pr.head_ref
    if branch.fork is None:
        env.push(ws, name)
        branch.seen = ws.head_sha()
        return Delivered("pushed")
    why = NO_EDITS
    if branch.pr.maintainer_can_modify:
        branch.fork.push_guard = ws.push_guard
        try:
            env.push(branch.fork, name)
        except GitError as exc:
            now = branch.fork.remote_heads().get(name, "")
            if now != branch.seen:
                raise GitError(
                    f"the fork's branch {name} moved while agentbot worked; run it again",
                    operation="push",
                    recoverable=False,
                ) from exc
            log.info("pushing to the fork failed, suggesting instead: %s", exc)
            why = NO_PUSH
        else:
            branch.seen = ws.head_sha()
            return Delivered("pushed")
    head = ws.head_sha()
    if ws.push_guard is None:
        raise GitError("refusing to deliver: no outbound check", operation="push")
    ws.push_guard(ws, head)  # limits and secrets, exactly as before a push
    try:
        url = _review(env, ws, branch, head, report=report, why=why)
    finally:
        ws.reset_hard(branch.seen, clean=True)
    return Delivered("review", url, why)


def _blob(ws: Workspace, sha: str, path: str) -> str | None:
    """A file's text at `sha` (None: absent); not UTF-8 text reads as binary (a NUL)."""
    got = ws.run(["cat-file", "blob", f"{sha}:{path}"], check=False)
    if got.returncode != 0:
        return None
    return got.stdout if "\ufffd" not in got.stdout else "\0"


def _review(env: JobEnv, ws: Workspace, branch: Branch, head: str, *, report: str, why: str) -> str:
    """Post the suggestions review; returns its URL."""
    start, pr = branch.seen, branch.pr
    paths = [
        p for p in ws.git("diff", "--no-renames", "--name-only", "-z", start, head).split("\0") if p
    ]
    base_ref = f"origin/{pr.base_ref or env.github.default_branch(branch.repo)}"
    base = ws.git("merge-base", base_ref, start).strip()
    shown = commentable(ws.git("diff", "--no-color", "--no-renames", base, start))
    old = {p: _blob(ws, start, p) for p in paths}
    new = {p: _blob(ws, head, p) for p in paths}
    found = plan(old, new, shown)
    body = review_body(found, _patch(ws, start, head, found), report=report, why=why)
    if len(body) > MAX_REVIEW_BODY:
        raise AgentbotError(
            f"the change is too large for a review ({len(body)} characters of patch and"
            " report); allow edits from maintainers on the pull request and run it again"
        )
    comments = [s.comment() for s in found.suggestions]
    return env.github.create_review(
        branch.repo, pr.number, commit_id=start, body=body, comments=comments
    )


def _patch(ws: Workspace, start: str, head: str, found: Plan) -> str:
    if not found.patched:
        return ""
    return ws.git(
        "diff", "--no-color", "--binary", "--no-renames", start, head, "--",
        *(f":(literal){p}" for p in found.patched),
    )  # fmt: skip


def review_body(found: Plan, patch: str, *, report: str, why: str) -> str:
    """The review's text: how to take the change, its patch first (kept exact), the report."""
    n = len(found.suggestions)
    lines = [
        f"agentbot validated a change for this pull request, but {why}, so it is suggested"
        " here instead of pushed.",
    ]
    if n:
        lines.append(
            f"{n} suggestion(s) below: use **Commit suggestions** (Files changed tab) to add"
            " them in one commit."
        )
    if patch:
        fence = fence_for(patch)
        names = ", ".join(f"`{p}`" for p in found.patched)
        lines.append(
            f"Changes a suggestion cannot carry ({names}) are this patch: save it and run"
            f" `git apply` at the root of your branch.\n\n{fence}diff\n{patch}{fence}"
        )
    lines.append(report.strip())
    return "\n\n".join(line for line in lines if line)
