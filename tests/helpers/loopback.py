"""A real HTTP server on 127.0.0.1 for tests, benchmarks and examples: uvicorn serving any
ASGI app in a background thread, and a Starlette app that plays given bytes back as a
`text/event-stream`, with the faults a network adds (gzip, pauses, a dropped connection, a
stall) and a record of how each response ended.

    app = stream_app({"plain": StreamSpec([b"data: {...}\\n\\n", b"data: [DONE]\\n\\n"])})
    with serve(app) as base_url:
        httpx.get(f"{base_url}/streams/plain")          # or POST, or any path below it:
        openai.OpenAI(base_url=f"{base_url}/streams/plain/v1", api_key="x", ...)
        app.wait_delivery("plain").outcome               # "complete", "closed", "dropped"
"""

from __future__ import annotations

import asyncio
import logging
import socket
import threading
import time
import zlib
from collections.abc import AsyncGenerator, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Literal

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

HOST = "127.0.0.1"  # never anything else: the server is for this machine only


@contextmanager
def serve(
    app: ASGIApp, *, start_timeout: float = 10.0, stop_timeout: float = 10.0
) -> Iterator[str]:
    """Serve `app` over HTTP/1.1 on a free port of 127.0.0.1 in a background thread; yields
    the base URL (`http://127.0.0.1:PORT`) once the server accepts connections, and stops
    the server (and joins its thread) on exit."""
    # IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on sockets that say so, and
    # without it each small write after the headers waits ~40 ms for a delayed ACK.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind((HOST, 0))  # port 0: the OS picks a free one, known before the server starts
    port: int = sock.getsockname()[1]
    config = uvicorn.Config(
        app,
        host=HOST,
        port=port,
        log_level="warning",
        log_config=None,  # leave the process's logging alone (pytest captures it)
        access_log=False,
        lifespan="off",
        loop="asyncio",
        http="h11",
        # A response still streaming (a stall) is cancelled this long after stop.
        timeout_graceful_shutdown=1,
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": [sock]}, name=f"loopback:{port}", daemon=True
    )
    thread.start()
    try:
        _wait_started(server, thread, start_timeout)
        yield f"http://{HOST}:{port}"
    finally:
        server.should_exit = True
        thread.join(stop_timeout)
        sock.close()
    if thread.is_alive():  # only checked when the body did not raise: never hide its error
        raise RuntimeError(f"the server on port {port} did not stop within {stop_timeout} s")


