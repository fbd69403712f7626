"""What an upstream can send, or a caller can pass, that must not crash the stream layer
or make it lie (issue 22): pieces of the wrong type, bytes-like pieces and bodies,
options that cannot work, input nested past the recursion limit, errors that travel
between processes, and sources closed at the end of their input. Every target, sync and
async."""

from __future__ import annotations

import asyncio
import copy
import json
import pickle
import tracemalloc
from collections.abc import AsyncIterator, Iterable, Iterator
from types import ModuleType
from typing import Any

import pytest

from tests.helpers.support import TARGETS as ALL_TARGETS
from tests.runtime.test_sse import A, B
from tests.runtime.test_streams import arrive

TARGETS = list(ALL_TARGETS.values())
BODY = f"data: {A}\n\ndata: {B}\n\ndata: [DONE]\n\n".encode()
DEEP = "[" * 100_000 + "]" * 100_000
"""Nested far past Python's recursion limit."""


def sync_read(module: ModuleType, source: Any, **options: Any) -> tuple[list[str], list[str]]:
    """The chunks read, as JSON, and the error raised (its type and text), if any."""
    seen: list[str] = []
    try:
        for chunk in module.iter_chunks(source, **options):
            seen.append(module.dumps(chunk))
    except Exception as error:  # the type is asserted by the caller
        return seen, [type(error).__name__, str(error)]
    return seen, []


def async_read(module: ModuleType, parts: Iterable[Any], **options: Any) -> Any:
    async def run() -> tuple[list[str], list[str]]:
        seen: list[str] = []
        try:
            async for chunk in module.aiter_chunks(arrive(parts), **options):
                seen.append(module.dumps(chunk))
        except Exception as error:
            return seen, [type(error).__name__, str(error)]
        return seen, []

    return asyncio.run(run())


def both(module: ModuleType, parts: list[Any], **options: Any) -> tuple[list[str], list[str]]:
    """What the sync and the async stream make of `parts`: the same."""
    read = sync_read(module, parts, **options)
    assert async_read(module, parts, **options) == read
    return read


# --- pieces -----------------------------------------------------------------------------


@pytest.mark.parametrize("module", TARGETS, ids=lambda m: m.__name__)
@pytest.mark.parametrize("bad", [None, 5, {"data": "x"}, 1.5], ids=repr)
def test_a_piece_of_another_type_raises_type_error_naming_it(module: ModuleType, bad: Any) -> None:
    parts = [f"data: {A}\n\n".encode(), bad, f"data: {B}\n\n".encode()]
    seen, error = both(module, parts)
    assert seen == [module.dumps(module.loads(A))], "the chunk before it, once"
    assert error[0] == "TypeError" and type(bad).__name__ in error[1], error


@pytest.mark.parametrize("module", TARGETS, ids=lambda m: m.__name__)
@pytest.mark.parametrize("kind", [bytearray, memoryview], ids=lambda k: k.__name__)
def test_bytes_like_pieces_and_bodies_read_like_bytes(module: ModuleType, kind: type) -> None:
    expected = sync_read(module, [BODY])
    assert len(expected[0]) == 2 and not expected[1]
    split = [kind(BODY[i : i + 7]) for i in range(0, len(BODY), 7)]
    assert both(module, split) == expected
    assert sync_read(module, kind(BODY)) == expected, "a whole body"


# --- options ----------------------------------------------------------------------------


@pytest.mark.parametrize("module", TARGETS, ids=lambda m: m.__name__)
@pytest.mark.parametrize(
    ("options", "error", "says"),
    [
        ({"max_event_size": None}, TypeError, "max_event_size must be a number of bytes"),
        ({"max_event_size": "1000"}, TypeError, "max_event_size must be a number of bytes"),
        ({"max_event_size": True}, TypeError, "max_event_size must be a number of bytes"),
        ({"max_event_size": 0}, ValueError, "at least 1 byte"),
        ({"max_event_size": -5}, ValueError, "at least 1 byte"),
        ({"on_error": "ignore"}, ValueError, "on_error must be 'raise' or 'skip'"),
    ],
    ids=lambda v: repr(v) if isinstance(v, dict) else "",
)
def test_a_bad_option_is_refused_at_the_call(
    module: ModuleType, options: dict[str, Any], error: type[Exception], says: str
) -> None:
    async def nothing() -> AsyncIterator[bytes]:
        yield b""

    with pytest.raises(error, match=says):
        module.iter_chunks([BODY], **options)
    with pytest.raises(error, match=says):
        module.aiter_chunks(nothing(), **options)


# --- nesting past the recursion limit ---------------------------------------------------


