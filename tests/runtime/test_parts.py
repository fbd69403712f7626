"""The protocol-neutral part vocabulary: the "start" part that says which response a
stream is, the "error" part of a stream cut off before its end, and the summary any
protocol's parts add up to (`_summary_of_parts`), checked on every captured stream
against the module's own summary, in all four targets."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from types import ModuleType
from typing import Any

import pytest

from generator.runtime.parts import Citation, Part, ToolCallPart, UsageSummary
from generator.runtime.parts import _summary_of_parts as summary_of_parts
from tests.helpers.support import FIXTURE_STREAMS, TARGETS
from tests.runtime.chat.test_meanings import body, chunk, summary_of

MODULES = list(TARGETS.values())
by_module = pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)


def meanings_of(summary: Any) -> dict[str, Any]:
    """What a summary says, as plain values (summaries of two modules are instances
    of two classes): each choice's texts, finish reason, tool calls, the tools the
    server ran and its opaque reasoning (without the items that carried them), the
    usage and the cited sources."""
    return {
        "choices": [
            {
                "index": c.index,
                "text": c.text,
                "reasoning": c.reasoning,
                "refusal": c.refusal,
                "finish_reason": c.finish_reason,
                "tool_calls": [(t.id, t.name, t.arguments) for t in c.tool_calls],
                "server_tools": [(t.index, t.name, t.arguments, t.output) for t in c.server_tools],
                "reasoning_items": [(i.kind, i.value) for i in c.reasoning_items],
            }
            for c in summary.choices
        ],
        "usage": dataclasses.asdict(summary.usage),
        "citations": [(c.url, c.title) for c in summary.citations],
    }


@by_module
@pytest.mark.parametrize("stream", FIXTURE_STREAMS, ids=lambda s: s.name)
def test_the_parts_of_a_captured_stream_add_up_to_its_summary(
    module: ModuleType, stream: Any
) -> None:
    """Texts, tool calls, finish reasons, server tools, opaque reasoning (signatures,
    encrypted reasoning: their values; the items that carried them are the
    completion's), usage and citations are the module's own."""
    texts = [text for _, text in stream.chunks]
    parts = list(module.iter_parts([body(texts)]))
    expected = summary_of(module, texts)
    assert meanings_of(summary_of_parts(parts)) == meanings_of(expected)


@by_module
@pytest.mark.parametrize("stream", FIXTURE_STREAMS, ids=lambda s: s.name)
def test_a_stream_starts_with_its_identity(module: ModuleType, stream: Any) -> None:
    parts = list(module.iter_parts([body(text for _, text in stream.chunks)]))
    assert [p.kind for p in parts].count("start") == 1 and parts[0].kind == "start"
    first = json.loads(stream.chunks[0][1])
    identity = parts[0].identity
    assert identity.id == (first.get("id") or None)
    assert identity.model == (first.get("model") or None)
    assert identity.created == first.get("created")
    assert parts[0].choice is None and parts[0].text == ""
    assert all(p.block is None for p in parts), "chat has no blocks"
    assert parts[-1].kind != "error", "the stream ended with [DONE]"


@by_module
def test_a_stream_cut_off_ends_with_an_error_part(module: ModuleType) -> None:
    cut = body([chunk({"content": "Hel"})]).removesuffix(b"data: [DONE]\n\n")
    for parts in (
        list(module.iter_parts([cut])),
        asyncio.run(aparts(module, cut)),
    ):
        assert [(p.kind, p.text) for p in parts][:2] == [("start", ""), ("text", "Hel")]
        error = parts[-1]
        assert error.kind == "error" and error.choice is None
        assert error.error["type"] == "incomplete_stream"
        assert error.text == error.error["message"] and "[DONE]" in error.text
    whole = list(module.iter_parts([cut + b"data: [DONE]\n\n"]))
    assert "error" not in [p.kind for p in whole]
    chunks = [module.loads(json.dumps(chunk({"content": "Hi"})))]
    assert [p.kind for p in module._parts_of(chunks, readings_of(module), None)] == [
        "start",
        "text",
    ], "a list of chunks has no end to miss"


@by_module
def test_an_error_the_upstream_reported_is_raised_as_before(module: ModuleType) -> None:
    failing = body([chunk({"content": "Hel"})]).replace(
        b"data: [DONE]", b'event: error\ndata: {"error": {"message": "overloaded"}}'
    )
    seen: list[str] = []
    with pytest.raises(module.StreamError, match="overloaded"):
        for part in module.iter_parts([failing]):
            seen.append(part.kind)
    assert seen == ["start", "text"]


def readings_of(module: ModuleType) -> Any:
    """The table the module's `iter_parts` reads its chunks with."""
    return getattr(module, "_OBJECT_READINGS", None) or module._DATA_READINGS


async def aparts(module: ModuleType, data: bytes) -> list[Any]:
    async def pieces() -> Any:
        yield data

    return [part async for part in module.aiter_parts(pieces())]


@by_module
def test_identity_from_a_chunk_that_says_little(module: ModuleType) -> None:
    """Azure's first chunk holds an empty id and model and a created of 0; a chunk may
    leave them out; SGLang has sent `created` as a float."""
    cases: list[tuple[dict[str, Any], tuple[Any, ...]]] = [
        ({"id": "", "model": "", "created": 0, "choices": []}, (None, None, 0)),
        ({"choices": [{"index": 0, "delta": {"content": "x"}}]}, (None, None, None)),
        ({"id": "c", "model": "m", "created": 7.0, "choices": []}, ("c", "m", 7)),
    ]
    for payload, expected in cases:
        [start, *_] = module.iter_parts([body([payload])])
        identity = start.identity
        assert (identity.id, identity.model, identity.created) == expected, payload


def call(index: int | None, ident: str | None, name: str | None, text: str) -> Part:
    return Part("tool_call", 0, text, None, tool_call=ToolCallPart(index, ident, name))


def test_the_summary_of_handmade_parts() -> None:
    """Tool calls merged as chunks merge them (by index; without one, by id; a name
    repeated is no piece), opaque reasoning in order, the last usage, each citation
    once with the best title."""
    usage = UsageSummary(prompt_tokens=3, completion_tokens=2, total_tokens=5)
    parts = [
        Part("start", None, "", None),
        Part("reasoning", 0, "Hm", None, block=0),
        Part("signature", 0, "sig", "event", block=0),
        Part("redacted_reasoning", 0, "blob", "event2", block=1),
        Part("text", 0, "A", None),
        Part("text", 0, "\ud83d", None),
        Part("text", 0, "\ude00", None),
        call(None, "t1", "f", '{"a":'),
        call(None, None, None, "1}"),
        call(None, "t2", "g", "{}"),
        call(5, "t3", "h", ""),
        call(5, None, "h", "[]"),
        Part("citation", None, "", None, citation=Citation("https://a", None)),
        Part("citation", None, "", None, citation=Citation("https://a", "A")),
        Part("usage", None, "", None, usage=UsageSummary(prompt_tokens=1)),
        Part("usage", 0, "", None, usage=usage),
        Part("finish", 0, "tool_calls", None),
        Part("finish", 1, "stop", None),
        Part("error", None, "cut", None, error={"message": "cut"}),
    ]
    summary = summary_of_parts(parts)
    first, second = summary.choices
    assert (first.reasoning, first.text, first.finish_reason) == ("Hm", "A😀", "tool_calls")
    assert [(c.id, c.name, c.arguments) for c in first.tool_calls] == [
        ("t1", "f", '{"a":1}'),
        ("t2", "g", "{}"),
        ("t3", "h", "[]"),
    ]
    assert [(i.kind, i.value, i.source) for i in first.reasoning_items] == [
        ("signature", "sig", "event"),
        ("encrypted", "blob", "event2"),
    ]
    assert (second.index, second.finish_reason, second.text) == (1, "stop", "")
    assert summary.usage == usage
    assert summary.citations == (Citation("https://a", "A"),)
    assert summary_of_parts([]).usage == UsageSummary() and summary_of_parts([]).choices == ()