def _wait_started(server: uvicorn.Server, thread: threading.Thread, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not server.started:
        if not thread.is_alive():
            raise RuntimeError("the server stopped while starting (see the log)")
        if time.monotonic() > deadline:
            raise TimeoutError(f"the server did not start within {timeout} s")
        time.sleep(0.01)


@dataclass(frozen=True)
class StreamSpec:
    """What one stream sends: `pieces` in order, each written (and flushed) on its own."""

    pieces: Sequence[bytes]
    gzip: bool = False
    """Content-Encoding: gzip, each piece compressed and sync-flushed, so that a client
    can decode every piece as soon as it arrives."""
    delay: float = 0.0
    """Seconds to wait before each piece after the first."""
    drop_after: int | None = None
    """Send this many pieces (at most all), then abort the connection: the client sees
    the body end without its final empty chunk."""
    stall_after: int | None = None
    """Send this many pieces (at most all), then wait `stall` seconds before the rest (or
    before ending the body)."""
    stall: float = 60.0
    media_type: str = "text/event-stream"


Outcome = Literal["", "complete", "closed", "dropped"]


@dataclass
class Delivery:
    """How one response to a request for a stream went (written by the server thread)."""

    name: str
    request_body: bytes
    sent: int = 0
    """Pieces handed to the server so far."""
    outcome: Outcome = ""
    """"" while streaming; then "complete", "dropped" (by `drop_after`) or "closed" (the
    body ended early: the client went away, or the server cancelled it)."""
    ended: threading.Event = field(default_factory=threading.Event)


class DroppedStream(Exception):
    """Raised in a response body to make uvicorn abort the connection mid-stream."""


class _QuietDrops(logging.Filter):
    """Keeps uvicorn from logging the intended `DroppedStream` as a server error."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.exc_info and isinstance(record.exc_info[1], DroppedStream))


_QUIET_DROPS = _QuietDrops()


class StreamApp:
    """The ASGI app of `stream_app`: serves `streams` by name and records each response in
    `deliveries`. Streams may be added while the server runs."""

    def __init__(self, streams: Mapping[str, StreamSpec] | None = None) -> None:
        self.streams: dict[str, StreamSpec] = dict(streams or {})
        self.deliveries: list[Delivery] = []
        methods = ["GET", "POST"]
        self._app = Starlette(
            routes=[
                Route("/streams/{name}", self._respond, methods=methods),
                Route("/streams/{name}/{rest:path}", self._respond, methods=methods),
                Route("/v1/chat/completions", self._respond, methods=methods),
            ]
        )
        logging.getLogger("uvicorn.error").addFilter(_QUIET_DROPS)  # idempotent

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._app(scope, receive, send)

    def add(self, name: str, spec: StreamSpec) -> str:
        """Serve `spec` as `name`; returns its path, `/streams/<name>`."""
        self.streams[name] = spec
        return f"/streams/{name}"

    def wait_delivery(self, name: str, timeout: float = 5.0) -> Delivery:
        """The last response for `name`, once it has ended; TimeoutError if none has ended
        within `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = [d for d in self.deliveries if d.name == name]
            if found and found[-1].ended.wait(max(0.0, deadline - time.monotonic())):
                return found[-1]
            time.sleep(0.01)
        raise TimeoutError(f"no response for stream {name!r} ended within {timeout} s")

    async def _respond(self, request: Request) -> Response:
        # /v1/chat/completions serves the stream named "default".
        name = request.path_params.get("name", "default")
        spec = self.streams.get(name)
        if spec is None:
            return PlainTextResponse(f"no stream {name!r}", status_code=404)
        delivery = Delivery(name, await request.body())
        self.deliveries.append(delivery)
        headers = {"cache-control": "no-cache"}
        if spec.gzip:
            headers["content-encoding"] = "gzip"
        return _ClosingStreamingResponse(_body(spec, delivery), headers, spec.media_type)


class _ClosingStreamingResponse(StreamingResponse):
    """Closes its body generator as soon as the response ends, however it ends, so that the
    `Delivery` records a client that went away without waiting for garbage collection."""

    def __init__(
        self, body: AsyncGenerator[bytes, None], headers: dict[str, str], media: str
    ) -> None:
        super().__init__(body, headers=headers, media_type=media)
        self._body = body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            await self._body.aclose()


async def _body(spec: StreamSpec, delivery: Delivery) -> AsyncGenerator[bytes, None]:
    encoder = zlib.compressobj(wbits=31) if spec.gzip else None  # wbits=31: gzip framing
    try:
        for index, piece in enumerate(spec.pieces):
            await _before(spec, delivery, index)
            if encoder is not None:
                piece = encoder.compress(piece) + encoder.flush(zlib.Z_SYNC_FLUSH)
            yield piece
            delivery.sent += 1
            await asyncio.sleep(0)  # a client gone is seen before the next write
        await _before(spec, delivery, len(spec.pieces))  # a drop or stall after them all
        if encoder is not None:
            yield encoder.flush()
        delivery.outcome = "complete"
    finally:
        if not delivery.outcome:
            delivery.outcome = "closed"
        delivery.ended.set()


async def _before(spec: StreamSpec, delivery: Delivery, index: int) -> None:
    """What comes before piece `index` (or the end of the body): a drop, a stall or the
    delay between pieces."""
    last = len(spec.pieces)
    if spec.drop_after is not None and index == min(spec.drop_after, last):
        delivery.outcome = "dropped"
        raise DroppedStream(f"dropped {delivery.name!r} after {index} pieces")
    if spec.stall_after is not None and index == min(spec.stall_after, last):
        await asyncio.sleep(spec.stall)  # cancelled when the client goes away
    elif 0 < index < last and spec.delay:
        await asyncio.sleep(spec.delay)


def stream_app(streams: Mapping[str, StreamSpec] | None = None) -> StreamApp:
    """A Starlette app serving each stream at `/streams/<name>` (GET or POST, and any path
    below it, such as `/streams/<name>/v1/chat/completions` for an OpenAI client with
    `base_url=<base>/streams/<name>/v1`); `/v1/chat/completions` serves "default"."""
    return StreamApp(streams)
