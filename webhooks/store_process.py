"""The receiver's durable store in a process of its own (what `serve` uses).

Stored from a thread of the receiver's process, a delivery cost the event loop twice its
CPU: SQLite's work and the receiver's took turns on one GIL, so the loop waited while the
store wrote (about half the throughput of a bare endpoint on 2 cores, `bench/webhook_load`).
In a child process the store runs on the other core. The receiver sends a batch over a
socket pair and shared memory (`webhooks.store_wire`); the child checks each body's JSON,
makes the new deliveries durable (on a SQLite queue in its spool, `webhooks.spool`, then
in the queue; on PostgreSQL in the queue) and answers; a 2xx is sent only after that. If
the child dies, the batch in flight fails (503: GitHub can redeliver, and a batch that was
stored is then a duplicate) and the next batch starts a new child.
"""

from __future__ import annotations

import asyncio
import contextlib
import mmap
import os
import socket
import subprocess
import sys
from collections.abc import Callable, Sequence

from bot.errors import QueueError
from webhooks.payload_check import Incoming, Verdict
from webhooks.store_wire import (
    OK,
    decode_verdicts,
    encode_batch,
    frame,
    frame_length,
    read_frame,
)

START_SECONDS = 30.0
"""How long a new store process may take to open the queue."""
STOP_SECONDS = 10.0
"""How long a store process may take to finish its batch once the receiver stops."""
SHARED_BYTES = 32 * 1024 * 1024
"""Memory both processes map for a batch's payloads (pages are committed as first used)."""
KEPT_VARIABLES = ("PATH", "PYTHONPATH", "HOME", "TMPDIR", "LANG", "TZ", "SSL_CERT_FILE")
"""Environment the child keeps (with LC_* and libpq's PG*): none of the App's credentials."""


def child_environment(environ: dict[str, str] | None = None) -> dict[str, str]:
    """What the store process sees of the environment: no key, token or webhook secret."""
    environ = dict(os.environ) if environ is None else environ
    return {k: v for k, v in environ.items() if k in KEPT_VARIABLES or k.startswith(("LC_", "PG"))}


