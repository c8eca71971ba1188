"""IssueFixer: the minimal fix for one GitHub issue, with a regression test (seed 001)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bot.models import AgentRole
from bot.models.github import Comment, Issue
from bot.roles.base import WORKSPACE_TOOLS, Role
from bot.untrusted import fence

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
) -> str:
    """The first user message: the issue and its comments, each fenced as untrusted data.

    `notes` is trusted text from agentbot itself (a previous attempt's failure, the
    validation baseline) and is not fenced.
    """
    issue_text = f"Title: {title}\n\n{body.strip() or '(no description)'}"
    by = f" opened by @{author}" if author else ""
    parts = [
        f"# Issue #{number} in {repo}{by}",
        f"Labels: {', '.join(labels) if labels else 'none'}",
        fence(issue_text, label=f"issue #{number}: title and body"),
    ]
    if comments:
        parts.append(f"## Comments ({len(comments)}, oldest first)")
        parts += [fence(c.body, label=f"comment by @{c.author}") for c in comments]
    if notes.strip():
        parts.append(f"## Notes from agentbot\n{notes.strip()}")
    parts.append(
        "## Your task\n"
        f"Fix issue #{number} with the smallest correct change and a regression test, then"
        " call `finish`. If the issue does not say enough to know the expected behaviour,"
        " finish with NEEDS_INFO and your question."
    )
    return "\n\n".join(parts)


def issue_task(repo: str, issue: Issue, comments: Sequence[Comment]) -> str:
    """`build_task` for an issue as GitHub returns it: people's comments only (not bots')."""
    human = [
        IssueComment(author=c.user, body=c.body)
        for c in comments
        if not c.body.startswith("<!-- agentbot") and not c.user.endswith("[bot]")
    ]
    return build_task(
        repo=repo,
        number=issue.number,
        title=issue.title,
        body=issue.body,
        author=issue.user,
        labels=issue.labels,
        comments=human,
    )
