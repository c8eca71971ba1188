"""The receiver: signatures, size cap, bad input, dedupe, durability before 202, endpoints."""

from __future__ import annotations

import json
import socket
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.errors import QueueError
from bot.models import Job, JobKind, JobResult, JobStatus
from bot.queue import Delivery, JobState
from bot.queue.sqlite import SqliteQueue
from webhooks.app import MAX_BODY, create_app, signature, verify_signature

SECRET = "s3cret-for-tests"
DATA = Path(__file__).parent / "data" / "webhooks"


def example(event: str, action: str | None = None) -> dict[str, Any]:
    """A vendored @octokit/webhooks-examples payload."""
    for item in json.loads((DATA / f"{event}.json").read_text()):
        if action is None or item.get("action") == action:
            return dict(item["payload"])
    raise LookupError(f"{event}.{action}")


def headers(
    body: bytes, *, event: str = "issues", delivery: str | None = None, secret: str = SECRET
) -> dict[str, str]:
    return {
        "X-GitHub-Event": event,
        "X-GitHub-Delivery": delivery or str(uuid.uuid4()),
        "X-Hub-Signature-256": signature(secret, body),
        "Content-Type": "application/json",
    }


@pytest.fixture
def queue(tmp_path: Path) -> Iterator[SqliteQueue]:
    q = SqliteQueue(tmp_path / "q.db")
    yield q
    q.close()


@pytest.fixture
def client(queue: SqliteQueue) -> TestClient:
    return TestClient(create_app(queue=queue, secret=SECRET), raise_server_exceptions=False)


def test_github_documented_hmac_test_vector_verifies() -> None:
    # https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries#testing-the-webhook-payload-validation
    secret, body = "It's a Secret to Everybody", b"Hello, World!"
    expected = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
    assert signature(secret, body) == expected
    assert verify_signature(secret, body, expected)
    assert not verify_signature(secret, body + b" ", expected)
    assert not verify_signature(secret, body, expected.replace("sha256=", "sha1="))
    assert not verify_signature(secret, body, "sha256=é" + expected[8:])
    assert not verify_signature(secret, body, None)


def test_signed_delivery_is_stored_before_202(client: TestClient, queue: SqliteQueue) -> None:
    body = json.dumps(example("issues", "labeled")).encode()
    h = headers(body, delivery="d-1")
    r = client.post("/webhook", content=body, headers=h)
    assert r.status_code == 202
    assert r.json() == {"job_id": "d-1", "duplicate": False}
    # committed: a second connection (another process would do the same) sees it
    other = SqliteQueue(queue.path)
    try:
        rec = other.get("d-1")
        assert rec is not None and rec.state is JobState.QUEUED and rec.event_name == "issues"
        assert rec.repo == "Codertocat/Hello-World"
        claimed = other.claim("w", 30)
        assert claimed is not None and claimed.payload == body
    finally:
        other.close()


def test_repeated_delivery_is_not_queued_twice(client: TestClient, queue: SqliteQueue) -> None:
    body = b'{"zen": "x"}'
    first = client.post("/webhook", content=body, headers=headers(body, delivery="d-1"))
    again = client.post("/webhook", content=body, headers=headers(body, delivery="d-1"))
    assert first.status_code == again.status_code == 202
    assert again.json() == {"job_id": "d-1", "duplicate": True}
    assert [j.id for j in queue.list()] == ["d-1"]


@pytest.mark.parametrize("bad", ["missing", "wrong secret", "tampered", "garbage"])
def test_bad_or_missing_signature_is_401_and_stores_nothing(
    client: TestClient, queue: SqliteQueue, bad: str
) -> None:
    body = b'{"zen": "x"}'
    h = headers(body)
    if bad == "missing":
        del h["X-Hub-Signature-256"]
    elif bad == "wrong secret":
        h = headers(body, secret="other")
    elif bad == "tampered":
        body = b'{"zen": "y"}'
    else:
        h["X-Hub-Signature-256"] = "sha256=zz"
    r = client.post("/webhook", content=body, headers=h)
    assert r.status_code == 401
    assert queue.list() == []


