"""Random hostile upstreams (issue 22): interleavings of chunks, pings, comments, bad and
cut events, error events, huge lines and deeply nested payloads, with random line ends
and random splits. Read with `on_error="skip"`, every stream:

- raises nothing but the documented `StreamError` and `EventTooLargeError`;
- yields every chunk a reference reader finds, once and in order (sync and async);
- holds memory bounded by its limit, not by the stream's length (tracemalloc, no clock).

The reference reader follows the HTML standard's event-stream rules on the whole body at
once, as slowly and plainly as possible, with the stream layer's own choices: the end
of the body ends its last event, `[DONE]` ends the chunks, an event larger than the limit
(counted from the end of the event before it) stops the stream.
"""

from __future__ import annotations

import asyncio
import itertools
import re
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.helpers.support import TARGETS as ALL_TARGETS
from tests.helpers.support import count_examples
from tests.runtime.test_sse import content_chunk
from tests.runtime.test_streams import arrive

TARGETS = list(ALL_TARGETS.values())
LIMIT = 16 * 1024
"""max_event_size of the streams read here."""
HUGE = 3 * LIMIT
"""The size of a huge line: past the limit, whatever is around it."""
DEEP = 1_500
"""Nesting past Python's recursion limit."""

ITEMS: dict[str, Callable[[int], str]] = {
    "chunk": lambda n: f"data: {content_chunk(f'piece {n}')}\n\n",
    "chunk over two data lines": lambda n: (
        f'data: {{"id":"c","object":"chat.completion.chunk",\ndata: "created":1,"model":"m",'
        f'"choices":[{{"index":0,"delta":{{"content":"two {n}"}}}}]}}\n\n'
    ),
    "ping": lambda n: f"event: ping\ndata: {{}}\nid: {n}\n\n",
    "comment": lambda n: f": keep-alive {n}\n\n",
    "bad chunk": lambda n: f'data: {{"id":{n},"object":"chat.completion.chunk","choices":[]}}\n\n',
    "cut JSON": lambda n: 'data: {"id":"c","choices":[{"index":0,"delta":\n\n',
    "text": lambda n: f"data: not json {n}\n\n",
    "nested object": lambda n: "data: " + '{"a":' * DEEP + "1" + "}" * DEEP + "\n\n",
    "nested list": lambda n: "data: " + "[" * DEEP + "]" * DEEP + "\n\n",
    "error event": lambda n: f'event: error\ndata: {{"error":{{"message":"e{n}"}}}}\n\n',
    "error payload": lambda n: f'data: {{"error":{{"message":"p{n}","code":500}}}}\n\n',
    "huge line": lambda n: "data: " + "x" * HUGE + "\n\n",
    "done": lambda n: "data: [DONE]\n\n",
}
# Rare items are drawn less often, so that most streams run long.
WEIGHTS = {"error event": 1, "error payload": 1, "huge line": 1, "done": 1}


@st.composite
def streams(draw: st.DrawFn) -> tuple[bytes, list[bytes]]:
    """A body and the pieces it arrives in."""
    names = [n for n in ITEMS for _ in range(WEIGHTS.get(n, 6))]
    items = draw(st.lists(st.sampled_from(names), max_size=40))
    ending = draw(st.sampled_from(["\n", "\r\n", "\r"]))
    body = "".join(ITEMS[name](number) for number, name in enumerate(items))
    data = body.replace("\n", ending).encode()
    cuts = sorted(set(draw(st.lists(st.integers(0, len(data)), max_size=30))))
    edges = [0, *cuts, len(data)]
    return data, [data[a:b] for a, b in itertools.pairwise(edges)]


@dataclass
class Expected:
    chunks: list[str]
    """What `dumps` writes of each chunk, in order."""
    end: str
    """"done", "end", "StreamError" or "EventTooLargeError"."""


