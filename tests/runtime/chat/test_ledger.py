"""Chat's side of the ledger (issue 41): what a chat stream says reaches the parts every
bridge writes from, and what the chat writer is given reaches the client, or is named
in its `dropped`. Each test here failed before its fix, in all four targets:

- the sources a chat stream cites (`delta.annotations`, Perplexity's `citations` and
  `search_results`) are "citation" parts, the same sources the summary reads;
- signatures and encrypted reasoning in OpenRouter's `reasoning_details` are
  "signature" and "redacted_reasoning" parts, and chat -> chat carries them;
- the tools the server ran (the usage's `server_tool_calls`) are written where chat
  reads them back (OpenRouter's `server_tool_use_details.tool_calls_executed`);
- a usage said before an upstream error (Messages' `message_start`) is written before
  the error;
- a tool name split across chunks is written whole (chat -> chat)."""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterable
from types import ModuleType
from typing import Any

import pytest

from generator.runtime.parts import _summary_of_parts as summary_of_parts
from tests.helpers.support import TARGETS
from tests.runtime.chat.test_meanings import body, chunk, finish, summary_of

by_module = pytest.mark.parametrize("module", list(TARGETS.values()), ids=lambda m: m.__name__)

SIGNATURE = "RXQwQkNrZ0lDaEFD"
ENCRYPTED = "ZW5jcnlwdGVk+/="


def written(module: ModuleType, parts: Iterable[Any], protocol: str = "chat") -> tuple[bytes, Any]:
    """`parts` written as `protocol`, and what the writer counted as dropped."""
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        data = b"".join(module.write_parts(parts, protocol=protocol))
    return data, [str(w.message) for w in said]


def read_back(module: ModuleType, data: bytes) -> Any:
    """The summary of a chat stream the writer wrote (up to its error, if any)."""
    accumulator = module.ChunkAccumulator()
    try:
        for item in module.iter_chunks([data]):
            accumulator.add(item)
    except module.StreamError:
        pass
    return accumulator.summary()


def cited(summary: Any) -> list[tuple[str | None, str | None]]:
    return [(c.url, c.title) for c in summary.citations]


def opaque(summary: Any) -> list[tuple[str, Any]]:
    return [(i.kind, i.value) for c in summary.choices for i in c.reasoning_items]


# --- a. citations -----------------------------------------------------------------------

ANNOTATED = [
    chunk({"role": "assistant", "content": ""}),
    chunk(
        {
            "annotations": [
                {
                    "type": "url_citation",
                    "index": 0,
                    "url_citation": {"url": "https://a.example/", "title": "A"},
                }
            ]
        }
    ),
    chunk({"content": "See A and B."}),
    chunk(
        {
            "annotations": [
                {"type": "url_citation", "index": 1, "url_citation": {"url": "https://b.example/x"}}
            ]
        }
    ),
    finish(),
]
"""As OpenRouter streams a web search's sources: `delta.annotations` entries."""

REPEATED = [
    chunk({"role": "assistant", "content": "Per [1]"}, citations=["https://a.example/"]),
    chunk(
        {"content": " and [2]."},
        citations=["https://a.example/", "https://b.example/x"],
        search_results=[
            {"url": "https://a.example/", "title": "A"},
            {"url": "https://b.example/x", "title": "B"},
        ],
    ),
    {**finish(), "citations": ["https://a.example/", "https://b.example/x"]},
]
"""As Perplexity streams them: the whole list again on every chunk, titles in
`search_results` once they come."""


@by_module
@pytest.mark.parametrize("payloads", [ANNOTATED, REPEATED], ids=["annotations", "repeated"])
def test_the_sources_a_chat_stream_cites_are_parts_as_the_summary_reads_them(
    module: ModuleType, payloads: list[dict[str, Any]]
) -> None:
    parts = list(module.iter_parts([body(payloads)]))
    expected = summary_of(module, payloads)
    assert cited(expected)  # the fixture cites
    assert cited(summary_of_parts(parts)) == cited(expected)
    # Each source once, however often a chunk repeats it (a title may come later).
    urls = [p.citation.url for p in parts if p.kind == "citation" and p.citation.title]
    assert len(urls) == len(set(urls))


@by_module
@pytest.mark.parametrize("protocol", ["chat", "responses"])
def test_a_chat_streams_citations_reach_a_target_that_holds_them(
    module: ModuleType, protocol: str
) -> None:
    data, said = written(module, module.iter_parts([body(ANNOTATED)]), protocol)
    assert not said
    parts = list(module.iter_parts([data], protocol=protocol))
    assert cited(summary_of_parts(parts)) == cited(summary_of(module, ANNOTATED))


# --- b. signatures and encrypted reasoning ----------------------------------------------