@pytest.mark.parametrize(
    "body",
    [
        b"{not json",
        b"",
        b"\xff\xfe",
        b"[1, 2]",
        b'"text"',
        b"1e999x",
        # broken deep inside values the receiver does not read: still refused
        b'{"repository": {"full_name": "o/r"}, "issue": {"labels": [1, 2,]}}',
        b'{"issue": {"body": "bad \\x escape"}}',
        b'{"issue": {"body": "\xff"}}',
        b'{"issue": {"n": 01}}',
        b'{"zen": "ok"} trailing',
    ],
)
def test_invalid_json_with_valid_signature_is_400_and_stores_nothing(
    client: TestClient, queue: SqliteQueue, body: bytes
) -> None:
    r = client.post("/webhook", content=body, headers=headers(body))
    assert r.status_code == 400
    assert r.json()["error"] in ("the body is not valid JSON", "the payload must be a JSON object")
    assert queue.list() == []


def test_repo_is_read_from_the_payload(client: TestClient, queue: SqliteQueue) -> None:
    for i, repository in enumerate([{"full_name": "octo/app"}, {"full_name": 5}, "x", None]):
        body = json.dumps({"repository": repository, "zen": "z"}).encode()
        assert client.post("/webhook", content=body, headers=headers(body, delivery=f"r-{i}"))
    assert [queue.get(f"r-{i}").repo for i in range(4)] == ["octo/app", "", "", ""]  # type: ignore[union-attr]


@pytest.mark.parametrize("drop", ["X-GitHub-Event", "X-GitHub-Delivery"])
def test_missing_event_or_delivery_header_is_400(
    client: TestClient, queue: SqliteQueue, drop: str
) -> None:
    body = b"{}"
    h = headers(body)
    del h[drop]
    r = client.post("/webhook", content=body, headers=h)
    assert r.status_code == 400
    assert drop in r.json()["error"]
    assert queue.list() == []


def test_bad_header_values_are_400(client: TestClient, queue: SqliteQueue) -> None:
    body = b"{}"
    for key, value in (("X-GitHub-Delivery", "x" * 300), ("X-GitHub-Event", "Issues; DROP")):
        h = headers(body)
        h[key] = value
        assert client.post("/webhook", content=body, headers=h).status_code == 400
    assert queue.list() == []


def test_over_25_mb_is_413(client: TestClient, queue: SqliteQueue) -> None:
    assert MAX_BODY == 25 * 1024 * 1024
    body = b'{"a": "' + b"x" * MAX_BODY + b'"}'
    r = client.post("/webhook", content=body, headers=headers(body))
    assert r.status_code == 413
    assert queue.list() == []