def reference(module: ModuleType, data: bytes) -> Expected:
    """What a stream of `data` must yield, read by the rules the module documents."""
    chunks: list[str] = []
    values: list[bytes] = []
    name = b""
    since = 0  # where the current event's bytes start (the end of the event before it)
    lines = [
        (m.start(), m.group(1), m.end()) for m in re.finditer(rb"([^\r\n]*)(?:\r\n|\r|\n|$)", data)
    ]
    for start, line, end in lines:
        if start == len(data) and not line:
            break  # the empty match at the very end
        if end - since > LIMIT and (line or values):
            return Expected(chunks, "EventTooLargeError")
        if line:
            field, colon, value = line.partition(b":")
            if not field and colon:
                continue  # a comment
            value = value.removeprefix(b" ")
            if field == b"data":
                values.append(value)
            elif field == b"event":
                name = value
            continue
        since = end
        outcome = _dispatch(module, name, values, chunks)
        name, values = b"", []
        if outcome:
            return Expected(chunks, outcome)
    outcome = _dispatch(module, name, values, chunks)  # the end of the body ends it
    return Expected(chunks, outcome or "end")


def _dispatch(module: ModuleType, name: bytes, values: list[bytes], chunks: list[str]) -> str:
    if not values:
        return ""
    payload = b"\n".join(values)
    if name not in (b"", b"message"):
        return "StreamError" if name == b"error" else ""
    if payload.strip() == b"[DONE]":
        return "done"
    if not payload.lstrip().startswith(b"{"):
        return ""
    try:
        chunk = module.loads(payload)
    except module.ErrorReport:
        return "StreamError"
    except module.ChunkDecodeError:
        return ""  # skipped
    chunks.append(module.dumps(chunk))
    return ""


def read(module: ModuleType, pieces: list[bytes], expected: Expected) -> tuple[int, str]:
    """Read the stream, checking each chunk against `expected` as it comes (nothing is
    held, so that the memory measured is the stream's); how many came, and how it ended."""
    stream = module.iter_chunks(pieces, on_error="skip", max_event_size=LIMIT)
    count = 0
    try:
        for chunk in stream:
            assert count < len(expected.chunks), "a chunk the reference did not find"
            assert module.dumps(chunk) == expected.chunks[count], f"chunk {count}"
            count += 1
    except (module.StreamError, module.EventTooLargeError) as error:
        return count, type(error).__name__
    return count, "done" if stream.done else "end"


def read_async(module: ModuleType, pieces: list[bytes]) -> tuple[list[str], str]:
    async def run() -> tuple[list[str], str]:
        stream = module.aiter_chunks(arrive(pieces), on_error="skip", max_event_size=LIMIT)
        seen: list[str] = []
        try:
            async for chunk in stream:
                seen.append(module.dumps(chunk))
        except (module.StreamError, module.EventTooLargeError) as error:
            return seen, type(error).__name__
        return seen, "done" if stream.done else "end"

    return asyncio.run(run())


@pytest.mark.parametrize("module", TARGETS, ids=lambda m: m.__name__)
@given(stream=streams())
def test_a_hostile_upstream_yields_what_a_reference_reader_finds(
    module: ModuleType, stream: tuple[bytes, list[bytes]]
) -> None:
    count_examples(f"hostile upstream, {module.__name__.rsplit('_', 1)[-1]}")
    data, pieces = stream
    expected = reference(module, data)
    tracemalloc.start()
    try:
        count, end = read(module, pieces, expected)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert (count, end) == (len(expected.chunks), expected.end)
    # The event being read (twice the limit at most), what is kept of other and skipped
    # events (bounded by KEPT_EVENTS and KEPT_DATA), and a margin for the decoding.
    kept = 2 * module.KEPT_EVENTS * 4 * module.KEPT_DATA
    assert peak < 4 * LIMIT + kept, f"peak {peak:,} bytes"
    assert read_async(module, pieces) == (expected.chunks, expected.end)
