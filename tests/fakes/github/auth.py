"""Authentication in the fake: tokens, installation tokens, and App JWTs checked like GitHub."""

from __future__ import annotations

import jwt

from tests.fakes.github import payloads as P
from tests.fakes.github.routing import DOCS, Resp
from tests.fakes.github.store import Store

Identity = tuple[str, str, int | None, int | None]
"""(actor login, token kind "token"/"installation"/"app", App id, installation id)."""


def authenticate(store: Store, headers: dict[str, str], app_only: bool) -> Resp | Identity:
    """(actor, kind, app id, installation id) of the Authorization header, or a 401/403."""
    scheme, _, credential = headers.get("authorization", "").partition(" ")
    credential = credential.strip()
    if scheme.lower() not in ("bearer", "token") or not credential:
        return Resp(401, P.error("Requires authentication", DOCS, status="401"))
    if credential.count(".") == 2:
        return verify_jwt(store, credential, app_only)
    if app_only:
        return Resp(401, P.error("A JSON web token could not be decoded", DOCS, status="401"))
    issued = next((t for t in store.issued_tokens if t.token == credential), None)
    if issued is not None:
        if store.now() >= issued.expires_at:
            return Resp(401, P.error("Bad credentials", DOCS, status="401"))
        inst = store.installations[issued.installation_id]
        slug = store.apps[inst.app_id].slug
        return f"{slug}[bot]", "installation", inst.app_id, inst.id
    if credential in store.token_logins:
        return store.token_logins[credential], "token", None, None
    if store.accept_any_token:
        store.add_user(store.actor)
        return store.actor, "token", None, None
    return Resp(401, P.error("Bad credentials", DOCS, status="401"))


def verify_jwt(store: Store, token: str, app_only: bool) -> Resp | Identity:
    """Check an App JWT as GitHub does: signature, `iss`, and `exp` at most 10 min ahead."""

    def refuse(message: str) -> Resp:
        return Resp(401, P.error(message, DOCS, status="401"))

    try:
        issuer = jwt.decode(token, options={"verify_signature": False}).get("iss")
        app = store.apps.get(int(str(issuer)))
    except (jwt.PyJWTError, ValueError):
        return refuse("A JSON web token could not be decoded")
    if app is None:
        return refuse(f"Integration not found for iss {issuer!r}")
    try:
        claims = jwt.decode(
            token,
            app.public_key_pem,
            algorithms=["RS256"],
            options={
                "verify_exp": False,
                "verify_iat": False,
                "verify_nbf": False,
                "require": ["iat", "exp", "iss"],
            },
        )
    except jwt.PyJWTError as exc:
        return refuse(f"A JSON web token could not be decoded ({exc})")
    now = store.now().timestamp()
    if claims["exp"] <= now:
        return refuse("'Expiration time' claim ('exp') must be a numeric value in the future")
    if claims["iat"] > now + 60:
        return refuse("'Issued at' claim ('iat') must be an Integer representing the past")
    if claims["exp"] - now > 600:
        return refuse("'Expiration time' claim ('exp') is too far in the future")
    store.jwt_claims.append(claims)
    if not app_only:
        return Resp(403, P.error("Resource not accessible by integration", DOCS, status="403"))
    return f"{app.slug}[bot]", "app", app.id, None
