"""The stream layer a live system needs, in memory and in every target: async reading
with the same meaning as sync, skipping bad chunks, closing, byte-exact raw events, the
SSE writers, the event size limit, and cost linear in the input (tests/runtime/test_sse.py
holds the framing cases; tests/e2e/test_http_streams.py the same over real HTTP)."""

from __future__ import annotations

import asyncio
import gc
import json
import tracemalloc
import warnings
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping
from types import MappingProxyType, ModuleType
from typing import Any

import pytest

from tests.helpers.support import FIXTURE_STREAMS
from tests.helpers.support import TARGETS as ALL_TARGETS
from tests.runtime.test_sse import ERRORS, FRAMINGS, HOW, content_chunk, pieces

TARGETS = list(ALL_TARGETS.values())
A, B, C = content_chunk("A"), content_chunk("B"), content_chunk("C")
BAD = content_chunk("bad").replace('"index": 0', '"index": "0"')


async def arrive(parts: Iterable[bytes | str]) -> AsyncIterator[bytes | str]:
    for part in parts:
        yield part


def read_async(module: ModuleType, parts: Iterable[bytes | str], **options: Any) -> Any:
    """The chunks an async stream yields, as JSON text, and the stream."""

    async def run() -> tuple[list[str], Any]:
        stream = module.aiter_chunks(arrive(parts), **options)
        return [module.dumps(chunk) async for chunk in stream], stream

    return asyncio.run(run())


@pytest.mark.parametrize("module", TARGETS, ids=lambda m: m.__name__)
@pytest.mark.parametrize("how", HOW)
def test_async_reading_means_what_sync_reading_means(module: ModuleType, how: str) -> None:
    for name, text in FRAMINGS.items():
        sync = module.iter_chunks(pieces(text, how))
        expected = [module.dumps(chunk) for chunk in sync]
        got, stream = read_async(module, pieces(text, how))
        assert got == expected, name
        assert (stream.done, stream.other_events) == (sync.done, sync.other_events), name


@pytest.mark.parametrize("module", TARGETS, ids=lambda m: m.__name__)
@pytest.mark.parametrize("name", ERRORS)
def test_async_reading_raises_the_same_stream_error(module: ModuleType, name: str) -> None:
    text, message, code = ERRORS[name]

    async def run() -> list[Any]:
        seen = []
        async for chunk in module.aiter_chunks(arrive(pieces(text, "bytes"))):
            seen.append(chunk)
        return seen

    with pytest.raises(module.StreamError) as caught:
        asyncio.run(run())
    assert (caught.value.message, caught.value.code) == (message, code)


@pytest.mark.parametrize("module", TARGETS, ids=lambda m: m.__name__)
@pytest.mark.parametrize("how", HOW)
def test_skip_mode_keeps_bad_events_in_order_and_reads_on(module: ModuleType, how: str) -> None:
    text = f'data: {A}\n\ndata: {BAD}\n\ndata: {B}\n\ndata: {{"id":1}}\n\ndata: {C}\n\ndata: [DONE]\n\n'
    stream = module.iter_chunks(pieces(text, how), on_error="skip")
    accumulator = module.ChunkAccumulator()
    for chunk in stream:
        accumulator.add(chunk)
    completion = json.loads(module.dumps(accumulator.result()))
    assert completion["choices"][0]["message"]["content"] == "ABC"
    assert stream.done
    assert [s.event.data for s in stream.skipped] == [BAD, '{"id":1}']
    assert [s.error.path for s in stream.skipped] == ["$.choices[0].index", "$.id"]
    got, astream = read_async(module, pieces(text, how), on_error="skip")
    assert len(got) == 3
    assert [(s.event, s.error.path) for s in astream.skipped] == [
        (s.event, s.error.path) for s in stream.skipped
    ]


@pytest.mark.parametrize("module", TARGETS, ids=lambda m: m.__name__)
def test_skip_mode_still_raises_what_the_server_reports(module: ModuleType) -> None:
    text, message, _ = ERRORS["error payload (llama.cpp)"]
    with pytest.raises(module.StreamError, match=message):
        list(module.iter_chunks([text], on_error="skip"))


@pytest.mark.parametrize("module", TARGETS, ids=lambda m: m.__name__)
def test_raise_mode_yields_the_chunks_before_the_bad_one(module: ModuleType) -> None:
    seen = []
    with pytest.raises(module.ChunkDecodeError):
        for chunk in module.iter_chunks([f"data: {A}\n\ndata: {BAD}\n\ndata: {B}\n\n"]):
            seen.append(chunk)
    assert len(seen) == 1


