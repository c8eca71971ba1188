"""The receiver's store process: `python -m webhooks.store_child SOCKET MEMORY` (serve's).

It reads the queue URL, then batches, from the socket (their payloads from the shared
memory, `webhooks.store_wire`); checks and stores each batch durably (on SQLite in its
spool, `webhooks.spooled_store`; on PostgreSQL in one transaction) and answers with a
verdict each. It ends when the receiver closes the socket (or dies); Ctrl-C and SIGTERM
are the receiver's to handle, so a stopping `serve` can still store what is in flight.
Its log lines go to serve's stderr as serve's do (JSON), a repeat at most once a second
with its traceback only the first time (`bot.logs.OncePerSecond`).
"""

from __future__ import annotations

import contextlib
import logging
import mmap
import os
import signal
import socket
import sys
from collections.abc import Sequence

from bot.errors import AgentbotError
from bot.logs import OncePerSecond, setup_logging
from bot.queue import JobQueue, open_queue
from bot.queue.sqlite import SqliteQueue
from webhooks.payload_check import Incoming, Verdict, store_checked
from webhooks.spool import Spool, recover, spool_path
from webhooks.spooled_store import SpooledStore
from webhooks.store_wire import OK, decode_batch, encode_error, encode_verdicts, frame, read_frame


class DirectStore:
    """Check and commit each batch before answering (a PostgreSQL queue)."""

    def __init__(self, queue: JobQueue) -> None:
        self.queue = queue

    def store(self, items: Sequence[Incoming]) -> list[Verdict]:
        """The batch's verdicts, once committed."""
        return store_checked(self.queue, items)

    def close(self) -> None:
        """Close the queue."""
        self.queue.close()


def opened_store(queue: JobQueue) -> SpooledStore | DirectStore:
    """A SQLite queue gets a spool (after replaying any a dead process left), others not."""
    if not isinstance(queue, SqliteQueue):
        return DirectStore(queue)
    queue.check_payloads()  # a missing or foreign payload file stops serve at its start
    recover(queue, queue.path)
    return SpooledStore(queue, Spool(spool_path(queue.path)))


def serve_batches(
    sock: socket.socket, store: SpooledStore | DirectStore, shared: mmap.mmap | None
) -> None:
    """Store each batch read from `sock` and answer it, until the socket closes."""
    while (body := read_frame(sock)) is not None:
        try:
            reply = encode_verdicts(store.store(decode_batch(body, shared)))
        except Exception as exc:
            # Whatever failed (disk full, a locked or broken file): the receiver answers 503
            # for this batch only (GitHub can redeliver) and logs why; the next batch is tried.
            reply = encode_error(f"{type(exc).__name__}: {exc}")
        sock.sendall(reply)


def main(argv: list[str]) -> int:
    """Open the queue the receiver names, say so, then store batches until closed."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    # A failing disk or queue has the mover retry each second: one line each, not a page.
    setup_logging(json_lines=True)
    logging.getLogger("agentbot.webhooks").addFilter(OncePerSecond())
    sock = socket.socket(fileno=int(argv[0]))
    memory = int(argv[1])
    shared = mmap.mmap(memory, os.fstat(memory).st_size)
    os.close(memory)
    url = read_frame(sock)
    if url is None:
        return 0
    try:
        store = opened_store(open_queue(url.decode()))
    except (AgentbotError, OSError) as exc:
        with contextlib.suppress(OSError):  # the receiver may be gone already
            sock.sendall(encode_error(str(exc)))
        return 1
    try:
        sock.sendall(frame(OK))
        serve_batches(sock, store, shared)
    except (ConnectionError, OSError):
        pass  # the receiver is gone: nothing is waiting for an answer
    finally:
        store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
