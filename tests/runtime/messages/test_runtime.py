"""The Anthropic Messages runtime (generator/runtime/messages/), on JSON data: the reader
(events to `Part`s, in chat's terms), each of its tolerances of real servers, the
accumulator (events to the final Message, as anthropic-sdk-python builds it), and the
writer (any protocol's `Part`s to Messages events the strictest clients accept),
checked by tests/helpers/messages_invariants.py on handmade parts, on random ones, and on every
captured chat stream bridged to Messages and read back."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import warnings
from collections.abc import AsyncIterator, Iterable, Iterator
from types import ModuleType
from typing import Any, cast

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from generator.runtime.messages.accumulate import _MessagesAccumulator
from generator.runtime.messages.reader import _messages_usage, _MessagesReader
from generator.runtime.messages.writer import (
    MessagesLossWarning,
    _awrite_messages,
    _MessagesWriter,
    _write_messages,
)
from generator.runtime.parts import (
    Citation,
    Identity,
    Part,
    ServerToolSummary,
    Summary,
    ToolCallPart,
    UsageSummary,
    _summary_of_parts,
)
from generator.runtime.sse import ServerSentEvent, StreamError
from tests.helpers.messages_invariants import check_messages, events_of
from tests.helpers.support import FIXTURE_STREAMS, TARGETS
from tests.runtime.chat.test_meanings import body, summary_of

MODULES = list(TARGETS.values())

# What Anthropic's API streams for a turn with thinking, text and a tool call (its
# documented shape), with a ping between.
ANTHROPIC: list[dict[str, Any]] = [
    {"type": "message_start", "message": {
        "id": "msg_01Xf", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [], "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": 25, "cache_creation_input_tokens": 10,
                  "cache_read_input_tokens": 100, "output_tokens": 1}}},
    {"type": "content_block_start", "index": 0,
     "content_block": {"type": "thinking", "thinking": "", "signature": ""}},
    {"type": "ping"},
    {"type": "content_block_delta", "index": 0,
     "delta": {"type": "thinking_delta", "thinking": "Let me "}},
    {"type": "content_block_delta", "index": 0,
     "delta": {"type": "thinking_delta", "thinking": "think."}},
    {"type": "content_block_delta", "index": 0,
     "delta": {"type": "signature_delta", "signature": "EqQBCgIYAhIM"}},
    {"type": "content_block_stop", "index": 0},
    {"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}},
    {"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "Checking "}},
    {"type": "content_block_delta", "index": 1,
     "delta": {"type": "text_delta", "text": "the weather."}},
    {"type": "content_block_stop", "index": 1},
    {"type": "content_block_start", "index": 2, "content_block": {
        "type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": {}}},
    {"type": "content_block_delta", "index": 2,
     "delta": {"type": "input_json_delta", "partial_json": ""}},
    {"type": "content_block_delta", "index": 2,
     "delta": {"type": "input_json_delta", "partial_json": '{"city": '}},
    {"type": "content_block_delta", "index": 2,
     "delta": {"type": "input_json_delta", "partial_json": '"Paris"}'}},
    {"type": "content_block_stop", "index": 2},
    {"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": None},
     "usage": {"output_tokens": 89}},
    {"type": "message_stop"},
]  # fmt: skip


def parts_of(events: Iterable[Any]) -> list[Part]:
    reader = _MessagesReader()
    return [part for event in events for part in reader.read(event)]


def summary_of_events(events: Iterable[Any]) -> Summary:
    return _summary_of_parts(parts_of(events))


def written(parts: Iterable[Part]) -> tuple[bytes, _MessagesWriter, list[str]]:
    """The Messages stream of some parts, its writer, and the warnings it gave."""
    writer = _MessagesWriter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        data = b"".join(writer.stream(parts))
    return data, writer, [str(w.message) for w in caught if w.category is MessagesLossWarning]


def read_back(data: bytes) -> Summary:
    return summary_of_events(event.data for event in events_of(data))


def start(ident: str | None = "chatcmpl-1", model: str | None = "m") -> Part:
    return Part("start", None, "", None, identity=Identity(ident, model, 1))


def call(index: int | None, ident: str | None, name: str | None, text: str) -> Part:
    return Part("tool_call", 0, text, None, tool_call=ToolCallPart(index, ident, name))


def named(data: bytes) -> list[str]:
    return [e.name for e in events_of(data)]


# The reader.


def test_the_reader_reads_anthropic_s_stream_in_chat_s_terms() -> None:
    parts = parts_of(ANTHROPIC)
    assert [(p.kind, p.text, p.block) for p in parts] == [
        ("start", "", None),
        ("usage", "", None),
        ("reasoning", "Let me ", 0),
        ("reasoning", "think.", 0),
        ("signature", "EqQBCgIYAhIM", 0),
        ("text", "Checking ", 1),
        ("text", "the weather.", 1),
        ("tool_call", "", 2),
        ("tool_call", '{"city": ', 2),
        ("tool_call", '"Paris"}', 2),
        ("finish", "tool_calls", None),
        ("usage", "", None),
    ]
    assert {p.choice for p in parts} == {0}, "a message is one choice"
    assert parts[0].identity == Identity("msg_01Xf", "claude-sonnet-4-5", None)
    calls = [p.tool_call for p in parts if p.kind == "tool_call"]
    assert set(calls) == {ToolCallPart(2, "toolu_01", "get_weather")}, "on every piece"
    assert parts[1].usage == UsageSummary(135, 1, 136, 100, cache_write_tokens=10)
    assert parts[-1].usage == UsageSummary(135, 89, 224, 100, cache_write_tokens=10)
    assert all(p.chunk is ANTHROPIC[0] for p in parts[:2]), "each part keeps its event"
    summary = _summary_of_parts(parts)
    [choice] = summary.choices
    assert (choice.reasoning, choice.text, choice.finish_reason) == (
        "Let me think.",
        "Checking the weather.",
        "tool_calls",
    )
    assert [(c.id, c.name, c.arguments) for c in choice.tool_calls] == [
        ("toolu_01", "get_weather", '{"city": "Paris"}')
    ]
    assert [(i.kind, i.value) for i in choice.reasoning_items] == [("signature", "EqQBCgIYAhIM")]


@pytest.mark.parametrize(
    ("reason", "finish"),
    [("end_turn", "stop"), ("stop_sequence", "stop"), ("max_tokens", "length"),
     ("tool_use", "tool_calls"), ("refusal", "content_filter"), ("pause_turn", "pause_turn"),
     ("model_context_window_exceeded", "model_context_window_exceeded")],
)  # fmt: skip
def test_stop_reasons_read_as_chat_s_finish_reasons(reason: str, finish: str) -> None:
    event = {"type": "message_delta", "delta": {"stop_reason": reason}, "usage": {}}
    assert [(p.kind, p.text) for p in parts_of([event]) if p.kind == "finish"] == [
        ("finish", finish)
    ]


@pytest.mark.parametrize(
    ("usage", "expected"),
    [
        ({"input_tokens": 10, "output_tokens": 5}, UsageSummary(10, 5, 15)),
        # Anthropic's input excludes the cache; chat's prompt includes it.
        ({"input_tokens": 10, "cache_read_input_tokens": 30, "cache_creation_input_tokens": 4,
          "output_tokens": 5}, UsageSummary(44, 5, 49, 30, cache_write_tokens=4)),
        ({"output_tokens": 5}, UsageSummary(None, 5, None)),
        ({"input_tokens": 1, "output_tokens": 2,
          "server_tool_use": {"web_search_requests": 2, "web_fetch_requests": 1}},
         UsageSummary(1, 2, 3, server_tool_calls=3)),
        # What a writer adds where Messages has no key.
        ({"input_tokens": 1, "output_tokens": 2, "cost_usd": 0.5, "reasoning_tokens": 1,
          "total_tokens": 4, "server_tool_calls": 1},
         UsageSummary(1, 2, 4, None, 1, 0.5, 1)),
        ({"input_tokens": None, "output_tokens": 2}, UsageSummary(None, 2, None)),
    ],
)  # fmt: skip
def test_usage_reads_in_chat_s_terms(usage: dict[str, Any], expected: UsageSummary) -> None:
    assert _messages_usage({k: v for k, v in usage.items() if v is not None}) == expected


def test_usage_of_the_start_and_of_the_end_combine_the_end_s_keys_winning() -> None:
    """GLM and LiteLLM send 0 and 0 at the start and the counts at the end; Anthropic
    sends the input at the start and the output at the end."""
    glm = [
        {"type": "message_start", "message": {"id": "m", "usage": {"input_tokens": 0,
                                                                   "output_tokens": 0}}},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"},
         "usage": {"input_tokens": 12, "output_tokens": 7, "cache_read_input_tokens": 2}},
    ]  # fmt: skip
    assert summary_of_events(glm).usage == UsageSummary(14, 7, 21, 2)
    assert summary_of_events(ANTHROPIC).usage == UsageSummary(
        135, 89, 224, 100, cache_write_tokens=10
    )
    null = {"type": "message_delta", "delta": {}, "usage": {"input_tokens": None,
                                                           "output_tokens": 9}}  # fmt: skip
    assert summary_of_events([ANTHROPIC[0], null]).usage == UsageSummary(
        135, 9, 144, 100, cache_write_tokens=10
    )


def text_stream(*middle: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"type": "message_start", "message": {"id": "msg_1", "model": "m", "content": [],
                                              "usage": {"input_tokens": 3, "output_tokens": 1}}},
        *middle,
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 4}},
        {"type": "message_stop"},
    ]  # fmt: skip


def block_start(index: int, **block: Any) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": block}


def delta(index: int, **data: Any) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": data}


def stop(index: int) -> dict[str, Any]:
    return {"type": "content_block_stop", "index": index}


def test_tolerated_thinking_without_a_signature() -> None:
    """Ollama's thinking blocks start without `signature` and get none."""
    events = text_stream(
        block_start(0, type="thinking", thinking=""),
        delta(0, type="thinking_delta", thinking="Hm."),
        stop(0),
        block_start(1, type="text", text=""),
        delta(1, type="text_delta", text="Hi"),
        stop(1),
    )
    [choice] = summary_of_events(events).choices
    assert (choice.reasoning, choice.text, choice.reasoning_items) == ("Hm.", "Hi", ())


