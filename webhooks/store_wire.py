"""The frames between the receiver and its store process: batches out, verdicts back.

A frame is a 4-byte little-endian length and that many bytes. A batch is a count, where
the payloads are (`SHARED`: one after another from the start of the shared memory both
processes map; `INLINE`: in the frame, for a batch larger than that memory), then per
delivery whether it was checked already, four lengths (id, event, repo, payload) and the
id, event and repo. Copying a
payload into shared memory costs the receiver's loop well under a microsecond; sending it
through the socket cost it ~15 us per 12 KB delivery. Only one batch is in flight at a
time, so the memory is reused from its start for each. No pickle: the store process
decodes nothing but lengths, bytes and UTF-8. A reply is `OK` and one byte per delivery
(1: new, 0: known, 2 and up: refused, for `payload_check.REASONS[n - 2]`), or `ERROR` and
the message the receiver logs.
"""

from __future__ import annotations

import mmap
import socket
import struct
from collections.abc import Sequence

from bot.queue import Delivery
from bot.queue.records import payload_bytes
from webhooks.payload_check import REASONS, Incoming, Verdict

_LEN = struct.Struct("<I")
_HEAD = struct.Struct("<IB")
_ITEM = struct.Struct("<BIIII")
OK = b"\x00"
ERROR = b"\x01"
INLINE = 0
SHARED = 1


def frame(body: bytes) -> bytes:
    """`body` with its length in front."""
    return _LEN.pack(len(body)) + body


def frame_length(head: bytes) -> int:
    """The length a frame's 4-byte head announces."""
    return int(_LEN.unpack(head)[0])


def read_frame(sock: socket.socket) -> bytes | None:
    """The next frame's body from a blocking socket, or None once the other end closed it."""
    head = _read_exactly(sock, 4)
    if head is None:
        return None
    return _read_exactly(sock, frame_length(head))


def _read_exactly(sock: socket.socket, size: int) -> bytes | None:
    buf = bytearray(size)
    view, got = memoryview(buf), 0
    while got < size:
        n = sock.recv_into(view[got:])
        if n == 0:
            return None
        got += n
    return bytes(buf)


def encode_batch(items: Sequence[Incoming], shared: mmap.mmap | None = None) -> bytes:
    """One frame carrying `items`; their payloads go into `shared` when they fit."""
    payloads = [payload_bytes(item.delivery.payload) for item in items]
    total = sum(map(len, payloads))
    where = SHARED if shared is not None and total <= len(shared) else INLINE
    parts = [_HEAD.pack(len(items), where)]
    at = 0
    for item, payload in zip(items, payloads, strict=True):
        d = item.delivery
        fields = [d.delivery_id.encode(), d.event_name.encode(), d.repo.encode()]
        parts.append(_ITEM.pack(item.checked, *map(len, fields), len(payload)))
        parts.extend(fields)
        if where == INLINE:
            parts.append(payload)
        else:
            assert shared is not None
            shared[at : at + len(payload)] = payload
            at += len(payload)
    return frame(b"".join(parts))


def decode_batch(body: bytes, shared: mmap.mmap | None = None) -> list[Incoming]:
    """The items of a batch frame's body; ValueError if it is not one."""
    try:
        count, where = _HEAD.unpack_from(body, 0)
        at, shared_at, out = _HEAD.size, 0, []
        if where == SHARED and shared is None:
            raise ValueError("a batch in shared memory, and none is mapped")
        for _ in range(count):
            was_checked, *sizes, size = _ITEM.unpack_from(body, at)
            at += _ITEM.size
            fields = []
            for n in sizes:
                fields.append(body[at : at + n])
                at += n
            if where == INLINE:
                payload = body[at : at + size]
                at += size
            else:
                assert shared is not None
                payload = shared[shared_at : shared_at + size]
                shared_at += size
                if shared_at > len(shared):
                    raise ValueError("a payload runs past the end of the shared memory")
            if at > len(body):
                raise ValueError("a delivery runs past the end of the batch")
            did, event, repo = fields
            d = Delivery(did.decode(), event.decode(), payload, repo.decode())
            out.append(Incoming(d, bool(was_checked)))
    except struct.error as exc:
        raise ValueError(f"a truncated batch ({exc})") from None
    if at != len(body):
        raise ValueError(f"{len(body) - at} bytes after the last delivery")
    return out


def encode_verdicts(verdicts: Sequence[Verdict]) -> bytes:
    """The reply to a stored batch."""
    codes = [2 + REASONS.index(v) if isinstance(v, str) else int(v) for v in verdicts]
    return frame(OK + bytes(codes))


def decode_verdicts(codes: bytes) -> list[Verdict]:
    """The verdicts of a reply's codes; ValueError for a code no verdict has."""
    out: list[Verdict] = []
    for code in codes:
        if code >= 2 + len(REASONS):
            raise ValueError(f"no verdict has the code {code}")
        out.append(REASONS[code - 2] if code >= 2 else code == 1)
    return out


def encode_error(message: str) -> bytes:
    """The reply to a batch that could not be stored."""
    return frame(ERROR + message.encode(errors="replace"))
