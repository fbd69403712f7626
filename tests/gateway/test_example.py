"""examples/gateway.py over real HTTP: a loopback upstream plays a captured stream, the
gateway forwards it, and a client reads it from the gateway."""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import socket
import time
import tracemalloc
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit

import httpx
import pytest

from examples.gateway import create_app
from generated.msgspec.chat import ChatCompletionMessage, ChunkAccumulator, iter_chunks
from tests.helpers.loopback import StreamApp, StreamSpec, serve, stream_app
from tests.helpers.support import FIXTURE_STREAMS, REPORT

CAPTURED = next(s for s in FIXTURE_STREAMS if s.name == "openai__py-sdk-plain-text-usage")
EVENTS = [b"data: " + text.encode() + b"\n\n" for _, text in CAPTURED.chunks]
FULL = [b": keep-alive\n\n", *EVENTS, b"data: [DONE]\n\n"]
ERROR = b'event: error\ndata: {"error":{"message":"overloaded","code":529}}\n\n'
LOGGER = "uvicorn.error.gateway"
WAIT = 5.0  # seconds: every wait on the servers is bounded by this


@pytest.fixture(scope="module")
def upstream() -> Iterator[tuple[StreamApp, str]]:
    """A loopback server for the streams of this module, and its base URL."""
    app = stream_app()
    with serve(app) as base_url:
        yield app, base_url


@pytest.fixture()
def log(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.INFO, logger=LOGGER)
    return caplog


@contextmanager
def gateway(upstream_url: str) -> Iterator[str]:
    """A gateway in front of `upstream_url`; yields its chat completions URL."""
    # loopback.serve runs no lifespan, so the app never closes its client: let the client
    # keep no idle connection that would outlive the server.
    client = httpx.AsyncClient(limits=httpx.Limits(max_keepalive_connections=0))
    with serve(create_app(upstream_url, client=client)) as base_url:
        yield f"{base_url}/v1/chat/completions"


def log_line(caplog: pytest.LogCaptureFixture) -> str:
    """The gateway's one line about the stream, once it has written it."""
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        lines = [r.getMessage() for r in caplog.records if r.name == LOGGER]
        if lines:
            assert len(lines) == 1, lines
            return lines[0]
        time.sleep(0.01)
    raise AssertionError(f"the gateway logged nothing within {WAIT} s")


def test_forwards_the_bytes_and_logs_the_completion(
    upstream: tuple[StreamApp, str], log: pytest.LogCaptureFixture
) -> None:
    app, base_url = upstream
    path = app.add("full", StreamSpec(FULL))
    with gateway(f"{base_url}{path}/v1") as url:
        response = httpx.post(url, json={"stream": True}, timeout=WAIT)
        line = log_line(log)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.content == b"".join(FULL)
    assert app.wait_delivery("full").request_body == b'{"stream":true}'

    accumulator = ChunkAccumulator()  # what the stream adds up to, read here directly
    for chunk in iter_chunks(FULL):
        accumulator.add(chunk)
    completion = accumulator.result()
    message, usage = completion.choices[0].message, completion.usage
    assert isinstance(message, ChatCompletionMessage) and usage  # the last chunk has the usage
    content = message.content
    assert isinstance(content, str) and content
    assert line == (
        f"stream model={completion.model} finish_reason=stop "
        f"usage={json.dumps(usage.to_dict())} content_chars={len(content)} done=True skipped=0"
    )


def test_forwards_an_upstream_error_and_logs_it(
    upstream: tuple[StreamApp, str], log: pytest.LogCaptureFixture
) -> None:
    app, base_url = upstream
    sent = [*EVENTS[:3], ERROR, b"data: [DONE]\n\n"]  # as vLLM ends a failed stream
    path = app.add("error", StreamSpec(sent))
    with gateway(f"{base_url}{path}/v1") as url:
        response = httpx.post(url, json={"stream": True}, timeout=WAIT)
        line = log_line(log)
    assert response.content == b"".join(sent), "what follows the error is forwarded too"
    assert " done=True " in line
    assert line.endswith(" error=upstream error 'overloaded' (code 529)")


def test_forwards_a_chunk_it_cannot_read_and_counts_it(
    upstream: tuple[StreamApp, str], log: pytest.LogCaptureFixture
) -> None:
    app, base_url = upstream
    unreadable = EVENTS[1].replace(b'"index":0', b'"index":"0"', 1)
    assert unreadable != EVENTS[1]
    sent = [EVENTS[0], unreadable, *EVENTS[2:], b"data: [DONE]\n\n"]
    path = app.add("unreadable", StreamSpec(sent))
    with gateway(f"{base_url}{path}/v1") as url:
        response = httpx.post(url, json={"stream": True}, timeout=WAIT)
        line = log_line(log)
    assert response.content == b"".join(sent)
    assert line.endswith(" done=True skipped=1")


def test_an_upstream_that_breaks_off_ends_in_an_error_event(
    upstream: tuple[StreamApp, str], log: pytest.LogCaptureFixture
) -> None:
    app, base_url = upstream
    path = app.add("dropped", StreamSpec(FULL, drop_after=3))
    with gateway(f"{base_url}{path}/v1") as url:
        response = httpx.post(url, json={"stream": True}, timeout=WAIT)
        line = log_line(log)
    assert response.content == b"".join(FULL[:3]) + (
        b'data: {"error":{"message":"the upstream stream broke off","type":"gateway_error"}}\n\n'
    )
    assert " done=False " in line
    assert "error=upstream failed RemoteProtocolError(" in line


