"""FakeGitHub: the Store served over HTTP on 127.0.0.1, recording calls, injecting faults."""

from __future__ import annotations

import json
import re
import socket
import threading
import time
import traceback
from collections.abc import Iterator
from dataclasses import dataclass, field
from http import HTTPStatus
from types import TracebackType
from typing import Any
from urllib.parse import unquote

import jwt
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from bot.clock import Clock
from bot.github import AppAuth, GitHub, TokenAuth
from tests.fakes.github import payloads as P
from tests.fakes.github.keys import app_key
from tests.fakes.github.routes import DOCS, ROUTES, Req, Resp, not_found
from tests.fakes.github.store import Store

DEFAULT_TOKEN = "ghs_" + "f4ke" * 9
"""The token `FakeGitHub.client()` uses: shaped like an Actions `GITHUB_TOKEN`."""


@dataclass(frozen=True)
class Call:
    """One request the fake received, and what it answered."""

    method: str
    path: str
    """Percent-decoded path, e.g. `/repos/o/r/issues/1/labels/good first issue`."""
    query: dict[str, str]
    json: Any
    status: int
    at: float
    """clock.monotonic() of the injected clock, else time.monotonic()."""
    headers: dict[str, str] = field(repr=False)
    """Request headers, lower-case names (Authorization included: this is a test double)."""


@dataclass
class Fault:
    """A scripted failure: the next `times` matching calls get this answer (None: forever)."""

    method: str
    path_regex: re.Pattern[str]
    status: int
    headers: dict[str, str]
    body: Any
    times: int | None