def test_body_exactly_at_the_cap_is_accepted(queue: SqliteQueue) -> None:
    client = TestClient(create_app(queue=queue, secret=SECRET, max_body=1000))
    body = b'{"a": "' + b"x" * (1000 - 9) + b'"}'
    assert len(body) == 1000
    assert client.post("/webhook", content=body, headers=headers(body)).status_code == 202
    over = body[:-2] + b'x"}'
    assert client.post("/webhook", content=over, headers=headers(over)).status_code == 413


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def live(queue: SqliteQueue) -> Iterator[int]:
    """The app on a real uvicorn server in a thread; yields its port."""
    port = _free_port()
    config = uvicorn.Config(
        create_app(queue=queue, secret=SECRET), host="127.0.0.1", port=port, log_level="warning"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    yield port
    server.should_exit = True
    thread.join(10)


def test_chunked_upload_past_the_cap_is_cut_off_early(live: int, queue: SqliteQueue) -> None:
    """No Content-Length: the server stops reading once past 25 MB and answers 413."""
    total_mb = 80
    chunk = b"x" * (1024 * 1024)
    sent = 0
    answer = b""
    with socket.create_connection(("127.0.0.1", live), timeout=10) as sock:
        sock.sendall(
            b"POST /webhook HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
            b"X-GitHub-Event: issues\r\nX-GitHub-Delivery: big\r\n"
            b"X-Hub-Signature-256: sha256=" + b"0" * 64 + b"\r\n\r\n"
        )
        try:
            for _ in range(total_mb):
                sock.sendall(b"%x\r\n" % len(chunk) + chunk + b"\r\n")
                sent += 1
        except OSError:
            pass  # the server closed the connection after answering
        sock.settimeout(10)
        try:
            while b"\r\n\r\n" not in answer:
                part = sock.recv(65536)
                if not part:
                    break
                answer += part
        except OSError:
            pass
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert sent < total_mb  # cut off, not read to the end
    assert queue.list() == []


class BrokenQueue(SqliteQueue):
    """A queue whose store fails, as a full disk or a dropped database would."""

    def enqueue_many(self, deliveries: Sequence[Delivery], *, sync: bool = True) -> list[bool]:
        raise QueueError("disk full")

    def ping(self) -> None:
        raise QueueError("disk full")


def test_store_failure_is_503_not_500(tmp_path: Path) -> None:
    q = BrokenQueue(tmp_path / "q.db")
    client = TestClient(create_app(queue=q, secret=SECRET), raise_server_exceptions=False)
    body = b"{}"
    r = client.post("/webhook", content=body, headers=headers(body))
    assert r.status_code == 503 and r.headers["retry-after"] == "30"
    assert client.get("/healthz").status_code == 503
    q.close()


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    body=st.one_of(
        st.binary(max_size=300),
        st.recursive(
            st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
            lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=8), kids),
            max_leaves=20,
        ).map(lambda v: json.dumps(v).encode()),
    ),
    event=st.text(max_size=20),
    delivery=st.text(max_size=40),
    sign=st.booleans(),
)
def test_no_payload_or_header_ever_gets_a_500(
    client: TestClient, body: bytes, event: str, delivery: str, sign: bool
) -> None:
    raw = {
        "X-GitHub-Event": event.encode("latin-1", "ignore").strip(),
        "X-GitHub-Delivery": delivery.encode("latin-1", "ignore").strip(),
        "X-Hub-Signature-256": (signature(SECRET, body) if sign else "sha256=00").encode(),
    }
    h = {k.encode(): v for k, v in raw.items() if v and not set(v) & set(b"\r\n\x00")}
    r = client.post("/webhook", content=body, headers=h)
    assert r.status_code in (202, 400, 401), (r.status_code, r.text)


def test_deep_nesting_is_400_not_500(client: TestClient) -> None:
    body = b"[" * 100_000 + b"]" * 100_000
    r = client.post("/webhook", content=body, headers=headers(body))
    assert r.status_code == 400


def test_form_encoded_delivery_stores_the_json(client: TestClient, queue: SqliteQueue) -> None:
    from urllib.parse import urlencode

    body = urlencode({"payload": '{"zen": "form"}'}).encode()
    h = headers(body, delivery="f-1")
    h["Content-Type"] = "application/x-www-form-urlencoded"
    assert client.post("/webhook", content=body, headers=h).status_code == 202
    job = queue.claim("w", 30)
    assert job is not None and job.payload == b'{"zen": "form"}'


def test_healthz_metrics_and_job_json(client: TestClient, queue: SqliteQueue) -> None:
    assert client.get("/healthz").json() == {"status": "ok"}
    body = b'{"zen": "x"}'
    client.post("/webhook", content=body, headers=headers(body, event="ping", delivery="p-1"))
    client.post("/webhook", content=body, headers=headers(body, event="ping", delivery="p-1"))
    client.post("/webhook", content=body, headers={"X-Hub-Signature-256": "sha256=00"})
    queue.claim("w", 30)
    queue.append_log("p-1", "a log line")
    text = client.get("/metrics").text
    assert 'agentbot_webhook_deliveries_total{event="ping",outcome="queued"} 1.0' in text
    assert 'agentbot_webhook_deliveries_total{event="ping",outcome="duplicate"} 1.0' in text
    assert 'agentbot_webhook_deliveries_total{event="unknown",outcome="bad_signature"} 1.0' in text
    assert 'agentbot_jobs{state="running"} 1.0' in text
    assert "agentbot_job_duration_seconds" in text and "agentbot_llm_cost_usd_total" in text
    got = client.get("/jobs/p-1").json()
    assert got["id"] == "p-1" and got["state"] == "running" and got["log"] == ["a log line"]
    assert client.get("/jobs/nope").status_code == 404
    queue.payloads.path.unlink()  # the payload file lost: not healthy, and it says which
    health = client.get("/healthz")
    assert health.status_code == 503 and "q.db.payloads is missing" in health.json()["error"]