def test_on_error_must_be_raise_or_skip() -> None:
    module = TARGETS[0]
    with pytest.raises(ValueError, match="on_error must be 'raise' or 'skip', not 'ignore'"):
        module.iter_chunks([], on_error="ignore")


class Source:
    """A source that records how it was closed."""

    def __init__(self, parts: list[bytes]) -> None:
        self.parts = parts
        self.closed = self.aclosed = False

    def __iter__(self) -> Iterator[bytes]:
        return iter(self.parts)

    def __aiter__(self) -> AsyncIterator[bytes]:
        return arrive(self.parts).__aiter__()  # type: ignore[return-value]

    def close(self) -> None:
        self.closed = True

    async def aclose(self) -> None:
        self.aclosed = True


@pytest.mark.parametrize("module", TARGETS, ids=lambda m: m.__name__)
def test_closing_a_stream_closes_its_source(module: ModuleType) -> None:
    parts = [f"data: {A}\n\n".encode(), f"data: {B}\n\n".encode()]
    source = Source(parts)
    with module.iter_chunks(source) as stream:
        for _ in stream:
            break
    assert source.closed
    assert list(stream) == [], "a closed stream reads no more"

    async def run() -> Source:
        source = Source(parts)
        async with module.aiter_chunks(source) as stream:
            async for _ in stream:
                break
        assert [chunk async for chunk in stream] == []
        return source

    assert asyncio.run(run()).aclosed

    def generator() -> Iterator[bytes]:
        try:
            yield from parts
        finally:
            closed.append(True)

    closed: list[bool] = []
    stream = module.iter_chunks(generator())
    next(stream)
    stream.close()
    assert closed == [True], "a generator source is closed, so its finally runs"

    read: list[bytes] = []

    def after_done() -> Iterator[bytes]:
        for part in [*parts, b"data: [DONE]\n\n", b"", b"data: never read\n\n"]:
            read.append(part)
            yield part
        raise AssertionError("read to the end")

    assert len(list(module.iter_chunks(after_done()))) == 2
    assert read[-1] == b"", "[DONE] ends the stream after one more read (the body's end)"


class Response:
    """What a stream reads of an httpx response: `iter_bytes`, `aiter_bytes`, closing."""

    def __init__(self, parts: list[bytes]) -> None:
        self.parts = parts
        self.closed = False

    def iter_bytes(self) -> Iterator[bytes]:
        return iter(self.parts)

    def close(self) -> None:
        self.closed = True

    def aiter_bytes(self) -> AsyncIterator[bytes]:
        return arrive(self.parts)  # type: ignore[return-value]

    async def aclose(self) -> None:
        self.closed = True


class AiohttpResponse:
    """What a stream reads of an aiohttp response: `content.iter_any()` and `close`."""

    class Body:
        def __init__(self, parts: list[bytes]) -> None:
            self.parts = parts

        def iter_any(self) -> AsyncIterator[bytes]:
            return arrive(self.parts)  # type: ignore[return-value]

    def __init__(self, parts: list[bytes]) -> None:
        self.content = self.Body(parts)
        self.closed = False

    def close(self) -> None:
        self.closed = True


@pytest.mark.parametrize("module", TARGETS, ids=lambda m: m.__name__)
def test_a_response_is_read_and_closed_by_its_stream(module: ModuleType) -> None:
    parts = [f"data: {A}\n\ndata: {B}".encode(), b"\n\n"]
    response = Response(parts)
    with module.iter_chunks(response) as stream:
        assert len(list(stream)) == 2
    assert response.closed

    async def run(response: Any) -> int:
        async with module.aiter_chunks(response) as stream:
            count = len([chunk async for chunk in stream])
        assert response.closed
        return count

    assert asyncio.run(run(Response(parts))) == 2
    assert asyncio.run(run(AiohttpResponse(parts))) == 2


@pytest.mark.parametrize("module", TARGETS, ids=lambda m: m.__name__)
def test_an_async_close_method_that_is_a_coroutine_is_awaited(module: ModuleType) -> None:
    class Closable:
        closed = False

        def __aiter__(self) -> AsyncIterator[bytes]:
            return arrive([f"data: {A}\n\n".encode()]).__aiter__()  # type: ignore[return-value]

        async def close(self) -> None:
            Closable.closed = True

    async def run() -> None:
        await module.aiter_chunks(Closable()).aclose()

    asyncio.run(run())
    assert Closable.closed


@pytest.mark.parametrize("module", TARGETS, ids=lambda m: m.__name__)
@pytest.mark.parametrize("how", ("whole", "bytes", "random"))
def test_raw_events_give_back_every_byte_with_the_chunks(module: ModuleType, how: str) -> None:
    for name, text in FRAMINGS.items():
        events = list(module.iter_chunks(pieces(text, how)).raw_events())
        assert b"".join(e.raw for e in events) == text.encode(), name
        chunks = [module.dumps(e.chunk) for e in events if e.chunk is not None]
        assert chunks == [module.dumps(c) for c in module.iter_chunks([text])], name


