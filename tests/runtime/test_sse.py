"""Decoding server-sent-event streams into chunks, in every target (research/pain.md,
group C): every framing case, fed whole, as text, and one byte at a time."""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Iterator
from types import ModuleType

import pytest

from tests.helpers.support import FIXTURE_STREAMS
from tests.helpers.support import TARGETS as ALL_TARGETS

TARGETS = list(ALL_TARGETS.values())


def content_chunk(text: str, **extra: object) -> str:
    chunk = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    chunk["choices"] = [{"index": 0, "delta": {"content": text}, "finish_reason": None}]
    return json.dumps({**chunk, **extra}, ensure_ascii=False)


A, B = content_chunk("A"), content_chunk("B")


def pieces(text: str, how: str) -> Iterable[bytes | str]:
    """The same stream as the network might deliver it."""
    data = text.encode("utf-8")
    if how == "whole":
        return [data]
    if how == "text":
        return [text]
    if how == "bytes":
        return [data[i : i + 1] for i in range(len(data))]
    rng = random.Random(7)  # reads of random sizes, reproducibly
    out, at = [], 0
    while at < len(data):
        size = rng.randint(1, 9)
        out.append(data[at : at + size])
        at += size
    if how == "empty reads, cut after CR":  # the LF of a CRLF may come reads later
        out = [piece + b"\r" for piece in data.split(b"\r")]
        out[-1] = out[-1][:-1]
        return [piece for part in out for piece in (b"", part)] + [b""]
    return out


HOW = ("whole", "text", "bytes", "random", "empty reads, cut after CR")


def contents(module: ModuleType, text: str, how: str) -> tuple[list[str], ModuleType]:
    stream = module.iter_chunks(pieces(text, how))
    out: list[str] = []
    for chunk in stream:
        dumped = json.loads(module.dumps(chunk))
        out.extend(c["delta"].get("content") for c in dumped["choices"])
    return out, stream


FRAMINGS = {
    "C1 data without space": f"data:{A}\n\ndata:[DONE]\n\n",
    "C1 two spaces keep one": f"data:  {A}\n\ndata: [DONE]\n\n",
    "C2 CRLF": f"data: {A}\r\n\r\ndata: {B}\r\n\r\ndata: [DONE]\r\n\r\n",
    "C2 CR": f"data: {A}\r\rdata: {B}\r\rdata: [DONE]\r\r",
    "C2 CRLF and LF": f"data: {A}\r\n\ndata: {B}\n\r\ndata: [DONE]\r\n\r\n",
    "C2 mixed": f"data: {A}\r\n\ndata: {B}\r\rdata: [DONE]\n\r\n",
    "C3 data over two lines": 'data: {"id":"c","model":"m","choices":\ndata: [{"index":0,"delta":{"content":"A"}}]}\n\ndata: [DONE]\n\n',
    "C3 data over two lines, CRLF": 'data: {"id":"c","model":"m","choices":\r\ndata: [{"index":0,"delta":{"content":"A"}}]}\r\n\r\ndata: [DONE]\r\n\r\n',
    "C4 comments": f": OPENROUTER PROCESSING\n\n: ping\n\ndata: {A}\n\n: keep-alive\n\ndata: {B}\n\ndata: [DONE]\n\n",
    "C5 events without data": f"id: 1\ndata: {A}\n\n: ping\n\nretry: 3000\n\nevent: ping\n\ndata:\n\ndata: {B}\n\ndata: [DONE]\n\n",
    "BOM": f"\ufeffdata: {A}\n\ndata: [DONE]\n\n",
    "C6 [DONE] with trailing spaces": f"data: {A}\n\ndata: [DONE]  \n\ndata: {B}\n\n",
    "C8 custom named event": f'event: hermes.tool.progress\ndata: {{"tool":"terminal"}}\n\ndata: {A}\n\ndata: [DONE]\n\n',
    "C9 several events in a line run": f"data: {A}\n\ndata: {B}\n\ndata: [DONE]\n\n",
    "C10 multibyte text": f"data: {content_chunk('中😀é')}\n\ndata: [DONE]\n\n",
    "C11 ten thousand pings": ": ping\n\n" * 10_000 + f"data: {A}\n\ndata: [DONE]\n\n",
    "missing final newline": f"data: {A}\n\ndata: [DONE]",
    "A3 data null": f"data: {A}\n\ndata: null\n\ndata: {B}\n\ndata: [DONE]\n\n",
}
EXPECTED = {
    "C1 data without space": ["A"],
    "C1 two spaces keep one": ["A"],
    "C3 data over two lines": ["A"],
    "C3 data over two lines, CRLF": ["A"],
    "BOM": ["A"],
    "C6 [DONE] with trailing spaces": ["A"],
    "C8 custom named event": ["A"],
    "C10 multibyte text": ["中😀é"],
    "C11 ten thousand pings": ["A"],
    "missing final newline": ["A"],
}


