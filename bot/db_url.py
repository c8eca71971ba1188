"""A database connection URL in messages and logs: its password is never shown."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote

from bot.secrets import MARK

_QUERY_PASSWORD = re.compile(r"([?&]password=)[^&#]*", re.IGNORECASE)

_USERINFO = re.compile(r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<info>[^/]*)@")
_DRIVER_WORD = re.compile(r"[^\s\"'`,;]+")  # a word of a driver's error message


SQLITE_PREFIX = "sqlite:///"
"""SQLAlchemy's convention: sqlite:///rel/a.db is relative, sqlite:////abs/a.db absolute."""


def sqlite_file(url: str) -> Path | None:
    """The file a `sqlite:///PATH` URL names (None: another kind of URL, or no file named)."""
    path = url[len(SQLITE_PREFIX) :] if url.startswith(SQLITE_PREFIX) else ""
    return Path(path) if path and not path.endswith("/") else None


def url_password(url: str) -> str:
    """The password of a connection URL as written (`%`, spaces and all), or ""; never raises."""
    found = _USERINFO.match(url)
    return "" if not found else found.group("info").partition(":")[2]


def safe_url(url: str) -> str:
    """`url` for a message, its password (or libpq's `password=`) as MARK; unreadable: hidden."""
    found = _USERINFO.match(url)
    if found and url_password(url):
        user = found.group("info").partition(":")[0]
        url = found.group("scheme") + f"{user}:{MARK}@" + url[found.end() :]
    return _QUERY_PASSWORD.sub(lambda m: m.group(1) + MARK, url)


def without_password(text: str, password: str) -> str:
    """`text` (a driver's error) with no word holding any part of `password` (3+ characters).

    A short password is matched only where it stands apart from letters and digits: "ion"
    must not turn "connection" into "connect[REDACTED]" (which shows the password anyway)."""
    if not password:
        return text
    forms = {f for f in {password, unquote(password)} if f}
    for form in sorted(forms, key=len, reverse=True):
        text = _apart(form).sub(MARK, text)

    def held(w: str) -> bool:
        if w == MARK or len(w) < 3:
            return False
        return any(w in f or _apart(f).search(w) for f in forms)

    return _DRIVER_WORD.sub(lambda m: MARK if held(m.group(0)) else m.group(0), text)


def _apart(form: str) -> re.Pattern[str]:
    """`form` anywhere when it is long; when short, only not inside a longer word."""
    if len(form) >= 8:
        return re.compile(re.escape(form))
    return re.compile(rf"(?<![A-Za-z0-9]){re.escape(form)}(?![A-Za-z0-9])")