def test_tolerated_a_message_without_type_or_role_and_service_tier_outside_usage() -> None:
    """vLLM's message_start has neither; some servers put `service_tier` beside the
    usage, or in it."""
    events = [
        {"type": "message_start", "message": {"id": "chatcmpl-9", "model": "qwen", "content": [],
                                              "service_tier": "standard",
                                              "usage": {"input_tokens": 4, "output_tokens": 0,
                                                        "service_tier": "standard"}}},
        block_start(0, type="text", text="Hi"),
        stop(0),
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"},
         "usage": {"output_tokens": 2, "service_tier": "standard"}},
    ]  # fmt: skip
    parts = parts_of(events)
    assert parts[0].identity == Identity("chatcmpl-9", "qwen", None)
    summary = _summary_of_parts(parts)
    assert summary.choices[0].text == "Hi", "text a block starts with is read"
    assert summary.usage == UsageSummary(4, 2, 6)


def test_tolerated_an_empty_first_piece_of_input_and_metrics_on_message_stop() -> None:
    """MiniMax sends an empty `partial_json` first; Bedrock puts its metrics on
    message_stop."""
    events = text_stream(
        block_start(0, type="tool_use", id="call_1", name="f", input={}),
        delta(0, type="input_json_delta", partial_json=""),
        delta(0, type="input_json_delta", partial_json='{"a": 1}'),
        stop(0),
    )
    events[-1]["amazon-bedrock-invocationMetrics"] = {"inputTokenCount": 3}
    parts = parts_of(events)
    assert [p.text for p in parts if p.kind == "tool_call"] == ["", '{"a": 1}']
    assert summary_of_events(events).choices[0].tool_calls[0].arguments == '{"a": 1}'