@pytest.mark.parametrize("module", TARGETS, ids=lambda m: m.__name__)
def test_an_error_event_nested_too_deeply_is_a_stream_error(module: ModuleType) -> None:
    parts = [f"data: {A}\n\nevent: error\ndata: {DEEP}\n\n".encode()]
    seen, error = both(module, parts)
    assert len(seen) == 1 and error[0] == "StreamError", error[:1]
    events = list(module.iter_chunks(parts).raw_events())
    assert isinstance(events[-1].error, module.StreamError)
    assert events[-1].error.payload == DEEP, "kept as the text it came as"


@pytest.mark.parametrize("module", TARGETS, ids=lambda m: m.__name__)
@pytest.mark.parametrize("where", ["chunk", "unknown key", "error payload"])
def test_a_chunk_nested_too_deeply_is_a_located_decode_error(
    module: ModuleType, where: str
) -> None:
    head = '{"id":"c","object":"chat.completion.chunk","created":1,"model":"m"'
    payload = {
        "chunk": f'{head},"choices":{DEEP}}}',
        "unknown key": f'{head},"choices":[],"zz":{DEEP}}}',
        "error payload": f'{{"error":{DEEP}}}',
    }[where]
    parts = [f"data: {A}\n\ndata: {payload}\n\n".encode()]
    seen, error = both(module, parts)
    assert len(seen) == 1 and error[0] == "StreamDecodeError", error[:1]
    assert error[1].startswith("$"), "located"
    [*_, last] = module.iter_chunks(parts).raw_events()
    assert isinstance(last.error, module.ChunkDecodeError), "raw_events() yields it"


def arguments_nested(depth: int, text: str = "") -> str:
    """A chunk whose tool call's arguments (object form) make the payload `depth` deep;
    `text` goes into the innermost object's key, to hold brackets that do not nest."""
    inner = depth - 7  # the chunk, choices, [0], delta, tool_calls, [0], function
    value = '{"a":' * (inner - 1) + json.dumps({text: 1}) + "}" * (inner - 1)
    return (
        '{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":'
        '[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"t","type":"function",'
        f'"function":{{"name":"f","arguments":{value}}}}}]}}}}]}}'
    )


def deep_stack(frames: int, call: Any) -> Any:
    """`call()` from `frames` Python frames deep, as a framework's stack puts it."""
    return call() if frames == 0 else deep_stack(frames - 1, call)


@pytest.mark.parametrize("module", TARGETS, ids=lambda m: m.__name__)
def test_nesting_up_to_max_depth_reads_writes_and_accumulates(module: ModuleType) -> None:
    """MAX_DEPTH deep is read, written and accumulated, from a caller 400 frames deep;
    one level more is a located decode error; brackets in text do not count."""
    assert module.MAX_DEPTH == 512
    deepest = arguments_nested(module.MAX_DEPTH, text="[[[{{{" * 200)
    assert json.loads(deepest)

    def round_trip() -> str:
        chunk = module.loads(deepest)
        accumulator = module.ChunkAccumulator()
        accumulator.add(chunk)
        accumulator.result()
        written: str = module.dumps(chunk)
        return written

    assert json.loads(deep_stack(400, round_trip)) == json.loads(deepest)
    for text in (arguments_nested(module.MAX_DEPTH + 1), "[" * 600 + "]" * 600):
        with pytest.raises(module.ChunkDecodeError, match="nested more than 512 deep, at byte"):
            module.loads(text)
        with pytest.raises(module.ChunkDecodeError, match="nested more than 512"):
            module.loads(text.encode())


@pytest.mark.parametrize("module", TARGETS, ids=lambda m: m.__name__)
def test_a_stream_of_non_finite_numbers_is_a_located_error(module: ModuleType) -> None:
    """A chunk with NaN is a decode error at its path; skipped under on_error=skip; and
    an error event holding NaN is kept as its text, so that sse_error writes JSON."""
    bad = A[:-1] + ',"x":{"y":[NaN]}}'
    seen, error = both(module, [f"data: {A}\n\ndata: {bad}\n\n".encode()])
    assert len(seen) == 1 and error == [
        "StreamDecodeError",
        "$.x.y[0]: NaN is not a finite JSON number",
    ]
    stream = module.iter_chunks(
        [f"data: {bad}\n\ndata: {A}\n\ndata: [DONE]\n\n".encode()], on_error="skip"
    )
    assert len(list(stream)) == 1 and stream.skipped_count == 1
    events = [b'event: error\ndata: {"error":{"message":"m","score":-Infinity}}\n\n']
    with pytest.raises(module.StreamError) as caught:
        list(module.iter_chunks(events))
    written = module.sse_error(caught.value)
    payload = json.loads(written.removeprefix(b"data: "), parse_constant=pytest.fail)
    assert payload == {"error": {"message": '{"error":{"message":"m","score":-Infinity}}'}}


# --- errors are values ------------------------------------------------------------------


