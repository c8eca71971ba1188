"""Text that leaves a job: secrets redacted; in what GitHub renders, mentions and images defused.

Every field also loses the machine's own folders (home, data dir, workspace, temp): a tool's
"see /root/.cache/pre-commit/pre-commit.log" reaches GitHub as "see ~/.cache/pre-commit/...".

`TextGuard.clean_fields` is applied by the GitHub client to every write it sends
(bot.github.core), so no comment, pull request, check run or dispatch can skip it. Prose
fields (`body`, `title`, `summary`, `text`) also get:

- @mentions neutralised (a zero-width space after the `@`, invisible on github.com), so
  text an agent wrote cannot notify people or teams; the job's own actor stays mentioned,
  because the bot's own messages address them (`addressing`, set by the use case);
- images that would load from another host (`![x](https://...)`, `<img src=...>`, image
  references, `<picture>`, `<video>`...) replaced by `(image removed)`, so a comment cannot
  carry a tracking pixel or show a picture the agent chose. Images by a relative path (a
  file of the repository) stay.

Decision: mentions and images inside code spans and blocks are changed too; GitHub would
not act on them there, but the text is simpler to defuse everywhere than to parse exactly
as github.com does, and a zero-width space in `@pytest.fixture` reads the same. One
exception: code a contributor commits as it is, `suggestion` and `diff` blocks (the review
agentbot leaves on a fork it cannot push to, `bot.followup.suggestions`), is only redacted.
Such a block is kept only where Markdown surely reads it as code: its fence starts a line,
no line inside could close it, and nothing before it (a `<`, another fence) could have
opened HTML or code that swallows it; GitHub neither notifies nor loads anything in code.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import re
import tempfile
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from bot.outbound.scan import Scanner, job_secrets
from bot.secrets import redact

_ADDRESSEES: contextvars.ContextVar[frozenset[str]] = contextvars.ContextVar(
    "agentbot_addressees", default=frozenset()
)


@contextlib.contextmanager
def addressing(*logins: str) -> Iterator[None]:
    """While a job runs, the people its messages may @mention (its actor); the rest of the
    text it writes mentions no one. Threads started with a copy of the context keep it."""
    token = _ADDRESSEES.set(frozenset(x for x in logins if x))
    try:
        yield
    finally:
        _ADDRESSEES.reset(token)


PROSE_FIELDS = frozenset({"body", "title", "summary", "text"})
"""Request fields GitHub renders as Markdown (or shows as a title)."""

ZWSP = "\u200b"
_VERBATIM_OPEN = re.compile(r"(`{3,})(?:suggestion|diff)[ \t]*")
_ANY_FENCE = re.compile(r" {0,3}(?:`{3,}|~{3,})")
IMAGE_REMOVED = "(image removed)"

# GitHub logins: alphanumerics and single inner hyphens, up to 39; `@org/team` for teams.
_MENTION = re.compile(
    r"(?<![A-Za-z0-9])@(?P<login>[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38})"
    r"(?P<team>/[A-Za-z0-9_.-]+)?"
)
# `@` spelled as an entity renders as `@`, and github.com then reads a mention.
_AT_ENTITY = re.compile(r"&(?:#0*64|#[xX]0*40|commat);?(?=[A-Za-z0-9])")
_MD_IMAGE = re.compile(r"!\[(?:\\.|[^\[\]\\]|\[(?:\\.|[^\]\\])*\])*\]\((?P<dest>[^)]*)\)")
# A destination that is surely a file of the repository: no scheme, no host, nothing escaped.
_LOCAL_DEST = re.compile(r"(?!/)[A-Za-z0-9_./-]+(?:\s+(?:\"[^\"]*\"|'[^']*'))?")
_MD_IMAGE_REF = re.compile(
    r"!\[(?:\\.|[^\[\]\\]|\[(?:\\.|[^\]\\])*\])*\](?:\[(?:\\.|[^\]\\])*\])?(?!\()"
)
_HTML_MEDIA = re.compile(
    r"<\s*(?:img|image|picture|source|video|audio|iframe|object|embed|svg)\b[^>]*>",
    re.IGNORECASE,
)


def neutralize_mentions(text: str, allowed: Collection[str] = ()) -> str:
    """`text` with every @mention but those of `allowed` logins unable to notify anyone."""
    keep = {a.casefold() for a in allowed if a}

    def defuse(m: re.Match[str]) -> str:
        if not m.group("team") and m.group("login").casefold() in keep:
            return m.group(0)
        return "@" + ZWSP + m.group(0)[1:]

    return _MENTION.sub(defuse, _AT_ENTITY.sub("@", text))


def verbatim_blocks(text: str) -> list[tuple[int, int]]:
    """(start, end) of each `suggestion`/`diff` block Markdown surely reads as code."""
    spans: list[tuple[int, int]] = []
    lines = text.splitlines(keepends=True)
    at, i = 0, 0
    while i < len(lines):
        line = lines[i]
        opened = _VERBATIM_OPEN.fullmatch(line.rstrip("\n"))
        if opened:
            fence = opened.group(1)
            inner = 0
            for j in range(i + 1, len(lines)):
                if lines[j].rstrip("\n") == fence:
                    break
                if fence in lines[j]:
                    return spans  # a line inside could close it: nothing after is sure
                inner += len(lines[j])
            else:
                return spans
            end = at + len(line) + inner + len(lines[j])
            spans.append((at, end))
            at, i = end, j + 1
            continue
        if "<" in line or _ANY_FENCE.match(line):
            return spans  # HTML or another code block may be open from here on
        at, i = at + len(line), i + 1
    return spans


def _inline_image(m: re.Match[str]) -> str:
    # Kept only when plainly local: any escape (`http\\://`), entity (`http&#58;//`), scheme,
    # `//host` or `<...>` could be read as another host by one renderer or another.
    return m.group(0) if _LOCAL_DEST.fullmatch(m.group("dest").strip()) else IMAGE_REMOVED


def remove_remote_images(text: str) -> str:
    """`text` without images that would be fetched from another host."""
    text = _MD_IMAGE.sub(_inline_image, text)
    text = _MD_IMAGE_REF.sub(IMAGE_REMOVED, text)
    return _HTML_MEDIA.sub(IMAGE_REMOVED, text)


_PLACES = (
    ("GITHUB_WORKSPACE", "<workspace>"),
    ("RUNNER_TOOL_CACHE", "<tool-cache>"),
    ("AGENTBOT_DATA_DIR", "<data-dir>"),
    ("RUNNER_TEMP", "<tmp>"),
    ("XDG_CACHE_HOME", "~/.cache"),
    ("HOME", "~"),
)


def _local_roots() -> list[tuple[str, str]]:
    """Folders of this machine a text must not name, longest first, with their placeholder."""
    roots = [(os.environ.get(name, ""), shown) for name, shown in _PLACES]
    # The runner's own folder (its `_diag` logs, its `_work`): above the workspace's `_work`.
    work = os.environ.get("GITHUB_WORKSPACE", "")
    if "/_work/" in work:
        roots.append((work.split("/_work/", 1)[0], "<runner>"))
    roots += [(str(Path("~").expanduser()), "~"), (tempfile.gettempdir(), "<tmp>")]
    found = {os.path.realpath(r): shown for r, shown in roots if r and r != "/"}
    found |= {r.rstrip("/"): shown for r, shown in roots if r and r != "/"}
    return sorted(found.items(), key=lambda x: -len(x[0]))


def without_local_paths(text: str) -> str:
    """`text` with this machine's folders (home, data dir, workspace, temp) as placeholders."""
    for root, shown in _local_roots():
        if len(root) > 1:
            text = re.sub(_spelled(root) + r"(?=/|\\/|%2[fF]|\b|$)", shown, text)
    return text