def test_tolerated_unknown_events_blocks_and_deltas_and_a_second_message_start() -> None:
    events = text_stream(
        {"type": "ping"},
        {"type": "message_progress", "progress": 0.5},
        block_start(0, type="future_block", payload=[1]),
        delta(0, type="future_delta", x=1),
        stop(0),
        block_start(1, type="text", text=""),
        delta(1, type="text_delta", text="still read"),
        stop(1),
    )
    events.insert(1, events[0])  # a second message_start (LiteLLM)
    parts = parts_of(events)
    assert [p.kind for p in parts] == ["start", "usage", "text", "finish", "usage"]
    assert parts[2].text == "still read"


def test_tolerated_a_delta_whose_block_never_started() -> None:
    """SGLang has sent deltas for blocks it never started: read by their type."""
    events = text_stream(
        delta(0, type="text_delta", text="A"), delta(1, type="input_json_delta", partial_json="{}")
    )
    parts = parts_of(events)
    assert [(p.kind, p.text, p.block) for p in parts[2:4]] == [
        ("text", "A", 0),
        ("tool_call", "{}", 1),
    ]


def test_a_tool_call_without_arguments_has_an_empty_object() -> None:
    events = text_stream(block_start(0, type="tool_use", id="t", name="now", input={}), stop(0))
    [tool] = summary_of_events(events).choices[0].tool_calls
    assert (tool.id, tool.name, tool.arguments) == ("t", "now", "{}")


def test_a_message_start_that_holds_the_whole_message() -> None:
    """Anthropic's programmatic tool calling sends the whole content in message_start,
    then message_stop."""
    message = {
        "id": "msg_2", "type": "message", "role": "assistant", "model": "claude",
        "content": [
            {"type": "text", "text": "Running."},
            {"type": "tool_use", "id": "toolu_9", "name": "run", "input": {"code": "1+1"},
             "caller": {"type": "code_execution_20250825", "tool_id": "srvtoolu_1"}},
        ],
        "stop_reason": "tool_use", "stop_sequence": None,
        "usage": {"input_tokens": 5, "output_tokens": 6},
    }  # fmt: skip
    parts = parts_of([{"type": "message_start", "message": message}, {"type": "message_stop"}])
    assert [(p.kind, p.text, p.block) for p in parts] == [
        ("start", "", None),
        ("text", "Running.", 0),
        ("tool_call", '{"code":"1+1"}', 1),
        ("finish", "tool_calls", None),
        ("usage", "", None),
    ]


def test_redacted_thinking_server_tools_and_citations() -> None:
    url = "https://example.com/a"
    result = {"type": "web_search_result", "url": url, "title": "A", "encrypted_content": "x"}
    citation = {"type": "web_search_result_location", "url": url, "title": "A",
                "cited_text": "a", "encrypted_index": "e"}  # fmt: skip
    document = {"type": "char_location", "cited_text": "b", "document_index": 0,
                "document_title": None, "start_char_index": 0, "end_char_index": 1}  # fmt: skip
    events = text_stream(
        block_start(0, type="redacted_thinking", data="EmwKAhgB"),
        stop(0),
        block_start(1, type="server_tool_use", id="srvtoolu_1", name="web_search", input={}),
        delta(1, type="input_json_delta", partial_json='{"query": '),
        delta(1, type="input_json_delta", partial_json='"a"}'),
        stop(1),
        block_start(2, type="web_search_tool_result", tool_use_id="srvtoolu_1", content=[result]),
        stop(2),
        block_start(3, type="text", text="", citations=[document]),
        delta(3, type="citations_delta", citation=citation),
        delta(3, type="text_delta", text="A says a."),
        stop(3),
    )
    parts = parts_of(events)
    assert [(p.kind, p.block) for p in parts if p.kind not in ("start", "usage", "finish")] == [
        ("redacted_reasoning", 0),
        ("server_tool", 1),
        ("server_tool", 1),
        ("server_tool", 2),
        ("citation", 3),
        ("citation", 3),
        ("text", 3),
    ]
    [choice] = (summary := _summary_of_parts(parts)).choices
    assert [(i.kind, i.value) for i in choice.reasoning_items] == [("encrypted", "EmwKAhgB")]
    [tool] = choice.server_tools
    assert (tool.index, tool.name, tool.arguments) == (1, "web_search", '{"query": "a"}')
    assert tool.output is not None and json.loads(tool.output) == [result]
    assert choice.tool_calls == (), "a tool the server ran is no call for the client"
    assert summary.citations == (
        Citation(None, None, document),
        Citation(url, "A", citation),
    ), "a document's citation has no URL, and is kept as it came"


def test_an_error_event_is_an_error_part() -> None:
    error = {"type": "overloaded_error", "message": "Overloaded"}
    parts = parts_of([*ANTHROPIC[:4], {"type": "error", "error": error}])
    assert (parts[-1].kind, parts[-1].text, parts[-1].error) == ("error", "Overloaded", error)


# The accumulator.


def accumulated(events: Iterable[Any]) -> _MessagesAccumulator:
    accumulator = _MessagesAccumulator()
    for event in events:
        accumulator.add(event)
    return accumulator


def test_the_accumulator_builds_the_message() -> None:
    message = accumulated(ANTHROPIC).result()
    assert message == {
        "id": "msg_01Xf", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [
            {"type": "thinking", "thinking": "Let me think.", "signature": "EqQBCgIYAhIM"},
            {"type": "text", "text": "Checking the weather."},
            {"type": "tool_use", "id": "toolu_01", "name": "get_weather",
             "input": {"city": "Paris"}},
        ],
        "stop_reason": "tool_use", "stop_sequence": None,
        "usage": {"input_tokens": 25, "cache_creation_input_tokens": 10,
                  "cache_read_input_tokens": 100, "output_tokens": 89},
    }  # fmt: skip
    assert ANTHROPIC[1]["content_block"]["thinking"] == "", "the events are left as they came"


