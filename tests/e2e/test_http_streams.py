"""Captured streams read over a real HTTP connection (tests/helpers/loopback.py: uvicorn on
127.0.0.1) by httpx, httpx's async client and aiohttp (the stream given the response's
byte iterator or the response itself) and by the openai SDK, and compared with the same
bytes read from memory: every framing, the network's faults, closing early, raw_events()
and what our writer writes."""

from __future__ import annotations

import asyncio
import functools
import json
import random
import ssl
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from types import ModuleType
from typing import Any, Literal, TypeVar

import aiohttp
import httpx
import openai
import pytest
from openai.types.chat import ChatCompletionMessageParam

from tests.helpers.loopback import Delivery, StreamApp, StreamSpec, serve, stream_app
from tests.helpers.support import FIXTURE_STREAMS, TARGETS, Stream
from tests.runtime.test_sse import ERRORS, A

T = TypeVar("T")
OnError = Literal["raise", "skip"]

TARGET_NAMES = list(TARGETS)
TIMEOUT = 10.0  # seconds: the longest any client or wait here may take
REQUEST = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
MESSAGES: list[ChatCompletionMessageParam] = [{"role": "user", "content": "hi"}]
# httpx builds a TLS context per client (~30 ms) even for http:// URLs: one serves all.
TLS = ssl.create_default_context()
KEEP_ALIVE = b": keep-alive\n\n"
ERROR_EVENT = b'event: error\ndata: {"error":{"message":"boom","code":500}}\n\n'
ERROR_PAYLOAD = b'data: {"error":{"message":"boom","code":500}}\n\n'


# The bytes a server sends ----------------------------------------------------------------


def events(fixture: Stream, ending: str = "\n") -> list[bytes]:
    """One event per chunk of the fixture, as a server writes them."""
    return [f"data: {text}{ending}{ending}".encode() for _, text in fixture.chunks]


def done(ending: str = "\n") -> bytes:
    return f"data: [DONE]{ending}{ending}".encode()


@dataclass(frozen=True)
class Served:
    """A fixture stream in one framing: the pieces the server writes, and what a reader
    of them must get."""

    pieces: list[bytes]
    chunks: int
    """How many of the fixture's chunks a reader gets (before the error, if any)."""
    done: bool = True
    error: bool = False
    """Whether the stream ends with StreamError("boom", code 500)."""
    gzip: bool = False

    @property
    def data(self) -> bytes:
        return b"".join(self.pieces)

    def spec(self) -> StreamSpec:
        return StreamSpec(self.pieces, gzip=self.gzip)


def lf(fixture: Stream) -> Served:
    return Served([*events(fixture), done()], len(fixture.chunks))


def crlf(fixture: Stream) -> Served:
    return Served([*events(fixture, "\r\n"), done("\r\n")], len(fixture.chunks))


def keep_alive(fixture: Stream) -> Served:
    pieces = [KEEP_ALIVE]  # before the first event and between all the others
    for event in [*events(fixture), done()]:
        pieces += [event, KEEP_ALIVE]
    # None after [DONE]: a reader stops there, so raw_events() could not give it back.
    return Served(pieces[:-1], len(fixture.chunks))


def random_splits(fixture: Stream) -> Served:
    """The LF stream cut into pieces of 1 to 64 bytes, also inside UTF-8 sequences."""
    data, rng, pieces = lf(fixture).data, random.Random(fixture.name), []
    at = 0
    while at < len(data):
        size = rng.randint(1, 64)
        pieces.append(data[at : at + size])
        at += size
    return Served(pieces, len(fixture.chunks))


def gzipped(fixture: Stream) -> Served:
    return replace(lf(fixture), gzip=True)


def with_error(error: bytes) -> Callable[[Stream], Served]:
    def framing(fixture: Stream) -> Served:
        before = (len(fixture.chunks) + 1) // 2  # at least one chunk before the error
        chunks = events(fixture)
        pieces = [*chunks[:before], error, *chunks[before:], done()]
        return Served(pieces, before, done=False, error=True)

    return framing