DETAILED = [
    chunk({"role": "assistant", "content": "", "reasoning_details": []}),
    chunk(
        {
            "reasoning": "Think",
            "reasoning_details": [
                {"type": "reasoning.text", "text": "Think", "signature": "", "index": 0}
            ],
        }
    ),
    chunk({"reasoning_details": [{"type": "reasoning.text", "signature": SIGNATURE, "index": 0}]}),
    chunk({"reasoning_details": [{"type": "reasoning.encrypted", "data": ENCRYPTED, "index": 1}]}),
    chunk({"content": "4"}),
    finish(),
]
"""As OpenRouter streams a Claude's signed thinking and redacted thinking."""


@by_module
def test_signatures_and_encrypted_reasoning_in_reasoning_details_are_parts(
    module: ModuleType,
) -> None:
    parts = list(module.iter_parts([body(DETAILED)]))
    kinds = [(p.kind, p.text) for p in parts if p.kind in ("signature", "redacted_reasoning")]
    assert kinds == [("signature", SIGNATURE), ("redacted_reasoning", ENCRYPTED)]
    assert opaque(summary_of_parts(parts)) == opaque(summary_of(module, DETAILED))
    # The signature comes after the reasoning it signs.
    order = [p.kind for p in parts if p.kind in ("reasoning", "signature")]
    assert order == ["reasoning", "signature"]


@by_module
def test_chat_to_chat_carries_signatures_and_encrypted_reasoning(module: ModuleType) -> None:
    data, said = written(module, module.iter_parts([body(DETAILED)]))
    assert not said
    back = read_back(module, data)
    assert opaque(back) == [("signature", SIGNATURE), ("encrypted", ENCRYPTED)]
    assert back.choices[0].reasoning == "Think"


# --- c. the tools the server ran --------------------------------------------------------


@by_module
def test_the_server_tool_runs_of_a_usage_are_written_where_chat_reads_them(
    module: ModuleType,
) -> None:
    usage = module.UsageSummary(10, 5, 15, server_tool_calls=2)
    parts = [
        module.Part("start", None, "", None, identity=module.Identity("r", "m", 1)),
        module.Part("text", 0, "Hi", None),
        module.Part("finish", 0, "stop", None),
        module.Part("usage", None, "", None, usage=usage),
    ]
    data, said = written(module, parts)
    assert not said
    assert read_back(module, data).usage == usage


# --- d. a usage said before an upstream error -------------------------------------------


def messages_event(kind: str, data: dict[str, Any]) -> str:
    return f"event: {kind}\ndata: {json.dumps({'type': kind, **data})}\n\n"


FAILED = "".join(
    [
        messages_event(
            "message_start",
            {
                "message": {
                    "id": "msg_1",
                    "type": "message",
                    "role": "assistant",
                    "model": "claude",
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {"input_tokens": 12, "output_tokens": 1},
                }
            },
        ),
        messages_event(
            "content_block_start", {"index": 0, "content_block": {"type": "text", "text": ""}}
        ),
        messages_event(
            "content_block_delta", {"index": 0, "delta": {"type": "text_delta", "text": "Hi"}}
        ),
        messages_event("error", {"error": {"type": "overloaded_error", "message": "Overloaded"}}),
    ]
).encode()
"""A Messages stream that said its usage at the start, then failed."""


@by_module
def test_a_usage_said_before_an_upstream_error_is_written_before_it(module: ModuleType) -> None:
    data, said = written(module, module.iter_parts([FAILED], protocol="messages"))
    assert not said
    events = [e for e in data.split(b"\n\n") if e]
    assert b"Overloaded" in events[-1]  # the error ends the stream, no [DONE]
    assert b'"usage"' in events[-2]
    back = read_back(module, data)
    assert (back.usage.prompt_tokens, back.usage.completion_tokens) == (12, 1)
    assert back.choices[0].text == "Hi"


# --- a tool name split across chunks ----------------------------------------------------

SPLIT = [
    chunk({"role": "assistant", "content": ""}),
    chunk(
        {
            "tool_calls": [
                {
                    "index": 0,
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "get_", "arguments": ""},
                }
            ]
        }
    ),
    chunk({"tool_calls": [{"index": 0, "function": {"name": "weather"}}]}),
    chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"city":"Paris"}'}}]}),
    finish("tool_calls"),
]


@by_module
def test_chat_to_chat_writes_a_split_tool_name_whole(module: ModuleType) -> None:
    data, _ = written(module, module.iter_parts([body(SPLIT)]))
    [call] = read_back(module, data).choices[0].tool_calls
    assert (call.id, call.name, call.arguments) == ("call_1", "get_weather", '{"city":"Paris"}')