def test_the_accumulator_builds_what_anthropic_sdk_python_builds() -> None:
    import anthropic.lib.streaming._messages as streaming

    for events in (ANTHROPIC, redacted_and_server_tools()):
        snapshot: Any = None
        buffers: dict[int, bytes] = {}
        for event in events:
            if event["type"] in ("ping",):
                continue
            snapshot = streaming.accumulate_event(
                event=cast(Any, event), current_snapshot=snapshot, json_bufs=buffers
            )
        theirs = snapshot.to_dict(exclude_none=False)
        ours = accumulated(events).result()
        for block in theirs["content"]:
            block.pop("citations", None) if block.get("citations") is None else None
        assert json.loads(json.dumps(ours)) == {k: theirs[k] for k in ours}


def redacted_and_server_tools() -> list[dict[str, Any]]:
    citation = {"type": "web_search_result_location", "url": "u", "title": "t",
                "cited_text": "c", "encrypted_index": "e"}  # fmt: skip
    return text_stream(
        block_start(0, type="redacted_thinking", data="EmwKAhgB"),
        stop(0),
        block_start(1, type="server_tool_use", id="srvtoolu_1", name="web_search", input={}),
        delta(1, type="input_json_delta", partial_json='{"query": "a"}'),
        stop(1),
        block_start(2, type="text", text=""),
        delta(2, type="citations_delta", citation=citation),
        delta(2, type="citations_delta", citation=citation),
        delta(2, type="text_delta", text="A."),
        stop(2),
    )


def test_the_accumulator_keeps_an_input_that_is_no_json_and_unknown_keys() -> None:
    events = text_stream(
        block_start(0, type="tool_use", id="t", name="f", input={}, x_kept=1),
        delta(0, type="input_json_delta", partial_json='{"a": '),
        delta(0, type="input_json_delta", partial_json="oops"),
        stop(0),
    )
    events[0]["message"]["x_top"] = {"kept": True}
    events[-2]["usage"]["cost_usd"] = 0.25
    events[-2]["delta"]["stop_details"] = {"type": "x"}
    message = accumulated(events).result()
    assert message["content"] == [
        {"type": "tool_use", "id": "t", "name": "f", "input": '{"a": oops', "x_kept": 1}
    ]
    assert message["x_top"] == {"kept": True} and message["stop_details"] == {"type": "x"}
    assert message["usage"] == {"input_tokens": 3, "output_tokens": 4, "cost_usd": 0.25}


def test_the_accumulator_s_summary_and_snapshot_mid_stream() -> None:
    events = ANTHROPIC[:14]  # the tool's input has one piece of two
    accumulator = accumulated(events)
    snapshot = accumulator.snapshot()
    assert snapshot["content"][2]["input"] == {}, "pieces that make no JSON object yet"
    whole = accumulated(ANTHROPIC[:15])  # both pieces, before the block stops
    assert whole.snapshot()["content"][2]["input"] == {"city": "Paris"}
    assert accumulator.message is not None and accumulator.message["content"][2]["input"] == {}
    [choice] = accumulator.summary().choices
    assert choice.tool_calls[0].arguments == '{"city": '
    late = accumulated([delta(0, type="text_delta", text="x"), stop(0)])
    assert late.result()["content"] == [{"type": "text", "text": "x"}], "no message_start"
    wrong = accumulated([ANTHROPIC[0], ANTHROPIC[1], delta(0, type="text_delta", text="x")])
    assert wrong.misplaced == [delta(0, type="text_delta", text="x")]
    error = {"type": "api_error", "message": "boom"}
    assert accumulated([ANTHROPIC[0], {"type": "error", "error": error}]).error == error


def test_a_stream_s_summary_is_its_accumulator_s() -> None:
    """The same meanings; the items that carried them differ (an event, or the message
    as it is)."""
    for events in (ANTHROPIC, redacted_and_server_tools()):
        ours, theirs = accumulated(events).summary(), summary_of_events(events)
        assert meanings(ours) == meanings(theirs)
        for mine, other in zip(ours.choices, theirs.choices, strict=True):
            assert [(i.kind, i.value) for i in mine.reasoning_items] == [
                (i.kind, i.value) for i in other.reasoning_items
            ]
            assert [dataclasses.replace(t, source=None) for t in mine.server_tools] == [
                dataclasses.replace(t, source=None) for t in other.server_tools
            ]
        assert ours.citations == theirs.citations


# The writer, on handmade parts.


def test_the_writer_writes_a_chat_turn() -> None:
    usage = UsageSummary(100, 20, 120, 40, 5, 0.5)
    parts = [
        start(),
        Part("reasoning", 0, "Hm, ", None),
        Part("reasoning", 0, "weather.", None),
        Part("text", 0, "Let me look.", None),
        call(0, "call_1", "get_weather", '{"city":'),  # id, name and a first piece at once
        call(0, None, None, '"Oslo"}'),
        call(1, "call_2", "now", ""),  # a call without arguments
        Part("finish", 0, "tool_calls", None),
        Part("usage", None, "", None, usage=usage),
    ]
    data, writer, caught = written(parts)
    checked = check_messages(data)
    assert not writer.dropped and not caught
    assert [b["type"] for b in checked.blocks] == ["thinking", "text", "tool_use", "tool_use"]
    assert checked.blocks[2]["partial_json"] == '{"city":"Oslo"}', "the first piece too"
    assert checked.blocks[3]["partial_json"] == "{}"
    assert (checked.blocks[2]["id"], checked.blocks[2]["name"]) == ("call_1", "get_weather")
    events = events_of(data)
    message = events[0].data["message"]
    assert message["id"] == "msg_chatcmpl-1" and message["model"] == "m"
    assert message["usage"] == {"input_tokens": 0, "output_tokens": 0}
    last_delta = events[-2].data
    assert last_delta["delta"] == {"stop_reason": "tool_use", "stop_sequence": None}
    assert last_delta["usage"] == {
        "input_tokens": 60, "cache_read_input_tokens": 40, "output_tokens": 20,
        "output_tokens_details": {"thinking_tokens": 5}, "cost_usd": 0.5,
    }  # fmt: skip
    back = read_back(data)
    assert back.usage == usage
    [choice] = back.choices
    assert (choice.reasoning, choice.text, choice.finish_reason) == (
        "Hm, weather.",
        "Let me look.",
        "tool_calls",
    )
    assert data.startswith(b'event: message_start\ndata: {"type":"message_start","message":')