def no_done(fixture: Stream) -> Served:
    return Served(events(fixture), len(fixture.chunks), done=False)


FRAMINGS: dict[str, Callable[[Stream], Served]] = {
    "lf": lf,
    "crlf": crlf,
    "keep-alive": keep_alive,
    "random-splits": random_splits,
    "gzip": gzipped,
    "error-event": with_error(ERROR_EVENT),
    "error-payload": with_error(ERROR_PAYLOAD),
    "no-done": no_done,
}


# What a reader gets ----------------------------------------------------------------------


@dataclass
class Read:
    """What reading one stream gave: the chunks (as `dumps` writes them), the accumulated
    completion, `done`, the error it stopped with, and the events it skipped."""

    chunks: list[str] = field(default_factory=list)
    completion: str = ""
    done: bool = False
    error: Exception | None = None
    skipped: list[tuple[str, str]] = field(default_factory=list)

    def outcome(self) -> tuple[object, ...]:
        """What two reads of the same bytes must agree on."""
        error = self.error
        described = None
        if error is not None:
            described = (
                type(error).__name__,
                getattr(error, "message", str(error)),
                getattr(error, "code", None),
                getattr(error, "payload", None),
            )
        return (self.chunks, self.completion, self.done, described, self.skipped)


def finish(module: ModuleType, read: Read, accumulator: Any, stream: Any) -> Read:
    completion = accumulator.result() if read.error is None else accumulator.snapshot()
    read.completion = module.dumps(completion)
    read.done = stream.done
    read.skipped = [(s.event.data, s.error.path) for s in stream.skipped]
    return read


def collect(module: ModuleType, stream: Any) -> Read:
    read, accumulator = Read(), module.ChunkAccumulator()
    try:
        for chunk in stream:
            read.chunks.append(module.dumps(chunk))
            accumulator.add(chunk)
    except Exception as error:  # each test says which error it expects
        read.error = error
    return finish(module, read, accumulator, stream)


async def acollect(module: ModuleType, stream: Any) -> Read:
    read, accumulator = Read(), module.ChunkAccumulator()
    try:
        async for chunk in stream:
            read.chunks.append(module.dumps(chunk))
            accumulator.add(chunk)
    except Exception as error:
        read.error = error
    return finish(module, read, accumulator, stream)


def from_memory(module: ModuleType, data: bytes, on_error: OnError = "raise") -> Read:
    return collect(module, module.iter_chunks([data], on_error=on_error))


# The HTTP clients: each reads several URLs over one connection pool ------------------------

Source = Literal["bytes", "response"]
"""What a stream reads: the response's byte iterator, or the response itself."""


def httpx_sources(
    urls: Sequence[str], consume: Callable[[Any], T], read_timeout: float, source: Source
) -> list[T]:
    timeout = httpx.Timeout(TIMEOUT, read=read_timeout)
    with httpx.Client(timeout=timeout, verify=TLS) as client:
        out = []
        for url in urls:
            with client.stream("POST", url, json=REQUEST) as response:
                response.raise_for_status()
                out.append(consume(response if source == "response" else response.iter_bytes()))
        return out


async def httpx_async_sources(
    urls: Sequence[str], consume: Callable[[Any], Awaitable[T]], read_timeout: float, source: Source
) -> list[T]:
    timeout = httpx.Timeout(TIMEOUT, read=read_timeout)
    async with httpx.AsyncClient(timeout=timeout, verify=TLS) as client:
        out = []
        for url in urls:
            async with client.stream("POST", url, json=REQUEST) as response:
                response.raise_for_status()
                body = response if source == "response" else response.aiter_bytes()
                out.append(await consume(body))
        return out


async def aiohttp_sources(
    urls: Sequence[str], consume: Callable[[Any], Awaitable[T]], read_timeout: float, source: Source
) -> list[T]:
    timeout = aiohttp.ClientTimeout(total=TIMEOUT, sock_read=read_timeout)
    async with aiohttp.ClientSession(timeout=timeout) as session:
        out = []
        for url in urls:
            async with session.post(url, json=REQUEST) as response:
                response.raise_for_status()
                body = response if source == "response" else response.content.iter_any()
                out.append(await consume(body))
        return out