def test_each_app_has_its_own_registry(queue: SqliteQueue) -> None:
    a = TestClient(create_app(queue=queue, secret=SECRET))
    b = TestClient(create_app(queue=queue, secret=SECRET))
    body = b"{}"
    a.post("/webhook", content=body, headers=headers(body, event="ping"))
    assert 'event="ping",outcome="queued"} 1.0' in a.get("/metrics").text
    assert 'event="ping",outcome="queued"' not in b.get("/metrics").text


def test_empty_secret_is_refused(queue: SqliteQueue) -> None:
    with pytest.raises(ValueError, match="secret"):
        create_app(queue=queue, secret="")


def test_jobs_page_escapes_and_links(client: TestClient, queue: SqliteQueue) -> None:
    queue.enqueue("d-<1>", "issues", b"{}", repo="o/r")
    queue.claim("w", 30)
    queue.annotate("d-<1>", number=42, kind="fix_issue")
    queue.complete("d-<1>", None, "ignored: label '<script>alert(1)</script>' is not ours")
    queue.enqueue("d-2", "issues", b"{}", repo="o/r")
    queue.claim("w", 30)
    job = Job(kind=JobKind.FIX_ISSUE, repo="o/r", number=7)
    queue.complete("d-2", JobResult(job=job, status=JobStatus.SUCCESS, cost_usd=1.5), "ran")
    page = client.get("/").text
    assert "<script>alert" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert 'href="/jobs/d-%3C1%3E"' in page
    assert 'href="https://github.com/o/r/issues/42"' in page
    assert "$1.50" in page and "fix_issue" in page
    only = client.get("/?state=ignored").text
    assert "d-2" not in only and "d-&lt;1&gt;" in only
    assert client.get("/?state=bogus").status_code == 400


def test_concurrent_deliveries_share_commits(queue: SqliteQueue) -> None:
    """Deliveries arriving together are committed together, each still stored once."""
    import asyncio

    import httpx

    app = create_app(queue=queue, secret=SECRET)

    async def burst() -> list[httpx.Response]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://x") as client:
            body = b'{"zen": "x"}'
            posts = [
                client.post("/webhook", content=body, headers=headers(body, delivery=f"d-{i % 40}"))
                for i in range(60)
            ]
            return await asyncio.gather(*posts)

    answers = asyncio.run(burst())
    assert all(r.status_code == 202 for r in answers)
    assert sum(not r.json()["duplicate"] for r in answers) == 40
    assert len(queue.list(limit=100)) == 40
    assert app.state.commits.batches < 60


ODD_IDS = ["a/b", "/lead", "trail/", "a//b", "a/../b", "q?x=1", "frag#1", "100%", "%2F", "sp ace"]


def test_every_delivery_id_the_receiver_takes_has_its_job_page(
    live: int, queue: SqliteQueue
) -> None:
    """The page's link to each job answers with that job, over a real server."""
    import html
    import re

    import httpx

    base = f"http://127.0.0.1:{live}"
    body = b'{"zen": "x"}'
    for job_id in ODD_IDS:
        h = headers(body, event="ping", delivery=job_id)
        assert httpx.post(f"{base}/webhook", content=body, headers=h).status_code == 202, job_id
    page = httpx.get(f"{base}/").text
    links = dict(
        (html.unescape(i), html.unescape(link))
        for i, link in re.findall(r'data-job-id="([^"]*)"><td><a href="([^"]*)"', page)
    )
    assert set(links) == set(ODD_IDS)
    for job_id, link in links.items():
        got = httpx.get(base + link)
        assert got.status_code == 200 and got.json()["id"] == job_id, (job_id, link, got.text)