def test_the_writer_writes_exactly_these_events() -> None:
    parts = [start("msg_abc"), Part("text", 0, "Hi", None), Part("finish", 0, "stop", None)]
    data, _, _ = written(parts)
    assert data.decode().split("\n\n")[:-1] == [
        'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_abc",'
        '"type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,'
        '"stop_sequence":null,"usage":{"input_tokens":0,"output_tokens":0}}}',
        'event: content_block_start\ndata: {"type":"content_block_start","index":0,'
        '"content_block":{"type":"text","text":""}}',
        'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
        '"delta":{"type":"text_delta","text":"Hi"}}',
        'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}',
        'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":'
        '"end_turn","stop_sequence":null},"usage":{"output_tokens":0}}',
        'event: message_stop\ndata: {"type":"message_stop"}',
    ]


def test_the_message_id_comes_from_the_source_s() -> None:
    ids = []
    for parts in ([start("chatcmpl-7")], [start("msg_01")], [start(None)], [start(None)], []):
        data, _, _ = written(parts)
        check_messages(data)
        ids.append(events_of(data)[0].data["message"]["id"])
    assert ids[:2] == ["msg_chatcmpl-7", "msg_01"]
    assert all(i.startswith("msg_") and len(i) == 36 for i in ids[2:]), "msg_ and a uuid"
    assert len(set(ids)) == 5, "never a constant"
    data, _, _ = written([start(None), call(None, None, "f", "{}")])
    tool_id = check_messages(data).blocks[0]["id"]
    assert tool_id.startswith("toolu_") and tool_id != "toolu_"


@pytest.mark.parametrize(
    ("finish", "reason"),
    [("stop", "end_turn"), ("length", "max_tokens"), ("tool_calls", "tool_use"),
     ("content_filter", "refusal"), ("pause_turn", "pause_turn"), (None, None)],
)  # fmt: skip
def test_finish_reasons_write_as_stop_reasons(finish: str | None, reason: str | None) -> None:
    parts = [start(), Part("text", 0, "x", None)]
    if finish is not None:
        parts.append(Part("finish", 0, finish, None))
    data, _, _ = written(parts)
    check_messages(data)
    assert events_of(data)[-2].data["delta"]["stop_reason"] == reason
    assert read_back(data).choices[0].finish_reason == finish


def test_usage_is_written_in_anthropic_s_terms_and_always() -> None:
    cases = [
        (None, {"output_tokens": 0}),
        (UsageSummary(10, None, None), {"input_tokens": 10, "output_tokens": 0}),
        (UsageSummary(10, 3, 20, 4, None, None, 2),
         {"input_tokens": 6, "cache_read_input_tokens": 4, "output_tokens": 3,
          "server_tool_calls": 2, "total_tokens": 20}),
    ]  # fmt: skip
    for usage, expected in cases:
        parts = [start()]
        if usage is not None:
            parts.append(Part("usage", None, "", None, usage=usage))
        data, _, _ = written(parts)
        check_messages(data)
        assert events_of(data)[-2].data["usage"] == expected


def test_a_usage_before_the_first_block_is_in_message_start() -> None:
    """A Messages source says its input in its first event: message_start says it on,
    the cache writes (billed above plain input) apart, as they came."""
    data, _, _ = written(parts_of(ANTHROPIC))
    start_usage = events_of(data)[0].data["message"]["usage"]
    assert start_usage == {"input_tokens": 25, "cache_creation_input_tokens": 10,
                           "cache_read_input_tokens": 100, "output_tokens": 1}  # fmt: skip
    assert read_back(data).usage == summary_of_events(ANTHROPIC).usage


def test_a_thinking_block_is_signed_when_a_signature_comes() -> None:
    signed = [start(), Part("reasoning", 0, "Hm", None), Part("signature", 0, "sig", None)]
    unsigned = [start(), Part("reasoning", 0, "Hm", None), Part("text", 0, "A", None)]
    omitted = [start(), Part("signature", 0, "sig2", None, block=0)]  # thinking not shown
    blocks = [check_messages(written(parts)[0]).blocks for parts in (signed, unsigned, omitted)]
    assert [(b["thinking"], b["signature"], b["deltas"][-1]) for b in blocks[0]] == [
        ("Hm", "sig", "signature_delta")
    ]
    assert blocks[1][0]["signature"] is None and "signature_delta" not in blocks[1][0]["deltas"]
    assert [(b["thinking"], b["signature"]) for b in blocks[2]] == [("", "sig2")]
    late = [*unsigned, Part("signature", 0, "sig", None)]
    _, writer, caught = written(late)
    assert list(writer.dropped) == [("signature", "no thinking block is open to hold it")]
    assert len(caught) == 1


def test_opaque_reasoning_is_a_redacted_thinking_block() -> None:
    parts = [start(), Part("redacted_reasoning", 0, "EmwK", None), Part("text", 0, "A", None)]
    checked = check_messages(written(parts)[0])
    assert [(b["type"], b.get("data")) for b in checked.blocks] == [
        ("redacted_thinking", "EmwK"),
        ("text", None),
    ]
    [choice] = read_back(written(parts)[0]).choices
    assert [(i.kind, i.value) for i in choice.reasoning_items] == [("encrypted", "EmwK")]


