"""Retries: 5xx and network errors back off, rate limits wait as GitHub says, other 4xx fail."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import httpx
import pytest
from githubkit.exception import RequestError

from bot.clock import FakeClock
from bot.errors import GitHubError
from bot.github import GitHub, TokenAuth
from bot.github.retry import classify
from tests.fakes.github import FakeGitHub, fake_github

REPO = "octo/app"
ISSUE = r"/repos/octo/app/issues/\d+"
SECONDARY = {
    "message": "You have exceeded a secondary rate limit. Please wait a few minutes before you "
    "try again.",
    "documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api",
}


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
    server.add_issue(REPO, title="Crash")
    return server


@pytest.fixture
def client(gh: FakeGitHub) -> GitHub:
    return gh.client()


def test_retry_after_is_waited_exactly_once(
    gh: FakeGitHub, client: GitHub, clock: FakeClock
) -> None:
    gh.fail_next("GET", ISSUE, 403, headers={"retry-after": "2"}, body=SECONDARY)
    assert client.get_issue(REPO, 1).title == "Crash"
    assert clock.sleeps == [2.0]
    assert [c.status for c in gh.calls] == [403, 200]
    assert gh.calls[1].at - gh.calls[0].at >= 2.0


def test_429_with_retry_after_is_waited_too(
    gh: FakeGitHub, client: GitHub, clock: FakeClock
) -> None:
    gh.fail_next("GET", ISSUE, 429, headers={"retry-after": "7"})
    client.get_issue(REPO, 1)
    assert clock.sleeps == [7.0]


def test_exhausted_quota_waits_until_the_reset(
    gh: FakeGitHub, client: GitHub, clock: FakeClock
) -> None:
    reset = int(clock.now().timestamp()) + 95
    headers = {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(reset)}
    gh.fail_next("GET", ISSUE, 403, headers=headers, body={"message": "API rate limit exceeded"})
    client.get_issue(REPO, 1)
    assert clock.sleeps == [95.0]
    assert clock.now().timestamp() >= reset
    assert gh.calls[-1].status == 200


def test_a_reset_in_the_past_still_waits_a_moment(
    gh: FakeGitHub, client: GitHub, clock: FakeClock
) -> None:
    headers = {"x-ratelimit-remaining": "0", "x-ratelimit-reset": "1000"}
    gh.fail_next("GET", ISSUE, 403, headers=headers)
    client.get_issue(REPO, 1)
    assert clock.sleeps == [1.0]


def test_secondary_limit_without_headers_backs_off_from_a_minute(
    gh: FakeGitHub, client: GitHub, clock: FakeClock
) -> None:
    gh.fail_next("POST", r".*/comments", 403, body=SECONDARY, times=2)
    client.create_comment(REPO, 1, "hello")
    assert clock.sleeps == [60.0, 120.0]
    assert [c.status for c in gh.writes()] == [403, 403, 201]
    assert len(gh.comments_on(REPO, 1)) == 1


def test_server_errors_are_retried_with_growing_waits(
    gh: FakeGitHub, client: GitHub, clock: FakeClock
) -> None:
    gh.fail_next("GET", ISSUE, 502, times=2)
    assert client.get_issue(REPO, 1).title == "Crash"
    assert clock.sleeps == [1.0, 2.0]
    assert [c.status for c in gh.calls] == [502, 502, 200]


def test_server_errors_forever_give_up_after_the_bound(gh: FakeGitHub, clock: FakeClock) -> None:
    client = gh.client(max_retry_seconds=300)
    gh.fail_next("GET", ISSUE, 502, times=None)
    with pytest.raises(GitHubError) as caught:
        client.get_issue(REPO, 1)
    err = caught.value
    assert err.status == 502 and err.method == "GET" and err.issue_number == 1
    assert err.retry_after is not None and err.retry_after > 0
    assert sum(clock.sleeps) <= 300 < sum(clock.sleeps) + err.retry_after
    assert clock.sleeps[:7] == [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 60.0]
    assert max(clock.sleeps) == 60.0
    assert "Bad Gateway" in str(err) and "gave up" in str(err)
    assert len(gh.calls) == len(clock.sleeps) + 1


def test_a_wait_beyond_the_budget_gives_up_at_once(
    gh: FakeGitHub, client: GitHub, clock: FakeClock
) -> None:
    gh.fail_next("GET", ISSUE, 429, headers={"retry-after": "3600"})
    with pytest.raises(GitHubError) as caught:
        client.get_issue(REPO, 1)
    assert caught.value.retry_after == 3600.0
    assert caught.value.status == 429
    assert clock.sleeps == []


@pytest.mark.parametrize("status", [400, 401, 403, 404, 409, 410, 422])
def test_other_client_errors_are_never_retried(
    gh: FakeGitHub, client: GitHub, clock: FakeClock, status: int
) -> None:
    gh.fail_next("POST", r".*/comments", status, body={"message": "Nope"})
    with pytest.raises(GitHubError) as caught:
        client.create_comment(REPO, 1, "x")
    assert caught.value.status == status
    assert "Nope" in str(caught.value)
    assert len(gh.calls) == 1 and clock.sleeps == [] and caught.value.retry_after is None


def test_unreachable_github_is_retried_then_reported() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again at the end of the block: nothing listens
    clock = FakeClock()
    client = GitHub(
        auth=TokenAuth("ghs_x"),
        api_url=f"http://127.0.0.1:{port}",
        clock=clock,
        max_retry_seconds=10,
    )
    with pytest.raises(GitHubError) as caught:
        client.create_comment(REPO, 1, "x")  # a connect error is safe to retry even for a POST
    assert clock.sleeps == [1.0, 2.0, 4.0]
    assert caught.value.status is None and caught.value.retry_after == 8.0
    assert "ConnectError" in str(caught.value)
    assert client.calls == 4


@pytest.mark.parametrize(
    ("method", "error", "kind"),
    [
        ("GET", httpx.ReadTimeout("slow"), "network"),
        ("PATCH", httpx.RemoteProtocolError("eof"), "network"),
        ("POST", httpx.ConnectError("refused"), "unreachable"),
        # The POST may have reached GitHub: repeating it could post a second comment.
        ("POST", httpx.ReadTimeout("slow"), "fatal"),
    ],
)
def test_network_errors_are_retried_unless_a_post_may_have_landed(
    method: str, error: httpx.TransportError, kind: str
) -> None:
    assert classify(RequestError(error), method).kind == kind
