"""FakeGitHub: the Store served over HTTP on 127.0.0.1, recording calls, injecting faults."""

from __future__ import annotations

import json
import socket
import threading
import time
import traceback
from collections.abc import Iterator
from types import TracebackType
from typing import Any
from urllib.parse import unquote

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from bot.clock import Clock
from bot.github import AppAuth, GitHub, TokenAuth
from tests.fakes.github import payloads as P
from tests.fakes.github import routes_issues, routes_pulls, routes_reviews
from tests.fakes.github.auth import authenticate
from tests.fakes.github.keys import app_key
from tests.fakes.github.records import Call, Recorder
from tests.fakes.github.routing import ROUTES, Req, Resp, not_found
from tests.fakes.github.store import Store

# Importing the route modules registers their endpoints in ROUTES.
_ROUTE_MODULES = (routes_issues, routes_pulls, routes_reviews)

DEFAULT_TOKEN = "ghs_" + "f4ke" * 9
"""The token `FakeGitHub.client()` uses: shaped like an Actions `GITHUB_TOKEN`."""


class FakeGitHub(Store, Recorder):
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
        self._init_records()
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
            auth = authenticate(self, headers, app_only)
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


def fake_github(**kwargs: Any) -> Iterator[FakeGitHub]:
    """Fixture body: `@pytest.fixture def gh(): yield from fake_github(clock=...)`."""
    with FakeGitHub(**kwargs) as server:
        yield server