def test_reasoning_a_server_interleaves_with_a_call_waits_for_the_call() -> None:
    """vLLM has sent reasoning between a call's pieces: the call's block holds every
    piece, and the reasoning follows it."""
    parts = [start(), call(0, "c1", "f", '{"a":'), Part("reasoning", 0, "hm", None),
             Part("text", 0, "t", None), call(0, None, None, "1}"), call(1, "c2", "g", "{}"),
             Part("reasoning", 0, "more", None), Part("finish", 0, "tool_calls", None)]  # fmt: skip
    data, writer, _ = written(parts)
    blocks = check_messages(data).blocks
    assert [(b["type"], b.get("partial_json") or b.get("thinking") or b.get("text"))
            for b in blocks] == [("tool_use", '{"a":1}'), ("thinking", "hm"), ("text", "t"),
                                 ("tool_use", "{}"), ("thinking", "more")]  # fmt: skip
    assert not writer.dropped


def test_what_messages_cannot_hold_is_counted_and_said_once() -> None:
    tool = ServerToolSummary(0, "search", "{}", None, {})
    parts = [
        start(),
        Part("text", 0, "A", None),
        Part("text", 1, "B", None),
        Part("finish", 1, "stop", None),
        Part("refusal", 0, "No.", None),
        Part("citation", None, "", None, citation=Citation("https://a")),
        Part("server_tool", 0, "", None, server_tool=tool),
        Part("start", None, "", None),
    ]
    data, writer, caught = written(parts)
    check_messages(data)
    assert {kind for kind, _ in writer.dropped} == {
        "text", "finish", "citation", "server_tool", "start"
    }  # fmt: skip
    assert len(caught) == 1, "once per stream"
    [choice] = read_back(data).choices
    assert (choice.text, choice.refusal) == ("A", "No."), "a refusal has a block of its own"


def test_an_error_ends_the_stream_instead_of_message_stop() -> None:
    head = [start(), Part("text", 0, "Hel", None)]
    error_part = Part("error", None, "overloaded", None, error={"type": "overloaded_error"})
    cases: list[tuple[Iterable[Part], str, str]] = [
        ([*head, error_part, Part("text", 0, "lost", None)], "overloaded_error", "overloaded"),
        ([*head, Part("error", None, "cut", None, error={"type": "incomplete_stream"})],
         "api_error", "cut"),
        (raising(head, StreamError({"message": "rate", "type": "rate_limit_error"},
                                   ServerSentEvent("error", "{}"))), "rate_limit_error", "rate"),
        (raising(head, ConnectionError("reset")), "api_error", "ConnectionError: reset"),
    ]  # fmt: skip
    for parts, kind, message in cases:
        data, writer, _ = written(parts)
        checked = check_messages(data)
        assert checked.error == {"type": kind, "message": message}
        assert named(data)[:3] == ["message_start", "content_block_start", "content_block_delta"]
        assert "message_stop" not in named(data)
    assert isinstance(writer.failure, ConnectionError), "kept for the caller"
    data, _, _ = written([error_part])
    assert named(data) == ["error"], "an error before anything: the error alone"


def raising(parts: list[Part], error: Exception) -> Iterator[Part]:
    yield from parts
    raise error


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_a_chat_stream_cut_off_ends_with_an_error(module: ModuleType) -> None:
    cut = body([{"id": "c", "choices": [{"index": 0, "delta": {"content": "Hel"}}]}])
    data, _, _ = written(module.iter_parts([cut.removesuffix(b"data: [DONE]\n\n")]))
    error = check_messages(data).error
    assert error is not None and error["type"] == "api_error" and "[DONE]" in error["message"]


def test_the_async_writer_writes_the_same() -> None:
    parts = parts_of(ANTHROPIC)

    async def write() -> bytes:
        async def aparts() -> AsyncIterator[Part]:
            for part in parts:
                yield part

        return b"".join([event async for event in _awrite_messages(aparts())])

    first = asyncio.run(write())
    assert first.replace(b"msg_01Xf", b"") == b"".join(_write_messages(parts)).replace(
        b"msg_01Xf", b""
    )

    async def failing() -> bytes:
        async def aparts() -> AsyncIterator[Part]:
            yield parts[0]
            raise StreamError("gone", ServerSentEvent("error", "gone"))

        return b"".join([event async for event in _awrite_messages(aparts())])

    assert check_messages(asyncio.run(failing())).error == {"type": "api_error", "message": "gone"}


def test_a_messages_stream_written_again_reads_the_same() -> None:
    for events in (ANTHROPIC, redacted_and_server_tools()):
        data, writer, _ = written(parts_of(events))
        check_messages(data)
        back = read_back(data)
        expected = summary_of_events(events)
        assert meanings(back) == meanings(expected, servers=False)
        assert [(i.kind, i.value) for i in back.choices[0].reasoning_items] == [
            (i.kind, i.value) for i in expected.choices[0].reasoning_items
        ]
        dropped = {kind for kind, _ in writer.dropped}
        assert dropped == ({"server_tool"} if expected.choices[0].server_tools else set())
        assert back.citations == expected.citations, "Messages' citations, as they came"


def meanings(summary: Summary, servers: bool = True) -> dict[str, Any]:
    """A summary's meanings as plain values (two modules' summaries are instances of
    two classes): each choice's texts, finish reason and tool calls (no arguments and
    `{}` are one), and the usage."""
    return {
        "choices": [
            {
                "text": c.text,
                "reasoning": c.reasoning,
                "refusal": c.refusal,
                "finish_reason": c.finish_reason,
                "tool_calls": [(t.id, t.name, t.arguments or "{}") for t in c.tool_calls],
                "server_tools": len(c.server_tools) if servers else 0,
            }
            for c in summary.choices
        ],
        "usage": dataclasses.asdict(summary.usage),
    }


