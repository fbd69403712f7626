"""docs/streams.md, run: every python block of it prints what the doc shows under it, so
the guide cannot drift from the stream API.

The conventions the doc keeps (this module reads nothing else of it):

- Each ```python block runs on its own (a fresh namespace), in the order of the doc. What
  it prints must equal the ```text block that follows it with nothing but blank lines
  between; a python block without one must print nothing. An exception it raises is
  printed as its traceback (with the doc's line numbers), so it shows in the diff.
- The ```text block on the line after `<!-- served stream -->` is the stream the examples
  read. In a python block, http://127.0.0.1:8000 is a loopback server (tests/helpers/loopback.py)
  playing it one event per write, :8001 the same cut off after its fourth event, and
  :8002 the same stalled after its fourth event. The servers listen on free ports, for
  this module only, and stop at its end.
- After each block every response the servers began must end within WAIT seconds: an
  example that leaves a connection open fails.
- The `INFO:     stream ...` line of the gateway section is what examples/gateway.py logs
  for the served stream, which it forwards byte for byte.

A failure names the block by its line in the doc and shows the difference as a diff.
"""

from __future__ import annotations

import logging
import re
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

import httpx
import pytest

from examples.gateway import create_app
from tests.helpers.docs_blocks import difference, fences, output_after, run_code
from tests.helpers.loopback import StreamApp, StreamSpec, serve, stream_app

DOC = Path(__file__).resolve().parents[2] / "docs" / "streams.md"
TEXT = DOC.read_text(encoding="utf-8")
FULL, CUT_OFF, STALLED = "http://127.0.0.1:8000", "http://127.0.0.1:8001", "http://127.0.0.1:8002"
CUT_AFTER = 4  # events: where the :8001 stream drops its connection and :8002 stalls
WAIT = 5.0  # seconds: every wait on the servers is bounded by this
BLOCK_TIME_LIMIT = 60.0  # seconds one block may take before it is stopped
GATEWAY_LOGGER = "uvicorn.error.gateway"


@dataclass(frozen=True)
class Block:
    """A python block of the doc and what the doc shows it prints."""

    line: int
    """The line of its first line of code, counted from 1."""
    code: str
    expected: str


def read_doc(text: str) -> tuple[list[Block], bytes | None]:
    """The python blocks of the doc, and the served stream (None if it shows none)."""
    all_fences = fences(text, str(DOC))
    blocks: list[Block] = []
    served = None
    for fence in all_fences:
        if fence.kind == "python":
            after = output_after(fence, all_fences, text)
            blocks.append(Block(fence.line + 1, fence.body, after.body if after else ""))
        elif fence.kind == "text" and "served stream" in fence.markers:
            served = fence.body.encode()
    return blocks, served


BLOCKS, SERVED = read_doc(TEXT)


def served_events() -> list[bytes]:
    """The served stream, one event a piece (the doc shows its last blank line as none)."""
    assert SERVED, f"{DOC} shows no stream on the line after <!-- served stream -->"
    return [event + b"\n\n" for event in SERVED.rstrip(b"\n").split(b"\n\n")]


@dataclass(frozen=True)
class Servers:
    urls: dict[str, str]
    """The base URL of each server, by the URL the doc gives it."""
    apps: list[StreamApp]

    def wait_ended(self, what: str) -> None:
        """Fail unless every response the servers began has ended; forget them."""
        deadline = time.monotonic() + WAIT
        still_open = 0
        for app in self.apps:
            deliveries, app.deliveries[:] = list(app.deliveries), []
            for delivery in deliveries:
                still_open += not delivery.ended.wait(max(0.0, deadline - time.monotonic()))
        if still_open:
            pytest.fail(f"{what} left {still_open} response(s) open for {WAIT} s", pytrace=False)


@pytest.fixture(scope="module")
def servers() -> Iterator[Servers]:
    events = served_events()
    specs = {
        FULL: StreamSpec(events),
        CUT_OFF: StreamSpec(events, drop_after=CUT_AFTER),
        STALLED: StreamSpec(events, stall_after=CUT_AFTER, stall=60.0),
    }
    with ExitStack() as stack:
        urls: dict[str, str] = {}
        apps: list[StreamApp] = []
        for doc_url, spec in specs.items():
            app = stream_app({"default": spec})  # served at /v1/chat/completions
            urls[doc_url] = stack.enter_context(serve(app))
            apps.append(app)
        yield Servers(urls, apps)


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise TimeoutError in the block when it runs longer than `seconds`."""
    if (
        not hasattr(signal, "setitimer")
        or threading.current_thread() is not threading.main_thread()
    ):
        yield  # no timer here: the block's own timeouts bound it
        return

    def expire(signum: int, frame: FrameType | None) -> None:
        raise TimeoutError(f"the block did not finish within {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def run(block: Block, urls: dict[str, str]) -> str:
    """What the block prints, run against the servers at `urls`."""
    code = block.code
    for doc_url, url in urls.items():
        code = code.replace(doc_url, url)
    with time_limit(BLOCK_TIME_LIMIT):
        printed = run_code(code, block.line, str(DOC), "__docs_streams__")
    for doc_url, url in urls.items():
        printed = printed.replace(url, doc_url)
    return printed


def test_the_doc_has_examples_and_a_served_stream() -> None:
    assert BLOCKS, f"{DOC} has no python block"
    assert len(served_events()) > CUT_AFTER, "the served stream is too short to cut off"


@pytest.mark.parametrize("block", BLOCKS, ids=[f"line{block.line}" for block in BLOCKS])
def test_the_block_prints_what_the_doc_shows(block: Block, servers: Servers) -> None:
    printed = run(block, servers.urls)
    where = f"{DOC.name}:{block.line}"
    message = difference(where, block.expected, printed)
    if message:
        pytest.fail(message, pytrace=False)
    servers.wait_ended(f"the block at {where}")


def test_the_gateway_forwards_the_stream_and_logs_what_the_doc_shows(
    servers: Servers, caplog: pytest.LogCaptureFixture
) -> None:
    shown = re.search(r"^INFO: +(stream .*)$", TEXT, re.MULTILINE)
    assert shown, f"{DOC} shows no log line of the gateway (INFO:     stream ...)"
    caplog.set_level(logging.INFO, logger=GATEWAY_LOGGER)
    # loopback.serve runs no lifespan, so the app never closes its client: let the client
    # keep no idle connection that would outlive the server.
    client = httpx.AsyncClient(limits=httpx.Limits(max_keepalive_connections=0))
    with serve(create_app(f"{servers.urls[FULL]}/v1", client=client)) as gateway:
        url = f"{gateway}/v1/chat/completions"
        response = httpx.post(url, json={"stream": True}, timeout=WAIT)
        deadline = time.monotonic() + WAIT
        while not (lines := [r.getMessage() for r in caplog.records if r.name == GATEWAY_LOGGER]):
            assert time.monotonic() < deadline, f"the gateway logged nothing within {WAIT} s"
            time.sleep(0.01)
    assert response.content == b"".join(served_events())
    assert lines == [shown.group(1)]
    servers.wait_ended("the gateway")
