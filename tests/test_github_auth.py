"""App auth: RS256 JWT claims, installation tokens cached until near expiry, tokens redacted."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import jwt
import pytest

from bot.clock import FakeClock
from bot.errors import ConfigError, GitHubError
from bot.github import AppAuth, AppTokenError, GitHub, TokenAuth
from bot.secrets import redact
from tests.fakes.github import FakeGitHub, app_key, fake_github

REPO = "octo/app"
APP_ID = 4242
INSTALLATION = 777
TOKENS = r"/app/installations/\d+/access_tokens"


@pytest.fixture(scope="module")
def server() -> Iterator[FakeGitHub]:
    yield from fake_github()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def gh(server: FakeGitHub, clock: FakeClock) -> FakeGitHub:
    server.reset(clock=clock)
    server.add_repo(REPO)
    server.add_issue(REPO)
    return server


@pytest.fixture
def app(gh: FakeGitHub) -> GitHub:
    key = gh.install_app("octo", app_id=APP_ID, installation_id=INSTALLATION)
    return gh.app_client(APP_ID, key)


def test_jwt_claims_verify_with_the_public_key(clock: FakeClock) -> None:
    key = app_key("claims")
    clock.advance(12345)
    token = AppAuth(str(APP_ID), key.private_pem).jwt(clock.now())
    assert jwt.get_unverified_header(token)["alg"] == "RS256"
    claims = jwt.decode(
        token,
        key.public_pem,
        algorithms=["RS256"],
        options={"verify_exp": False, "verify_iat": False},
    )
    now = int(clock.now().timestamp())
    assert claims["iss"] == str(APP_ID)
    assert claims["iat"] == now - 60
    assert now < claims["exp"] <= now + 600
    with pytest.raises(jwt.InvalidSignatureError):
        jwt.decode(token, app_key("other").public_pem, algorithms=["RS256"])


def test_the_installation_token_is_fetched_once_and_reused(
    gh: FakeGitHub, app: GitHub, clock: FakeClock
) -> None:
    client = app.for_installation(INSTALLATION)
    client.get_issue(REPO, 1)
    client.create_comment(REPO, 1, "hi")
    clock.advance(50 * 60)
    client.get_issue(REPO, 1)
    assert len(gh.calls_to("POST", TOKENS)) == 1
    (issued,) = gh.issued_tokens
    assert client.token() == issued.token
    assert {c.headers["authorization"] for c in gh.calls_to("*", r"/repos/.*")} == {
        f"token {issued.token}"
    }
    assert gh.comments_on(REPO, 1)[0].user == "agentbot[bot]"
    # The fake verified the JWT of the token request with the App's public key.
    (claims,) = gh.jwt_claims
    assert claims["iss"] == str(APP_ID)
    assert claims["iat"] == int(clock.now().timestamp()) - 50 * 60 - 60


def test_the_token_is_refreshed_five_minutes_before_expiry(
    gh: FakeGitHub, app: GitHub, clock: FakeClock
) -> None:
    client = app.for_installation(INSTALLATION)
    first = client.token()
    clock.advance(54 * 60 + 59)
    assert client.token() == first
    clock.advance(1)
    second = client.token()
    assert second != first
    assert [t.token for t in gh.issued_tokens] == [first, second]
    client.get_issue(REPO, 1)
    assert gh.calls[-1].headers["authorization"] == f"token {second}"
    assert gh.calls[-1].status == 200
    assert len(gh.jwt_claims) == 2
    assert gh.jwt_claims[1]["iat"] == int(clock.now().timestamp()) - 60


def test_clients_of_one_app_share_the_token_cache(gh: FakeGitHub, app: GitHub) -> None:
    gh.add_installation(778, app_id=APP_ID, account="other")
    a, b, other = (
        app.for_installation(INSTALLATION),
        app.for_installation(INSTALLATION),
        app.for_installation(778),
    )
    assert a.token() == b.token()
    assert other.token() != a.token()
    assert len(gh.calls_to("POST", TOKENS)) == 2
    assert a.calls + b.calls + other.calls == 2


def test_obtained_tokens_are_redacted_from_logs(app: GitHub) -> None:
    token = app.for_installation(INSTALLATION).token()
    assert redact(f"pushing with {token}") == "pushing with [REDACTED]"


def test_token_fetch_retries_server_errors(gh: FakeGitHub, app: GitHub, clock: FakeClock) -> None:
    gh.fail_next("POST", TOKENS, 503)
    client = app.for_installation(INSTALLATION)
    client.get_issue(REPO, 1)
    assert clock.sleeps == [1.0]
    assert [c.status for c in gh.calls] == [503, 201, 200]
    assert client.calls == 3


def test_an_unknown_installation_is_an_app_token_error(gh: FakeGitHub, app: GitHub) -> None:
    client = app.for_installation(999)
    for call in (lambda: client.get_issue(REPO, 1), lambda: client.get_file(REPO, "x")):
        with pytest.raises(AppTokenError) as caught:
            call()  # not "Issue #1 not found", not None: the token request failed
        assert caught.value.status == 404
        assert "App installation 999" in str(caught.value)
        assert "/app/installations/999/access_tokens" in str(caught.value)


def test_the_app_finds_the_installation_of_a_repository(gh: FakeGitHub, app: GitHub) -> None:
    assert app.installation_for_repo(REPO) == INSTALLATION
    with pytest.raises(GitHubError):
        app.token()  # the App itself cannot push: it needs an installation


def test_a_jwt_from_a_wrong_key_is_refused(gh: FakeGitHub, clock: FakeClock) -> None:
    gh.install_app("octo", app_id=APP_ID, installation_id=INSTALLATION)
    impostor = GitHub(
        auth=AppAuth(str(APP_ID), app_key("impostor").private_pem), api_url=gh.url, clock=clock
    )
    with pytest.raises(GitHubError) as caught:
        impostor.for_installation(INSTALLATION).token()
    assert caught.value.status == 401
    assert gh.issued_tokens == []


def test_token_auth_hands_out_its_token_and_ignores_installations(gh: FakeGitHub) -> None:
    client = gh.client(token="ghp_personal")
    assert client.token() == "ghp_personal"
    sibling = client.for_installation(5)
    assert sibling.token() == "ghp_personal" and sibling.installation_id is None
    assert "ghp_personal" not in repr(client.auth)


@pytest.mark.parametrize("pem", ["", "not a key", app_key("x").public_pem])
def test_a_bad_private_key_is_a_config_error(pem: str) -> None:
    with pytest.raises(ConfigError, match="GITHUB_APP_PRIVATE_KEY"):
        AppAuth("1", pem)


def test_empty_credentials_are_config_errors() -> None:
    with pytest.raises(ConfigError, match="GITHUB_TOKEN"):
        TokenAuth("")
    with pytest.raises(ConfigError, match="GITHUB_APP_ID"):
        AppAuth(" ", app_key("x").private_pem)


def test_refresh_margin_is_measured_from_expires_at(gh: FakeGitHub, app: GitHub) -> None:
    client = app.for_installation(INSTALLATION)
    client.token()
    (issued,) = gh.issued_tokens
    assert issued.expires_at - gh.now() == timedelta(hours=1)