# Random parts, as either reader gives them.

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=2),
    max_leaves=4,
)
TEXT = st.text(min_size=1, max_size=6)


def pieces_of(text: str, cuts: list[int]) -> list[str]:
    points = sorted({min(c, len(text)) for c in cuts})
    out, at = [], 0
    for point in points:
        out.append(text[at:point])
        at = point
    return [*out, text[at:]]


@st.composite
def part_streams(draw: st.DrawFn) -> tuple[list[Part], str, Exception | None]:
    """Parts in an order a reader may give them: chat's (no blocks; tool calls by
    index, their pieces maybe interleaved, the id and name with the first piece) or
    Messages' (a block per run of parts, a call's first piece empty); other choices,
    citations and server tools mixed in; a finish and usage; an error at the end."""
    flavor = draw(st.sampled_from(["chat", "messages"]))
    chat = flavor == "chat"
    at = None if chat else 0
    ident = draw(st.none() | st.text("abc123-_", min_size=1, max_size=8))
    parts = [Part("start", at, "", None, identity=Identity(ident, "m", None))]
    block = 0
    calls = 0
    for _ in range(draw(st.integers(0, 7))):
        kind = draw(st.sampled_from(["reasoning", "text", "refusal", "redacted", "signed",
                                     "calls", "other", "usage"]))  # fmt: skip
        this = None if chat else block
        if kind in ("reasoning", "text", "refusal", "signed"):
            texts = draw(st.lists(TEXT, min_size=1, max_size=3))
            meaning = "reasoning" if kind == "signed" else kind
            if kind == "signed" and not chat and draw(st.booleans()):
                texts = []  # a thinking block whose text is omitted
            parts += [Part(meaning, 0, t, None, block=this) for t in texts]
            if kind == "signed":
                parts.append(Part("signature", 0, draw(TEXT), None, block=this))
        elif kind == "redacted":
            parts.append(Part("redacted_reasoning", 0, draw(TEXT), None, block=this))
        elif kind == "calls":
            runs = []
            for _ in range(draw(st.integers(1, 3))):
                index = calls if chat else block
                which = ToolCallPart(index, f"call_{index}", f"f{index}")
                text = json.dumps({"v": draw(JSON_VALUES)}) if draw(st.booleans()) else ""
                cuts = draw(st.lists(st.integers(0, len(text)), max_size=3))
                pieces = pieces_of(text, cuts) if text else [""]
                if not chat:
                    pieces = ["", *pieces]
                runs.append([Part("tool_call", 0, p, None, tool_call=which, block=None if chat else index)
                             for p in pieces])  # fmt: skip
                calls += 1
                block += 0 if chat else 1
            if chat and draw(st.booleans()):  # interleaved, each call's order kept
                order = draw(st.permutations([i for i, run in enumerate(runs) for _ in run]))
                queues = [list(run) for run in runs]
                parts += [queues[i].pop(0) for i in order]
            else:
                parts += [p for run in runs for p in run]
            continue
        elif kind == "other":
            parts.append(draw(st.sampled_from([
                Part("text", 1, "other choice", None),
                Part("citation", at, "", None, citation=Citation("https://a", "A")),
                Part("server_tool", 0, "", None,
                     server_tool=ServerToolSummary(0, "s", "{}", None, {})),
            ])))  # fmt: skip
        elif any(p.choice in (None, 0) for p in parts[1:]):
            # A usage after message_start is written (one before is in it, and a
            # key the last report lacks would keep its value there).
            parts.append(Part("usage", at, "", None, usage=draw(usages())))
        block += 1
    finish = draw(st.sampled_from([None, "stop", "length", "tool_calls", "content_filter",
                                   "pause_turn"]))  # fmt: skip
    if finish is not None:
        parts.append(Part("finish", 0, finish, None))
    if draw(st.booleans()):
        parts.append(Part("usage", at, "", None, usage=draw(usages())))
    ending = draw(st.sampled_from(["end", "end", "error part", "raise"]))
    if ending == "error part":
        parts.append(Part("error", at, "upstream failed", None, error={"type": "api_error"}))
    raised = StreamError("boom", ServerSentEvent("error", "boom")) if ending == "raise" else None
    return parts, flavor, raised


@st.composite
def usages(draw: st.DrawFn) -> UsageSummary:
    prompt = draw(st.none() | st.integers(0, 1000))
    cached = None if prompt is None else draw(st.none() | st.integers(0, prompt))
    completion = draw(st.none() | st.integers(0, 1000))
    total = draw(st.none() | st.integers(0, 3000))
    reasoning = draw(st.none() | st.integers(0, 10))
    cost = draw(st.none() | st.floats(0, 1))
    servers = draw(st.none() | st.integers(0, 3))
    return UsageSummary(prompt, completion, total, cached, reasoning, cost, servers)


def expected_of(parts: list[Part], flavor: str, failed: bool) -> tuple[Summary, str, set[str]]:
    """What the written stream should read back as: the parts' summary, the text with
    the refusals in it, and the kinds the writer must say it left out."""
    until_error = []
    for part in parts:
        if part.kind == "error":
            break
        until_error.append(part)
    dropped: set[str] = set()
    text = ""
    for part in until_error:
        if part.choice not in (None, 0) or part.kind in ("citation", "server_tool"):
            dropped.add(part.kind)  # the random citations are no Messages citations
        if part.kind == "text" and part.choice == 0:
            text += part.text
    if failed and _usage_left_out(until_error):
        dropped.add("usage")
    return _summary_of_parts(until_error), text, dropped


