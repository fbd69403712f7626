"""Issue 41's defects of the Messages runtime, in every target: a tool name split
across chat chunks, the SDK's `output_tokens_details.thinking_tokens`, citations of
every kind, deltas and a `message_start` out of order, calls interleaved or broken,
hostile values (a null text, an error event in words, an index of 10**9), and the
memory a stream may take whatever its indexes say."""

from __future__ import annotations

import gc
import importlib
import json
import tracemalloc
import warnings
from collections.abc import Callable, Iterable, Iterator
from types import ModuleType
from typing import Any

import anthropic.lib.streaming._messages as streaming
import pytest

from generator.runtime.messages.accumulate import _MessagesAccumulator
from tests.helpers.messages_invariants import check_messages, events_of
from tests.helpers.support import TARGETS
from tests.runtime.chat.test_meanings import body

MODULES = list(TARGETS.values())
each_target = pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)


def sse(events: Iterable[dict[str, Any]]) -> bytes:
    """Messages events as the server-sent events Anthropic writes."""
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


def start(**usage: int) -> dict[str, Any]:
    message: dict[str, Any] = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude",
               "content": [], "stop_reason": None, "stop_sequence": None,
               "usage": {"input_tokens": 3, "output_tokens": 1, **usage}}  # fmt: skip
    return {"type": "message_start", "message": message}


def block(index: int, **content: Any) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": content}


def delta(index: int, **change: Any) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": change}


def stop(index: int) -> dict[str, Any]:
    return {"type": "content_block_stop", "index": index}


