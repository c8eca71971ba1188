"""What the agent is told in a follow-up: the original task, the diff so far, the request.

Everything people wrote (the pull request, review comments, `/fix` instructions, CI names)
is fenced as untrusted data and capped as an issue's input is (`bot.untrusted`: the body at
BODY_CAP, each comment at COMMENT_CAP, a thread's comments together at COMMENTS_CAP, the
first and the newest kept); the diff is fenced too (a person may have pushed to the branch).
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.followup.threads import Thread
from bot.models.github import PullRequest, ReviewComment
from bot.untrusted import BODY_CAP, COMMENT_CAP, capped, fence, kept_comments

MAX_DIFF_CHARS = 30_000
"""The diff is cut (head and tail kept) beyond this: the agent can run `git diff` itself."""


def _diff(diff: str) -> str:
    if len(diff) <= MAX_DIFF_CHARS:
        return diff or "(no changes yet)"
    half = MAX_DIFF_CHARS // 2
    return f"{diff[:half]}\n[… {len(diff) - MAX_DIFF_CHARS} characters cut …]\n{diff[-half:]}"


def _context(repo: str, pr: PullRequest, diff: str, base: str) -> list[str]:
    return [
        f"# Follow-up on pull request #{pr.number} in {repo} (branch `{pr.head_ref}`)",
        "## The original task (the pull request as opened)",
        fence(
            f"Title: {pr.title}\n\n{capped(pr.body, BODY_CAP, 'pull request body')}",
            label=f"pull request #{pr.number}",
        ),
        f"## The change so far (`git diff {base[:12]}`)",
        fence(_diff(diff), label="current diff of the branch"),
    ]


def _by(comment: ReviewComment) -> str:
    association = (comment.author_association or "unknown").lower()
    return f"review comment by @{comment.user} ({association})"


def thread_task(repo: str, pr: PullRequest, diff: str, base: str, thread: Thread) -> str:
    """Answer one review thread with one change (or an explanation)."""
    where = f"{thread.root.path}:{thread.root.line}" if thread.root.line else thread.root.path
    parts = _context(repo, pr, diff, base)
    parts.append(f"## The review thread on `{where}`")
    if thread.root.diff_hunk:
        hunk = capped(thread.root.diff_hunk, COMMENT_CAP, "diff hunk")
        parts.append(fence(hunk, label="the lines the thread is about"))
    keep = kept_comments([c.body for c in thread.comments])
    if left_out := len(thread.comments) - len(keep):
        parts.append(f"[agentbot: {left_out} comment(s) in the middle left out for length]")
    parts += [
        fence(capped(c.body, COMMENT_CAP, "comment"), label=_by(c))
        for c in (thread.comments[i] for i in keep)
    ]
    parts.append(
        "## Your task\n"
        "Make the change this thread asks for, and only that, in the working tree (the branch"
        " is checked out), then call `finish` with OK and a one-line summary. If you disagree"
        " with the request or it needs information, change nothing and finish with"
        " NEEDS_INFO, your explanation or question in `question`."
    )
    return "\n\n".join(parts)


def instructions_task(repo: str, pr: PullRequest, diff: str, base: str, text: str) -> str:
    """Carry out `/fix <instructions>` on the pull request's branch."""
    parts = _context(repo, pr, diff, base)
    text = capped(text, COMMENT_CAP, "request") or "(no instructions: fix what is wrong)"
    parts.append(fence(text, label="/fix request"))
    parts.append(
        "## Your task\n"
        "Change the branch as the request asks, then call `finish` with OK and a one-line"
        " summary; if it needs information, change nothing and finish with NEEDS_INFO."
    )
    return "\n\n".join(parts)


def ci_task(
    repo: str, pr: PullRequest, diff: str, base: str, failing: str, commands: Sequence[str]
) -> str:
    """Reproduce a failed CI run with the repository's commands and fix the branch."""
    parts = _context(repo, pr, diff, base)
    parts.append(fence(failing, label="the failing CI run"))
    run = ", ".join(f"`{c}`" for c in commands) or "the repository's own test and lint commands"
    parts.append(
        "## Your task\n"
        f"CI failed on the branch's latest commit. Reproduce the failure locally ({run}), fix"
        " the code (never weaken or delete tests to make it pass), then call `finish` with OK"
        " and a one-line summary of the cause."
    )
    return "\n\n".join(parts)
