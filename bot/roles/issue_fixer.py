"""IssueFixer: the minimal fix for one GitHub issue, with a regression test (seed 001)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bot.models import AgentRole
from bot.models.github import Comment, Issue
from bot.roles.base import WORKSPACE_TOOLS, Role
from bot.untrusted import (
    BODY_CAP,
    COMMENT_CAP,
    capped,
    fence,
    kept_comments,
)

ROLE = Role(
    name=AgentRole.ISSUE_FIXER,
    template="issue_fixer.md",
    tools=WORKSPACE_TOOLS,
    max_turns=40,
)


@dataclass(frozen=True)
class IssueComment:
    """One comment on the issue, as the agent sees it."""

    author: str
    body: str
    association: str = ""
    """The author's relation to the repository (OWNER, MEMBER, CONTRIBUTOR, NONE...)."""


def _kept(comments: Sequence[IssueComment]) -> tuple[list[IssueComment], int]:
    """The comments that fit COMMENTS_CAP (the first and the newest), and how many did not."""
    keep = kept_comments([c.body for c in comments])
    return [comments[i] for i in keep], len(comments) - len(keep)


def build_task(
    *,
    repo: str,
    number: int,
    title: str,
    body: str,
    author: str = "",
    labels: Sequence[str] = (),
    comments: Sequence[IssueComment] = (),
    notes: str = "",
    files: str = "",
    base_failures: Sequence[str] = (),
) -> str:
    """The first user message: the issue and its comments, each fenced as untrusted data
    and capped (head and tail), then the repository's map and its known failures.

    `notes` is trusted text from agentbot itself (a previous attempt's failure, the
    validation baseline) and is not fenced; `files` the compact file tree;
    `base_failures` the tests that already fail on the base commit.
    """
    text = capped(body.strip(), BODY_CAP, "issue body") or "(no description)"
    issue_text = f"Title: {title}\n\n{text}"
    by = f" opened by @{author}" if author else ""
    parts = [
        f"# Issue #{number} in {repo}{by}",
        f"Labels: {', '.join(labels) if labels else 'none'}",
        fence(issue_text, label=f"issue #{number}: title and body"),
    ]
    if comments:
        kept, left_out = _kept(comments)
        parts.append(f"## Comments ({len(comments)}, oldest first)")
        if left_out:
            parts.append(f"[agentbot: {left_out} comment(s) in the middle left out for length]")
        parts += [
            fence(
                capped(c.body, COMMENT_CAP, "comment"),
                label=f"comment by @{c.author} ({(c.association or 'unknown').lower()})",
            )
            for c in kept
        ]
    if files.strip():
        parts.append(f"## Repository files (at the base commit)\n{files.strip()}")
    if base_failures:
        listed = "\n".join(f"- `{t}`" for t in base_failures[:30])
        more = f"\n- … and {len(base_failures) - 30} more" if len(base_failures) > 30 else ""
        parts.append(
            "## Tests already failing on the base commit\nThese fail before your change;"
            " they are not yours to fix unless the issue is about them, and validation does"
            f" not count them against you.\n{listed}{more}"
        )
    if notes.strip():
        parts.append(f"## Notes from agentbot\n{notes.strip()}")
    parts.append(
        "## Your task\n"
        f"Fix issue #{number} with the smallest correct change and a regression test, then"
        " call `finish`. Only if the issue cannot be understood (the expected behaviour"
        " cannot be told from it and the code), finish with NEEDS_INFO and your question."
    )
    return "\n\n".join(parts)


def issue_task(
    repo: str,
    issue: Issue,
    comments: Sequence[Comment],
    *,
    files: str = "",
    base_failures: Sequence[str] = (),
    notes: str = "",
) -> str:
    """`build_task` for an issue as GitHub returns it: people's comments only (not bots',
    not those a maintainer hid); `notes` are agentbot's own (an approved plan)."""
    human = [
        IssueComment(author=c.user, body=c.body, association=c.author_association)
        for c in comments
        if not c.body.startswith("<!-- agentbot")
        and not c.user.endswith("[bot]")
        and not c.minimized
    ]
    return build_task(
        repo=repo,
        number=issue.number,
        title=issue.title,
        body=issue.body,
        author=issue.user,
        labels=issue.labels,
        comments=human,
        files=files,
        base_failures=base_failures,
        notes=notes,
    )