class FakeGitHub(Store):
    """A stateful GitHub REST fake on 127.0.0.1; use as `with FakeGitHub() as gh: gh.url`."""

    def __init__(
        self,
        *,
        clock: Clock | None = None,
        actor: str = "github-actions[bot]",
        accept_any_token: bool = True,
        web_url: str = "https://github.com",
    ) -> None:
        super().__init__(
            clock=clock, actor=actor, accept_any_token=accept_any_token, web_url=web_url
        )
        self._calls: list[Call] = []
        self._faults: list[Fault] = []
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._port = 0
        self.app = Starlette(
            routes=[
                Route(
                    "/{path:path}",
                    self._endpoint,
                    methods=["GET", "POST", "PATCH", "PUT", "DELETE"],
                )
            ]
        )

    # --- lifecycle -------------------------------------------------------------------------

    @property
    def url(self) -> str:
        """The API base URL, e.g. `http://127.0.0.1:54321` (pass as `api_url`)."""
        if not self._port:
            raise RuntimeError("FakeGitHub is not running: use it as a context manager")
        return f"http://127.0.0.1:{self._port}"

    def start(self) -> FakeGitHub:
        """Serve on a free port in a background thread; returns once it accepts requests."""
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        self._port = sock.getsockname()[1]
        config = uvicorn.Config(self.app, log_level="warning", lifespan="off", access_log=False)
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [sock]}, daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("FakeGitHub did not start")
            time.sleep(0.005)
        return self

    def stop(self) -> None:
        """Shut the server down."""
        if self._server is not None and self._thread is not None:
            self._server.should_exit = True
            self._server.force_exit = True  # do not wait for idle keep-alive connections
            self._thread.join(timeout=10)
        self._server = self._thread = None

    def reset(self, *, clock: Clock | None = None) -> FakeGitHub:
        """Forget all state, calls and faults but keep serving (for module-scoped servers)."""
        with self.lock:
            Store.__init__(
                self,
                clock=clock,
                actor=self.actor,
                accept_any_token=self.accept_any_token,
                web_url=self.web_url,
            )
            self._calls.clear()
            self._faults.clear()
        return self

    def __enter__(self) -> FakeGitHub:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # --- clients ---------------------------------------------------------------------------

    def client(
        self,
        *,
        token: str = DEFAULT_TOKEN,
        clock: Clock | None = None,
        max_retry_seconds: float = 600.0,
    ) -> GitHub:
        """A `bot.github.GitHub` with token auth pointed at this fake (the fake's clock)."""
        return GitHub(
            auth=TokenAuth(token),
            api_url=self.url,
            clock=clock or self.clock,
            max_retry_seconds=max_retry_seconds,
        )

    def app_client(
        self, app_id: int, private_key_pem: str, *, clock: Clock | None = None
    ) -> GitHub:
        """A `bot.github.GitHub` with App auth (call `.for_installation(id)` on it)."""
        return GitHub(
            auth=AppAuth(str(app_id), private_key_pem), api_url=self.url, clock=clock or self.clock
        )

    def install_app(
        self,
        account: str,
        *,
        app_id: int = 4242,
        installation_id: int = 777,
        repos: list[str] | None = None,
        slug: str = "agentbot",
    ) -> str:
        """Register an App (fresh RSA key) installed on `account`; returns its private key PEM."""
        key = app_key(slug)
        self.add_app(app_id, key.public_pem, slug=slug)
        self.add_installation(installation_id, app_id=app_id, account=account, repos=repos)
        return key.private_pem

    # --- records and faults ----------------------------------------------------------------

    @property
    def calls(self) -> list[Call]:
        """Every call so far, in order."""
        with self.lock:
            return list(self._calls)

    def calls_to(self, method: str, path_regex: str) -> list[Call]:
        """Calls with this method ("*" for any) whose path fully matches `path_regex`."""
        pattern = re.compile(path_regex)
        return [
            c
            for c in self.calls
            if method in ("*", c.method) and pattern.fullmatch(c.path) is not None
        ]

    def writes(self) -> list[Call]:
        """Every non-GET call."""
        return [c for c in self.calls if c.method != "GET"]

    def reset_calls(self) -> None:
        """Forget the calls recorded so far (state is kept)."""
        with self.lock:
            self._calls.clear()

    def fail_next(
        self,
        method: str,
        path_regex: str,
        status: int,
        headers: dict[str, str] | None = None,
        body: Any = None,
        times: int | None = 1,
    ) -> None:
        """Answer the next `times` calls matching (method or "*", full-match path regex) with
        `status`, `headers` and `body` (default GitHub's error shape); `times=None`: forever."""
        if body is None:
            body = P.error(HTTPStatus(status).phrase, DOCS, status=str(status))
        with self.lock:
            self._faults.append(
                Fault(method, re.compile(path_regex), status, dict(headers or {}), body, times)
            )

    def clear_faults(self) -> None:
        """Drop scripted failures that did not fire yet."""
        with self.lock:
            self._faults.clear()

    def _take_fault(self, method: str, path: str) -> Fault | None:
        for fault in self._faults:
            if fault.method in ("*", method) and fault.path_regex.fullmatch(path):
                if fault.times is not None:
                    fault.times -= 1
                    if fault.times <= 0:
                        self._faults.remove(fault)
                return fault
        return None

    # --- HTTP ------------------------------------------------------------------------------

    async def _endpoint(self, request: Request) -> Response:
        raw = await request.body()
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        raw_path = request.scope.get("raw_path", b"").decode("latin-1").split("?")[0]
        headers = {k.lower(): v for k, v in request.headers.items()}
        query = dict(request.query_params)
        with self.lock:
            at = self.timestamp()
            try:
                resp = self._handle(
                    request.method, raw_path or request.url.path, query, body, headers
                )
            except Exception:
                resp = Resp(500, P.error("fake GitHub crashed:\n" + traceback.format_exc()))
            self._calls.append(
                Call(
                    method=request.method,
                    path=unquote(raw_path or request.url.path),
                    query=query,
                    json=body,
                    status=resp.status,
                    at=at,
                    headers=headers,
                )
            )
            return self._render(resp, headers)

    def _render(self, resp: Resp, request_headers: dict[str, str]) -> Response:
        now = self.now()
        reset = int(now.timestamp()) + 3600
        used = len(self._calls)
        headers = {
            "x-github-request-id": f"FAKE:{used:08X}",
            "x-github-api-version-selected": request_headers.get(
                "x-github-api-version", "2022-11-28"
            ),
            "x-ratelimit-limit": "5000",
            "x-ratelimit-remaining": str(max(0, 5000 - used)),
            "x-ratelimit-used": str(used),
            "x-ratelimit-reset": str(reset),
            "x-ratelimit-resource": "core",
            **resp.headers,
        }
        if resp.body is None:
            return Response(status_code=resp.status, headers=headers)
        if isinstance(resp.body, str):
            media = headers.pop("content-type", "text/plain; charset=utf-8")
            return Response(resp.body, resp.status, headers, media_type=media)
        return Response(
            json.dumps(resp.body),
            resp.status,
            headers,
            media_type="application/json; charset=utf-8",
        )

    def _handle(
        self, method: str, raw_path: str, query: dict[str, str], body: Any, headers: dict[str, str]
    ) -> Resp:
        path = unquote(raw_path)
        fault = self._take_fault(method, path)
        if fault is not None:
            return Resp(fault.status, fault.body, fault.headers)
        for route_method, pattern, handler, app_only in ROUTES:
            match = pattern.match(raw_path)
            if match is None or route_method != method:
                continue
            auth = self._authenticate(headers, app_only)
            if isinstance(auth, Resp):
                return auth
            actor, kind, app_id, installation_id = auth
            params = {k: unquote(v) for k, v in match.groupdict().items()}
            if "owner" in params and not app_only:
                denied = self._repo_access(f"{params['owner']}/{params['repo']}", installation_id)
                if denied is not None:
                    return denied
            req = Req(
                method=method,
                path=path,
                params=params,
                query=query,
                json=body,
                headers=headers,
                actor=actor,
                token_kind=kind,
                app_id=app_id,
                installation_id=installation_id,
                urls=P.Urls(self.url, self.web_url),
            )
            return handler(self, req)
        return not_found()

    def _repo_access(self, repo: str, installation_id: int | None) -> Resp | None:
        if repo not in self.repos:
            return not_found()
        if installation_id is not None:
            inst = self.installations[installation_id]
            owner = repo.split("/")[0]
            if inst.account != owner or (inst.repos is not None and repo not in inst.repos):
                return not_found()
        return None

    def _authenticate(
        self, headers: dict[str, str], app_only: bool
    ) -> Resp | tuple[str, str, int | None, int | None]:
        """(actor, kind, app id, installation id) or a 401/403."""
        scheme, _, credential = headers.get("authorization", "").partition(" ")
        credential = credential.strip()
        if scheme.lower() not in ("bearer", "token") or not credential:
            return Resp(401, P.error("Requires authentication", DOCS, status="401"))
        if credential.count(".") == 2:
            return self._verify_jwt(credential, app_only)
        if app_only:
            return Resp(401, P.error("A JSON web token could not be decoded", DOCS, status="401"))
        issued = next((t for t in self.issued_tokens if t.token == credential), None)
        if issued is not None:
            if self.now() >= issued.expires_at:
                return Resp(401, P.error("Bad credentials", DOCS, status="401"))
            inst = self.installations[issued.installation_id]
            slug = self.apps[inst.app_id].slug
            return f"{slug}[bot]", "installation", inst.app_id, inst.id
        if credential in self.token_logins:
            return self.token_logins[credential], "token", None, None
        if self.accept_any_token:
            self.add_user(self.actor)
            return self.actor, "token", None, None
        return Resp(401, P.error("Bad credentials", DOCS, status="401"))

    def _verify_jwt(
        self, token: str, app_only: bool
    ) -> Resp | tuple[str, str, int | None, int | None]:
        def refuse(message: str) -> Resp:
            return Resp(401, P.error(message, DOCS, status="401"))

        try:
            issuer = jwt.decode(token, options={"verify_signature": False}).get("iss")
            app = self.apps.get(int(str(issuer)))
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
        now = self.now().timestamp()
        if claims["exp"] <= now:
            return refuse("'Expiration time' claim ('exp') must be a numeric value in the future")
        if claims["iat"] > now + 60:
            return refuse("'Issued at' claim ('iat') must be an Integer representing the past")
        if claims["exp"] - now > 600:
            return refuse("'Expiration time' claim ('exp') is too far in the future")
        self.jwt_claims.append(claims)
        if not app_only:
            return Resp(403, P.error("Resource not accessible by integration", DOCS, status="403"))
        return f"{app.slug}[bot]", "app", app.id, None


def fake_github(**kwargs: Any) -> Iterator[FakeGitHub]:
    """Fixture body: `@pytest.fixture def gh(): yield from fake_github(clock=...)`."""
    with FakeGitHub(**kwargs) as server:
        yield server
