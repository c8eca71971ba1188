"""Text a model wrote, made unable to become structure in what the bot composes (pure).

Two kinds of structure hide in plain text: a git trailer (a `Token: value` line, which a
resumed run reads back, e.g. `TDD-Cycle:`) and a GitHub closing keyword (`Closes #7`,
`fixes other/repo#3`, `Resolved: https://github.com/o/r/issues/9`), which closes an issue
when the commit or pull request lands. Every place that puts model text into a commit message
or pull request/issue text passes it through `model_text`; only the bot's own `Fixes #N` and
trailers, written after it, stay live. The defusing is a zero-width space inside the word,
invisible on github.com and in `git log`.

Decision: the bot's own issue number may stay referenced by a closing keyword in PR/issue
text (`keep`): closing the job's issue is what the bot's PR does anyway.
"""

from __future__ import annotations

import re
from collections.abc import Collection

ZWSP = "\u200b"

# Every keyword GitHub reads (any case, optional colon), before an issue reference:
# `#N`, `owner/repo#N`, `GH-N`, or an issues/pulls URL.
_CLOSING = re.compile(
    r"(?<![^\W_])(?P<kw>(?:close|closes|closed|fix|fixes|fixed|resolve|resolves|resolved))"
    r"(?P<sep>\s*:?\s*)"
    r"(?P<ref>(?:[\w.-]+/[\w.-]+)?#\d+|GH-\d+|https?://\S+/(?:issues|pull)/\d+)",
    re.IGNORECASE,
)
# A line git (and agentbot's own readers) could take for a trailer.
_TRAILER_LINE = re.compile(r"^(?P<lead>[ \t]*)(?P<token>[A-Za-z0-9][A-Za-z0-9-]*)(?=[ \t]*:)", re.M)


def defuse_closing(text: str, keep: Collection[int] = ()) -> str:
    """`text` whose closing keywords close nothing (but those naming `#N` of `keep`)."""

    def defuse(m: re.Match[str]) -> str:
        ref = m.group("ref")
        if ref.startswith("#") and int(ref[1:]) in keep:
            return m.group(0)
        kw = m.group("kw")
        return kw[0] + ZWSP + kw[1:] + m.group("sep") + ref

    return _CLOSING.sub(defuse, text)


def defuse_trailers(text: str) -> str:
    """`text` with no line git or a resumed run could read as a trailer."""
    return _TRAILER_LINE.sub(lambda m: m.group("lead") + ZWSP + m.group("token"), text)


def model_text(text: str) -> str:
    """Model-written `text` fit for a commit message or PR/issue text: no trailer, no close."""
    return defuse_trailers(defuse_closing(text))