@pytest.mark.parametrize("module", TARGETS, ids=lambda m: m.__name__)
def test_raw_events_carry_errors_and_read_on(module: ModuleType) -> None:
    error = 'event: error\ndata: {"error":{"message":"x","code":1}}\n\n'
    text = f"data: {A}\n\n: ping\n\n{error}data: {BAD}\n\ndata: [DONE]\n\n"

    async def run() -> tuple[list[Any], Any]:
        stream = module.aiter_chunks(arrive(pieces(text, "random")))
        return [event async for event in stream.raw_events()], stream

    events, stream = asyncio.run(run())
    assert b"".join(e.raw for e in events) == text.encode(), "every byte is forwarded"
    assert stream.done and not stream.skipped
    assert [type(e.error).__name__ for e in events] == [
        "NoneType",
        "NoneType",
        "StreamError",
        "StreamDecodeError",
        "NoneType",
    ]
    assert events[2].error.code == 1 and events[2].raw == error.encode()
    assert events[3].error.path == "$.choices[0].index" and events[3].event.data == BAD


@pytest.mark.parametrize("module", TARGETS, ids=lambda m: m.__name__)
def test_raw_events_forward_what_follows_done_to_the_end(module: ModuleType) -> None:
    parts = [f"data: {A}\r\n\r\ndata: [DONE]\r\n\r".encode(), b"\n: bye\r\n\r\n", b"x"]
    events = list(module.iter_chunks(parts).raw_events())
    assert b"".join(e.raw for e in events) == b"".join(parts)

    def broken_after_done() -> Iterator[bytes]:
        yield f"data: {A}\n\ndata: [DONE]\n\n".encode()
        raise OSError("the connection broke after [DONE]")

    stream = module.iter_chunks(broken_after_done())
    assert len(list(stream.raw_events())) == 2 and stream.done, "a complete stream stays so"
    assert len(list(module.iter_chunks(broken_after_done()))) == 1


@pytest.mark.parametrize("module", TARGETS, ids=lambda m: m.__name__)
def test_a_stream_is_read_one_way(module: ModuleType) -> None:
    stream = module.iter_chunks([f"data: {A}\n\n"])
    next(stream)
    with pytest.raises(RuntimeError, match="its chunks or its raw_events"):
        stream.raw_events()


async def write_async(module: ModuleType, chunks: list[Any]) -> bytes:
    return b"".join([piece async for piece in module.aiter_sse(arrive(chunks))])


@pytest.mark.parametrize("module", TARGETS, ids=lambda m: m.__name__)
def test_written_streams_read_back_as_the_same_chunks(module: ModuleType) -> None:
    for fixture in FIXTURE_STREAMS:
        chunks = [module.loads(text) for _, text in fixture.chunks]
        written = b"".join(module.iter_sse(chunks))
        assert written.endswith(module.SSE_DONE)
        stream = module.iter_chunks([module.SSE_KEEP_ALIVE, written])
        assert [module.dumps(c) for c in stream] == [module.dumps(c) for c in chunks]
        assert stream.done and not stream.other_events

        assert asyncio.run(write_async(module, chunks)) == written


def copied(module: ModuleType, text: str) -> bytes:
    """`text`, read as an upstream (skipping chunks that do not decode) and written
    again; the async writer must write the same bytes."""

    async def copy_async() -> bytes:
        stream = module.aiter_chunks(arrive([text]), on_error="skip")
        return b"".join([piece async for piece in module.aiter_sse(stream)])

    written = b"".join(module.iter_sse(module.iter_chunks([text], on_error="skip")))
    assert asyncio.run(copy_async()) == written
    return written


def read_error(module: ModuleType, text: str | bytes) -> Any:
    with pytest.raises(module.StreamError) as caught:
        list(module.iter_chunks([text]))
    return caught.value


@pytest.mark.parametrize("module", TARGETS, ids=lambda m: m.__name__)
@pytest.mark.parametrize("name", ERRORS)
def test_every_upstream_error_form_is_written_as_data_with_an_error_object(
    module: ModuleType, name: str
) -> None:
    text, message, code = ERRORS[name]
    written = copied(module, text)
    *chunks, last, after = written.split(b"\n\n")
    assert after == b"" and len(chunks) == 1, "the chunk before the error, then the error"
    # The form on which openai-python raises APIError: no event type, an `error` object.
    assert last.startswith(b'data: {"error":{') and b"\n" not in last, last
    upstream, again = read_error(module, text), read_error(module, written)
    assert (again.message, again.code) == (message, code)
    assert (again.type, again.param, again.event) == (upstream.type, upstream.param, "message")


