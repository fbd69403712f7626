"""uvicorn's HTTP/1.1 protocol with Nagle's algorithm off on every connection.

With several workers uvicorn binds the listening socket itself, without naming TCP, so
asyncio does not set TCP_NODELAY on the connections it accepts: each answer's first small
write then waits for the client's delayed ACK (about 40 ms added to the first byte,
bench/gateway.md). One worker does not need it (asyncio makes that socket), but it costs
nothing there."""

from __future__ import annotations

import asyncio
import socket

from uvicorn.protocols.http.h11_impl import H11Protocol


class NoDelayH11Protocol(H11Protocol):
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        sock = transport.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        super().connection_made(transport)  # type: ignore[arg-type]
