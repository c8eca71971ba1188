"""One send per answer: the receiver's transport joins what one loop turn writes."""

from __future__ import annotations

import asyncio
import socket
import uuid
from pathlib import Path
from typing import Any

from tests.test_receiver_abuse import BODY, serve
from tests.test_serve import SECRET
from webhooks.app import signature
from webhooks.coalesced import CoalescedTransport


class Recorder(asyncio.Transport):
    """A transport that records each write and whether it was closed or aborted."""

    def __init__(self) -> None:
        super().__init__()
        self.sent: list[bytes] = []
        self.closed = self.aborted = False

    def write(self, data: Any) -> None:
        self.sent.append(bytes(data))

    def close(self) -> None:
        self.closed = True

    def abort(self) -> None:
        self.aborted = True

    def is_closing(self) -> bool:
        return self.closed or self.aborted

    def get_write_buffer_size(self) -> int:
        return 0


async def _turn() -> None:
    await asyncio.sleep(0)
    await asyncio.sleep(0)


def test_writes_of_one_turn_go_out_in_one_send() -> None:
    async def main() -> list[bytes]:
        inner = Recorder()
        t = CoalescedTransport(inner, asyncio.get_running_loop())
        t.write(b"HTTP/1.1 202 Accepted\r\n\r\n")
        t.write(b"")
        t.writelines([b"{", b"}"])
        assert inner.sent == []  # nothing before the turn ends
        assert t.get_write_buffer_size() == len(b"HTTP/1.1 202 Accepted\r\n\r\n{}")
        await _turn()
        t.write(b"next")
        await _turn()
        return inner.sent

    assert asyncio.run(main()) == [b"HTTP/1.1 202 Accepted\r\n\r\n{}", b"next"]


def test_close_sends_what_is_kept_and_abort_drops_it() -> None:
    async def main() -> tuple[Recorder, Recorder]:
        loop = asyncio.get_running_loop()
        closed, aborted = Recorder(), Recorder()
        a, b = CoalescedTransport(closed, loop), CoalescedTransport(aborted, loop)
        a.write(b"HTTP/1.1 400 Bad Request\r\n\r\n")
        a.close()
        a.write(b"after close")  # dropped, as asyncio drops writes after close
        b.write(b"kept")
        b.abort()
        await _turn()
        return closed, aborted

    closed, aborted = asyncio.run(main())
    assert closed.sent == [b"HTTP/1.1 400 Bad Request\r\n\r\n"] and closed.closed
    assert aborted.sent == [] and aborted.aborted


def _request(delivery: str, expect: bool = False) -> tuple[bytes, bytes]:
    head = (
        "POST /webhook HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(BODY)}\r\nX-GitHub-Event: issues\r\n"
        f"X-GitHub-Delivery: {delivery}\r\n"
        f"X-Hub-Signature-256: {signature(SECRET, BODY)}\r\n"
        + ("Expect: 100-continue\r\n" if expect else "")
        + "\r\n"
    )
    return head.encode(), BODY


def _whole(data: bytes) -> bool:
    head, _, body = data.partition(b"\r\n\r\n")
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            return len(body) == int(line.split(b":", 1)[1])
    return False


def test_each_answer_arrives_whole_in_one_read(tmp_path: Path) -> None:
    """The client is waiting in recv when the answer goes out: two sends (head, then body)
    would wake it with the head alone."""
    with serve(tmp_path) as (port, _, _), socket.create_connection(("127.0.0.1", port), 10) as s:
        reads = []
        for _ in range(20):
            head, body = _request(str(uuid.uuid4()))
            s.sendall(head + body)
            reads.append(s.recv(65536))
    assert all(r.startswith(b"HTTP/1.1 202") for r in reads), reads[0]
    assert all(_whole(r) for r in reads), [r for r in reads if not _whole(r)][:1]


def test_a_100_continue_is_not_held_back(tmp_path: Path) -> None:
    """A client that waits for `100 Continue` before its body gets it, then its answer."""
    with serve(tmp_path) as (port, _, _), socket.create_connection(("127.0.0.1", port), 10) as s:
        head, body = _request(str(uuid.uuid4()), expect=True)
        s.sendall(head)
        interim = s.recv(65536)
        s.sendall(body)
        answer = b""
        while not _whole(answer):
            chunk = s.recv(65536)
            assert chunk, answer
            answer += chunk
    assert interim.startswith(b"HTTP/1.1 100"), interim
    assert answer.startswith(b"HTTP/1.1 202"), answer