def _usage_left_out(parts: list[Part]) -> bool:
    """Whether a message that failed leaves out a usage said after its message_start:
    without a finish it has no message_delta to hold it."""
    if any(p.kind == "finish" and p.text and p.choice in (None, 0) for p in parts):
        return False
    opened: UsageSummary | None = None
    now: UsageSummary | None = None
    begun = False
    for part in parts:
        if part.kind == "usage":
            now = part.usage
        elif part.kind == "start" and not begun:
            now = part.usage or now
        elif part.choice not in (None, 0):
            continue
        if not begun and part.kind != "usage":
            opened, begun = now, True
    return (now or UsageSummary()) != (opened or UsageSummary())


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(part_streams())
def test_random_parts_write_a_valid_stream_that_reads_back_the_same(
    drawn: tuple[list[Part], str, Exception | None],
) -> None:
    parts, flavor, raised = drawn
    source: Iterable[Part] = parts if raised is None else raising(parts, raised)
    data, writer, caught = written(source)
    failed = raised is not None or any(p.kind == "error" for p in parts)
    expected, text, dropped = expected_of(parts, flavor, failed)
    checked = check_messages(data)  # every call's input is JSON, interleaved or not
    assert {kind for kind, _ in writer.dropped} == dropped
    assert bool(caught) == bool(dropped), "said once when something was left out"
    assert (checked.error is not None) == failed
    back = read_back(data)
    if not expected.choices:
        assert all(not c.text and not c.tool_calls for c in back.choices)
        return
    want, got = expected.choices[0], back.choices[0]
    assert (got.text, got.reasoning, got.refusal) == (text, want.reasoning, want.refusal)
    # Chat orders calls by index, Messages by block: a call of a higher index may
    # start first.
    assert sorted((t.id, t.name, t.arguments or "{}") for t in got.tool_calls) == sorted(
        (t.id, t.name, t.arguments or "{}") for t in want.tool_calls
    )
    assert [(i.kind, i.value) for i in got.reasoning_items] == [
        (i.kind, i.value) for i in want.reasoning_items
    ]
    if failed:
        return  # no message_delta: the stop reason and the final usage are not said
    assert got.finish_reason == want.finish_reason
    u = expected.usage
    prompt, completion = u.prompt_tokens or 0, u.completion_tokens or 0
    total = u.total_tokens if u.total_tokens is not None else prompt + completion
    assert back.usage == dataclasses.replace(
        u, prompt_tokens=prompt, completion_tokens=completion, total_tokens=total
    ), "counts the source did not say are 0 (Messages requires them)"


# Bridges: every captured chat stream, written as Messages and read back.


def bridged(module: ModuleType, stream: Any) -> tuple[bytes, _MessagesWriter, Any]:
    texts = [text for _, text in stream.chunks]
    data, writer, _ = written(module.iter_parts([body(texts)]))
    return data, writer, summary_of(module, texts)


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
@pytest.mark.parametrize("stream", FIXTURE_STREAMS, ids=lambda s: s.name)
def test_a_captured_chat_stream_bridged_to_messages_reads_back_the_same(
    module: ModuleType, stream: Any
) -> None:
    """What Messages can hold comes back: texts, reasoning, tool calls (ids and names
    the source gave; `{}` for no arguments), the finish reason mapped there and back,
    and the usage; a refusal in a text block of its own, marked as one. By design:
    usage the source did not say comes back as 0, as Messages requires counts; a call
    without an id gets one; the web pages the source cited are counted in
    `dropped`."""
    data, writer, summary = bridged(module, stream)
    checked = check_messages(data)
    assert checked.error is None
    back = read_back(data)
    [want] = summary.choices
    [got] = back.choices
    assert (got.reasoning, got.text, got.refusal, got.finish_reason) == (
        want.reasoning,
        want.text,
        want.refusal,
        want.finish_reason,
    )
    assert [t.arguments or "{}" for t in got.tool_calls] == [
        t.arguments or "{}" for t in want.tool_calls
    ]
    assert [(t.id, t.name) for t in got.tool_calls] == [
        (t.id or got.tool_calls[i].id, t.name) for i, t in enumerate(want.tool_calls)
    ]
    usage = dataclasses.asdict(summary.usage)
    for count in ("prompt_tokens", "completion_tokens"):
        usage[count] = usage[count] or 0
    if usage["total_tokens"] is None:
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
    assert dataclasses.asdict(back.usage) == usage
    # A message has one choice, and a refusal a block; a web page chat cites (a part
    # since chat's parts carry citations) is counted: Messages cites a page as a
    # search result it ran itself.
    dropped = {kind: count for (kind, _), count in writer.dropped.items()}
    assert dropped == ({"citation": len(summary.citations)} if summary.citations else {})


def is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def test_anthropic_sdk_python_accepts_every_bridged_stream() -> None:
    """The SDK's own accumulator builds the message from each stream the writer wrote
    from a captured chat stream, with the same texts and calls (arguments that are no
    JSON, of a capture cut mid-call, under `_raw_arguments`)."""
    import anthropic.lib.streaming._messages as streaming

    module = TARGETS["dataclasses"]
    for stream in FIXTURE_STREAMS:
        data, _, summary = bridged(module, stream)
        [want] = summary.choices
        snapshot: Any = None
        buffers: dict[int, bytes] = {}
        for event in events_of(data):
            snapshot = streaming.accumulate_event(
                event=event.data, current_snapshot=snapshot, json_bufs=buffers
            )
        message = snapshot.to_dict()
        texts = "".join(b.get("text", "") for b in message["content"])
        thinking = "".join(b.get("thinking", "") for b in message["content"])
        assert (thinking, texts) == (want.reasoning, want.text + want.refusal), stream.name
        inputs = [b["input"] for b in message["content"] if b["type"] == "tool_use"]
        assert inputs == [
            (
                json.loads(t.arguments or "{}")
                if is_json(t.arguments or "{}")
                else {"_raw_arguments": t.arguments}
            )
            for t in want.tool_calls
        ]
        assert message["usage"]["output_tokens"] == (summary.usage.completion_tokens or 0)