ASYNC_CLIENTS = {"httpx-async": httpx_async_sources, "aiohttp": aiohttp_sources}
CLIENT_NAMES = ["httpx", *ASYNC_CLIENTS]


def read_http(
    client: str,
    module: ModuleType,
    urls: Sequence[str],
    *,
    source: Source = "bytes",
    on_error: OnError = "raise",
    read_timeout: float = TIMEOUT,
) -> list[Read]:
    """Each URL's stream read with `client` through iter_chunks / aiter_chunks."""
    if client == "httpx":
        return httpx_sources(
            urls,
            lambda body: collect(module, module.iter_chunks(body, on_error=on_error)),
            read_timeout,
            source,
        )
    return asyncio.run(
        ASYNC_CLIENTS[client](
            urls,
            lambda body: acollect(module, module.aiter_chunks(body, on_error=on_error)),
            read_timeout,
            source,
        )
    )


RawRead = tuple[list[Any], Exception | None, bool]
"""The RawEvents of a stream, the error that ended it (if any), and `done`."""


def raw_collect(stream: Any) -> RawRead:
    out: list[Any] = []
    try:
        out.extend(stream.raw_events())
    except Exception as error:
        return out, error, stream.done
    return out, None, stream.done


async def araw_collect(stream: Any) -> RawRead:
    out: list[Any] = []
    try:
        async for event in stream.raw_events():
            out.append(event)
    except Exception as error:
        return out, error, stream.done
    return out, None, stream.done


def read_raw_http(
    client: str, module: ModuleType, urls: Sequence[str], source: Source
) -> list[RawRead]:
    """Each URL's stream read with `client` through raw_events()."""
    if client == "httpx":
        return httpx_sources(
            urls, lambda body: raw_collect(module.iter_chunks(body)), TIMEOUT, source
        )
    return asyncio.run(
        ASYNC_CLIENTS[client](
            urls,
            lambda body: araw_collect(module.aiter_chunks(body)),
            TIMEOUT,
            source,
        )
    )


# The server --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Server:
    app: StreamApp
    base_url: str

    def add(self, name: str, spec: StreamSpec) -> str:
        """Serve `spec` under a name unique in this module; returns its URL."""
        return self.base_url + self.app.add(name, spec)


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    app = stream_app()
    with serve(app) as base_url:
        yield Server(app, base_url)


# Every framing, every client, every fixture stream ----------------------------------------

# Targets rotate so that each (framing, client) reads with one target, and every client
# and every framing still meets several targets (all four per client); the stream reads the
# byte iterator for every other framing, and the response itself for the rest.
SOURCES: tuple[Source, Source] = ("bytes", "response")
MATRIX = [
    (framing, client, TARGET_NAMES[(i + j) % len(TARGET_NAMES)], SOURCES[i % 2])
    for i, framing in enumerate(FRAMINGS)
    for j, client in enumerate(CLIENT_NAMES)
]


def test_the_matrix_reads_every_target_and_source_with_every_client() -> None:
    for client in CLIENT_NAMES:
        assert {t for _, c, t, _ in MATRIX if c == client} == set(TARGET_NAMES), client
        assert {s for _, c, _, s in MATRIX if c == client} == set(SOURCES), client


def test_random_splits_cut_inside_utf8_sequences() -> None:
    pieces = [p for f in FIXTURE_STREAMS for p in random_splits(f).pieces]
    assert any(0x80 <= piece[0] <= 0xBF for piece in pieces)  # starts mid-character
    assert {len(piece) for piece in pieces} <= set(range(1, 65))


@functools.cache
def decoded(target: str, fixture: Stream) -> list[str]:
    """The fixture's chunks, each decoded alone and written back by the target."""
    module = TARGETS[target]
    return [module.dumps(module.loads(text)) for _, text in fixture.chunks]


