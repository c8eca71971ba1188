"""One secret scanner for everything that leaves a job: diffs, commit messages, PR text,
comments, the step summary and session artifacts.

It finds two things. The exact values of the job's own secrets (passed in: the registry of
every value the bot holds, whatever the variable's name), also when encoded the cheap ways
a model asked to smuggle them would try: base64 (standard and URL-safe) and base32, at any
byte offset, hex, URL-quoting, JSON escaping, reversed, spelled with escapes (`%5a`, `\\x5a`,
`\\u005a`, `&#90;`), and split into pieces by anything but letters and digits (string
literals joined with `+` across lines, dots, zero-width spaces). And credential-shaped
strings, from detect-secrets' regex detectors (GitHub, AWS, Slack, OpenAI, private keys,
URLs with user:password, and the other high-precision ones), used directly: its scan
functions would apply its global settings and filters, one of which honours a
`pragma: allowlist secret` comment that the text being scanned could carry.

Added by hand, because detect-secrets 1.5 has no detector for them: fine-grained GitHub
PATs (`github_pat_`), Anthropic keys (`sk-ant-`), and the whole span of a private key block
(its detector matches only the BEGIN line, which is enough to refuse but not to redact).

Not caught (stated, not hidden): other encodings (rot13, XOR, compression, UTF-16, a list
of character codes, words), a value split across two files or commits, secrets of the
job shorter than MIN_SECRET_LENGTH, and credentials of a shape none of the detectors
knows. A scanner cannot stop a model that encodes on purpose; what stops that is the
sandbox (bot/sandbox), in which the agent never sees a secret.
"""

from __future__ import annotations

import base64
import functools
import json
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import quote

from bot.secrets import MARK

MIN_SECRET_LENGTH = 8
"""Job secret values shorter than this are not searched for: they can't be told apart from
ordinary text (a port number, `true`)."""

REDACTED = MARK
"""The one marker (bot.secrets.MARK), so every redacted text reads the same."""
OWN_SECRET = "one of this job's own secret values"  # noqa: S105 (a label, not a secret)

# detect-secrets detectors with few false positives in source code and diffs. Left out:
# the entropy and keyword detectors (hashes, lock files, `password = ...` in tests), public
# IPs, JWTs (test fixtures) and the keyword-based cloud detectors.
_DETECTORS = (
    "aws.AWSKeyDetector",
    "azure_storage_key.AzureStorageKeyDetector",
    "basic_auth.BasicAuthDetector",
    "discord.DiscordBotTokenDetector",
    "github_token.GitHubTokenDetector",
    "gitlab_token.GitLabTokenDetector",
    "mailchimp.MailchimpDetector",
    "npm.NpmDetector",
    "openai.OpenAIDetector",
    "private_key.PrivateKeyDetector",
    "pypi_token.PypiTokenDetector",
    "sendgrid.SendGridDetector",
    "slack.SlackDetector",
    "square_oauth.SquareOAuthDetector",
    "stripe.StripeDetector",
    "telegram_token.TelegramBotTokenDetector",
    "twilio.TwilioKeyDetector",
)

_BY_HAND = (
    ("GitHub Token", re.compile(r"github_pat_[A-Za-z0-9_]{22,255}")),
    ("Anthropic API Key", re.compile(r"sk-ant-[A-Za-z0-9_-]{20,}")),
    (
        "Private Key",
        re.compile(
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?"
            r"(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
            re.DOTALL,
        ),
    ),
)

_BASIC_AUTH = "Basic Auth Credentials"

# A value split into pieces (`"abc" +\n "def"`, `a.b.c`, zero-width spaces between its
# characters) is found by comparing only letters and digits, escapes decoded first.
_NON_ALNUM = re.compile(r"[^0-9A-Za-z]+")
# One character spelled as an escape (%2D, \x2d, \u002d, &#x2d;, &#45;), else one other
# character, which is dropped.
_NOISE = re.compile(
    r"%(?P<pct>[0-9A-Fa-f]{2})|\\x(?P<hx>[0-9A-Fa-f]{2})|\\u(?P<u4>[0-9A-Fa-f]{4})"
    r"|&#[xX](?P<ent>[0-9A-Fa-f]{1,6});|&#(?P<dec>[0-9]{1,7});|[^0-9A-Za-z]"
)
_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}|\\[xu][0-9A-Fa-f]{2}|&#")


@dataclass(frozen=True)
class Finding:
    """One secret found in a text: what kind, on which line; never the value itself."""

    kind: str
    line: int
    """1-based line of the text where it starts."""
    start: int
    end: int


@functools.cache
def _patterns() -> tuple[tuple[str, re.Pattern[str]], ...]:
    """(kind, regex) for every credential shape; detect-secrets is imported on first use."""
    import importlib

    found: list[tuple[str, re.Pattern[str]]] = []
    for dotted in _DETECTORS:
        module, name = dotted.rsplit(".", 1)
        cls = getattr(importlib.import_module(f"detect_secrets.plugins.{module}"), name)
        found += [(str(cls.secret_type), regex) for regex in cls.denylist]
    return (*found, *_BY_HAND)