@pytest.mark.parametrize("module", TARGETS, ids=lambda m: m.__name__)
@pytest.mark.parametrize("how", HOW)
@pytest.mark.parametrize("name", FRAMINGS)
def test_framing(module: ModuleType, how: str, name: str) -> None:
    out, stream = contents(module, FRAMINGS[name], how)
    assert out == EXPECTED.get(name, ["A", "B"])
    assert stream.done


@pytest.mark.parametrize("module", TARGETS, ids=lambda m: m.__name__)
def test_events_that_are_not_chunks_are_kept(module: ModuleType) -> None:
    text = f'event: hermes.tool.progress\ndata: {{"tool":"terminal"}}\n\ndata: : OPENROUTER PROCESSING\n\ndata: {A}\n\ndata: [DONE]\n\n'
    stream = module.iter_chunks([text])
    assert len(list(stream)) == 1
    kept = [(e.event, e.data) for e in stream.other_events]
    assert kept == [
        ("hermes.tool.progress", '{"tool":"terminal"}'),
        ("message", ": OPENROUTER PROCESSING"),
    ]


@pytest.mark.parametrize("module", TARGETS, ids=lambda m: m.__name__)
@pytest.mark.parametrize("how", HOW)
def test_a_stream_without_done_is_not_complete(module: ModuleType, how: str) -> None:
    out, stream = contents(module, f"data: {A}\n\ndata: {B}\n\n", how)
    assert out == ["A", "B"]
    assert not stream.done


ERRORS = {
    "event error (Groq)": (
        f'data: {A}\n\nevent: error\ndata: {{"error":{{"message":"tool call failed","type":"invalid_request_error","code":"tool_use_failed"}}}}\n\n',
        "tool call failed",
        "tool_use_failed",
    ),
    "error payload (llama.cpp)": (
        f'data: {A}\n\ndata: {{"error":{{"code":500,"message":"context overflow","type":"server_error"}}}}\n\n',
        "context overflow",
        500,
    ),
    "event error, bare object (vLLM behind a gateway)": (
        f'data: {A}\n\nevent: error\ndata: {{"code":400,"message":"bad stop"}}\n\n',
        "bad stop",
        400,
    ),
    "event error, plain text": (
        f"data: {A}\n\nevent: error\ndata: upstream timed out\n\n",
        "upstream timed out",
        None,
    ),
}


@pytest.mark.parametrize("module", TARGETS, ids=lambda m: m.__name__)
@pytest.mark.parametrize("how", ("whole", "bytes"))
@pytest.mark.parametrize("name", ERRORS)
def test_an_error_raises_stream_error_with_the_vendors_message(
    module: ModuleType, how: str, name: str
) -> None:
    text, message, code = ERRORS[name]
    seen = []
    with pytest.raises(module.StreamError) as caught:
        for chunk in module.iter_chunks(pieces(text, how)):
            seen.append(chunk)
    assert len(seen) == 1, "the chunk before the error is yielded"
    assert caught.value.message == message
    assert caught.value.code == code
    assert caught.value.payload in text


@pytest.mark.parametrize("module", TARGETS, ids=lambda m: m.__name__)
def test_a_chunk_with_choices_and_an_error_is_yielded(module: ModuleType) -> None:
    chunk = content_chunk("x", error={"code": 502, "message": "upstream"})
    out = list(module.iter_chunks([f"data: {chunk}\n\ndata: {content_chunk('y', error=None)}\n\n"]))
    assert len(out) == 2
    assert json.loads(module.dumps(out[0]))["error"] == {"code": 502, "message": "upstream"}


@pytest.mark.parametrize("module", TARGETS, ids=lambda m: m.__name__)
def test_a_bad_chunk_raises_chunk_decode_error(module: ModuleType) -> None:
    with pytest.raises(module.ChunkDecodeError) as caught:
        list(module.iter_chunks([f'data: {A}\n\ndata: {{"id":1}}\n\n']))
    assert caught.value.path == "$.id"


def sse(lines: Iterable[str], ending: str) -> Iterator[str]:
    for line in lines:
        yield f"data: {line}{ending}{ending}"
    yield f"data: [DONE]{ending}{ending}"


@pytest.mark.parametrize("module", TARGETS, ids=lambda m: m.__name__)
@pytest.mark.parametrize("ending", ["\n", "\r\n", "\r"])
def test_every_fixture_stream_decodes_byte_by_byte(module: ModuleType, ending: str) -> None:
    for fixture in FIXTURE_STREAMS:
        text = "".join(sse((t for _, t in fixture.chunks), ending))
        expected = [module.dumps(module.loads(t)) for _, t in fixture.chunks]
        stream = module.iter_chunks(pieces(text, "random"))
        assert [module.dumps(c) for c in stream] == expected, fixture.name
        assert stream.done