@pytest.mark.parametrize("module", TARGETS, ids=lambda m: m.__name__)
@pytest.mark.parametrize("cut", ["at an event's end", "inside an event's JSON"])
def test_a_stream_cut_off_before_done_is_written_ending_in_an_error(
    module: ModuleType, cut: str
) -> None:
    text = f"data: {A}\n\n" + ("" if cut == "at an event's end" else f"data: {B[:30]}")
    written = copied(module, text)
    assert not written.endswith(module.SSE_DONE)
    error = read_error(module, written)
    assert error.type == "incomplete_stream" and "[DONE]" in str(error.message)
    assert copied(module, text + "\n\ndata: [DONE]\n\n").endswith(module.SSE_DONE)


@pytest.mark.parametrize("module", TARGETS, ids=lambda m: m.__name__)
def test_an_error_object_is_written_the_way_servers_write_one(module: ModuleType) -> None:
    error = {"message": "line one\nline two ✓", "type": "server_error", "code": 500}
    written = module.sse_error(error)
    assert (
        written
        == (
            'data: {"error":{"message":"line one\\nline two ✓","type":"server_error","code":500}}\n\n'
        ).encode()
    )
    assert read_error(module, written).error == error
    text = module.StreamError("up\nstream", module.ServerSentEvent("error", "up\nstream"))
    assert module.sse_error(text) == b'data: {"error":{"message":"up\\nstream"}}\n\n'


class ErrorObject(Mapping[str, Any]):
    """A Mapping that is not a dict, as a caller's own error type may be."""

    def __init__(self, items: dict[str, Any]) -> None:
        self.items_ = items

    def __getitem__(self, key: str) -> Any:
        return self.items_[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.items_)

    def __len__(self) -> int:
        return len(self.items_)


@pytest.mark.parametrize("module", TARGETS, ids=lambda m: m.__name__)
def test_an_error_object_may_be_any_mapping(module: ModuleType) -> None:
    error = {"message": "overloaded", "type": "server_error", "code": 529}
    expected = module.sse_error(error)
    assert module.sse_error(MappingProxyType(error)) == expected
    assert module.sse_error(ErrorObject(error)) == expected
    upstream = module.StreamError(ErrorObject(error), module.ServerSentEvent("error", "x"))
    assert (upstream.message, upstream.code) == ("overloaded", 529)
    assert module.sse_error(upstream) == expected
    with pytest.raises(TypeError, match="a Mapping"):
        module.sse_error(["not", "an", "object"])


@pytest.mark.parametrize("module", TARGETS, ids=lambda m: m.__name__)
def test_an_event_past_the_limit_raises_an_error_naming_the_limit(module: ModuleType) -> None:
    def endless() -> Iterator[bytes]:  # a broken upstream: one line that never ends
        yield b"data: "
        for _ in range(10_000):
            yield b"x" * 1024

    with pytest.raises(module.EventTooLargeError, match="max_event_size=100,000 bytes") as caught:
        list(module.iter_chunks(endless(), max_event_size=100_000))
    assert caught.value.limit == 100_000
    many_lines = [f"data: {A}\n\n".encode()] + [b"data: x\n"] * 20_000
    stream = module.iter_chunks(many_lines, max_event_size=100_000)
    with pytest.raises(module.EventTooLargeError):
        for _ in stream:
            pass
    assert module.MAX_EVENT_SIZE >= 64 * 2**20
    within = f"data: {content_chunk('x' * 99_000)}\n\n".encode()
    assert len(list(module.iter_chunks([within], max_event_size=100_000))) == 1


@pytest.mark.parametrize("module", TARGETS, ids=lambda m: m.__name__)
def test_a_big_event_in_small_reads_allocates_per_read_only_what_the_read_brings(
    module: ModuleType,
) -> None:
    """No clock: a decoder that re-joins (or copies to rescan) its buffer on every read
    allocates a copy of everything so far on each one, which tracemalloc's peak sees
    between one read and the next: in all, about the square of the event's size."""
    piece_size = 16 * 1024
    body = content_chunk("x" * (2 * 2**20)).encode()
    data = b"data: " + body
    parts = [data[i : i + piece_size] for i in range(0, len(data), piece_size)]
    per_read: list[int] = []

    def measured() -> Iterator[bytes]:
        for part in parts:
            tracemalloc.reset_peak()
            before, _ = tracemalloc.get_traced_memory()
            yield part  # the stream reads it before it asks for the next one
            per_read.append(tracemalloc.get_traced_memory()[1] - before)
        yield b"\n\n"

    tracemalloc.start()
    try:
        chunks = list(module.iter_chunks(measured()))
    finally:
        tracemalloc.stop()
    assert [module.dumps(c) for c in chunks] == [module.dumps(module.loads(body))]
    assert len(per_read) == len(parts) > 100
    for index, allocated in enumerate(per_read):
        held = index * piece_size  # the event so far, before this read
        # What the read brings, and the in-place growth of what is held (an eighth of it
        # in CPython, when a bytearray grows): never a copy of all of it.
        assert allocated < 2 * piece_size + held // 4, f"read {index} allocated {allocated}"
    assert sum(per_read) < 4 * len(data)