def check_framing(target: str, fixture: Stream, served: Served, read: Read) -> None:
    """The in-memory read is what the framing means, independently of the HTTP read."""
    module = TARGETS[target]
    assert read.chunks == decoded(target, fixture)[: served.chunks], fixture.name
    assert read.done is served.done, fixture.name
    if served.error:
        assert isinstance(read.error, module.StreamError), repr(read.error)
        assert (read.error.message, read.error.code) == ("boom", 500)
    else:
        assert read.error is None, f"{fixture.name}: {read.error!r}"


@pytest.mark.parametrize(("framing", "client", "target", "source"), MATRIX)
def test_every_fixture_stream_reads_over_http_as_from_memory(
    server: Server, framing: str, client: str, target: str, source: Source
) -> None:
    module = TARGETS[target]
    served = [FRAMINGS[framing](fixture) for fixture in FIXTURE_STREAMS]
    urls = [
        server.add(f"{framing}.{client}.{fixture.name}", case.spec())
        for fixture, case in zip(FIXTURE_STREAMS, served, strict=True)
    ]
    reads = read_http(client, module, urls, source=source)
    for fixture, case, read in zip(FIXTURE_STREAMS, served, reads, strict=True):
        expected = from_memory(module, case.data)
        check_framing(target, fixture, case, expected)
        assert read.outcome() == expected.outcome(), fixture.name


# Faults of the network ---------------------------------------------------------------------

# Each client twice (once per source), each target at least once.
FAULT_CASES = [
    (CLIENT_NAMES[i % 3], TARGET_NAMES[i % len(TARGET_NAMES)], SOURCES[i % 2]) for i in range(6)
]
FAULT_FIXTURE = next(f for f in FIXTURE_STREAMS if len(f.chunks) >= 6)
CUT = 3  # chunks a faulty stream sends before its fault

# What each client really raises (found by running them against tests/helpers/loopback.py).
DROPPED: dict[str, type[Exception]] = {
    "httpx": httpx.RemoteProtocolError,  # "incomplete chunked read"
    "httpx-async": httpx.RemoteProtocolError,
    "aiohttp": aiohttp.ClientPayloadError,  # "Response payload is not completed"
}
STALLED: dict[str, type[Exception]] = {
    "httpx": httpx.ReadTimeout,
    "httpx-async": httpx.ReadTimeout,
    "aiohttp": aiohttp.SocketTimeoutError,  # an asyncio.TimeoutError too
}


def test_the_fault_cases_meet_every_client_target_and_source() -> None:
    assert {(c, s) for c, _, s in FAULT_CASES} == {(c, s) for c in CLIENT_NAMES for s in SOURCES}
    assert {t for _, t, _ in FAULT_CASES} == set(TARGET_NAMES)


def check_partial(module: ModuleType, read: Read, error: type[Exception]) -> None:
    """The client's own error, after the chunks sent before the fault, accumulated."""
    assert isinstance(read.error, error), repr(read.error)
    expected = from_memory(module, b"".join(events(FAULT_FIXTURE)[:CUT]))
    assert len(expected.chunks) == CUT
    assert (read.chunks, read.completion) == (expected.chunks, expected.completion)
    assert read.done is False


@pytest.mark.parametrize(("client", "target", "source"), FAULT_CASES)
def test_a_dropped_connection_raises_the_clients_error_after_the_chunks_before_it(
    server: Server, client: str, target: str, source: Source
) -> None:
    name = f"drop.{client}.{target}"
    spec = StreamSpec([*events(FAULT_FIXTURE), done()], drop_after=CUT)
    [read] = read_http(client, TARGETS[target], [server.add(name, spec)], source=source)
    check_partial(TARGETS[target], read, DROPPED[client])
    assert server.app.wait_delivery(name, TIMEOUT).outcome == "dropped"


@pytest.mark.parametrize(("client", "target", "source"), FAULT_CASES)
def test_a_stalled_stream_times_out_after_the_chunks_before_it(
    server: Server, client: str, target: str, source: Source
) -> None:
    name = f"stall.{client}.{target}"
    spec = StreamSpec([*events(FAULT_FIXTURE), done()], stall_after=CUT, stall=3 * TIMEOUT)
    url = server.add(name, spec)
    [read] = read_http(client, TARGETS[target], [url], source=source, read_timeout=0.5)
    check_partial(TARGETS[target], read, STALLED[client])
    delivery = server.app.wait_delivery(name, TIMEOUT)  # the client hung up mid-stall
    assert (delivery.outcome, delivery.sent) == ("closed", CUT)