class StoreProcess:
    """Store batches of deliveries through a child process (see the module docstring)."""

    def __init__(self, queue_url: str) -> None:
        self.queue_url = queue_url
        self.proc: subprocess.Popen[bytes] | None = None
        self.sock: socket.socket | None = None
        self.shared: mmap.mmap | None = None
        self.started = 0
        """How many store processes were started (a restart after a crash counts)."""
        self.channel: _Channel | None = None
        """The socket in the loop's hands, once a batch was sent to this child."""
        self._lock = asyncio.Lock()
        self._closing = False
        self._restart: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Start the child and wait until it has opened the queue; QueueError if it cannot."""
        ours, theirs = socket.socketpair()
        memory = os.memfd_create("agentbot-store", os.MFD_CLOEXEC)
        try:
            os.ftruncate(memory, SHARED_BYTES)
            self.shared = mmap.mmap(memory, SHARED_BYTES)
            # -P: a `webhooks` folder in the working directory must not stand in for ours.
            argv = [sys.executable, "-P", "-m", "webhooks.store_child"]
            self.proc = subprocess.Popen(
                [*argv, str(theirs.fileno()), str(memory)],
                pass_fds=(theirs.fileno(), memory),
                stdin=subprocess.DEVNULL,
                env=child_environment(),
            )
        finally:
            theirs.close()
            os.close(memory)
        self.started += 1
        self.sock = ours
        try:
            # The URL goes over the socket, not argv: it may hold a database password.
            ours.settimeout(START_SECONDS)
            ours.sendall(frame(self.queue_url.encode()))
            reply = read_frame(ours)
        except OSError as exc:
            self._discard()
            raise QueueError(f"the store process did not start: {exc}") from None
        if reply != OK:
            self._discard()
            why = reply[1:].decode(errors="replace") if reply is not None else "it exited"
            raise QueueError(f"the store process could not open the queue: {why}")
        ours.settimeout(None)
        ours.setblocking(False)

    async def store_many(self, items: Sequence[Incoming]) -> list[Verdict]:
        """Check and commit the batch in the child (`payload_check.store_checked`)."""
        async with self._lock:
            if self.channel is None:
                if self.sock is None:
                    await asyncio.to_thread(self.start)
                await self._connect()
            channel = self.channel
            assert channel is not None
            try:
                reply = await channel.ask(encode_batch(items, self.shared))
            except (OSError, EOFError):
                code = self._discard()
                raise QueueError(
                    f"the store process ended (exit code {code}) before answering; the"
                    " batch is not acknowledged"
                ) from None
            except BaseException:
                # Cancelled between the batch and its answer: the next answer on this
                # socket would be this batch's, so the child goes (its spool is replayed).
                self._discard()
                raise
        if reply[:1] != OK:
            raise QueueError(f"the store process could not store the batch: {reply[1:].decode()}")
        if len(reply) != len(items) + 1:
            raise QueueError("the store process answered for another number of deliveries")
        try:
            return decode_verdicts(reply[1:])
        except ValueError as exc:
            raise QueueError(f"the store process answered nonsense: {exc}") from None

    async def _connect(self) -> None:
        """Hand the started child's socket to the loop, which reads its answers as they come
        and hears at once when it dies (a new child, which first replays the dead one's
        spool, is then started)."""
        sock = self.sock
        assert sock is not None
        loop = asyncio.get_running_loop()

        def died() -> None:
            if self.channel is channel and not self._closing:
                self._discard()
                self._restart = loop.create_task(self._start_again())

        channel = _Channel(died)
        self.channel = channel
        await loop.create_unix_connection(lambda: channel, sock=sock)

    async def _start_again(self) -> None:
        async with self._lock:
            if self.sock is None and not self._closing:
                # If it fails, the next batch tries again, and its callers get the 503.
                with contextlib.suppress(QueueError):
                    await asyncio.to_thread(self.start)
                    await self._connect()

    async def close(self) -> None:
        """Let the child finish and end (killed after STOP_SECONDS)."""
        self._closing = True
        async with self._lock:
            if self.channel is not None:
                self.channel.close()  # the child's cue to end; the loop closes the socket
                self.channel = None
                self.sock = None
            await asyncio.to_thread(self.stop)

    def stop(self) -> None:
        """Close the socket (the child's cue to end) and reap the child (after `close`, or
        once the loop that held the socket is gone)."""
        if self.sock is not None:
            self.sock.close()
            self.sock = None
        self.shared = None
        if self.proc is not None:
            try:
                self.proc.wait(STOP_SECONDS)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.proc = None

    def _discard(self) -> int | None:
        """Forget a broken child: kill it and return its exit code."""
        proc = self.proc
        if self.channel is not None:
            self.channel.close(abort=True)  # the loop owns the socket now
            self.channel = None
        elif self.sock is not None:
            self.sock.close()
        self.sock = None
        self.shared = None  # the next child gets memory of its own
        self.proc = None
        if proc is None:
            return None
        if proc.poll() is None:
            proc.kill()
        return proc.wait()


class _Channel(asyncio.Protocol):
    """The receiver's end of the socket: one answer awaited at a time. The child closing
    it, or saying anything unasked, means it is gone."""

    def __init__(self, died: Callable[[], None]) -> None:
        self.died = died
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        self.waiter: asyncio.Future[bytes] | None = None
        self.gone = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        """Keep the transport to write batches to."""
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    async def ask(self, batch: bytes) -> bytes:
        """Send a batch and wait for its answer; EOFError if the child is gone."""
        if self.gone or self.transport is None:
            raise EOFError
        self.waiter = asyncio.get_running_loop().create_future()
        self.buffer.clear()
        self.transport.write(batch)
        return await self.waiter

    def data_received(self, data: bytes) -> None:
        """Collect the answer; hand it over once whole."""
        self.buffer += data
        if self.waiter is None:
            self._lost()
            return
        if len(self.buffer) >= 4:
            end = 4 + frame_length(bytes(self.buffer[:4]))
            if len(self.buffer) >= end:
                reply = bytes(self.buffer[4:end])
                del self.buffer[:end]
                waiter, self.waiter = self.waiter, None
                if not waiter.done():
                    waiter.set_result(reply)

    def eof_received(self) -> bool:
        """The child closed its end: it is gone."""
        self._lost()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        """The socket is closed."""
        self._lost()

    def close(self, abort: bool = False) -> None:
        """Close the socket (at once, with anything unsent dropped, if `abort`)."""
        self.gone = True
        if self.transport is not None:
            if abort:
                self.transport.abort()
            else:
                self.transport.close()

    def _lost(self) -> None:
        if self.gone:
            return
        self.gone = True
        waiter, self.waiter = self.waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_exception(EOFError())
        else:
            self.died()