# A folder separator however a text may spell it: doubled, `/./`, JSON's `\/`, URL's `%2F`.
_SEP = r"(?:(?:/|\\/|%2[fF])+(?:\.(?:/|\\/|%2[fF])+)*)"


def _spelled(root: str) -> str:
    """A pattern for `root` in every spelling of its separators."""
    return _SEP + _SEP.join(re.escape(part) for part in root.strip("/").split("/"))


@dataclass(frozen=True)
class TextGuard:
    """Cleans what the bot writes to GitHub: the job's secrets, mentions, remote images."""

    mentions: frozenset[str] = frozenset()
    """Logins that may still be mentioned (the job's actor)."""
    secrets: Callable[[], Iterable[str]] = field(default=job_secrets, compare=False)

    def allowing(self, *logins: str) -> TextGuard:
        """The same guard, letting `logins` be mentioned too."""
        return replace(self, mentions=self.mentions | {x for x in logins if x})

    def clean(self, text: str, *, prose: bool = True, scanner: Scanner | None = None) -> str:
        """`text` redacted; if it is `prose`, mentions and remote images defused too."""
        text = without_local_paths(redact(text, (scanner or Scanner(self.secrets())).redact))
        if not prose:
            return text
        allowed = self.mentions | _ADDRESSEES.get()
        out, at = [], 0
        for start, end in [*verbatim_blocks(text), (len(text), len(text))]:
            out.append(neutralize_mentions(remove_remote_images(text[at:start]), allowed))
            out.append(text[start:end])
            at = end
        return "".join(out)

    def clean_fields(self, fields: dict[str, Any]) -> dict[str, Any]:
        """A request's keyword fields, every string in them cleaned (nested ones too)."""
        scanner = Scanner(self.secrets())
        return {k: self._value(k, v, scanner) for k, v in fields.items()}

    def _value(self, key: str, value: Any, scanner: Scanner) -> Any:
        if isinstance(value, str):
            return self.clean(value, prose=key in PROSE_FIELDS, scanner=scanner)
        if isinstance(value, dict):
            return {k: self._value(k, v, scanner) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return type(value)(self._value(key, v, scanner) for v in value)
        return value


def redact_data(value: Any, scanner: Scanner | None = None) -> Any:
    """`value` (JSON-like data) with every string in it redacted, keys included."""
    scanner = scanner or Scanner(job_secrets())
    if isinstance(value, str):
        return redact(value, scanner.redact)
    if isinstance(value, dict):
        return {redact_data(k, scanner): redact_data(v, scanner) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_data(v, scanner) for v in value]
    return value