def with_bad_chunk(fixture: Stream) -> tuple[list[bytes], str, int]:
    """The fixture's events with the first choice of one chunk given `"index": "0"`:
    the events, the bad chunk's JSON and its position."""
    texts = [text for _, text in fixture.chunks]
    at = next(i for i, text in enumerate(texts) if i and json.loads(text).get("choices"))
    payload = json.loads(texts[at])
    payload["choices"][0]["index"] = "0"
    texts[at] = json.dumps(payload, ensure_ascii=False)
    return [f"data: {text}\n\n".encode() for text in texts] + [done()], texts[at], at


@pytest.mark.parametrize(("client", "target", "source"), FAULT_CASES)
def test_skip_reads_on_past_a_bad_chunk(
    server: Server, client: str, target: str, source: Source
) -> None:
    module = TARGETS[target]
    pieces, bad, at = with_bad_chunk(FAULT_FIXTURE)
    url = server.add(f"skip.{client}.{target}", StreamSpec(pieces))
    [read] = read_http(client, module, [url], source=source, on_error="skip")
    good = [text for i, (_, text) in enumerate(FAULT_FIXTURE.chunks) if i != at]
    assert read.chunks == [module.dumps(module.loads(text)) for text in good]
    assert read.skipped == [(bad, "$.choices[0].index")]
    assert (read.done, read.error) == (True, None)
    assert read.outcome() == from_memory(module, b"".join(pieces), "skip").outcome()


# Closing early ---------------------------------------------------------------------------

# aiohttp's `iter_any()` has no close, so only the response itself can hang up there.
CLOSE_FORMS: list[tuple[str, str, Source]] = [
    *[("httpx", form, source) for form in ("close", "with") for source in SOURCES],
    *[("httpx-async", form, source) for form in ("aclose", "async with") for source in SOURCES],
    *[("aiohttp", form, "response") for form in ("aclose", "async with")],
]
CLOSE_CASES = [(*case, TARGET_NAMES[i % len(TARGET_NAMES)]) for i, case in enumerate(CLOSE_FORMS)]


def first_then_close(
    module: ModuleType, source: Any, form: str, hang_up: Callable[[], Delivery]
) -> tuple[str, Delivery]:
    """The first chunk, read with `break`, and how the response ended once the stream was
    closed in `form`. The stream (and so its source) stays referenced while waiting, so
    that only closing it, not garbage collection, can hang up."""
    first = ""
    if form == "with":
        with module.iter_chunks(source) as stream:
            for chunk in stream:
                first = module.dumps(chunk)
                break
    else:
        stream = module.iter_chunks(source)
        for chunk in stream:
            first = module.dumps(chunk)
            break
        stream.close()
    return first, hang_up()


async def afirst_then_close(
    module: ModuleType, source: Any, form: str, hang_up: Callable[[], Awaitable[Delivery]]
) -> tuple[str, Delivery]:
    first = ""
    if form == "async with":
        async with module.aiter_chunks(source) as stream:
            async for chunk in stream:
                first = module.dumps(chunk)
                break
    else:
        stream = module.aiter_chunks(source)
        async for chunk in stream:
            first = module.dumps(chunk)
            break
        await stream.aclose()
    return first, await hang_up()


def close_sync(
    server: Server, name: str, url: str, module: ModuleType, form: str, source: Source
) -> tuple[str, Delivery]:
    # Waits inside the response's block: leaving it would hang up too.
    with (
        httpx.Client(timeout=TIMEOUT, verify=TLS) as client,
        client.stream("POST", url, json=REQUEST) as response,
    ):
        body = response if source == "response" else response.iter_bytes()
        return first_then_close(module, body, form, lambda: server.app.wait_delivery(name, TIMEOUT))