def test_an_upstream_http_error_keeps_its_status(upstream: tuple[StreamApp, str]) -> None:
    _, base_url = upstream
    with gateway(f"{base_url}/nowhere/v1") as url:
        response = httpx.post(url, json={"stream": True}, timeout=WAIT)
    assert (response.status_code, response.text) == (404, "Not Found")


def test_an_unreachable_upstream_is_a_bad_gateway(log: pytest.LogCaptureFixture) -> None:
    with socket.socket() as closed:  # a port nothing listens on once it is closed
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    with gateway(f"http://127.0.0.1:{port}/v1") as url:
        response = httpx.post(url, json={"stream": True}, timeout=WAIT)
        line = log_line(log)
    assert response.status_code == 502
    assert line.startswith("upstream unreachable: ConnectError(")


def test_a_client_that_leaves_closes_the_upstream(
    upstream: tuple[StreamApp, str], log: pytest.LogCaptureFixture
) -> None:
    app, base_url = upstream
    # One event, then a minute's wait: only a closed connection ends the response sooner.
    path = app.add("left", StreamSpec(EVENTS, stall_after=1, stall=60.0))
    with gateway(f"{base_url}{path}/v1") as url:
        with httpx.stream("POST", url, json={"stream": True}, timeout=WAIT) as response:
            received = b""
            for piece in response.iter_bytes():  # a ReadTimeout after WAIT s at the latest
                received += piece
                if received.endswith(b"\n\n"):
                    break
            assert received == EVENTS[0]
        delivery = app.wait_delivery("left", timeout=WAIT)  # TimeoutError if still open
        assert (delivery.outcome, delivery.sent) == ("closed", 1)
        line = log_line(log)
    assert " done=False " in line and " error=" not in line


# --- under load -----------------------------------------------------------------------

STREAMS, AT_ONCE = 200, 50
LEAVERS = range(0, STREAMS, 10)
"""Every tenth client leaves after the first event."""
LONG = [b": keep-alive\n\n", *(EVENTS * 2), b"data: [DONE]\n\n"]


async def load(url: str) -> dict[int, bytes | None]:
    """Every stream's bytes as its client read them (None for a client that left)."""
    limit = asyncio.Semaphore(AT_ONCE)
    limits = httpx.Limits(max_connections=AT_ONCE, max_keepalive_connections=0)
    async with httpx.AsyncClient(timeout=WAIT * 4, limits=limits) as client:

        async def one(number: int) -> bytes | None:
            async with limit, client.stream("POST", url, json={"stream": True}) as response:
                if number in LEAVERS:
                    async for _ in response.aiter_bytes():
                        return None  # leaves after the first read: the connection closes
                return b"".join([piece async for piece in response.aiter_bytes()])

        return dict(enumerate(await asyncio.gather(*(one(n) for n in range(STREAMS)))))


def test_under_load_early_leavers_close_their_upstream_and_nothing_writes_after(
    upstream: tuple[StreamApp, str], caplog: pytest.LogCaptureFixture
) -> None:
    app, base_url = upstream
    path = app.add("load", StreamSpec(LONG))
    caplog.set_level(logging.WARNING, logger="asyncio")
    with gateway(f"{base_url}{path}/v1") as url:
        gc.collect()
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            read = asyncio.run(load(url))
            expected = b"".join(LONG)
            unchanged = all(read[n] == expected for n in read if n not in LEAVERS)
            del read  # what the clients read is not what the servers hold
            deadline = time.monotonic() + WAIT
            loads = [d for d in app.deliveries if d.name == "load"]
            while time.monotonic() < deadline and not all(d.ended.is_set() for d in loads):
                time.sleep(0.05)
            gc.collect()
            grown = tracemalloc.get_traced_memory()[0] - before
        finally:
            tracemalloc.stop()
    assert unchanged, "every completed stream's bytes are the upstream's"
    assert len(loads) == STREAMS and all(d.ended.is_set() for d in loads), "none left open"
    assert sum(d.outcome == "complete" for d in loads) >= STREAMS - len(LEAVERS)
    # asyncio logs "socket.send() raised exception." for each write into a closed socket.
    warnings = [(r.threadName, r.getMessage()) for r in caplog.records if r.name == "asyncio"]
    gateway_thread = f"loopback:{urlsplit(url).port}"
    assert not [w for w in warnings if w[0] == gateway_thread], "the gateway wrote on"
    assert not warnings, f"{len(warnings)} warnings, the first: {warnings[0]}"
    assert grown < 4 * 1024 * 1024, f"memory grew by {grown:,} bytes"
    REPORT["gateway under load"] = (
        f"{STREAMS} streams, {AT_ONCE} at a time, {len(LEAVERS)} clients left after the"
        f" first event: every other stream's bytes unchanged, no upstream left open, no"
        f" write after a client left, memory grew by {grown:,} bytes"
    )
