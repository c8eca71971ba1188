"""A transport that sends what one turn of the event loop writes in one system call.

uvicorn writes a response's head and its body separately, so every answer cost two
`send`s and woke the client twice (a sixth of the receiver loop's time went to `send`,
`bench/webhook_load`). Writes made in the same turn of the loop are joined and sent at its
end (`call_soon`), before the loop waits again: a 100-continue or an error answer goes out
as promptly as before, and nothing is held across a wait.
"""

from __future__ import annotations

import asyncio
from typing import Any


class CoalescedTransport(asyncio.Transport):
    """`transport`, with the writes of one loop turn joined into one (module docstring)."""

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__()
        self._transport = transport
        self._loop = loop
        self._parts: list[bytes] = []

    def write(self, data: bytes | bytearray | memoryview) -> None:
        """Keep `data` for the send at the end of this turn."""
        if not data:
            return
        if not self._parts:
            self._loop.call_soon(self.flush)
        self._parts.append(bytes(data))

    def writelines(self, list_of_data: Any) -> None:
        """Keep each for the send at the end of this turn."""
        for data in list_of_data:
            self.write(data)

    def flush(self) -> None:
        """Send what was written since the last send (dropped once the transport closes,
        as the transport itself drops writes after `close`)."""
        if not self._parts:
            return
        data = self._parts[0] if len(self._parts) == 1 else b"".join(self._parts)
        self._parts = []
        if not self._transport.is_closing():
            self._transport.write(data)

    def close(self) -> None:
        """Send what is kept, then close (the transport sends its buffer before closing)."""
        self.flush()
        self._transport.close()

    def abort(self) -> None:
        """Close at once, dropping what is kept."""
        self._parts = []
        self._transport.abort()

    def write_eof(self) -> None:
        """Send what is kept, then half-close."""
        self.flush()
        self._transport.write_eof()

    def can_write_eof(self) -> bool:
        """As the transport."""
        return self._transport.can_write_eof()

    def is_closing(self) -> bool:
        """As the transport."""
        return self._transport.is_closing()

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        """As the transport."""
        return self._transport.get_extra_info(name, default)

    def set_protocol(self, protocol: asyncio.BaseProtocol) -> None:
        """As the transport."""
        self._transport.set_protocol(protocol)

    def get_protocol(self) -> asyncio.BaseProtocol:
        """As the transport."""
        return self._transport.get_protocol()

    def is_reading(self) -> bool:
        """As the transport."""
        return self._transport.is_reading()

    def pause_reading(self) -> None:
        """As the transport."""
        self._transport.pause_reading()

    def resume_reading(self) -> None:
        """As the transport."""
        self._transport.resume_reading()

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        """As the transport."""
        self._transport.set_write_buffer_limits(high, low)

    def get_write_buffer_size(self) -> int:
        """What the transport holds and what waits for this turn's send."""
        return self._transport.get_write_buffer_size() + sum(map(len, self._parts))

    def get_write_buffer_limits(self) -> tuple[int, int]:
        """As the transport."""
        return self._transport.get_write_buffer_limits()
