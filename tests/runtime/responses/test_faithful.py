"""The Responses runtime's share of issue 41 ("Protocols that never lie"), in every
target: what a Responses stream or writer used to lose, double or blow up on, each
defect with the input that showed it. Nothing is dropped silently: what the target
cannot hold is in the writer's `dropped`."""

from __future__ import annotations

import json
import tracemalloc
import warnings
from collections.abc import Callable, Iterable
from types import ModuleType
from typing import Any

import pytest

from generator.runtime.parts import _REASONING_SEPARATOR
from tests.helpers.responses_invariants import check_responses, events_of
from tests.helpers.support import TARGETS, runtime
from tests.runtime.responses.test_runtime import (
    REASONING_DONE,
    added,
    completed,
    created,
    ev,
    item_done,
    numbered,
    response,
    sse,
)

CHATS = {name: TARGETS[name] for name in TARGETS}
RESPONSES = {name: __import__(f"generated.{name}.responses", fromlist=["_"]) for name in TARGETS}
ALL = sorted(TARGETS)


def chat_sse(deltas: Iterable[dict[str, Any]], finish: str = "tool_calls") -> bytes:
    """A chat stream of these deltas of choice 0, then the finish, then [DONE]."""
    head = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    chunks = [{**head, "choices": [{"index": 0, "delta": d}]} for d in deltas]
    chunks.append({**head, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    return "".join(f"data: {json.dumps(c)}\n\n" for c in chunks).encode() + b"data: [DONE]\n\n"


def bridged(module: ModuleType, data: bytes, protocol: str) -> tuple[bytes, Any]:
    """A stream read in `protocol` and written as Responses, and the writer's
    `dropped` (read from the warning it gives)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        parts = module.iter_parts(data, protocol=protocol)
        out = b"".join(module.write_parts(parts, protocol="responses"))
    said = [str(w.message) for w in caught if "not written as Responses" in str(w.message)]
    return out, said


def parts_of(module: ModuleType, data: bytes) -> list[Any]:
    """A Responses stream's parts, read by a chat module or a Responses one."""
    if module in RESPONSES.values():
        return list(module.iter_parts(data))
    return list(module.iter_parts(data, protocol="responses"))


def summary_of(module: ModuleType, data: bytes) -> Any:
    return runtime(module, "_summary_of_parts")(parts_of(module, data))


# 1. A tool name split across chat chunks.


@pytest.mark.parametrize("target", ALL)
def test_a_tool_name_split_across_chat_chunks_is_written_whole(target: str) -> None:
    call = {
        "index": 0,
        "id": "call_1",
        "type": "function",
        "function": {"name": "get_", "arguments": ""},
    }
    data = chat_sse([
        {"role": "assistant", "tool_calls": [call]},
        {"tool_calls": [{"index": 0, "function": {"name": "weather"}}]},
        {"tool_calls": [{"index": 0, "function": {"arguments": '{"city":'}}]},
        {"tool_calls": [{"index": 0, "function": {"arguments": '"Oslo"}'}}]},
    ])  # fmt: skip
    out, said = bridged(CHATS[target], data, "chat")
    checked = check_responses(out)
    names = [e.data.get("name") or e.data.get("item", {}).get("name") for e in events_of(out)
             if e.name in ("response.output_item.added", "response.output_item.done",
                           "response.function_call_arguments.done")]  # fmt: skip
    assert names == ["get_weather"] * 3
    assert [i["name"] for i in checked.response["output"]] == ["get_weather"]
    [called] = summary_of(CHATS[target], out).choices[0].tool_calls
    assert (called.id, called.name, called.arguments) == ("call_1", "get_weather",
                                                          '{"city":"Oslo"}')  # fmt: skip
    assert not said


@pytest.mark.parametrize("target", ALL)
def test_a_piece_of_a_name_after_the_call_was_added_is_counted(target: str) -> None:
    call = {
        "index": 0,
        "id": "call_1",
        "type": "function",
        "function": {"name": "get_", "arguments": "{"},
    }
    data = chat_sse([
        {"role": "assistant", "tool_calls": [call]},
        {"tool_calls": [{"index": 0, "function": {"name": "weather", "arguments": "}"}}]},
    ])  # fmt: skip
    out, said = bridged(CHATS[target], data, "chat")
    assert [i["name"] for i in check_responses(out).response["output"]] == ["get_"]
    assert len(said) == 1 and "1 tool_call (a piece of its name after" in said[0], said


# 2. An item at output_index 1 with nothing at 0.


def gap_events(final_id: str) -> list[dict[str, Any]]:
    item = {"id": "msg_a", "type": "message", "role": "assistant", "status": "in_progress",
            "content": []}  # fmt: skip
    text = {"type": "output_text", "text": "Hi there", "annotations": []}
    done = {**item, "status": "completed", "content": [text]}
    return numbered([
        created(),
        added(1, item),
        ev("content_part.added", 1, "msg_a", content_index=0, part={**text, "text": ""}),
        ev("output_text.delta", 1, "msg_a", content_index=0, delta="Hi "),
        ev("output_text.delta", 1, "msg_a", content_index=0, delta="there"),
        ev("output_text.done", 1, "msg_a", content_index=0, text="Hi there"),
        ev("content_part.done", 1, "msg_a", content_index=0, part=text),
        item_done(1, done),
        completed([{**done, "id": final_id}]),
    ])  # fmt: skip


@pytest.mark.parametrize("target", ALL)
@pytest.mark.parametrize("final_id", ["msg_a", "msg_other"], ids=["same id", "new id"])
def test_an_item_at_output_index_1_alone_is_read_once(target: str, final_id: str) -> None:
    data = sse(gap_events(final_id))
    for module in (CHATS[target], RESPONSES[target]):
        texts = [p.text for p in parts_of(module, data)
                 if p.kind == "text"]  # fmt: skip
        assert "".join(texts) == "Hi there", module.__name__
    out, _ = bridged(CHATS[target], data, "responses")
    assert summary_of(CHATS[target], out).choices[0].text == "Hi there"
    accumulator = RESPONSES[target].ResponseAccumulator()
    for event in RESPONSES[target].iter_events(data):
        accumulator.add(event)
    assert accumulator.summary().choices[0].text == "Hi there"
    assert accumulator.drift == ([] if final_id == "msg_a" else
                                 [("item id", "msg_a", "msg_other")])  # fmt: skip


# 5. Finish reasons Responses has no end for.


@pytest.mark.parametrize("target", ALL)
@pytest.mark.parametrize(
    ("reason", "terminal", "why", "back"),
    [("length", "response.incomplete", "max_output_tokens", "length"),
     ("model_context_window_exceeded", "response.incomplete", "max_output_tokens", "length"),
     ("pause_turn", "response.completed", None, "stop"),
     ("end_turn", "response.completed", None, "stop")],
)  # fmt: skip
def test_a_truncation_is_incomplete_and_an_end_responses_lacks_is_said(
    target: str, reason: str, terminal: str, why: str | None, back: str
) -> None:
    data = chat_sse([{"role": "assistant", "content": "Hi"}], finish=reason)
    out, said = bridged(CHATS[target], data, "chat")
    checked = check_responses(out)
    assert checked.terminal == terminal
    assert (checked.response["incomplete_details"] or {}).get("reason") == why
    assert summary_of(CHATS[target], out).choices[0].finish_reason == back
    exact = back == reason
    assert bool(said) is not exact, said
    if not exact:
        assert f"finish ({reason}:" in said[0]


# 6. Reasoning summary parts.


SUMMARY = ["First.", "Second.", "Third.", "Fourth."]


def summary_events(done_only: bool) -> list[dict[str, Any]]:
    parts = [{"type": "summary_text", "text": t} for t in SUMMARY]
    done = {"id": "rs_1", "type": "reasoning", "summary": parts, "status": "completed"}
    streamed: list[dict[str, Any]] = []
    for at, text in enumerate(SUMMARY):
        where = {"summary_index": at}
        streamed += [
            ev("reasoning_summary_part.added", 0, "rs_1", **where,
               part={"type": "summary_text", "text": ""}),
            ev("reasoning_summary_text.delta", 0, "rs_1", **where, delta=text),
            ev("reasoning_summary_text.done", 0, "rs_1", **where, text=text),
            ev("reasoning_summary_part.done", 0, "rs_1", **where, part=parts[at]),
        ]  # fmt: skip
    middle = [] if done_only else streamed
    return numbered([created(), added(0, {**done, "summary": []}), *middle,
                     item_done(0, done), completed([done])])  # fmt: skip


@pytest.mark.parametrize("target", ALL)
@pytest.mark.parametrize("done_only", [False, True], ids=["streamed", "done only"])
def test_reasoning_summary_parts_stay_apart(target: str, done_only: bool) -> None:
    data = sse(summary_events(done_only))
    joined = _REASONING_SEPARATOR.join(SUMMARY)
    assert summary_of(CHATS[target], data).choices[0].reasoning == joined
    out, said = bridged(CHATS[target], data, "responses")
    checked = check_responses(out)
    [item] = checked.response["output"]
    assert [s["text"] for s in item["summary"]] == SUMMARY
    assert summary_of(CHATS[target], out).choices[0].reasoning == joined
    chat = b"".join(CHATS[target].write_parts(CHATS[target].iter_parts(data, protocol="responses"),
                                              protocol="chat"))  # fmt: skip
    assert runtime(CHATS[target], "_summary_of_parts")(CHATS[target].iter_parts(chat)).choices[0].reasoning \
        == joined  # fmt: skip
    assert not said


# 7. Citations of every kind.


NOTES = [
    {"type": "url_citation", "url": "https://w.example/", "title": "W", "start_index": 0,
     "end_index": 2},
    {"type": "file_citation", "file_id": "file_1", "filename": "a.pdf", "index": 2},
    {"type": "container_file_citation", "container_id": "cntr_1", "file_id": "file_2",
     "filename": "b.csv", "start_index": 0, "end_index": 2},
    {"type": "file_path", "file_id": "file_3", "index": 1},
]  # fmt: skip


def cited_events() -> list[dict[str, Any]]:
    text = {"type": "output_text", "text": "Hi", "annotations": []}
    done = {"id": "msg_1", "type": "message", "role": "assistant", "status": "completed",
            "content": [{**text, "annotations": NOTES}]}  # fmt: skip
    notes = [ev("output_text.annotation.added", 0, "msg_1", content_index=0,
                annotation_index=n, annotation=note) for n, note in enumerate(NOTES)]  # fmt: skip
    return numbered([
        created(), added(0, {**done, "status": "in_progress", "content": []}),
        ev("content_part.added", 0, "msg_1", content_index=0, part=text),
        ev("output_text.delta", 0, "msg_1", content_index=0, delta="Hi"), *notes,
        ev("output_text.done", 0, "msg_1", content_index=0, text="Hi"),
        item_done(0, done), completed([done]),
    ])  # fmt: skip


@pytest.mark.parametrize("target", ALL)
def test_every_annotation_is_a_citation_carried_whole(target: str) -> None:
    data = sse(cited_events())
    for module in (CHATS[target], RESPONSES[target]):
        cites = [p.citation for p in parts_of(module, data)
                 if p.kind == "citation"]  # fmt: skip
        assert [(c.url, c.source) for c in cites] == [
            ("https://w.example/", NOTES[0]),
            *((None, n) for n in NOTES[1:]),
        ], module.__name__
        assert [c.title for c in cites] == ["W", "a.pdf", "b.csv", None]
    out, said = bridged(CHATS[target], data, "responses")
    checked = check_responses(out)
    [message] = checked.response["output"]
    assert message["content"][0]["annotations"] == NOTES
    assert not said


@pytest.mark.parametrize("target", ALL)
def test_a_citation_responses_cannot_write_is_counted(target: str) -> None:
    module = CHATS[target]
    document = {"type": "char_location", "cited_text": "x", "document_index": 0,
                "start_char_index": 0, "end_char_index": 1}  # fmt: skip
    parts = [
        module.Part("text", 0, "Hi", None),
        module.Part("citation", 0, "", None, citation=module.Citation(None, "Doc", document)),
        module.Part("citation", 0, "", None, citation=module.Citation("https://u.example/")),
    ]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = b"".join(module.write_parts(parts, protocol="responses"))
    [message] = check_responses(out).response["output"]
    assert [n["url"] for n in message["content"][0]["annotations"]] == ["https://u.example/"]
    assert "1 citation (" in str(caught[0].message)


# 10. Hostile indexes, types and errors.


def huge_index_events(big: int) -> list[dict[str, Any]]:
    item = {"id": "rs_1", "type": "reasoning", "summary": []}
    message = {"id": "msg_1", "type": "message", "role": "assistant", "content": []}
    return numbered([
        created(),
        added(big, item),
        ev("reasoning_summary_text.delta", big, "rs_1", summary_index=big, delta="Hm"),
        ev("reasoning_text.delta", big, "rs_1", content_index=big, delta="Hm"),
        added(big + 1, message),
        ev("content_part.added", big + 1, "msg_1", content_index=big,
           part={"type": "output_text", "text": ""}),
        ev("output_text.delta", big + 1, "msg_1", content_index=big, delta="Hi"),
        ev("output_text.delta", big + 1, "msg_1", content_index=big + 7, delta="!"),
        ev("refusal.delta", big + 1, "msg_1", content_index=2 * big, delta="No"),
        added(3 * big, {"id": "fc_1", "type": "function_call", "call_id": "c", "name": "f",
                        "arguments": ""}),
        ev("function_call_arguments.delta", 3 * big, "fc_1", delta="{}"),
        {"type": "response.completed", "response": response(status="completed")},
    ])  # fmt: skip


def many_items_events(count: int) -> list[dict[str, Any]]:
    events = [created()]
    for n in range(count):
        message = {"id": f"msg_{n}", "type": "message", "role": "assistant", "content": []}
        events += [
            added(n * 1000, message),
            ev("output_text.delta", n * 1000, f"msg_{n}", content_index=n, delta="x"),
        ]
    return numbered([*events, completed([])])  # fmt: skip


def peak_of(run: Callable[[], object]) -> int:
    tracemalloc.start()
    try:
        run()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def bounds(events: list[dict[str, Any]]) -> int:
    """What reading these events may allocate at most: a multiple of the largest
    event, and of their count, since their parts and items are kept (the measure
    includes the parts, the accumulator and the typed events; before issue 41, an
    `output_index` of 10**9 allocated 8 GB)."""
    return 250 * max(len(json.dumps(e)) for e in events) * max(len(events) // 12, 1)


@pytest.mark.parametrize("target", ALL)
@pytest.mark.parametrize("events", [huge_index_events(10**9), many_items_events(300)],
                         ids=["indexes of 10**9", "many items"])  # fmt: skip
def test_memory_is_bounded_by_the_events_not_their_indexes(
    target: str, events: list[dict[str, Any]]
) -> None:
    data = sse(events)
    chat, typed = CHATS[target], RESPONSES[target]

    def accumulate() -> None:
        accumulator = typed.ResponseAccumulator()
        for event in typed.iter_events(data):
            accumulator.add(event)
        accumulator.result()
        accumulator.summary()

    runs = {
        "chat iter_parts": lambda: parts_of(chat, data),
        "typed iter_parts": lambda: list(typed.iter_parts(typed.iter_events(data))),
        "accumulator": accumulate,
    }
    for name, run in runs.items():
        run()  # imports and caches once, outside the measure
        assert peak_of(run) < bounds(events), name


@pytest.mark.parametrize("target", ALL)
def test_an_item_type_that_is_no_string_is_read_leniently(target: str) -> None:
    odd = {"id": "x_1", "type": ["message"], "content": [{"type": "output_text", "text": "Hi"}]}
    events = numbered([created(), added(0, {**odd, "content": []}), ev("output_text.delta", 0, "x_1",
                       content_index=0, delta="Hi"), item_done(0, odd),
                       {"type": ["response.output_text.delta"], "delta": "?"},
                       completed([odd])])  # fmt: skip
    for module in (CHATS[target], RESPONSES[target]):
        parts = list(parts_of(module, sse(events, named=False)))
        assert "".join(p.text for p in parts if p.kind == "text") == "Hi"


@pytest.mark.parametrize("target", ALL)
@pytest.mark.parametrize("payload", ["overloaded", "[1, 2]", '"quota"', "null", '{"broken'])
def test_an_error_event_whose_data_is_no_object_raises(target: str, payload: str) -> None:
    data = sse([created()]) + f"event: error\ndata: {payload}\n\n".encode()
    for module in (CHATS[target], RESPONSES[target]):
        with pytest.raises(module.StreamError):
            parts_of(module, data)
    with pytest.raises(RESPONSES[target].StreamError):
        list(RESPONSES[target].iter_events(data))


# The ledger's finds: what a failed response holds where no reader reads it.


def messages_sse(events: Iterable[dict[str, Any]]) -> bytes:
    """A Messages stream: each event with its `event:` line."""
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


MESSAGE_START = {
    "type": "message_start",
    "message": {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x",
                "content": [], "stop_reason": None, "stop_sequence": None,
                "usage": {"input_tokens": 12, "output_tokens": 1}},
}  # fmt: skip
OVERLOADED = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
SIGNED_THINKING = [
    {"type": "content_block_start", "index": 0,
     "content_block": {"type": "thinking", "thinking": "", "signature": ""}},
    {"type": "content_block_delta", "index": 0,
     "delta": {"type": "thinking_delta", "thinking": "Hm."}},
    {"type": "content_block_delta", "index": 0,
     "delta": {"type": "signature_delta", "signature": "sig-1"}},
    {"type": "content_block_stop", "index": 0},
]  # fmt: skip


def failed_reasoning(error: bool) -> bytes:
    """A Responses stream whose reasoning item is done with its encrypted content,
    then an error (or nothing: cut off)."""
    events = numbered([created(), added(0, {**REASONING_DONE, "encrypted_content": None}),
                       item_done(0, REASONING_DONE)])  # fmt: skip
    if error:
        events.append({"type": "error", "sequence_number": len(events),
                       "error": {"type": "server_error", "code": "server_error",
                                 "message": "boom", "param": None}})  # fmt: skip
    return sse(events)


def read_back(module: ModuleType, data: bytes) -> list[Any]:
    """The parts of a written Responses stream up to its error (raised where
    openai-python raises it: at the `error` event)."""
    parts: list[Any] = []
    with pytest.raises(module.StreamError):
        parts.extend(module.iter_parts(data, protocol="responses"))
    return parts


@pytest.mark.parametrize("target", ALL)
@pytest.mark.parametrize("error", [True, False], ids=["error", "cut off"])
def test_encrypted_content_of_an_item_an_error_cut_off_is_counted(target: str, error: bool) -> None:
    out, said = bridged(CHATS[target], failed_reasoning(error), "responses")
    checked = check_responses(out)
    assert checked.terminal == "response.failed"
    kinds = {p.kind for p in read_back(CHATS[target], out)}
    assert "redacted_reasoning" not in kinds  # the item was never done
    assert len(said) == 1 and "1 redacted_reasoning (its reasoning item was cut off" in said[0]


@pytest.mark.parametrize("target", ALL)
def test_a_signature_of_a_thinking_block_an_error_cut_off_is_counted(target: str) -> None:
    data = messages_sse([MESSAGE_START, *SIGNED_THINKING, OVERLOADED])
    out, said = bridged(CHATS[target], data, "messages")
    assert check_responses(out).terminal == "response.failed"
    assert "signature" not in {p.kind for p in read_back(CHATS[target], out)}
    assert len(said) == 1 and "1 signature (its reasoning item was cut off" in said[0]


@pytest.mark.parametrize("target", ALL)
def test_the_usage_of_a_failed_response_is_counted(target: str) -> None:
    """openai-python raises at the `error` event, as chunkspec's reader does: the
    usage in the `response.failed` after it reaches no reader."""
    data = messages_sse([MESSAGE_START, OVERLOADED])
    out, said = bridged(CHATS[target], data, "messages")
    checked = check_responses(out)
    assert checked.response["usage"]["input_tokens"] == 12  # written all the same
    assert all(p.kind != "usage" for p in read_back(CHATS[target], out))
    assert len(said) == 1 and "1 usage (said in response.failed" in said[0]


@pytest.mark.parametrize("target", ALL)
@pytest.mark.parametrize("finish", ["content_filter", "stop", "length"])
def test_a_finish_before_an_error_is_counted(target: str, finish: str) -> None:
    data = chat_sse([{"role": "assistant", "content": "Hi"}], finish=finish)
    error = {"error": {"message": "boom", "type": "server_error"}}
    data = data.replace(b"data: [DONE]\n\n", f"data: {json.dumps(error)}\n\n".encode())
    out, said = bridged(CHATS[target], data, "chat")
    assert check_responses(out).terminal == "response.failed"
    assert all(p.kind != "finish" for p in read_back(CHATS[target], out))
    assert len(said) == 1 and f"1 finish ({finish}: a failed response has none)" in said[0]