def end(usage: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    said = {"stop_reason": "end_turn", "stop_sequence": None}
    return [
        {"type": "message_delta", "delta": said, "usage": usage or {"output_tokens": 9}},
        {"type": "message_stop"},
    ]


def written(module: ModuleType, parts: Iterable[Any], protocol: str) -> tuple[bytes, str]:
    """The stream `parts` make in `protocol`, and what its writer said it left out."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        data = b"".join(module.write_parts(parts, protocol=protocol))
    return data, " ".join(str(w.message) for w in caught)


def messages_of(module: ModuleType, data: bytes) -> bytes:
    """A chat stream bridged to Messages: checked against every invariant."""
    out, said = written(module, module.iter_parts(data), "messages")
    check_messages(out)
    assert not said, said
    return out


def sdk_message(data: bytes) -> dict[str, Any]:
    """The message anthropic-sdk-python's accumulator builds from a stream."""
    snapshot: Any = None
    buffers: dict[int, bytes] = {}
    for event in events_of(data):
        snapshot = streaming.accumulate_event(
            event=event.data, current_snapshot=snapshot, json_bufs=buffers
        )
    message: dict[str, Any] = snapshot.to_dict()
    return message


def plain(module: ModuleType, message: Any) -> dict[str, Any]:
    """A target's `Message` as JSON data."""
    messages = importlib.import_module(module.__name__.replace(".chat", ".messages"))
    data: dict[str, Any] = json.loads(messages.dumps(message))
    return data


def accumulated(module: ModuleType, data: bytes) -> Any:
    accumulator = module.MessageAccumulator()
    for event in module.iter_events(data, protocol="messages"):
        accumulator.add(event)
    return accumulator


def chunk(*calls: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    choice = {"index": 0, "delta": {"tool_calls": list(calls)}, "finish_reason": finish}
    return {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
            "choices": [choice]}  # fmt: skip


def piece(index: int, arguments: str = "", **head: Any) -> dict[str, Any]:
    function = {"arguments": arguments, **({"name": head["name"]} if "name" in head else {})}
    call = {"index": index, "function": function}
    if "id" in head:
        call |= {"id": head["id"], "type": "function"}
    return call


FINISH = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
          "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}  # fmt: skip


# 1. A tool name split across chat chunks.


@each_target
def test_a_tool_name_split_across_chunks_is_written_joined(module: ModuleType) -> None:
    data = body([
        chunk(piece(0, id="call_1", name="get_")),
        chunk(piece(0, name="weather")),
        chunk(piece(0, '{"city": "Oslo"}')),
        FINISH,
    ])  # fmt: skip
    out = messages_of(module, data)
    [tool] = sdk_message(out)["content"]
    assert (tool["id"], tool["name"], tool["input"]) == ("call_1", "get_weather", {"city": "Oslo"})


# 3. Reasoning tokens in the SDK's field.


@each_target
def test_thinking_tokens_are_read_and_written_where_the_sdk_has_them(module: ModuleType) -> None:
    usage = {"output_tokens": 89, "output_tokens_details": {"thinking_tokens": 47}}
    data = sse([start(), block(0, type="text", text=""), delta(0, type="text_delta", text="Hi"),
                stop(0), *end(usage)])  # fmt: skip
    assert accumulated(module, data).summary().usage.reasoning_tokens == 47
    parts = list(module.iter_parts(data, protocol="messages"))
    assert [p.usage.reasoning_tokens for p in parts if p.kind == "usage"][-1] == 47
    out, _ = written(module, parts, "messages")
    said = events_of(out)[-2].data["usage"]
    assert said["output_tokens_details"] == {"thinking_tokens": 47}
    assert "reasoning_tokens" not in said, "the SDK's field, not a key of our own"
    assert sdk_message(out)["usage"]["output_tokens_details"] == {"thinking_tokens": 47}
    old = sse([start(), *end({"output_tokens": 9, "reasoning_tokens": 5})])  # older versions'
    assert accumulated(module, old).summary().usage.reasoning_tokens == 5


# 7. Citations of every kind.

CITATIONS = [
    {"type": "char_location", "cited_text": "a", "document_index": 0,
     "document_title": "Doc", "start_char_index": 0, "end_char_index": 1},
    {"type": "page_location", "cited_text": "b", "document_index": 1,
     "document_title": None, "start_page_number": 1, "end_page_number": 2},
    {"type": "content_block_location", "cited_text": "c", "document_index": 2,
     "document_title": None, "start_block_index": 0, "end_block_index": 1},
    {"type": "search_result_location", "cited_text": "d", "search_result_index": 0,
     "source": "https://s", "title": "S", "start_block_index": 0, "end_block_index": 1},
    {"type": "web_search_result_location", "cited_text": "e", "url": "https://w",
     "title": "W", "encrypted_index": "x"},
]  # fmt: skip


def cited_stream() -> bytes:
    cites = [delta(0, type="citations_delta", citation=c) for c in CITATIONS]
    return sse([start(), block(0, type="text", text=""), *cites,
                delta(0, type="text_delta", text="Cited."), stop(0), *end()])  # fmt: skip


@each_target
def test_every_kind_of_citation_is_a_part_and_messages_carries_it(module: ModuleType) -> None:
    parts = list(module.iter_parts(cited_stream(), protocol="messages"))
    cited = [p.citation for p in parts if p.kind == "citation"]
    assert [c.source for c in cited] == CITATIONS, "each as it came"
    assert [c.url for c in cited] == [None, None, None, "https://s", "https://w"]
    assert [c.title for c in cited] == ["Doc", None, None, "S", "W"]
    out, said = written(module, parts, "messages")
    check_messages(out)
    assert not said
    [text] = sdk_message(out)["content"]
    assert (text["text"], text["citations"]) == ("Cited.", CITATIONS)


@each_target
def test_a_citation_a_protocol_cannot_hold_is_counted(module: ModuleType) -> None:
    parts = list(module.iter_parts(cited_stream(), protocol="messages"))
    chat, said = written(module, parts, "chat")
    assert b'"url":null' not in chat and b'"url": null' not in chat
    assert "3 citation (a citation without a URL has no place)" in said
    web = module.Part("citation", 0, "", None, citation=module.Citation("https://a", "A"))
    out, said = written(module, [web, module.Part("text", 0, "x", None)], "messages")
    check_messages(out)
    assert "1 citation" in said, "a web page cited without Messages' search result"


# 8. Deltas before their start, a message_start after other events.


@each_target
def test_what_comes_before_its_start_is_merged_never_overwritten(module: ModuleType) -> None:
    data = sse([
        {"type": "ping"},
        delta(0, type="text_delta", text="Hel"),
        start(cache_read_input_tokens=2),
        block(0, type="text", text=""),
        delta(0, type="text_delta", text="lo"),
        stop(0),
        delta(1, type="input_json_delta", partial_json='{"a": 1}'),
        block(1, type="tool_use", id="toolu_1", name="f", input={}),
        stop(1),
        *end(),
    ])  # fmt: skip
    message = plain(module, accumulated(module, data).result())
    assert (message["id"], message["model"]) == ("msg_1", "claude")
    assert message["usage"] == {"input_tokens": 3, "cache_read_input_tokens": 2,
                                "output_tokens": 9}  # fmt: skip
    text, tool = message["content"]
    assert text["text"] == "Hello"
    assert (tool["id"], tool["name"], tool["input"]) == ("toolu_1", "f", {"a": 1})
    summary = accumulated(module, data).summary()
    [call] = summary.choices[0].tool_calls
    assert (call.id, call.name, call.arguments) == ("toolu_1", "f", '{"a": 1}')
    parts = list(module.iter_parts(data, protocol="messages"))
    calls = [p.text for p in parts if p.kind == "tool_call"]
    assert "".join(calls) == '{"a": 1}', "the start adds the call's name, not a {}"


def test_a_message_start_after_a_message_delta_keeps_the_later_counts() -> None:
    later = {"type": "message_delta", "delta": {"stop_reason": "end_turn"},
             "usage": {"output_tokens": 9}}  # fmt: skip
    accumulator = _MessagesAccumulator()
    for event in (later, start()):
        accumulator.add(event)
    message = accumulator.result()
    assert message["usage"] == {"input_tokens": 3, "output_tokens": 9}
    assert (message["id"], message["stop_reason"]) == ("msg_1", "end_turn")


# 9. Calls interleaved, and arguments that are no JSON object.


@each_target
def test_interleaved_calls_are_all_kept_each_input_json(module: ModuleType) -> None:
    data = body([
        chunk(piece(0, id="call_a", name="f"), piece(1, id="call_b", name="g")),
        chunk(piece(0, '{"x":')),
        chunk(piece(1, '{"y":')),
        chunk(piece(0, ' 1}')),
        chunk(piece(1, ' "}{"}')),
        FINISH,
    ])  # fmt: skip
    out = messages_of(module, data)
    inputs = [(b["name"], b["input"]) for b in sdk_message(out)["content"]]
    assert inputs == [("f", {"x": 1}), ("g", {"y": "}{"})]


@each_target
def test_arguments_that_are_no_json_object_go_out_under_raw_arguments(
    module: ModuleType,
) -> None:
    broken = ["{'a': 1}", '{"a": 1} and more', '{"a": ', "[1, 2]", "plain", " "]
    data = body([chunk(piece(i, text, id=f"call_{i}", name="f")) for i, text in enumerate(broken)]
                + [FINISH])  # fmt: skip
    out = messages_of(module, data)
    inputs = [b["input"] for b in sdk_message(out)["content"]]
    assert inputs == [{"_raw_arguments": text} for text in broken]
    back = [t.arguments for t in accumulated(module, out).summary().choices[0].tool_calls]
    assert back == broken, "read back as the text they were"


@each_target
def test_held_calls_take_memory_in_proportion_to_their_arguments(module: ModuleType) -> None:
    """Two calls of 1 MB each, interleaved in 2,000 pieces: what the writer holds is
    their arguments (and the events it writes), not more."""
    size = 1 << 20
    value = "v" * (size // 1000 - 16)
    pieces = ['{"a": [', *[f'"{value}",' for _ in range(1000)], "1]}"]

    def parts() -> Iterator[Any]:
        yield module.Part("start", None, "", None, identity=module.Identity("c", "m", 1))
        for text in pieces:
            for index in (0, 1):
                which = module.ToolCallPart(index, f"call_{index}", "f")
                yield module.Part("tool_call", 0, text, None, tool_call=which)
        yield module.Part("finish", 0, "tool_calls", None)

    def write() -> None:
        for _ in module.write_parts(parts(), protocol="messages"):
            pass

    assert peak_of(write) < 10 * 2 * size  # 7.4 times, measured


# 10. Hostile values.


def test_a_null_text_adds_nothing() -> None:
    accumulator = _MessagesAccumulator()
    for event in (start(), block(0, type="text", text="a"), delta(0, type="text_delta", text=None),
                  block(1, type="thinking", thinking=""),
                  delta(1, type="thinking_delta", thinking=None)):  # fmt: skip
        accumulator.add(event)
    content = accumulator.result()["content"]
    assert (content[0]["text"], content[1]["thinking"]) == ("a", "")


@each_target
def test_a_null_text_is_a_documented_error_or_nothing(module: ModuleType) -> None:
    data = sse([start(), block(0, type="text", text="a"), delta(0, type="text_delta", text=None),
                stop(0), *end()])  # fmt: skip
    try:
        message = plain(module, accumulated(module, data).result())
    except module.ChunkDecodeError:
        return  # the target refuses the event: its documented error
    assert message["content"][0]["text"] == "a"


@each_target
@pytest.mark.parametrize("payload", ["overloaded", "", "[1, 2]", "{broken"])
def test_an_error_event_is_raised_whatever_its_data(module: ModuleType, payload: str) -> None:
    data = sse([start()]) + f"event: error\ndata: {payload}\n\n".encode()
    with pytest.raises(module.StreamError):
        list(module.iter_events(data, protocol="messages"))
    with pytest.raises(module.StreamError):
        list(module.iter_parts(data, protocol="messages"))


# The acceptance line: memory bounded by the largest event, whatever the indexes say.

BIG = "x" * 200_000
"""The text of the largest event of the streams below."""


def peak_of(run: Callable[[], None]) -> int:
    """The most `run` holds at once, once it has run (what it imports and caches the
    first time is no part of a stream's cost)."""
    run()
    gc.collect()
    tracemalloc.start()
    try:
        run()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def read_all(module: ModuleType, data: bytes) -> Callable[[], None]:
    def run() -> None:
        for _ in module.iter_parts(data, protocol="messages"):
            pass
        accumulator = module.MessageAccumulator()
        for event in module.iter_events(data, protocol="messages"):
            accumulator.add(event)
        accumulator.result()

    return run


def far_stream(far: int) -> bytes:
    return sse([start(), block(far, type="text", text=""), delta(far, type="text_delta", text=BIG),
                delta(far + 1, type="input_json_delta", partial_json="{}"), stop(far),
                stop(far + 1), *end()])  # fmt: skip


@each_target
def test_an_index_of_10_to_the_9_costs_what_an_index_of_1_does(module: ModuleType) -> None:
    near, far = (peak_of(read_all(module, far_stream(at))) for at in (1, 10**9))
    assert far < near * 1.1 + 10_000
    assert far < 16 * len(BIG)  # 14 times, measured: reading the event's JSON


@each_target
def test_many_blocks_take_no_more_than_the_largest_event(module: ModuleType) -> None:
    """20,000 blocks at indexes 10**6 apart (a stream of 6 MB), read into parts: a
    block is forgotten once it stops."""
    events = [start(), block(0, type="text", text=""), delta(0, type="text_delta", text=BIG),
              stop(0)]  # fmt: skip
    for n in range(1, 20_001):
        at = n * 10**6
        events += [block(at, type="text", text=""), delta(at, type="text_delta", text="t"),
                   stop(at)]  # fmt: skip
    data = sse([*events, *end()])

    def run() -> None:  # read as it comes from the network, in pieces
        pieces = (data[at : at + 16_384] for at in range(0, len(data), 16_384))
        for _ in module.iter_parts(pieces, protocol="messages"):
            pass

    assert peak_of(run) < 16 * len(BIG)  # 14 times, measured: reading the largest event


# Found by the ledger: what a source said before it failed.


@each_target
def test_a_finish_before_an_upstream_error_is_written_before_it(module: ModuleType) -> None:
    """A chat source that finished, then failed: the stop reason and the usage reach the
    Messages client (message_delta), then the error; never message_stop."""
    text = {
        "id": "c",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "delta": {"content": "Hi"}, "finish_reason": "stop"}],
    }
    usage = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
             "choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 2,
                                      "total_tokens": 5}}  # fmt: skip
    failed = {"error": {"message": "overloaded", "type": "server_error"}}
    source = b"".join(f"data: {json.dumps(c)}\n\n".encode() for c in (text, usage, failed))
    out, said = written(module, module.iter_parts([source]), "messages")
    assert not said, said
    events = [e.data["type"] for e in events_of(out)]
    assert events[-2:] == ["message_delta", "error"], events
    assert "message_stop" not in events
    read: list[tuple[str, str]] = []
    with pytest.raises(module.StreamError, match="overloaded"):
        read.extend((p.kind, p.text) for p in module.iter_parts([out], protocol="messages"))
    assert ("finish", "stop") in read


@each_target
def test_a_usage_that_a_failed_message_cannot_hold_is_counted(module: ModuleType) -> None:
    Part, UsageSummary = module.Part, module.UsageSummary
    parts = [Part("start", None, "", None, usage=UsageSummary(3, 0)),
             Part("text", 0, "Hi", None),
             Part("usage", None, "", None, usage=UsageSummary(3, 7)),
             Part("error", None, "cut off", None)]  # fmt: skip
    _, said = written(module, parts, "messages")
    assert "usage (a message that failed has no message_delta to hold it)" in said, said