@pytest.mark.parametrize("job_id", [".", ".."])
def test_a_delivery_id_no_url_can_reach_is_refused(client: TestClient, job_id: str) -> None:
    """Clients and proxies drop `.` and `..` path segments (`%2E` too): no link finds them."""
    body = b'{"zen": "x"}'
    got = client.post("/webhook", content=body, headers=headers(body, delivery=job_id))
    assert got.status_code == 400 and "X-GitHub-Delivery" in got.json()["error"]


def test_a_delivery_id_that_is_not_ascii_is_refused_not_stored_garbled(
    client: TestClient, queue: SqliteQueue
) -> None:
    """HTTP header bytes have no encoding: UTF-8 read as Latin-1 would be another id."""
    body = b'{"zen": "x"}'
    h = {k.encode(): v.encode() for k, v in headers(body).items()}
    h[b"X-GitHub-Delivery"] = "caf\u00e9-1".encode()
    got = client.post("/webhook", content=body, headers=h)
    assert got.status_code == 400 and "ASCII" in got.json()["error"]
    assert queue.list() == []


def test_a_request_with_two_lengths_is_refused_and_its_connection_closed(
    live: int, queue: SqliteQueue
) -> None:
    """Content-Length and Transfer-Encoding together (RFC 9112 6.1): a proxy in front may
    read the length the other way, so what follows must not be read as a second request."""
    inner = b'{"zen": "smuggled"}'
    smuggled = (
        b"POST /webhook HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        + b"Content-Length: %d\r\n" % len(inner)
        + b"".join(b"%s: %s\r\n" % (k.encode(), v.encode()) for k, v in headers(inner).items())
        + b"\r\n"
        + inner
    )
    outer = b'{"zen": "outer"}'
    chunked = b"%x\r\n%s\r\n0\r\n\r\n" % (len(outer), outer)
    head = b"".join(b"%s: %s\r\n" % (k.encode(), v.encode()) for k, v in headers(outer).items())
    request = (
        b"POST /webhook HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
        + b"Content-Length: %d\r\n" % len(chunked)
        + head
        + b"\r\n"
        + chunked
        + smuggled
    )
    answer = b""
    with socket.create_connection(("127.0.0.1", live), timeout=10) as sock:
        sock.sendall(request)
        while chunk := sock.recv(65536):
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 400"), answer[:200]
    assert answer.count(b"HTTP/1.1") == 1, answer  # closed: nothing after it was read
    assert queue.list() == []


def test_a_page_request_with_two_lengths_is_refused_and_its_connection_closed(live: int) -> None:
    request = (
        b"POST /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
        b"Content-Length: 5\r\n\r\n0\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
    )
    answer = b""
    with socket.create_connection(("127.0.0.1", live), timeout=10) as sock:
        sock.sendall(request)
        while chunk := sock.recv(65536):
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 400") and answer.count(b"HTTP/1.1") == 1, answer


def test_the_pages_are_never_framed_sniffed_or_made_to_run_anything(client: TestClient) -> None:
    for path in ("/", "/healthz", "/jobs/none"):
        got = client.get(path)
        assert got.headers["x-frame-options"] == "DENY", path
        assert got.headers["x-content-type-options"] == "nosniff", path
        csp = got.headers["content-security-policy"]
        assert "default-src 'none'" in csp and "frame-ancestors 'none'" in csp, path
        assert "script-src" not in csp, path  # no script is allowed at all
    body = b'{"zen": "x"}'
    answer = client.post("/webhook", content=body, headers=headers(body))
    assert answer.status_code == 202 and "content-security-policy" not in answer.headers