def errors(module: ModuleType) -> list[Exception]:
    event = module.ServerSentEvent("error", '{"error":{"message":"m","code":1}}', "7", 10)
    decode = module.ChunkDecodeError("expected integer").under("[0]").under(".choices")
    return [
        module.StreamError({"message": "m", "code": 1, "type": "t", "param": "p"}, event),
        module.StreamError("plain text", module.ServerSentEvent("error", "plain text")),
        module.EventTooLargeError(1000),
        decode,
    ]


@pytest.mark.parametrize("module", TARGETS, ids=lambda m: m.__name__)
@pytest.mark.parametrize("how", ["pickle", "copy", "deepcopy"])
def test_errors_survive_pickle_and_copy(module: ModuleType, how: str) -> None:
    again = {
        "pickle": lambda e: pickle.loads(pickle.dumps(e)),
        "copy": copy.copy,
        "deepcopy": copy.deepcopy,
    }[how]
    for error in errors(module):
        other = again(error)
        assert type(other) is type(error)
        assert str(other) == str(error)
        assert vars(other) == vars(error)
    decode = again(errors(module)[-1])
    assert decode.path == "$.choices[0]"


# --- the end of input closes the source -------------------------------------------------


class Source:
    """Pieces that record whether they were closed."""

    def __init__(self, parts: list[bytes]) -> None:
        self.parts = parts
        self.closed = False

    def __iter__(self) -> Iterator[bytes]:
        return iter(self.parts)

    def close(self) -> None:
        self.closed = True


class AsyncSource(Source):
    def __aiter__(self) -> AsyncIterator[bytes]:
        async def pieces() -> AsyncIterator[bytes]:
            for part in self.parts:
                yield part

        return pieces()

    async def aclose(self) -> None:
        self.closed = True


ENDINGS = {
    "[DONE] and its blank line": BODY,
    "[DONE] without its final newline": BODY.removesuffix(b"\n\n"),
    "a clean end without [DONE]": BODY.removesuffix(b"data: [DONE]\n\n"),
}


@pytest.mark.parametrize("module", TARGETS, ids=lambda m: m.__name__)
@pytest.mark.parametrize("ending", ENDINGS)
def test_the_end_of_the_input_closes_the_source(module: ModuleType, ending: str) -> None:
    body = ENDINGS[ending]
    source = Source([body[:10], body[10:]])
    assert len(list(module.iter_chunks(source))) == 2 and source.closed
    raw = Source([body])
    assert len(list(module.iter_chunks(raw).raw_events())) >= 2 and raw.closed

    async def read_async() -> AsyncSource:
        source = AsyncSource([body[:10], body[10:]])
        assert len([c async for c in module.aiter_chunks(source)]) == 2
        return source

    assert asyncio.run(read_async()).closed


# --- memory bounded by the caller's limit -------------------------------------------


def peak_bytes(read: Any) -> int:
    tracemalloc.start()
    try:
        read()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("module", TARGETS, ids=lambda m: m.__name__)
def test_an_event_of_many_short_data_lines_holds_at_most_twice_the_limit(
    module: ModuleType,
) -> None:
    limit = 1024 * 1024
    lines = limit // 8 - 1  # "data: x\n" each, and the blank line: just under the limit

    def upstream() -> Iterator[bytes]:
        yield from (b"data: x\n" for _ in range(lines))
        yield b"\ndata: [DONE]\n\n"

    stream = module.iter_chunks(upstream(), max_event_size=limit)
    assert peak_bytes(lambda: list(stream)) < 2 * limit
    assert stream.other_event_counts == {"message": 1}
    assert stream.other_events[0].data == "\n".join(["x"] * lines)[: module.KEPT_DATA]


@pytest.mark.parametrize("module", TARGETS, ids=lambda m: m.__name__)
@pytest.mark.parametrize("read", ["chunks", "raw events"])
def test_a_flood_of_other_events_and_bad_chunks_is_counted_not_kept(
    module: ModuleType, read: str
) -> None:
    flood = 20 * module.KEPT_EVENTS
    bad = "data: {" + '"x": 1, ' * 1000 + "\n\n"  # cut JSON, longer than KEPT_DATA

    def upstream() -> Iterator[str]:
        for number in range(flood):
            yield f"event: ping\ndata: {number}\n\n" if number % 2 else bad
        yield f"data: {A}\n\ndata: [DONE]\n\n"

    stream = module.iter_chunks(upstream(), on_error="skip")
    if read == "chunks":
        assert len(list(stream)) == 1
        assert stream.skipped_count == flood // 2
        assert len(stream.skipped) == module.KEPT_EVENTS
        assert all(len(s.event.data) <= module.KEPT_DATA for s in stream.skipped)
    else:
        assert len([e for e in stream.raw_events() if e.chunk is not None]) == 1
    assert stream.other_event_counts == {"ping": flood // 2}
    assert [e.data for e in stream.other_events] == [
        str(n) for n in range(1, 2 * module.KEPT_EVENTS, 2)
    ]