async def close_async(
    server: Server,
    name: str,
    url: str,
    module: ModuleType,
    client: str,
    form: str,
    source: Source,
) -> tuple[str, Delivery]:
    async def hang_up() -> Delivery:  # in a thread: the loop runs on, to finish closing
        return await asyncio.to_thread(server.app.wait_delivery, name, TIMEOUT)

    if client == "aiohttp":
        async with (
            aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=TIMEOUT)) as session,
            session.post(url, json=REQUEST) as reply,
        ):
            return await afirst_then_close(module, reply, form, hang_up)
    async with (
        httpx.AsyncClient(timeout=TIMEOUT, verify=TLS) as http,
        http.stream("POST", url, json=REQUEST) as response,
    ):
        body = response if source == "response" else response.aiter_bytes()
        return await afirst_then_close(module, body, form, hang_up)


@pytest.mark.parametrize(("client", "form", "source", "target"), CLOSE_CASES)
def test_closing_after_the_first_chunk_hangs_up(
    server: Server, client: str, form: str, source: Source, target: str
) -> None:
    module = TARGETS[target]
    name = f"close.{client}.{form.replace(' ', '-')}.{source}.{target}"
    # The server sends one chunk and then waits: only the client can end the response.
    spec = StreamSpec([*events(FAULT_FIXTURE), done()], stall_after=1, stall=3 * TIMEOUT)
    url = server.add(name, spec)
    if client == "httpx":
        first, delivery = close_sync(server, name, url, module, form, source)
    else:
        first, delivery = asyncio.run(close_async(server, name, url, module, client, form, source))
    assert first == module.dumps(module.loads(FAULT_FIXTURE.chunks[0][1]))
    assert (delivery.outcome, delivery.sent) == ("closed", 1), delivery


# raw_events() over HTTP ------------------------------------------------------------------

RAW_FRAMINGS = ["crlf", "keep-alive", "random-splits", "gzip", "error-event", "error-payload"]
RAW_CASES = [
    (framing, CLIENT_NAMES[i % 3], TARGET_NAMES[i % len(TARGET_NAMES)], SOURCES[i % 2])
    for i, framing in enumerate(RAW_FRAMINGS)
]


@pytest.mark.parametrize(("framing", "client", "target", "source"), RAW_CASES)
def test_raw_events_give_back_the_bytes_sent_and_the_chunks(
    server: Server, framing: str, client: str, target: str, source: Source
) -> None:
    module = TARGETS[target]
    served = [FRAMINGS[framing](fixture) for fixture in FIXTURE_STREAMS]
    urls = [
        server.add(f"raw.{framing}.{client}.{fixture.name}", case.spec())
        for fixture, case in zip(FIXTURE_STREAMS, served, strict=True)
    ]
    reads = read_raw_http(client, module, urls, source)
    for fixture, case, (raw_events, error, done) in zip(
        FIXTURE_STREAMS, served, reads, strict=True
    ):
        assert error is None, f"{fixture.name}: {error!r}"  # raw_events() raises no read
        assert done, fixture.name
        assert b"".join(e.raw for e in raw_events) == case.data, fixture.name
        # Reading goes on past an error event: every chunk of the fixture is there.
        chunks = [module.dumps(e.chunk) for e in raw_events if e.chunk is not None]
        assert chunks == decoded(target, fixture), fixture.name
        assert raw_events[-1].event.data == "[DONE]", fixture.name
        check_raw_error(module, raw_events, case.error)


def check_raw_error(module: ModuleType, raw_events: list[Any], error: bool) -> None:
    """The error event, if the stream has one, carries its StreamError; nothing else does."""
    errors = [(e.raw, e.error) for e in raw_events if e.error is not None]
    if not error:
        assert errors == []
        return
    [(raw, stream_error)] = errors
    assert raw in (ERROR_EVENT, ERROR_PAYLOAD)
    assert isinstance(stream_error, module.StreamError), repr(stream_error)
    assert (stream_error.message, stream_error.code) == ("boom", 500)


