"""Write pacing: writes per installation serialized, >= 1 s apart, <= 80 per rolling minute."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterator

import pytest

from bot.clock import FakeClock
from bot.github import WritePacer
from tests.fakes.github import FakeGitHub, fake_github

REPO = "octo/app"


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


def test_two_writes_back_to_back_are_a_second_apart(gh: FakeGitHub, clock: FakeClock) -> None:
    client = gh.client()
    client.create_comment(REPO, 1, "one")
    client.add_labels(REPO, 1, ["agent-fix"])
    first, second = gh.writes()
    assert second.at - first.at >= 1.0
    assert clock.sleeps == [1.0]


def test_reads_are_not_paced(gh: FakeGitHub, clock: FakeClock) -> None:
    client = gh.client()
    client.create_comment(REPO, 1, "one")
    for _ in range(5):
        client.get_issue(REPO, 1)
    assert clock.sleeps == []


def test_81_writes_keep_both_limits(gh: FakeGitHub, clock: FakeClock) -> None:
    client = gh.client()
    for i in range(81):
        client.create_comment(REPO, 1, f"comment {i}")
    times = [c.at for c in gh.writes()]
    assert len(times) == 81
    assert all(b - a >= 1.0 for a, b in itertools.pairwise(times))
    assert all(times[i + 80] - times[i] >= 60.0 for i in range(len(times) - 80))
    assert client.pacer.waited == pytest.approx(80.0)


def test_the_per_minute_cap_holds_back_the_81st_write() -> None:
    clock = FakeClock()
    pacer = WritePacer(clock, min_interval=0.0)
    for _ in range(80):
        with pacer.slot():
            clock.advance(0.25)  # each write takes a quarter second
    assert clock.sleeps == []
    with pacer.slot():
        pass
    assert clock.sleeps == [pytest.approx(40.0)]  # 60 s after the first write, at t=0
    assert clock.monotonic() == pytest.approx(60.0)


def test_installations_are_paced_separately_and_their_clients_share_a_pacer(
    gh: FakeGitHub,
) -> None:
    key = gh.install_app("octo", app_id=5, installation_id=50)
    gh.add_installation(51, app_id=5, account="octo")
    root = gh.app_client(5, key)
    a1, a2, b = root.for_installation(50), root.for_installation(50), root.for_installation(51)
    assert a1.pacer is a2.pacer
    assert a1.pacer is not b.pacer


def test_concurrent_writes_of_one_installation_are_serialized(gh: FakeGitHub) -> None:
    client = gh.client()
    threads = [
        threading.Thread(target=client.create_comment, args=(REPO, 1, f"t{i}")) for i in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    times = sorted(c.at for c in gh.writes())
    assert len(times) == 4
    assert all(b - a >= 1.0 for a, b in itertools.pairwise(times))