def _base64_cores(raw: bytes) -> set[str]:
    """The base64 text of `raw` that is the same wherever `raw` sits in an encoded stream."""
    cores = set()
    for offset in range(3):
        encoded = base64.b64encode(b"\0" * offset + raw).decode()
        first = -(-offset // 3)  # the first 3-byte group made of `raw` alone
        last = (offset + len(raw)) // 3
        core = encoded[first * 4 : last * 4]
        if len(core) >= MIN_SECRET_LENGTH:
            cores |= {core, core.replace("+", "-").replace("/", "_")}
    return cores


def _base32_cores(raw: bytes) -> set[str]:
    """The base32 text of `raw` that is the same wherever `raw` sits (5-byte groups)."""
    cores = set()
    for offset in range(5):
        encoded = base64.b32encode(b"\0" * offset + raw).decode()
        first = -(-offset // 5)
        last = (offset + len(raw)) // 5
        core = encoded[first * 8 : last * 8]
        if len(core) >= MIN_SECRET_LENGTH:
            cores |= {core, core.lower()}
    return cores


def variants(value: str) -> set[str]:
    """`value` and the encodings of it the scanner also looks for."""
    raw = value.encode()
    found = {value, value[::-1], raw.hex(), raw.hex().upper(), quote(value, safe="")}
    found.add(json.dumps(value)[1:-1])
    found |= _base64_cores(raw) | _base32_cores(raw)
    return {v for v in found if len(v) >= MIN_SECRET_LENGTH}


@functools.lru_cache(maxsize=64)
def _values_regex(values: frozenset[str]) -> re.Pattern[str] | None:
    every = {v for value in values for v in variants(value)}
    if not every:
        return None
    # Longest first, so a value wins over a shorter one it contains.
    return re.compile("|".join(re.escape(v) for v in sorted(every, key=len, reverse=True)))


@functools.lru_cache(maxsize=64)
def _plain_regex(values: frozenset[str]) -> re.Pattern[str] | None:
    if not values:
        return None
    return re.compile("|".join(re.escape(v) for v in sorted(values, key=len, reverse=True)))


class Scanner:
    """Finds and redacts the job's own secret values and credential-shaped strings."""

    def __init__(self, values: Iterable[str] = ()) -> None:
        kept = {v for v in values if v and len(v) >= MIN_SECRET_LENGTH}
        self._values = frozenset(kept)
        # Pieces are compared by letters and digits only, so the values (and encodings) are.
        squeezed = {_NON_ALNUM.sub("", v) for value in kept for v in variants(value)}
        self._joined = frozenset(v for v in squeezed if len(v) >= MIN_SECRET_LENGTH)

    def find(self, text: str) -> list[Finding]:
        """Every secret in `text`, in order; overlapping matches are merged."""
        spans: list[tuple[int, int, str]] = []
        values = _values_regex(self._values)
        if values is not None:
            spans += [(m.start(), m.end(), OWN_SECRET) for m in values.finditer(text)]
            spans += self._split_spans(text)
        for kind, regex in _patterns():
            for m in regex.finditer(text):
                # Only the password of a URL is secret: the host stays readable.
                start, end = m.span(1) if kind == _BASIC_AUTH else m.span()
                spans.append((start, end, kind))
        return _merge(text, spans)

    def _split_spans(self, text: str) -> list[tuple[int, int, str]]:
        joined = _plain_regex(self._joined)
        if joined is None:
            return []
        # A cheap look first (at C speed); where each character came from is worked out
        # only when a value might be there.
        if not _ESCAPE.search(text) and joined.search(_NON_ALNUM.sub("", text)) is None:
            return []
        chars: list[str] = []
        origin: list[int] = []
        last = 0
        for m in _NOISE.finditer(text):
            for i in range(last, m.start()):
                chars.append(text[i])
                origin.append(i)
            escaped = next((g for g in m.groups() if g is not None), None)
            if escaped is not None:
                code = int(escaped, 10 if m.group("dec") else 16)
                ch = chr(code) if code <= sys.maxunicode else ""
                if ch.isascii() and ch.isalnum():
                    chars.append(ch)
                    origin.append(m.start())
            last = m.end()
        chars.extend(text[last:])
        origin.extend(range(last, len(text)))
        squeezed = "".join(chars)
        return [
            (origin[m.start()], _end_of(text, origin[m.end() - 1]), OWN_SECRET)
            for m in joined.finditer(squeezed)
        ]

    def redact(self, text: str) -> str:
        """`text` with every finding replaced by REDACTED."""
        found = self.find(text)
        if not found:
            return text
        out, last = [], 0
        for f in found:
            out += [text[last : f.start], REDACTED]
            last = f.end
        out.append(text[last:])
        return "".join(out)


def _end_of(text: str, index: int) -> int:
    """The end of the character, or of the escape spelling it, that starts at `index`."""
    m = _NOISE.match(text, index)
    return m.end() if m is not None and m.lastgroup is not None else index + 1


def _merge(text: str, spans: list[tuple[int, int, str]]) -> list[Finding]:
    merged: list[tuple[int, int, str]] = []
    for start, end, kind in sorted(spans):
        if merged and start < merged[-1][1]:
            first, last, first_kind = merged[-1]
            merged[-1] = (first, max(last, end), first_kind)
        else:
            merged.append((start, end, kind))
    return [Finding(kind, text.count("\n", 0, s) + 1, s, e) for s, e, kind in merged]


def job_secrets() -> frozenset[str]:
    """The values of this process's own secrets, from the one registry of them (bot.secrets)."""
    from bot.secrets import values

    return values()