@pytest.mark.parametrize(("client", "target", "source"), FAULT_CASES)
def test_raw_events_carry_a_bad_chunks_error_and_read_on(
    server: Server, client: str, target: str, source: Source
) -> None:
    module = TARGETS[target]
    pieces, bad, at = with_bad_chunk(FAULT_FIXTURE)
    url = server.add(f"raw-bad.{client}.{target}", StreamSpec(pieces))
    [(raw_events, error, done)] = read_raw_http(client, module, [url], source)
    assert (error, done) == (None, True)
    assert b"".join(e.raw for e in raw_events) == b"".join(pieces)
    [failed] = [e for e in raw_events if e.error is not None]
    assert (failed.raw, failed.chunk, failed.event.data) == (pieces[at], None, bad)
    assert isinstance(failed.error, module.ChunkDecodeError)
    assert failed.error.path == "$.choices[0].index"
    chunks = [e.chunk for e in raw_events if e.chunk is not None]
    assert len(chunks) == len(FAULT_FIXTURE.chunks) - 1


# openai-python reads what we write as it reads the original ---------------------------------

# openai-python raises APIError on any event whose data has a truthy "error" key
# (openai/_streaming.py), so only streams without one are compared (today: all of them),
# and none of the error framings above.
OPENAI_STREAMS = [
    f for f in FIXTURE_STREAMS if not any(json.loads(t).get("error") for _, t in f.chunks)
]
Dumped = list[list[dict[str, Any]]]


def openai_sync(base_url: str, names: Sequence[str]) -> Dumped:
    out = []
    with openai.OpenAI(base_url=base_url, api_key="x", max_retries=0, timeout=TIMEOUT) as client:
        for name in names:
            per_stream = client.with_options(base_url=f"{base_url}/streams/{name}/v1")
            stream = per_stream.chat.completions.create(model="m", messages=MESSAGES, stream=True)
            # warnings=False: pydantic warns about vendor content (lists) in str fields.
            out.append([c.model_dump(exclude_unset=True, warnings=False) for c in stream])
    return out


async def openai_async(base_url: str, names: Sequence[str]) -> Dumped:
    out = []
    async with openai.AsyncOpenAI(
        base_url=base_url, api_key="x", max_retries=0, timeout=TIMEOUT
    ) as client:
        for name in names:
            per_stream = client.with_options(base_url=f"{base_url}/streams/{name}/v1")
            stream = await per_stream.chat.completions.create(
                model="m", messages=MESSAGES, stream=True
            )
            out.append([c.model_dump(exclude_unset=True, warnings=False) async for c in stream])
    return out


def openai_read(api: str, base_url: str, names: Sequence[str]) -> Dumped:
    if api == "sync":
        return openai_sync(base_url, names)
    return asyncio.run(openai_async(base_url, names))


@pytest.fixture(scope="module")
def openai_original(server: Server) -> dict[str, Dumped]:
    """How each openai client reads the original fixture streams."""
    names = [f"openai.original.{f.name}" for f in OPENAI_STREAMS]
    for name, fixture in zip(names, OPENAI_STREAMS, strict=True):
        server.add(name, lf(fixture).spec())
    return {api: openai_read(api, server.base_url, names) for api in ("sync", "async")}


def test_openai_reads_every_fixture_stream(openai_original: dict[str, Dumped]) -> None:
    assert OPENAI_STREAMS
    assert openai_original["sync"] == openai_original["async"]
    counts = [len(chunks) for chunks in openai_original["sync"]]
    assert counts == [len(f.chunks) for f in OPENAI_STREAMS]


# Each target's writing is read by one client (both clients read the originals, and
# agree): the two share openai's SSE decoder, and each pass over the corpus costs ~1 s.
OPENAI_CASES = [(target, ("sync", "async")[i % 2]) for i, target in enumerate(TARGET_NAMES)]


@pytest.mark.parametrize(("target", "api"), OPENAI_CASES)
def test_openai_reads_what_we_write_as_the_original(
    server: Server, openai_original: dict[str, Dumped], target: str, api: str
) -> None:
    module = TARGETS[target]
    names = [f"openai.{target}.{f.name}" for f in OPENAI_STREAMS]
    for name, fixture in zip(names, OPENAI_STREAMS, strict=True):
        chunks = list(module.iter_chunks([lf(fixture).data]))
        server.add(name, StreamSpec(list(module.iter_sse(chunks))))
    ours = openai_read(api, server.base_url, names)
    for fixture, got, original in zip(OPENAI_STREAMS, ours, openai_original[api], strict=True):
        assert got == original, fixture.name


