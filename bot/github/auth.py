"""Credentials: a token, or a GitHub App (JWT -> installation tokens cached until near expiry)."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from datetime import datetime, timedelta

import jwt
from cryptography.hazmat.primitives.asymmetric.rsa import RSAPrivateKey
from cryptography.hazmat.primitives.serialization import load_pem_private_key

from bot.errors import ConfigError
from bot.secrets import register

# https://docs.github.com/en/apps/creating-github-apps/authenticating-with-a-github-app/generating-a-json-web-token-jwt-for-a-github-app
JWT_BACKDATE = timedelta(seconds=60)
"""`iat` lies this far in the past to absorb clock drift, as GitHub recommends."""
JWT_LIFETIME = timedelta(minutes=9)
"""`exp` from now: GitHub refuses more than 10 minutes; one minute of margin for drift."""
TOKEN_REFRESH_MARGIN = timedelta(minutes=5)
"""An installation token is replaced this long before its `expires_at` (it lives 1 h)."""


class TokenAuth:
    """A personal access token or the Actions `GITHUB_TOKEN`."""

    def __init__(self, token: str) -> None:
        if not token:
            raise ConfigError("the GitHub token is empty", path="GITHUB_TOKEN")
        self.token = token
        register(token)

    def __repr__(self) -> str:
        return "TokenAuth(token=***)"


@dataclass(frozen=True)
class InstallationToken:
    """A cached installation access token."""

    token: str
    expires_at: datetime

    def fresh(self, now: datetime) -> bool:
        """Still usable for a while (not within the refresh margin of expiry)."""
        return now < self.expires_at - TOKEN_REFRESH_MARGIN


class AppAuth:
    """A GitHub App: signs JWTs and holds the installation-token cache its clients share."""

    def __init__(self, app_id: str, private_key_pem: str) -> None:
        if not str(app_id).strip():
            raise ConfigError("the GitHub App id is empty", path="GITHUB_APP_ID")
        try:
            key = load_pem_private_key(private_key_pem.encode(), password=None)
        except (ValueError, TypeError) as exc:
            raise ConfigError(
                "not a PEM private key (download it from the App's settings page)",
                path="GITHUB_APP_PRIVATE_KEY",
            ) from exc
        if not isinstance(key, RSAPrivateKey):
            raise ConfigError("GitHub Apps sign with RSA keys", path="GITHUB_APP_PRIVATE_KEY")
        self.app_id = str(app_id).strip()
        self._key = key
        self._tokens: dict[int, InstallationToken] = {}
        self.lock = threading.Lock()
        """Held while a token is fetched, so concurrent jobs fetch it once."""

    def __repr__(self) -> str:
        return f"AppAuth(app_id={self.app_id!r}, private_key=***)"

    def jwt(self, now: datetime) -> str:
        """A fresh RS256 JWT authenticating as the App (iss=app id, iat 60 s back, exp +9 min)."""
        claims = {
            "iat": int((now - JWT_BACKDATE).timestamp()),
            "exp": int((now + JWT_LIFETIME).timestamp()),
            "iss": self.app_id,
        }
        token = jwt.encode(claims, self._key, algorithm="RS256")
        register(token)
        return token

    def cached_token(self, installation_id: int, now: datetime) -> str | None:
        """The cached installation token if it is not near expiry."""
        entry = self._tokens.get(installation_id)
        return entry.token if entry is not None and entry.fresh(now) else None

    def store_token(self, installation_id: int, token: str, expires_at: datetime) -> None:
        """Cache a token just obtained, and make sure logs never show it."""
        register(token)
        self._tokens[installation_id] = InstallationToken(token, expires_at)
