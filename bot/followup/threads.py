"""Review threads as a follow-up sees them, and the text it writes back.

A thread is an inline comment and the replies to it. It is open for agentbot when its last
comment is not one of agentbot's replies, so a re-run, or the other deliveries of the same
review, find nothing left to do. A reply is agentbot's by its author, never by its text:
anyone can type `REPLY_MARKER`, no person can post as agentbot's account.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from bot.followup.markers import CI_MARKER
from bot.models.github import ReviewComment

REPLY_MARKER = "<!-- agentbot:reply -->"
"""How agentbot's own replies in a thread begin."""

SUMMARY_MARKER = "<!-- agentbot:followups -->"
"""Begins the follow-up section of the pull request body (replaced, never appended twice)."""


def is_bot_login(login: str, bot_login: str = "") -> bool:
    """True for agentbot's account: `bot_login` when known, else any App (`name[bot]`:
    GitHub allows no `[` in a person's login)."""
    norm = login.strip().casefold()
    if bot_login.strip():
        return norm == bot_login.strip().casefold()
    return norm.endswith("[bot]")


Mine = Callable[[str], bool]
"""Whether a login is agentbot's own account."""


def is_reply(comment: ReviewComment, mine: Mine = is_bot_login) -> bool:
    """True for one of agentbot's thread replies (its author, and the marker it writes)."""
    return mine(comment.user) and comment.body.lstrip().startswith(REPLY_MARKER)


@dataclass(frozen=True)
class Thread:
    """One review thread: its first comment and the replies, oldest first."""

    comments: tuple[ReviewComment, ...]

    @property
    def root(self) -> ReviewComment:
        """The comment that started the thread (replies go to it)."""
        return self.comments[0]

    def answered(self, mine: Mine = is_bot_login) -> bool:
        """True when agentbot had the last word."""
        return is_reply(self.comments[-1], mine)


def threads_of(comments: Sequence[ReviewComment]) -> list[Thread]:
    """Group inline comments into threads, in the order they were started."""
    roots: dict[int, list[ReviewComment]] = {}
    for comment in sorted(comments, key=lambda c: c.id):
        key = comment.in_reply_to if comment.in_reply_to in roots else comment.id
        roots.setdefault(key, []).append(comment)
    return [Thread(tuple(group)) for group in roots.values()]


def open_threads(comments: Sequence[ReviewComment], mine: Mine = is_bot_login) -> list[Thread]:
    """The threads agentbot has not answered last."""
    return [t for t in threads_of(comments) if not t.answered(mine)]


def unquoted(text: str) -> str:
    """`text` (an agent's note) unable to open or close an HTML comment where it is posted:
    a note must not forge or hide agentbot's markers."""
    return text.replace("<!--", "&lt;!--").replace("-->", "--&gt;")


@dataclass(frozen=True)
class Outcome:
    """What one follow-up item came to."""

    what: str
    """`thread on calc.py:3`, `/fix`, `CI`."""
    commit: str = ""
    gate: str = ""
    """`passed`, or the failing stage."""
    note: str = ""


def reply_text(outcome: Outcome, *, resolved: bool | None = None) -> str:
    """The reply in a thread (or on the pull request): the commit and the gate, or why not."""
    lines = [REPLY_MARKER]
    if outcome.commit:
        lines.append(f"Addressed in {outcome.commit} (validation {outcome.gate}).")
    else:
        lines.append("No commit for this one.")
    if outcome.note:
        lines.append(unquoted(outcome.note))
    if resolved is False:
        lines.append(
            "This thread is not resolved automatically: the server offers no GraphQL"
            " `resolveReviewThread`; resolve it when you agree."
        )
    return "\n\n".join(lines)


def summary_section(outcomes: Sequence[Outcome]) -> str:
    """The pull request body's follow-up section."""
    rows = ["| follow-up | commit | validation | note |", "|---|---|---|---|"]
    for o in outcomes:
        note = unquoted(re.sub(r"\s+", " ", o.note)[:120]).replace("|", "\\|")
        rows.append(f"| {o.what} | {o.commit or '—'} | {o.gate or '—'} | {note} |")
    return f"{SUMMARY_MARKER}\n### Follow-ups\n\n" + "\n".join(rows) + "\n"


def with_summary(body: str, outcomes: Sequence[Outcome]) -> str:
    """`body` with its follow-up section replaced by one listing `outcomes` (kept rows too)."""
    head, _, old = body.partition(SUMMARY_MARKER)
    kept = [line for line in old.splitlines() if line.startswith("| ") and "---" not in line]
    kept = [line for line in kept if not line.startswith("| follow-up |")]
    section = summary_section(outcomes)
    if kept:
        top, _, rows = section.partition("|---|---|---|---|\n")
        section = top + "|---|---|---|---|\n" + "\n".join(kept) + "\n" + rows
    # A CI marker after the section must survive the rewrite.
    markers = "\n".join(m.group(0).strip() for m in CI_MARKER.finditer(old))
    return f"{head.rstrip()}\n\n{section}" + (f"\n{markers}\n" if markers else "")