# Every upstream failure, written again, makes openai-python raise: an error event in any
# form the reader accepts, a stream cut off at an event's end or inside its JSON.
FAILING_UPSTREAMS = [
    *(text for text, _, _ in ERRORS.values()),
    f"data: {A}\n\n",
    f"data: {A}\n\ndata: {A[:30]}",
]


def openai_errors(api: str, base_url: str, names: Sequence[str]) -> list[str]:
    """The message of the APIError openai-python raises reading each stream (it must)."""
    messages = []
    if api == "sync":
        with openai.OpenAI(
            base_url=base_url, api_key="x", max_retries=0, timeout=TIMEOUT
        ) as client:
            for name in names:
                per_stream = client.with_options(base_url=f"{base_url}/streams/{name}/v1")
                stream = per_stream.chat.completions.create(
                    model="m", messages=MESSAGES, stream=True
                )
                with pytest.raises(openai.APIError) as caught:
                    for _ in stream:
                        pass
                messages.append(caught.value.message)
        return messages

    async def read_async() -> None:
        async with openai.AsyncOpenAI(
            base_url=base_url, api_key="x", max_retries=0, timeout=TIMEOUT
        ) as client:
            for name in names:
                per_stream = client.with_options(base_url=f"{base_url}/streams/{name}/v1")
                stream = await per_stream.chat.completions.create(
                    model="m", messages=MESSAGES, stream=True
                )
                with pytest.raises(openai.APIError) as caught:
                    async for _ in stream:
                        pass
                messages.append(caught.value.message)

    asyncio.run(read_async())
    return messages


@pytest.mark.parametrize("target", TARGET_NAMES)
def test_openai_raises_api_error_on_every_failure_we_write(server: Server, target: str) -> None:
    module = TARGETS[target]
    names, messages = [], []
    for index, upstream in enumerate(FAILING_UPSTREAMS):
        written = list(module.iter_sse(module.iter_chunks([upstream], on_error="skip")))
        names.append(f"failing.{target}.{index}")
        server.add(names[-1], StreamSpec(written))
        with pytest.raises(module.StreamError) as caught:
            list(module.iter_chunks(written))
        messages.append(caught.value.message)
    for api in ("sync", "async"):
        assert openai_errors(api, server.base_url, names) == messages, api


# Connection reuse --------------------------------------------------------------------------


def client_port(response: httpx.Response) -> int:
    port: int = response.extensions["network_stream"].get_extra_info("client_addr")[1]
    return port


@pytest.mark.parametrize("target", TARGET_NAMES)
def test_a_stream_read_to_done_leaves_its_connection_to_the_next_request(
    server: Server, target: str
) -> None:
    """The end of the body follows [DONE]: the stream reads it before it lets the response
    go, so the client's pool keeps the connection (no new handshake per stream)."""
    module = TARGETS[target]
    fixture = FIXTURE_STREAMS[0]
    url = server.add(f"reuse-{target}", StreamSpec([*events(fixture), done()]))
    with httpx.Client(timeout=TIMEOUT) as client:
        ports = []
        for _ in range(3):
            with client.stream("POST", url, json=REQUEST) as response:
                stream = module.iter_chunks(response)
                assert len(list(stream)) == len(fixture.chunks) and stream.done
                ports.append(client_port(response))
    assert len(set(ports)) == 1, ports

    async def read_three() -> list[int]:
        async with httpx.AsyncClient(timeout=TIMEOUT) as client:
            ports = []
            for _ in range(3):
                async with client.stream("POST", url, json=REQUEST) as response:
                    stream = module.aiter_chunks(response.aiter_bytes())
                    assert len([c async for c in stream]) == len(fixture.chunks)
                    ports.append(client_port(response))
            return ports

    assert len(set(asyncio.run(read_three()))) == 1
