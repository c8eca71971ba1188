"""Branch ownership: pick (reuse or suffix) the branch to work on, push with a lease on ours."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.errors import GitError
from bot.git.runner import BOT_EMAIL, IDENTITY, log

if TYPE_CHECKING:
    from bot.git.workspace import Workspace

MAX_SUFFIX = 50


def prepare_branch(ws: Workspace, preferred: str, *, base: str) -> str:
    """Check out `preferred` or the first free-or-ours `preferred-N`; see Workspace."""
    base_sha = ws.rev(base)
    heads = ws.remote_heads()
    for n in range(1, MAX_SUFFIX + 1):
        name = preferred if n == 1 else f"{preferred}-{n}"
        if name not in heads:
            ws.git("checkout", "--no-track", "-B", name, base_sha)
            ws.leases[name] = ""
            return name
        ws.fetch(name)
        tracking = f"refs/remotes/origin/{name}"
        if all_ours(ws, base_sha, tracking):
            # The lease is what we looked at: a push by anyone after this is refused.
            ws.leases[name] = ws.rev(tracking)
            ws.git("checkout", "--no-track", "-B", name, tracking)
            update_onto(ws, base_sha)
            return name
        log.info("branch %s on origin has commits by others; not reusing it", name)
    raise GitError(
        f"no free branch name: {preferred} and {preferred}-2..{MAX_SUFFIX} are all taken",
        operation="branch",
        recoverable=False,
    )


def all_ours(ws: Workspace, base_sha: str, ref: str) -> bool:
    """Whether every commit in base..ref was authored and committed by the bot."""
    emails = ws.git("log", "--format=%ae%n%ce", f"{base_sha}..{ref}").split()
    return all(e.lower() == BOT_EMAIL for e in emails)


def update_onto(ws: Workspace, base_sha: str) -> None:
    """Rebase our checked-out branch onto `base_sha` if it isn't on it; keep it on conflict."""
    if ws.succeeds("merge-base", "--is-ancestor", base_sha, "HEAD"):
        return
    got = ws.run([*IDENTITY, "rebase", "--no-autostash", base_sha], check=False)
    if got.returncode != 0:
        ws.run(["rebase", "--abort"], check=False)
        # Our earlier work stays; the pull request will show the conflict to a person.
        log.warning(
            "could not rebase %s onto %s (conflict); working on it as it was",
            ws.current_branch(),
            base_sha[:12],
        )


def push(ws: Workspace, branch: str, *, force_with_lease: bool) -> None:
    """Push `branch`; leased (so it may rewrite) only if prepare_branch made it ours."""
    if ws.push_guard is None:
        raise GitError(
            "refusing to push: this workspace has no outbound check (Workspace.push_guard)",
            operation="push",
            recoverable=False,
        )
    head = ws.rev(f"refs/heads/{branch}")
    ws.push_guard(ws, head)
    # The sha judged above, not the ref: nothing can move the branch in between.
    args = ["push", "--porcelain", ws.remote, f"{head}:refs/heads/{branch}"]
    if force_with_lease and branch in ws.leases:
        # An explicit expected sha, not the tracking ref: a fetch in between can't defeat it.
        args.insert(1, f"--force-with-lease=refs/heads/{branch}:{ws.leases[branch]}")
    got = ws.run(args, check=False)
    if got.returncode != 0:
        rejected = any(line.startswith("!") for line in got.stdout.splitlines())
        hint = "rejected by the remote (it moved, or the push is not a fast-forward)"
        raise ws.error(
            args, got, operation="push", recoverable=not rejected, hint=hint if rejected else ""
        )
    if branch in ws.leases:
        ws.leases[branch] = head