@pytest.mark.parametrize("module", TARGETS, ids=lambda m: m.__name__)
@pytest.mark.parametrize("protocol", ["chat", "messages"])
def test_a_whole_body_is_read_in_memory_bounded_by_its_largest_event(
    module: ModuleType, protocol: str
) -> None:
    """A body given whole was one piece, all of whose events were decoded before the
    first was yielded: memory in proportion to the body, not to its largest event.
    Four times the body costs no more."""
    if protocol == "chat":
        event = f"data: {content_chunk('x' * 100)}\n\n"
    else:
        delta = {"type": "content_block_delta", "index": 0,
                 "delta": {"type": "text_delta", "text": "x" * 100}}  # fmt: skip
        event = f"event: content_block_delta\ndata: {json.dumps(delta)}\n\n"
    list(module.iter_events(event * 2, protocol=protocol))  # the module imported, warm

    def peak_of(size: int) -> int:
        body = (event * (size // len(event))).encode()
        tracemalloc.start()
        try:
            base = tracemalloc.get_traced_memory()[0]
            read = sum(1 for _ in module.iter_events(body, protocol=protocol))
            peak = tracemalloc.get_traced_memory()[1] - base
        finally:
            tracemalloc.stop()
        assert read == size // len(event)
        return peak

    small, large = peak_of(2**20), peak_of(4 * 2**20)
    assert large < 1.25 * small + 2**16, f"{small} bytes at 1 MB, {large} at 4 MB"


@pytest.mark.parametrize("module", TARGETS, ids=lambda m: m.__name__)
def test_one_long_text_is_read_in_a_few_times_its_size(module: ModuleType) -> None:
    """A 20 MB delta peaked at 13 times its size in the standard-library targets, which
    orjson read (it sizes its pool by the payload's length); every target keeps to a
    few times the event's size."""
    body = f"data: {content_chunk('x' * (20 * 2**20))}\n\ndata: [DONE]\n\n".encode()
    tracemalloc.start()
    try:
        [chunk] = module.iter_chunks([body])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(module.dumps(chunk)) > 20 * 2**20
    assert peak < 4 * len(body), f"{peak / len(body):.1f} times the event"


@pytest.mark.parametrize("module", TARGETS, ids=lambda m: m.__name__)
def test_a_stream_read_in_another_task_is_closed_through_its_source(module: ModuleType) -> None:
    """The reading task waits for the network: closing the stream from elsewhere closes
    the source (the response), which ends the read, instead of failing."""

    class Blocking:
        def __init__(self) -> None:
            self.released = asyncio.Event()

        def __aiter__(self) -> AsyncIterator[bytes]:
            return self.pieces()

        async def pieces(self) -> AsyncIterator[bytes]:
            yield f"data: {A}\n\n".encode()
            await self.released.wait()  # a read that only closing ends

        async def aclose(self) -> None:
            self.released.set()

    async def run() -> list[Any]:
        source = Blocking()
        stream = module.aiter_chunks(source)
        read: list[Any] = []
        reader = asyncio.create_task(read_all(stream, read))
        while not read:
            await asyncio.sleep(0)
        await stream.aclose()
        await asyncio.wait_for(reader, 5)
        assert source.released.is_set()
        return read

    async def read_all(stream: Any, read: list[Any]) -> None:
        async for chunk in stream:
            read.append(chunk)

    assert len(asyncio.run(run())) == 1


@pytest.mark.parametrize("module", TARGETS, ids=lambda m: m.__name__)
def test_a_writer_closed_early_closes_the_stream_it_reads(module: ModuleType) -> None:
    """A gateway's client goes away: closing the writer closes the upstream response."""
    event = f"data: {A}\n\n".encode()

    class Upstream:
        closed = 0

        def iter_bytes(self) -> Iterator[bytes]:
            while True:
                yield event

        def aiter_bytes(self) -> AsyncIterator[bytes]:
            return arrive([event] * 1000)  # type: ignore[return-value]

        def close(self) -> None:
            Upstream.closed += 1

        async def aclose(self) -> None:
            Upstream.closed += 1

    written = module.iter_sse(module.iter_chunks(Upstream()))
    next(written)
    written.close()
    assert Upstream.closed == 1

    async def run() -> None:
        written = module.aiter_sse(module.aiter_chunks(Upstream()))
        await written.__anext__()
        await written.aclose()

    asyncio.run(run())
    assert Upstream.closed == 2


@pytest.mark.parametrize("module", TARGETS, ids=lambda m: m.__name__)
def test_a_source_is_closed_once(module: ModuleType) -> None:
    source = Source([f"data: {A}\n\ndata: [DONE]\n\n".encode()])
    calls = []
    source.close = lambda: calls.append(1)  # type: ignore[method-assign]
    with module.iter_chunks(source) as stream:
        assert len(list(stream)) == 1
    stream.close()
    assert calls == [1]


@pytest.mark.parametrize("module", TARGETS, ids=lambda m: m.__name__)
def test_a_whole_body_is_a_source_too(module: ModuleType) -> None:
    body = f"data: {A}\n\ndata: {B}\n\ndata: [DONE]\n\n"
    assert len(list(module.iter_chunks(body.encode()))) == 2
    assert len(list(module.iter_chunks(body))) == 2


@pytest.mark.parametrize("module", TARGETS, ids=lambda m: m.__name__)
def test_an_error_with_half_a_surrogate_pair_is_written_as_valid_utf8(module: ModuleType) -> None:
    written = module.sse_error({"message": "bad \ud800 input"})
    written.decode()  # strict UTF-8
    with pytest.raises(module.StreamError) as caught:
        list(module.iter_chunks([written]))
    assert caught.value.message == "bad \ud800 input"
    # The event type of what was read is not written: a line end in it injects nothing.
    injected = module.StreamError("x", module.ServerSentEvent("err\ndata: injected", "x"))
    assert module.sse_error(injected) == b'data: {"error":{"message":"x"}}\n\n'


@pytest.mark.parametrize("module", TARGETS, ids=lambda m: m.__name__)
@pytest.mark.parametrize("ending", ["\n", "\r\n", "\r"])
def test_the_limit_is_exact_however_the_stream_is_split(module: ModuleType, ending: str) -> None:
    event = f"data: {A}{ending}{ending}".encode()
    body = event * 3 + f"data: [DONE]{ending}{ending}".encode()
    for cut in range(1, len(body)):
        parts = [body[:cut], body[cut:]]
        assert len(list(module.iter_chunks(parts, max_event_size=len(event)))) == 3, cut
        with pytest.raises(module.EventTooLargeError):
            list(module.iter_chunks(parts, max_event_size=len(event) - 1))


def verdict(module: ModuleType, parts: list[bytes], limit: int, raw: bool) -> tuple[int, bool]:
    """How many chunks (or raw events that hold an event: what follows `[DONE]` comes
    as it was read) a stream of `parts` yields, and whether it accepts every event."""
    stream = module.iter_chunks(parts, max_event_size=limit)
    read = 0
    try:
        for item in stream.raw_events() if raw else stream:
            read += not raw or item.chunk is not None or item.event is not None
    except module.EventTooLargeError:
        return read, False
    return read, True


async def averdict(
    module: ModuleType, parts: list[bytes], limit: int, raw: bool
) -> tuple[int, bool]:
    stream = module.aiter_chunks(arrive(parts), max_event_size=limit)
    read = 0
    try:
        async for item in stream.raw_events() if raw else stream:
            read += not raw or item.chunk is not None or item.event is not None
    except module.EventTooLargeError:
        return read, False
    return read, True


async def averdicts(
    module: ModuleType, splits: list[list[bytes]], limit: int, raw: bool
) -> list[tuple[int, bool]]:
    return [await averdict(module, parts, limit, raw) for parts in splits]


@pytest.mark.parametrize("module", TARGETS, ids=lambda m: m.__name__)
@pytest.mark.parametrize("ending", ["\n", "\r\n", "\r"])
@pytest.mark.parametrize("raw", [False, True], ids=["chunks", "raw events"])
def test_an_event_at_the_limit_is_accepted_or_refused_by_its_bytes_alone(
    module: ModuleType, ending: str, raw: bool
) -> None:
    """A CR that ends an event may end a read, its LF (CRLF) starting the next: the
    event is the same bytes, and one of exactly the limit is read alike, however split,
    followed by a smaller event (`[DONE]`) or by the end of the source."""
    event = f"data: {A}{ending}{ending}".encode()
    for body in (event + f"data: [DONE]{ending}{ending}".encode(), event):
        splits = [[body[:cut], body[cut:]] for cut in range(1, len(body))]
        splits += [[body[i : i + 1] for i in range(len(body))]]
        splits += [
            [
                bytes(p)
                for p in pieces(body.decode(), "empty reads, cut after CR")
                if isinstance(p, bytes)
            ]
        ]
        for limit, accepted in ((len(event), True), (len(event) - 1, False)):
            expected = verdict(module, [body], limit, raw)
            assert expected[1] is accepted
            every = [expected] * len(splits)
            assert [verdict(module, parts, limit, raw) for parts in splits] == every, limit
            assert asyncio.run(averdicts(module, splits, limit, raw)) == every, limit


@pytest.mark.parametrize("module", TARGETS, ids=lambda m: m.__name__)
def test_tiny_reads_of_an_endless_line_hold_about_the_limit(module: ModuleType) -> None:
    limit = 256 * 1024

    def trickle() -> Iterator[bytes]:
        yield b"data: "
        while True:
            yield b"xy"

    def raw(stream: Any) -> object:
        return list(stream.raw_events())

    for read in (list, raw):
        tracemalloc.start()
        try:
            with pytest.raises(module.EventTooLargeError):
                read(module.iter_chunks(trickle(), max_event_size=limit))
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert peak < 4 * limit, peak


@pytest.mark.parametrize("module", TARGETS, ids=lambda m: m.__name__)
def test_empty_reads_after_done_are_not_raw_events(module: ModuleType) -> None:
    parts = [f"data: {A}\n\ndata: [DONE]\n\n".encode(), b"", b": bye\n\n", b""]
    events = list(module.iter_chunks(parts).raw_events())
    assert [e.raw for e in events][-1] == b": bye\n\n"
    assert all(e.raw for e in events)


HALVES = "a\ud83d b \ude00 c"
"""Halves of surrogate pairs, as a token split across chunks may hold them."""


def written_halves(module: ModuleType) -> dict[str, bytes]:
    """What each writer writes of a chunk built with the classes (keywords in spec order,
    as a TypedDict writes them as made) whose text holds `HALVES`."""

    def chunk(text: str) -> Any:
        choice = module.Choice(index=0, delta=module.ChoiceDelta(content=text), finish_reason=None)
        return module.ChatCompletionChunk(id="c", choices=[choice], created=1, model="m")

    built = chunk(HALVES)
    return {
        "dumps": module.dumps(built).encode(),
        "sse_chunk": module.sse_chunk(built),
        "iter_sse": b"".join(module.iter_sse([built])),
        "iter_sse, a dialect": b"".join(module.iter_sse([built], dialect="reasoning")),
        "aiter_sse": asyncio.run(write_async(module, [built])),
        "TokenFrames.frame": module.TokenFrames(chunk("")).frame(HALVES),
    }


def test_a_chunk_built_with_halves_of_surrogate_pairs_is_written_alike_by_every_target() -> None:
    """msgspec cannot write half of a pair as UTF-8; json writes its escape, the same
    text, and every target must write those bytes."""
    outputs = {name: written_halves(module) for name, module in ALL_TARGETS.items()}
    expected = outputs["dataclasses"]
    assert b'"content":"a\\ud83d b \\ude00 c"' in expected["TokenFrames.frame"]
    for name, written in outputs.items():
        assert written == expected, name
        for event in written.values():
            event.decode()  # strict UTF-8


def retained_bytes(read: Callable[[], Any]) -> tuple[int, Any]:
    """The memory what `read()` returns still holds once it returned, and that."""
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        kept = read()
        gc.collect()
        return tracemalloc.get_traced_memory()[0] - before, kept
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("module", TARGETS, ids=lambda m: m.__name__)
@pytest.mark.parametrize("mode", ["sync", "async"])
def test_skipped_events_hold_their_cut_data_not_their_payload(
    module: ModuleType, mode: str
) -> None:
    """Each kept skipped event holds `KEPT_DATA` characters, and its error nothing
    more: the error's traceback held each whole payload in its frames."""
    big_bad = BAD.replace('"bad"', json.dumps("x" * 50_000))
    count = module.KEPT_EVENTS + 50

    def upstream() -> Iterator[bytes]:  # made as read: the source holds no payload
        for _ in range(count):
            yield f"data: {big_bad}\n\n".encode()
        yield b"data: [DONE]\n\n"

    def read() -> Any:
        if mode == "sync":
            stream = module.iter_chunks(upstream(), on_error="skip")
            assert list(stream) == []
            return stream

        async def run() -> Any:
            stream = module.aiter_chunks(arrive(upstream()), on_error="skip")
            assert [chunk async for chunk in stream] == []
            return stream

        return asyncio.run(run())

    retained, stream = retained_bytes(read)
    assert (stream.skipped_count, len(stream.skipped), stream.done) == (
        count,
        module.KEPT_EVENTS,
        True,
    )
    assert stream.skipped[0].error.path == "$.choices[0].index"
    assert retained < 2 * module.KEPT_EVENTS * module.KEPT_DATA, retained  # 15 MB held


@pytest.mark.parametrize("module", TARGETS, ids=lambda m: m.__name__)
@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_flood_of_event_names_is_counted_in_bounded_memory(module: ModuleType, mode: str) -> None:
    """Each type keeps `KEPT_NAME` characters; past `KEPT_EVENTS` types, events are
    counted under `MORE_NAMES` (800 types of 20 kB each held 16 MB)."""
    count, long = 800, "y" * 20_000

    def upstream() -> Iterator[bytes]:
        for number in range(count):
            yield f"event: x{number}{long}\ndata: {number}\n\n".encode()
        yield b"data: [DONE]\n\n"

    def read() -> Any:
        if mode == "sync":
            stream = module.iter_chunks(upstream())
            assert list(stream) == []
            return stream

        async def run() -> Any:
            stream = module.aiter_chunks(arrive(upstream()))
            assert [chunk async for chunk in stream] == []
            return stream

        return asyncio.run(run())

    retained, stream = retained_bytes(read)
    counts, kept = stream.other_event_counts, module.KEPT_EVENTS
    assert retained < kept * 4096, retained
    names = [f"x{number}{long}"[: module.KEPT_NAME - 1] + "…" for number in range(kept)]
    assert counts == {**dict.fromkeys(names, 1), module.MORE_NAMES: count - kept}
    assert [event.event for event in stream.other_events] == names
    assert "\n" in module.MORE_NAMES, "no event type is the key of the rest"


NOT_EVENTS = {
    "JSON Lines": (f"{A}\n{B}\n", "these lines look like JSON Lines; a server-sent-event"),
    "an HTML page": (
        "<!DOCTYPE html>\n<html><head><title>404 Not Found</title></head></html>\n",
        "an HTML page",
    ),
    "a file's path": ("/var/captures/stream.sse", "looks like a file's path"),
    "a Windows path": ("C:\\captures\\stream.sse", "looks like a file's path"),
}
"""Bodies that hold lines but no event, and what the warning says of each."""
EVENTLESS = {"empty": "", "comments alone": ": keep-alive\n\n: keep-alive\n\n"}
"""Bodies without events that are server-sent-event streams still: no warning."""
WITH_EVENTS = {"[DONE] alone": "data: [DONE]\n\n", "comments, [DONE]": ": ping\n\ndata: [DONE]\n\n"}


def read_body(module: ModuleType, body: str, mode: str, raw: bool) -> Any:
    """The stream of `body` read to its end (a str whole, as given; else its bytes)."""
    if mode == "sync":
        stream = module.iter_chunks(body if "\n" not in body else [body.encode()])
        list(stream.raw_events() if raw else stream)
        return stream

    async def run() -> Any:
        stream = module.aiter_chunks(arrive([body.encode()]))
        _ = [item async for item in (stream.raw_events() if raw else stream)]
        return stream

    return asyncio.run(run())


@pytest.mark.parametrize("module", TARGETS, ids=lambda m: m.__name__)
@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("raw", [False, True], ids=["chunks", "raw events"])
def test_a_body_without_a_single_event_says_so(module: ModuleType, mode: str, raw: bool) -> None:
    for name, (body, hint) in NOT_EVENTS.items():
        if mode == "async" and "\n" not in body:
            continue  # a path is a str source, read whole by iter_chunks only
        with pytest.warns(module.EventlessStreamWarning) as caught:
            stream = read_body(module, body, mode, raw)
        (warning,) = caught
        assert hint in str(warning.message), name
        assert "without a single event" in str(warning.message), name
        assert warning.filename == __file__, "the warning names the reader's line"
        assert (stream.eventless, stream.done) == (True, False), name
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # legitimately without events, or with one
        for name, body in EVENTLESS.items():
            stream = read_body(module, body, mode, raw)
            assert (stream.eventless, stream.done) == (True, False), name
        for name, body in WITH_EVENTS.items():
            stream = read_body(module, body, mode, raw)
            assert (stream.eventless, stream.done) == (False, True), name
        for text in (FRAMINGS["C4 comments"], f"data: {A}\n\n"):
            stream = read_body(module, text, mode, raw)
            assert not stream.eventless
    unended = module.iter_chunks([f"{A}\n".encode()])
    assert not unended.eventless, "not said before the source ends"
