"""The OpenAI Responses runtime (generator/runtime/responses/), on hand-written event
sequences and on random parts: the reader (events to `Part`s, in chat's terms, through
the generated modules' `iter_parts`), each of its tolerances of real servers, the
accumulator (events to the final Response, as openai-python's `ResponseStreamState`
builds it), and the writer (any protocol's `Part`s to the Responses events the strictest
clients accept), checked by tests/helpers/responses_invariants.py; and a round trip of random
parts through chat, Messages and Responses in every direction."""

from __future__ import annotations

import dataclasses
import json
import warnings
from collections.abc import Iterable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

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
from generator.runtime.responses.accumulate import _ResponsesAccumulator
from generator.runtime.responses.reader import _ResponsesReader
from generator.runtime.responses.writer import ResponsesLossWarning, _ResponsesWriter
from generator.runtime.sse import ServerSentEvent, StreamError
from tests.helpers.responses_invariants import check_responses, events_of
from tests.helpers.support import TARGETS

MODULES = list(TARGETS.values())
CHAT = TARGETS["dataclasses"]
"""The chat module whose `iter_parts(..., protocol="responses")` most tests read with."""
RESPONSES_MODULES = {
    name: __import__(f"generated.{name}.responses", fromlist=["_"]) for name in TARGETS
}
CAPTURES = sorted((Path(__file__).parents[2] / "fixtures" / "responses").glob("*.sse"))
SAID_OTHERWISE = {"openai__shell-container-command-output"}
"""A capture whose `*.done` text contradicts its deltas (see test_bridges.py)."""


def sse(events: Iterable[dict[str, Any]], named: bool = True) -> bytes:
    """Events as a server-sent-event body, each with its `event:` line (`named`)."""
    out = []
    for event in events:
        head = f"event: {event['type']}\n" if named else ""
        out.append(f"{head}data: {json.dumps(event)}\n\n")
    return "".join(out).encode()


def read(data: bytes, module: ModuleType = CHAT) -> list[Any]:
    return list(module.iter_parts(data, protocol="responses"))


def view(parts: Iterable[Any]) -> list[tuple[str, str, int | None]]:
    return [(p.kind, p.text, p.block) for p in parts]


def plain(summary: Any) -> dict[str, Any]:
    """A summary as plain data (each module's summary is an instance of its own class)."""
    out: dict[str, Any] = dataclasses.asdict(summary)
    return out


def response(**fields: Any) -> dict[str, Any]:
    return {"id": "resp_1", "object": "response", "created_at": 1741290958, "model": "gpt-x",
            "status": "in_progress", "output": [], "usage": None, **fields}  # fmt: skip


def created(**fields: Any) -> dict[str, Any]:
    return {"type": "response.created", "response": response(**fields)}


def completed(output: list[Any], usage: Any = None, **fields: Any) -> dict[str, Any]:
    given = response(status="completed", output=output, usage=usage, **fields)
    return {"type": "response.completed", "response": given}


def added(index: int | None, item: dict[str, Any]) -> dict[str, Any]:
    event: dict[str, Any] = {"type": "response.output_item.added", "item": item}
    if index is not None:
        event["output_index"] = index
    return event


def item_done(index: int | None, item: dict[str, Any]) -> dict[str, Any]:
    event: dict[str, Any] = {"type": "response.output_item.done", "item": item}
    if index is not None:
        event["output_index"] = index
    return event


def ev(kind: str, index: int | None, item_id: str | None, **data: Any) -> dict[str, Any]:
    """An event about an item: `response.<kind>` with its address."""
    event: dict[str, Any] = {"type": f"response.{kind}", **data}
    if index is not None:
        event["output_index"] = index
    if item_id is not None:
        event["item_id"] = item_id
    return event


def numbered(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{**event, "sequence_number": n} for n, event in enumerate(events)]


USAGE = {"input_tokens": 100, "input_tokens_details": {"cached_tokens": 40},
         "output_tokens": 20, "output_tokens_details": {"reasoning_tokens": 5},
         "total_tokens": 120}  # fmt: skip
REASONING_DONE = {"id": "rs_1", "type": "reasoning", "encrypted_content": "enc-done",
                  "summary": [{"type": "summary_text", "text": "Let me think."}]}  # fmt: skip
CITED = {"type": "url_citation", "url": "https://w.example/oslo", "title": "Oslo",
         "start_index": 0, "end_index": 5}  # fmt: skip
MESSAGE_DONE = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "status": "completed",
    "content": [{"type": "output_text", "text": "Hello", "annotations": [CITED]}],
}
CALL_DONE = {"id": "fc_1", "type": "function_call", "call_id": "call_1", "name": "get_weather",
             "arguments": '{"city":"Oslo"}', "status": "completed"}  # fmt: skip

# What OpenAI's API streams for a turn with a reasoning summary (its encrypted content
# made again between added and done), a cited text and a function call.
OPENAI: list[dict[str, Any]] = numbered([
    created(),
    {"type": "response.in_progress", "response": response()},
    added(0, {"id": "rs_1", "type": "reasoning", "summary": [], "encrypted_content": "enc-added"}),
    ev("reasoning_summary_part.added", 0, "rs_1", summary_index=0,
       part={"type": "summary_text", "text": ""}),
    ev("reasoning_summary_text.delta", 0, "rs_1", summary_index=0, delta="Let me "),
    ev("reasoning_summary_text.delta", 0, "rs_1", summary_index=0, delta="think."),
    ev("reasoning_summary_text.done", 0, "rs_1", summary_index=0, text="Let me think."),
    ev("reasoning_summary_part.done", 0, "rs_1", summary_index=0,
       part={"type": "summary_text", "text": "Let me think."}),
    item_done(0, REASONING_DONE),
    added(1, {"id": "msg_1", "type": "message", "role": "assistant", "status": "in_progress",
              "content": []}),
    ev("content_part.added", 1, "msg_1", content_index=0,
       part={"type": "output_text", "text": "", "annotations": []}),
    ev("output_text.delta", 1, "msg_1", content_index=0, delta="Hel"),
    ev("output_text.delta", 1, "msg_1", content_index=0, delta="lo"),
    ev("output_text.annotation.added", 1, "msg_1", content_index=0, annotation_index=0,
       annotation=CITED),
    ev("output_text.done", 1, "msg_1", content_index=0, text="Hello"),
    ev("content_part.done", 1, "msg_1", content_index=0,
       part={"type": "output_text", "text": "Hello", "annotations": [CITED]}),
    item_done(1, MESSAGE_DONE),
    added(2, {**CALL_DONE, "arguments": "", "status": "in_progress"}),
    ev("function_call_arguments.delta", 2, "fc_1", delta='{"city":'),
    ev("function_call_arguments.delta", 2, "fc_1", delta='"Oslo"}'),
    ev("function_call_arguments.done", 2, "fc_1", arguments='{"city":"Oslo"}'),
    item_done(2, CALL_DONE),
    completed([REASONING_DONE, MESSAGE_DONE, CALL_DONE], USAGE),
])  # fmt: skip


# The reader.


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_the_reader_reads_openai_s_stream_in_chat_s_terms(module: ModuleType) -> None:
    parts = read(sse(OPENAI), module)
    assert view(parts) == [
        ("start", "", None),
        ("reasoning", "Let me ", 0),
        ("reasoning", "think.", 0),
        ("redacted_reasoning", "enc-done", 0),  # once, at done: the one to send back
        ("text", "Hel", 1),
        ("text", "lo", 1),
        ("citation", "", 1),
        ("tool_call", "", 2),
        ("tool_call", '{"city":', 2),
        ("tool_call", '"Oslo"}', 2),
        ("finish", "tool_calls", None),
        ("usage", "", None),
    ]
    assert {p.choice for p in parts} == {0}, "a response is one choice"
    start = parts[0].identity
    assert (start.id, start.model, start.created) == ("resp_1", "gpt-x", 1741290958)
    calls = {(c.index, c.id, c.name) for c in (p.tool_call for p in parts) if c is not None}
    assert calls == {(2, "call_1", "get_weather")}, "index = output_index, id = call_id"
    assert parts[6].citation is not None
    assert (parts[6].citation.url, parts[6].citation.title) == ("https://w.example/oslo", "Oslo")
    usage = parts[-1].usage
    assert (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens) == (100, 20, 120)
    assert (usage.cached_prompt_tokens, usage.reasoning_tokens) == (40, 5)
    assert parts[1].chunk == OPENAI[4], "each part keeps its event, as JSON data"
    summary = module.iter_parts  # the summary of the parts, in the module's terms
    del summary
    [choice] = _summary_of_parts(parts).choices
    assert (choice.reasoning, choice.text, choice.finish_reason) == (
        "Let me think.",
        "Hello",
        "tool_calls",
    )
    assert [(i.kind, i.value) for i in choice.reasoning_items] == [("encrypted", "enc-done")]


def body_of(*middle: dict[str, Any], end: dict[str, Any] | None = None) -> bytes:
    return sse([created(), *middle, end or completed([])])


def message(index: int | None, ident: str = "msg_1", **fields: Any) -> dict[str, Any]:
    return added(index, {"id": ident, "type": "message", "role": "assistant", "content": [],
                         **fields})  # fmt: skip


def test_deltas_of_text_refusal_summary_and_reasoning_text() -> None:
    data = body_of(
        message(0),
        ev("output_text.delta", 0, "msg_1", content_index=0, delta="A"),
        ev("refusal.delta", 0, "msg_1", content_index=1, delta="No."),
        added(1, {"id": "rs_1", "type": "reasoning", "summary": []}),
        ev("reasoning_summary_text.delta", 1, "rs_1", summary_index=0, delta="S1"),
        ev("reasoning_summary_text.delta", 1, "rs_1", summary_index=1, delta="S2"),
        added(2, {"id": "rs_2", "type": "reasoning", "summary": []}),
        ev("reasoning_text.delta", 2, "rs_2", content_index=0, delta="raw"),
        ev("reasoning.delta", 2, "rs_2", content_index=0, delta=" cot"),  # Open Responses
    )
    assert view(read(data))[1:] == [
        ("text", "A", 0),
        ("refusal", "No.", 0),
        ("reasoning", "S1", 1),
        ("reasoning", "\n\n", 1),  # between two parts of a summary
        ("reasoning", "S2", 1),
        ("reasoning", "raw", 2),
        ("reasoning", " cot", 2),
        ("finish", "stop", None),
    ]


def test_done_events_add_only_what_the_deltas_did_not_say() -> None:
    whole_call = {"id": "fc_1", "type": "function_call", "call_id": "c1", "name": "f",
                  "arguments": ""}  # fmt: skip
    data = body_of(
        message(0),
        ev("output_text.delta", 0, "msg_1", content_index=0, delta="Hel"),
        ev("output_text.done", 0, "msg_1", content_index=0, text="Hello"),  # adds "lo"
        ev("output_text.done", 0, "msg_1", content_index=0, text="Hello"),  # nothing
        ev("refusal.done", 0, "msg_1", content_index=1, refusal="No."),  # all of it
        ev("output_text.delta", 0, "msg_1", content_index=2, delta="abc"),
        ev("output_text.done", 0, "msg_1", content_index=2, text="xyz"),  # says otherwise
        added(1, whole_call),
        ev("function_call_arguments.done", 1, "fc_1", arguments="{}"),
        item_done(1, {**whole_call, "arguments": "{}"}),
        added(2, {"id": "rs_1", "type": "reasoning", "summary": []}),
        ev("reasoning_summary_text.delta", 2, "rs_1", summary_index=0, delta="Hm"),
        item_done(2, {"id": "rs_1", "type": "reasoning",
                      "summary": [{"type": "summary_text", "text": "Hm, ok."}]}),
    )  # fmt: skip
    assert view(read(data))[1:] == [
        ("text", "Hel", 0),
        ("text", "lo", 0),
        ("refusal", "No.", 0),
        ("text", "abc", 0),
        ("tool_call", "", 1),
        ("tool_call", "{}", 1),
        ("reasoning", "Hm", 2),
        ("reasoning", ", ok.", 2),
        ("finish", "tool_calls", None),
    ]


def test_a_server_that_sends_items_only_when_done() -> None:
    call = {"id": "fc_1", "type": "function_call", "call_id": "c1", "name": "f",
            "arguments": '{"a":1}'}  # fmt: skip
    text = {"id": "m", "type": "message", "content": [{"type": "output_text", "text": "Hi"}]}
    data = body_of(item_done(0, text), item_done(1, call))
    parts = read(data)
    assert view(parts)[1:] == [
        ("text", "Hi", 0),
        ("tool_call", '{"a":1}', 1),
        ("finish", "tool_calls", None),
    ]
    assert parts[2].tool_call == parts[2].tool_call.__class__(1, "c1", "f")


def test_a_server_that_sends_only_the_completed_response() -> None:
    """Items the stream never said are backfilled from the final response's output."""
    search = {"id": "ws_1", "type": "web_search_call", "status": "completed",
              "action": {"type": "search", "query": "oslo"}}  # fmt: skip
    reasoning = {"id": "rs_1", "type": "reasoning", "encrypted_content": "e",
                 "summary": [{"type": "summary_text", "text": "Hm."}]}  # fmt: skip
    call = {"id": "fc_1", "type": "function_call", "call_id": "c1", "name": "f",
            "arguments": "{}"}  # fmt: skip
    output = [reasoning, search, MESSAGE_DONE, call]
    parts = read(sse([completed(output, USAGE)]))
    assert view(parts) == [
        ("start", "", None),
        ("reasoning", "Hm.", 0),
        ("redacted_reasoning", "e", 0),
        ("server_tool", "", 1),
        ("text", "Hello", 2),
        ("citation", "", 2),
        ("tool_call", "{}", 3),
        ("finish", "tool_calls", None),
        ("usage", "", None),
    ]
    assert parts[0].identity.id == "resp_1"


def test_reasoning_is_its_summary_or_its_text_never_both() -> None:
    summary_first = body_of(
        added(0, {"id": "rs_1", "type": "reasoning", "summary": []}),
        ev("reasoning_summary_text.delta", 0, "rs_1", summary_index=0, delta="sum"),
        ev("reasoning_text.delta", 0, "rs_1", content_index=0, delta="raw"),
        item_done(0, {"id": "rs_1", "type": "reasoning",
                      "summary": [{"type": "summary_text", "text": "sum"}],
                      "content": [{"type": "reasoning_text", "text": "raw, all"}]}),
    )  # fmt: skip
    text_first = body_of(
        added(0, {"id": "rs_1", "type": "reasoning", "summary": []}),
        ev("reasoning_text.delta", 0, "rs_1", content_index=0, delta="raw"),
        ev("reasoning_summary_text.delta", 0, "rs_1", summary_index=0, delta="sum"),
        item_done(0, {"id": "rs_1", "type": "reasoning",
                      "summary": [{"type": "summary_text", "text": "sum, all"}],
                      "content": [{"type": "reasoning_text", "text": "raw, all"}]}),
    )  # fmt: skip
    both_when_done = body_of(
        item_done(0, {"id": "rs_1", "type": "reasoning",
                      "summary": [{"type": "summary_text", "text": "sum"}],
                      "content": [{"type": "reasoning_text", "text": "raw"}]}),
    )  # fmt: skip
    reasoning = [
        [p.text for p in read(data) if p.kind == "reasoning"]
        for data in (summary_first, text_first, both_when_done)
    ]
    assert reasoning == [["sum"], ["raw", ", all"], ["sum"]]


def test_encrypted_reasoning_is_read_once_when_done() -> None:
    """OpenAI encrypts the reasoning again between added and done: the done one is the
    one to send back, and the final response does not say it again."""
    first = {"id": "rs_1", "type": "reasoning", "summary": [], "encrypted_content": "A"}
    last = {**first, "encrypted_content": "B"}
    data = body_of(added(0, first), item_done(0, last), end=completed([last]))
    assert [(p.kind, p.text) for p in read(data) if p.kind == "redacted_reasoning"] == [
        ("redacted_reasoning", "B")
    ]


def test_custom_tool_calls() -> None:
    custom = {"id": "ctc_1", "type": "custom_tool_call", "call_id": "call_9", "name": "x_search",
              "input": ""}  # fmt: skip
    data = body_of(
        added(0, custom),
        ev("custom_tool_call_input.delta", 0, "ctc_1", delta="query: "),
        ev("custom_tool_call_input.delta", 0, "ctc_1", delta="oslo"),
        ev("custom_tool_call_input.done", 0, "ctc_1", input="query: oslo"),
        item_done(0, {**custom, "input": "query: oslo"}),
    )
    parts = read(data)
    assert view(parts)[1:] == [
        ("tool_call", "", 0),
        ("tool_call", "query: ", 0),
        ("tool_call", "oslo", 0),
        ("finish", "tool_calls", None),
    ]
    [tool] = _summary_of_parts(parts).choices[0].tool_calls
    assert (tool.id, tool.name, tool.arguments) == ("call_9", "x_search", "query: oslo")


def test_a_hosted_tool_is_one_server_tool_part() -> None:
    call = {"id": "ci_1", "type": "code_interpreter_call", "status": "in_progress",
            "code": "", "container_id": "cntr"}  # fmt: skip
    done = {**call, "status": "completed", "code": "print(1)",
            "outputs": [{"type": "logs", "logs": "1\n"}]}  # fmt: skip
    data = body_of(
        added(0, call),
        ev("code_interpreter_call.in_progress", 0, "ci_1"),
        ev("code_interpreter_call_code.delta", 0, "ci_1", delta="print(1)"),
        ev("code_interpreter_call.completed", 0, "ci_1"),
        item_done(0, done),
        end=completed([done]),
    )
    parts = read(data)
    assert view(parts)[1:] == [("server_tool", "", 0), ("finish", "stop", None)]
    tool = parts[1].server_tool
    assert (tool.index, tool.name, tool.arguments) == (0, "code_interpreter", '"print(1)"')
    assert tool.output == '[{"type":"logs","logs":"1\\n"}]' and tool.source == done
    [choice] = _summary_of_parts(parts).choices
    assert choice.tool_calls == (), "a tool the server ran is no call for the client"


@pytest.mark.parametrize(
    ("end", "finish"),
    [({"type": "response.completed"}, "stop"),
     ({"type": "response.incomplete", "incomplete_details": {"reason": "max_output_tokens"}},
      "length"),
     ({"type": "response.incomplete", "incomplete_details": {"reason": "content_filter"}},
      "content_filter"),
     ({"type": "response.incomplete", "incomplete_details": None}, "length")],
)  # fmt: skip
def test_finish_reasons(end: dict[str, Any], finish: str) -> None:
    details = end.pop("incomplete_details", None)
    event = {**end, "response": response(status="x", incomplete_details=details)}
    parts = read(body_of(message(0), end=event))
    assert [p.text for p in parts if p.kind == "finish"] == [finish]


@pytest.mark.parametrize(
    ("usage", "expected"),
    [(USAGE, UsageSummary(100, 20, 120, 40, 5)),
     ({"input_tokens": 7, "output_tokens": 3}, UsageSummary(7, 3, 10)),
     ({"input_tokens": 7, "output_tokens": 3, "total_tokens": 10, "cost": 0.0012},
      UsageSummary(7, 3, 10, cost_usd=0.0012)),  # OpenRouter
     ({"input_tokens": 7, "output_tokens": 3, "num_server_side_tools_used": 2},
      UsageSummary(7, 3, 10, server_tool_calls=2)),  # xAI
     ({"output_tokens": 3}, UsageSummary(None, 3, None))],
)  # fmt: skip
def test_usage_in_chat_s_terms(usage: dict[str, Any], expected: UsageSummary) -> None:
    """`input_tokens` includes the cached tokens, as chat's `prompt_tokens` does."""
    [part] = [p for p in read(body_of(end=completed([], usage))) if p.kind == "usage"]
    assert dataclasses.asdict(part.usage) == dataclasses.asdict(expected)


def test_events_without_output_index_find_their_item_by_id() -> None:
    """llama.cpp sends no `output_index`: items are numbered as they are added."""
    data = body_of(
        message(None, "m1"),
        added(None, {"id": "fc_1", "type": "function_call", "call_id": "c1", "name": "f",
                     "arguments": ""}),
        ev("output_text.delta", None, "m1", content_index=0, delta="A"),
        ev("function_call_arguments.delta", None, "fc_1", delta="{}"),
        ev("output_text.delta", None, "m1", content_index=0, delta="B"),
    )  # fmt: skip
    assert view(read(data))[1:] == [
        ("tool_call", "", 1),
        ("text", "A", 0),
        ("tool_call", "{}", 1),
        ("text", "B", 0),
        ("finish", "tool_calls", None),
    ]


def test_ids_that_change_on_every_event_and_other_leniencies() -> None:
    """GitHub Copilot changes the item id on every event (the output_index is what
    stays); a float `created_at`, no `sequence_number`, no `event:` lines (OpenRouter),
    comments and `data: [DONE]`."""
    events = [
        {"type": "response.created", "response": response(created_at=1741290958.75)},
        message(0, "id-a"),
        ev("output_text.delta", 0, "id-b", content_index=0, delta="He"),
        ev("output_text.delta", 0, "id-c", content_index=0, delta="y"),
        ev("output_text.done", 0, "id-d", content_index=0, text="Hey"),
        item_done(0, {"id": "id-e", "type": "message",
                      "content": [{"type": "output_text", "text": "Hey"}]}),
        completed([{"id": "id-f", "type": "message",
                    "content": [{"type": "output_text", "text": "Hey"}]}]),
    ]  # fmt: skip
    data = b": keep-alive\n\n" + sse(events, named=False) + b"data: [DONE]\n\n"
    parts = read(data)
    assert view(parts) == [
        ("start", "", None),
        ("text", "He", 0),
        ("text", "y", 0),
        ("finish", "stop", None),
    ]
    assert parts[0].identity.created == 1741290958
    stream = RESPONSES_MODULES["dataclasses"].iter_events(data)
    assert len(list(stream)) == len(events) and stream.done and stream.gaps == []


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_an_error_event_and_a_failed_response_raise_from_the_stream(module: ModuleType) -> None:
    error = {"type": "insufficient_quota", "code": "insufficient_quota", "message": "Quota."}
    head = [created(), message(0), ev("output_text.delta", 0, "msg_1", content_index=0,
                                      delta="Hi")]  # fmt: skip
    failed = {"type": "response.failed", "response": response(status="failed", error=error)}
    for tail in ([{"type": "error", "error": error}, failed], [failed]):
        events = module.iter_events(sse([*head, *tail]), protocol="responses")
        seen = []
        with pytest.raises(module.StreamError) as raised:
            seen.extend(events)
        assert len(seen) == 3, "the events before it were yielded"
        assert (raised.value.message, raised.value.code) == ("Quota.", "insufficient_quota")
        parts: list[Any] = []
        with pytest.raises(module.StreamError):
            parts.extend(module.iter_parts(sse([*head, *tail]), protocol="responses"))
        assert [p.kind for p in parts] == ["start", "text"]


def test_errors_read_as_json_data_are_error_parts() -> None:
    error = {"type": "server_error", "code": "server_error", "message": "Oops."}
    failed = {
        "type": "response.failed",
        "response": response(
            status="failed", error=error, usage={"input_tokens": 3, "output_tokens": 0}
        ),
    }
    reader = _ResponsesReader()
    parts = [p for e in [created(), {"type": "error", "error": error}, failed]
             for p in reader.read(e)]  # fmt: skip
    assert [(p.kind, p.text) for p in parts] == [
        ("start", ""),
        ("error", "Oops."),
        ("usage", ""),
        ("error", "Oops."),
    ]
    assert parts[1].error == error and parts[3].error == error
    flat = _ResponsesReader().read({"type": "error", "code": "x", "message": "Flat."})
    assert [(p.kind, p.text) for p in flat] == [("error", "Flat.")]
    assert _ResponsesReader().read(["not", "an", "event"]) == []


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_a_stream_cut_off_before_its_end_ends_with_an_error_part(module: ModuleType) -> None:
    data = sse(OPENAI[:12])
    parts = read(data, module)
    assert view(parts)[-2:] == [
        ("text", "Hel", 1),
        ("error", parts[-1].text, None),
    ]
    assert parts[-1].error["type"] == "incomplete_stream"
    assert "ended before" in parts[-1].text
    assert read(sse(OPENAI), module)[-1].kind == "usage", "not when it ended"


def test_sequence_number_gaps_are_kept() -> None:
    events = [OPENAI[0], OPENAI[1], OPENAI[4], OPENAI[5], OPENAI[9], *OPENAI[10:]]
    stream = RESPONSES_MODULES["msgspec"].iter_events(sse(events))
    list(stream)
    assert stream.gaps == [(2, 4), (6, 9)]
    assert stream.done


# The accumulator.


def accumulated(events: Iterable[dict[str, Any]]) -> _ResponsesAccumulator:
    accumulator = _ResponsesAccumulator()
    for event in events:
        accumulator.add(event)
    return accumulator


def capture_events(path: Path) -> list[dict[str, Any]]:
    """The events of a capture as JSON data, up to an error it reports."""
    module = RESPONSES_MODULES["typeddicts"]
    events: list[dict[str, Any]] = []
    try:
        for event in module.iter_events(path.read_bytes()):
            events.append(dict(event))
    except module.StreamError:
        pass
    return events


def test_the_accumulator_builds_the_response() -> None:
    result = accumulated(OPENAI).result()
    assert result == OPENAI[-1]["response"]
    snapshot = accumulated(OPENAI[:-1]).result()
    assert snapshot["status"] == "in_progress"
    assert snapshot["output"] == [REASONING_DONE, MESSAGE_DONE, CALL_DONE]
    assert OPENAI[2]["item"]["encrypted_content"] == "enc-added", "events left as they came"


def without_parsed(value: Any) -> Any:
    """openai-python's parsed response, less what it parses (`parsed`,
    `parsed_arguments`)."""
    if isinstance(value, dict):
        return {k: without_parsed(v) for k, v in value.items()
                if k not in ("parsed", "parsed_arguments")}  # fmt: skip
    if isinstance(value, list):
        return [without_parsed(v) for v in value]
    return value


def openai_state(events: list[dict[str, Any]]) -> Any:
    from openai import omit
    from openai._models import construct_type
    from openai.lib.streaming.responses._responses import ResponseStreamState
    from openai.types.responses import ResponseStreamEvent

    state: Any = ResponseStreamState(input_tools=omit, text_format=omit)
    for event in events:
        state.handle_event(construct_type(type_=ResponseStreamEvent, value=event))
    return state


def test_the_accumulator_builds_what_openai_python_builds() -> None:
    """On every capture openai-python completes (it raises where ids change, and gets
    no response from a failed stream), and on a stream whose final output is null
    (both fill it from the items done)."""
    compared = 0
    for path in CAPTURES:
        events = capture_events(path)
        try:
            state = openai_state(events)
        except RuntimeError as error:
            assert "identity changed" in str(error), path.name
            continue
        if state._completed_response is None:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # pydantic's, of unknown items
            theirs = state._completed_response.model_dump(mode="json", exclude_unset=True)
        ours = json.loads(json.dumps(accumulated(events).result()))
        assert ours == without_parsed(theirs), path.name
        compared += 1
    assert compared >= 45
    null_output = [*OPENAI[:-1], {**OPENAI[-1], "response": {**OPENAI[-1]["response"],
                                                              "output": None}}]  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = openai_state(null_output)._completed_response.model_dump(
            mode="json", exclude_unset=True
        )
    ours = accumulated(null_output).result()
    assert ours["output"] == without_parsed(theirs)["output"] == OPENAI[-1]["response"]["output"]


def test_an_empty_final_output_is_backfilled_and_a_full_one_authoritative() -> None:
    """The ChatGPT backend completes with `output: []`: the stream's items are the
    output. A final output that says more than the stream did wins."""
    empty = [*OPENAI[:-1], completed([], USAGE)]
    assert accumulated(empty).result()["output"] == [REASONING_DONE, MESSAGE_DONE, CALL_DONE]
    other = {**MESSAGE_DONE, "content": [{"type": "output_text", "text": "Final."}]}
    wins = [*OPENAI[:-1], completed([other], USAGE)]
    assert accumulated(wins).result()["output"] == [other]
    assert accumulated(wins).summary().choices[0].text == "Final."


def test_identity_drift_is_recorded_not_raised() -> None:
    events = [
        created(),
        added(0, {"id": "fc_a", "type": "function_call", "call_id": "c1", "name": "f",
                  "arguments": ""}),
        ev("function_call_arguments.delta", 0, "fc_a", delta="{}"),
        item_done(0, {"id": "fc_b", "type": "function_call", "call_id": "c2", "name": "f",
                      "arguments": "{}"}),
        {"type": "response.completed", "response": response(id="resp_2", status="completed")},
    ]  # fmt: skip
    accumulator = accumulated(events)
    assert accumulator.drift == [
        ("item id", "fc_a", "fc_b"),
        ("item call_id", "c1", "c2"),
        ("response id", "resp_1", "resp_2"),
    ]
    assert accumulator.result()["output"][0]["call_id"] == "c2", "the done item wins"
    with pytest.raises(RuntimeError, match="identity changed"):
        openai_state(events)


def test_the_accumulator_tolerates_events_of_items_never_added() -> None:
    events = [
        ev("output_text.delta", 0, "m", content_index=0, delta="x"),
        ev("output_text.annotation.added", 0, "m", content_index=0, annotation=CITED),
        ev("function_call_arguments.delta", 1, "fc", delta="{}"),
    ]
    result = accumulated(events).result()
    assert result["output"] == [
        {"id": "m", "content": [{"type": "output_text", "text": "x", "annotations": [CITED]}]},
        {"id": "fc", "arguments": "{}"},
    ]
    error = {"type": "server_error", "message": "boom"}
    assert accumulated([created(), {"type": "error", "error": error}]).error == error


def test_the_accumulator_s_snapshot_mid_stream() -> None:
    accumulator = accumulated(OPENAI[:19])  # the call's arguments: one piece of two
    snapshot = accumulator.snapshot()
    assert snapshot is not None and snapshot["status"] == "in_progress"
    assert [item["id"] for item in snapshot["output"]] == ["rs_1", "msg_1", "fc_1"]
    assert snapshot["output"][1]["content"][0]["text"] == "Hello"
    assert snapshot["output"][1]["content"][0]["annotations"] == [CITED]
    assert snapshot["output"][2]["arguments"] == '{"city":'
    [choice] = accumulator.summary().choices
    assert (choice.text, choice.finish_reason) == ("Hello", None), "cut off: no finish"
    assert choice.tool_calls[0].arguments == '{"city":'
    empty = _ResponsesAccumulator()
    assert empty.snapshot() == {"object": "response", "output": []}, "never None"
    assert empty.response is None, "a snapshot adds nothing"
    assert accumulator.snapshot() is not snapshot, "a copy: what comes next leaves it be"


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_the_typed_accumulator_of_each_target(target: str) -> None:
    module = RESPONSES_MODULES[target]
    accumulator = module.ResponseAccumulator()
    assert json.loads(module.dumps(accumulator.snapshot())) == {"object": "response", "output": []}
    for event in module.iter_events(sse(OPENAI)):
        accumulator.add(event)
    assert json.loads(module.dumps(accumulator.result())) == OPENAI[-1]["response"]
    [choice] = accumulator.summary().choices
    assert (choice.reasoning, choice.text, choice.finish_reason) == (
        "Let me think.",
        "Hello",
        "tool_calls",
    )


def sourceless(summary: Summary, encrypted: bool = True) -> dict[str, Any]:
    """A summary as plain data, less the items that carried its opaque reasoning and its
    tools (an event, or the final response), and, unless `encrypted`, the values of its
    encrypted reasoning."""
    plain_ = plain(summary)
    for choice in plain_["choices"]:
        for item in choice["reasoning_items"]:
            item["source"] = None
            if not encrypted and item["kind"] == "encrypted":
                item["value"] = "..."
        for tool in choice["server_tools"]:
            tool["source"] = None
    return plain_


def encrypted_of(events: list[dict[str, Any]]) -> tuple[list[str], list[str]]:
    """The encrypted reasoning of a stream's `output_item.done` events, and of its final
    response (each item's, else the done event's: an empty output is backfilled)."""
    done = [
        e["item"]["encrypted_content"]
        for e in events
        if e.get("type") == "response.output_item.done"
        and e["item"].get("type") == "reasoning"
        and e["item"].get("encrypted_content")
    ]
    final = [
        item["encrypted_content"]
        for e in events
        if e.get("type") in ("response.completed", "response.incomplete")
        for item in e["response"].get("output") or ()
        if item.get("type") == "reasoning" and item.get("encrypted_content")
    ]
    return done, final or done


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.stem)
def test_a_capture_s_summary_is_its_accumulator_s(path: Path) -> None:
    """The same meanings, whether added up from the events or read as parts. OpenAI
    encrypts reasoning again for the final response, after `output_item.done`: the
    parts carry the done item's (they are streamed, and cannot wait for the end), the
    accumulator the final response's, as openai-python's does; either is sent back."""
    events = capture_events(path)
    parts, _ = read_back(path.read_bytes())
    ours, theirs = accumulated(events).summary(), _summary_of_parts(parts)
    done, final = encrypted_of(events)
    assert [i.value for c in theirs.choices for i in c.reasoning_items] == done
    assert [i.value for c in ours.choices for i in c.reasoning_items] == final
    if path.stem in SAID_OTHERWISE:
        assert sourceless(ours, False) != sourceless(theirs, False), "done text differs"
        return
    assert sourceless(ours, False) == sourceless(theirs, False)


# The writer, on handmade parts.


def start(ident: str | None = "chatcmpl-abc", model: str | None = "m") -> Part:
    return Part("start", None, "", None, identity=Identity(ident, model, 1700000000))


def call(index: int | None, ident: str | None, name: str | None, text: str) -> Part:
    return Part("tool_call", 0, text, None, tool_call=ToolCallPart(index, ident, name))


def written(parts: Iterable[Part]) -> tuple[bytes, _ResponsesWriter, list[str]]:
    """The Responses stream of some parts, its writer, and the warnings it gave."""
    writer = _ResponsesWriter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        data = b"".join(writer.stream(parts))
    said = [str(w.message) for w in caught if w.category is ResponsesLossWarning]
    return data, writer, said


def raising(parts: list[Part], error: Exception) -> Iterator[Part]:
    yield from parts
    raise error


def read_back(data: bytes) -> tuple[list[Any], bool]:
    """The parts a written stream reads back as, and whether it raised its error."""
    parts: list[Any] = []
    try:
        parts.extend(CHAT.iter_parts(data, protocol="responses"))
    except CHAT.StreamError:
        return parts, True
    return parts, False


def test_the_writer_writes_exactly_these_events_for_a_chat_turn() -> None:
    parts = [
        start(),
        Part("reasoning", 0, "Hm", None),
        Part("text", 0, "Hi", None),
        call(0, "call_1", "f", '{"a":'),
        call(0, None, None, "1}"),
        Part("finish", 0, "tool_calls", None),
        Part("usage", None, "", None, usage=UsageSummary(10, 5, 15, 2, 1)),
    ]
    data, writer, caught = written(parts)
    assert not writer.dropped and not caught
    checked = check_responses(data)
    in_progress = {"id": "resp_abc", "object": "response", "created_at": 1700000000,
                   "status": "in_progress", "error": None, "incomplete_details": None,
                   "model": "m", "output": [], "parallel_tool_calls": True,
                   "tool_choice": "auto", "tools": [], "usage": None}  # fmt: skip
    rs = {"item_id": "rs_abc_0", "output_index": 0, "summary_index": 0}
    msg = {"item_id": "msg_abc_1", "output_index": 1, "content_index": 0}
    fc = {"item_id": "fc_abc_2", "output_index": 2}
    reasoning = {
        "id": "rs_abc_0",
        "type": "reasoning",
        "summary": [{"type": "summary_text", "text": "Hm"}],
        "status": "completed",
    }
    text = {"type": "output_text", "text": "Hi", "annotations": [], "logprobs": []}
    said = {"id": "msg_abc_1", "type": "message", "role": "assistant", "content": [text],
            "status": "completed"}  # fmt: skip
    function = {"id": "fc_abc_2", "type": "function_call", "call_id": "call_1", "name": "f",
                "arguments": '{"a":1}', "status": "completed"}  # fmt: skip
    usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 2},
             "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 1},
             "total_tokens": 15}  # fmt: skip
    expected: list[tuple[str, dict[str, Any]]] = [
        ("response.created", {"response": in_progress}),
        ("response.in_progress", {"response": in_progress}),
        ("response.output_item.added", {"output_index": 0, "item": {
            "id": "rs_abc_0", "type": "reasoning", "summary": []}}),
        ("response.reasoning_summary_part.added", {**rs, "part": {"type": "summary_text",
                                                                  "text": ""}}),
        ("response.reasoning_summary_text.delta", {**rs, "delta": "Hm"}),
        ("response.reasoning_summary_text.done", {**rs, "text": "Hm"}),
        ("response.reasoning_summary_part.done", {**rs, "part": {"type": "summary_text",
                                                                 "text": "Hm"}}),
        ("response.output_item.done", {"output_index": 0, "item": reasoning}),
        ("response.output_item.added", {"output_index": 1, "item": {
            "id": "msg_abc_1", "type": "message", "role": "assistant", "content": [],
            "status": "in_progress"}}),
        ("response.content_part.added", {**msg, "part": {**text, "text": ""}}),
        ("response.output_text.delta", {**msg, "logprobs": [], "delta": "Hi"}),
        ("response.output_text.done", {**msg, "text": "Hi", "logprobs": []}),
        ("response.content_part.done", {**msg, "part": text}),
        ("response.output_item.done", {"output_index": 1, "item": said}),
        ("response.output_item.added", {"output_index": 2, "item": {
            **function, "arguments": "", "status": "in_progress"}}),
        ("response.function_call_arguments.delta", {**fc, "delta": '{"a":'}),
        ("response.function_call_arguments.delta", {**fc, "delta": "1}"}),
        ("response.function_call_arguments.done", {**fc, "name": "f",
                                                   "arguments": '{"a":1}'}),
        ("response.output_item.done", {"output_index": 2, "item": function}),
        ("response.completed", {"response": {
            **in_progress, "status": "completed", "output": [reasoning, said, function],
            "usage": usage}}),
    ]  # fmt: skip
    got = [(e.name, e.data) for e in events_of(data)]
    assert got == [
        (name, {"type": name, "sequence_number": n, **fields})
        for n, (name, fields) in enumerate(expected)
    ]
    assert checked.terminal == "response.completed"
    back = _summary_of_parts(read_back(data)[0])
    [choice] = back.choices
    assert (choice.reasoning, choice.text, choice.finish_reason) == ("Hm", "Hi", "tool_calls")
    assert [(t.id, t.name, t.arguments) for t in choice.tool_calls] == [("call_1", "f", '{"a":1}')]
    assert dataclasses.asdict(back.usage) == dataclasses.asdict(UsageSummary(10, 5, 15, 2, 1))


@pytest.mark.parametrize(
    ("finish", "terminal", "reason"),
    [("length", "response.incomplete", "max_output_tokens"),
     ("content_filter", "response.incomplete", "content_filter"),
     ("stop", "response.completed", None), ("tool_calls", "response.completed", None),
     (None, "response.completed", None)],
)  # fmt: skip
def test_finish_reasons_write_as_the_response_s_status(
    finish: str | None, terminal: str, reason: str | None
) -> None:
    parts = [start(), Part("text", 0, "x", None)]
    if finish is not None:
        parts.append(Part("finish", 0, finish, None))
    checked = check_responses(written(parts)[0])
    assert checked.terminal == terminal
    details = checked.response["incomplete_details"]
    assert (details or {}).get("reason") == reason
    back = [p.text for p in read_back(written(parts)[0])[0] if p.kind == "finish"]
    assert back == [finish if reason else "stop"]


def test_an_error_fails_the_response_its_open_items_never_done() -> None:
    head = [start(), Part("reasoning", 0, "Hm", None), call(0, "call_1", "f", '{"a":'),
            Part("text", 0, "Hel", None)]  # fmt: skip
    error_part = Part("error", None, "overloaded", None,
                      error={"type": "server_error", "code": "overloaded"})  # fmt: skip
    cut = Part("error", 0, "cut off", None, error={"type": "incomplete_stream"})
    quota = StreamError({"message": "Quota.", "code": "insufficient_quota",
                         "type": "insufficient_quota"}, ServerSentEvent("error", "{}"))  # fmt: skip
    cases: list[tuple[Iterable[Part], dict[str, Any]]] = [
        ([*head, error_part, Part("text", 0, "lost", None)],
         {"type": "server_error", "code": "overloaded", "message": "overloaded", "param": None}),
        ([*head, cut],
         {"type": "incomplete_stream", "code": None, "message": "cut off", "param": None}),
        (raising(head, quota), {"type": "insufficient_quota", "code": "insufficient_quota",
                                "message": "Quota.", "param": None}),
        (raising(head, ConnectionError("reset")), {"type": "server_error", "code": None,
                                                   "message": "ConnectionError: reset",
                                                   "param": None}),
    ]  # fmt: skip
    for parts, error in cases:
        data, writer, _ = written(parts)
        checked = check_responses(data)
        assert checked.terminal == "response.failed"
        assert checked.error == {"type": "error", "sequence_number": checked.count - 2,
                                 "error": error}  # fmt: skip
        assert checked.response["error"] == {
            "code": error["code"] or "server_error",
            "message": error["message"],
        }
        statuses = [(item["type"], item["status"]) for item in checked.items]
        # The reasoning was done when the call began; the call (calls stay open to the
        # end) and the message the error cut off are never done: Codex would keep them.
        assert statuses == [("reasoning", "completed")]
        added = [e.data["item"]["type"] for e in events_of(data)
                 if e.name == "response.output_item.added"]  # fmt: skip
        assert added == ["reasoning", "function_call", "message"]
        assert checked.response["output"] == checked.items
        back, raised = read_back(data)
        assert raised
        [choice] = _summary_of_parts(back).choices
        assert (choice.reasoning, choice.text, choice.tool_calls[0].arguments) == (
            "Hm",
            "Hel",
            '{"a":',
        )
    _, writer, _ = written(raising(head, ConnectionError("reset")))
    assert isinstance(writer.failure, ConnectionError), "kept for the caller"
    data, _, _ = written([error_part])
    assert [e.name for e in events_of(data)] == [
        "response.created",
        "response.in_progress",
        "error",
        "response.failed",
    ]


def test_ids_come_from_the_source_s_and_call_ids_are_kept() -> None:
    def ids(parts: list[Part]) -> tuple[str, list[str], list[str]]:
        checked = check_responses(written(parts)[0])
        items = [item["id"] for item in checked.items]
        calls = [item["call_id"] for item in checked.items if item["type"] == "function_call"]
        return checked.response["id"], items, calls

    body = [Part("text", 0, "A", None), call(0, "call_kept", "f", "{}"), call(1, None, "g", "")]
    first = ids([start("chatcmpl-1"), *body])
    second = ids([start("chatcmpl-2"), *body])
    assert first == ("resp_1", ["msg_1_0", "fc_1_1", "fc_1_2"], ["call_kept", "call_1_2"])
    assert second[0] == "resp_2" and set(first[1]).isdisjoint(second[1])
    assert ids([start("resp_xyz"), *body])[0] == "resp_xyz"
    assert ids([start("msg_01"), *body])[0] == "resp_01"
    fresh = [ids([start(None), *body]) for _ in range(2)]
    assert fresh[0][0] != fresh[1][0] and set(fresh[0][1]).isdisjoint(fresh[1][1])
    assert all(i.startswith("resp_") and len(i) == 37 for i, _, _ in fresh), "resp_ and a uuid"


def test_what_responses_cannot_hold_is_counted_and_said_once() -> None:
    tool = ServerToolSummary(0, "web_search", "{}", None, {"type": "server_tool_use"})
    parts = [
        start(),
        Part("text", 0, "A", None),
        Part("text", 1, "B", None),
        Part("finish", 1, "stop", None),
        Part("server_tool", 0, "", {"type": "content_block_start"}, server_tool=tool),
        Part("start", None, "", None),
    ]
    data, writer, caught = written(parts)
    check_responses(data)
    assert dict(writer.dropped) == {
        ("text", "of another choice than the first: a response is one"): 1,
        ("finish", "of another choice than the first: a response is one"): 1,
        ("server_tool", "a tool another protocol's server ran"): 1,
        ("start", "a second start"): 1,
    }
    assert len(caught) == 1, "once per stream"
    assert _summary_of_parts(read_back(data)[0]).choices[0].text == "A"


def test_a_responses_stream_written_again_reads_the_same() -> None:
    """Every capture read and written again: the same summary (its server tools items
    whole), nothing dropped; a capture that fails fails again."""
    for path in CAPTURES:
        parts, raised = read_back(path.read_bytes())
        data, writer, _ = written(parts if not raised else raising(parts, StreamError(
            {"message": "failed"}, ServerSentEvent("error", "{}"))))  # fmt: skip
        checked = check_responses(data)
        assert not writer.dropped, path.name
        back, raised_again = read_back(data)
        assert raised_again == raised, path.name
        want, got = _summary_of_parts(parts), _summary_of_parts(back)
        if raised:
            assert [c.text for c in got.choices] == [c.text for c in want.choices], path.name
            continue
        assert checked.terminal != "response.failed"
        expected = sourceless(want)
        for choice in expected["choices"]:
            if choice["finish_reason"] not in ("length", "content_filter"):
                choice["finish_reason"] = "tool_calls" if choice["tool_calls"] else "stop"
            for index, tool in enumerate(choice["server_tools"]):
                tool["index"] = None
                del index
        again = sourceless(got)
        for choice in again["choices"]:
            for tool in choice["server_tools"]:
                tool["index"] = None
        usage = {k: (v or 0) if k in ("prompt_tokens", "completion_tokens",
                                      "cached_prompt_tokens", "reasoning_tokens") else v
                 for k, v in expected["usage"].items()}  # fmt: skip
        if usage["total_tokens"] is None:
            usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        expected["usage"] = usage
        assert again == expected, path.name


# Random parts, as any reader gives them.

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=2),
    max_leaves=4,
)
TEXT = st.text(min_size=1, max_size=6)
FINISHES = [None, "stop", "length", "tool_calls", "content_filter"]


def pieces_of(text: str, cuts: list[int]) -> list[str]:
    points = sorted({min(c, len(text)) for c in cuts})
    out, at = [], 0
    for point in points:
        out.append(text[at:point])
        at = point
    return [*out, text[at:]]


SEARCH = {"id": "ws_1", "type": "web_search_call", "status": "completed",
          "action": {"type": "search", "query": "q"}}  # fmt: skip


@st.composite
def part_streams(draw: st.DrawFn) -> tuple[list[Part], Exception | None]:
    """Parts in an order a reader may give them: chat's (no blocks; calls by index,
    their pieces maybe interleaved, the id and name with the first piece), Messages'
    (a block per run of parts, a call's first piece empty, signatures and redacted
    thinking blocks of their own) or Responses' (a block per item, encrypted reasoning
    after its item's summary, tools the server ran whole); other choices, citations
    and server tools mixed in; a finish and usage; an error part (maybe mid-stream,
    parts after it) or the parts raising."""
    flavor = draw(st.sampled_from(["chat", "messages", "responses"]))
    chat = flavor == "chat"
    at = None if chat else 0
    ident = draw(st.none() | st.text("abc123-_", min_size=1, max_size=8))
    parts = [Part("start", at, "", None, identity=Identity(ident, "m", None))]
    block = 0
    calls = 0
    for _ in range(draw(st.integers(0, 7))):
        kind = draw(st.sampled_from(["reasoning", "text", "refusal", "redacted", "signed",
                                     "calls", "other", "usage", "error"]))  # fmt: skip
        this = None if chat else block
        if kind in ("reasoning", "text", "refusal", "signed"):
            texts = draw(st.lists(TEXT, min_size=1, max_size=3))
            meaning = "reasoning" if kind == "signed" else kind
            if kind == "signed" and not chat and draw(st.booleans()):
                texts = []  # reasoning whose text is not shown
            parts += [Part(meaning, 0, t, None, block=this) for t in texts]
            if kind == "signed":
                opaque = "redacted_reasoning" if flavor == "responses" else "signature"
                parts.append(Part(opaque, 0, draw(TEXT), None, block=this))
            if kind == "text" and draw(st.booleans()):
                cited = Citation(draw(st.sampled_from(["https://a", "https://b"])),
                                 draw(st.none() | TEXT))  # fmt: skip
                parts.append(Part("citation", at, "", None, citation=cited, block=this))
        elif kind == "redacted":
            parts.append(Part("redacted_reasoning", 0, draw(TEXT), None, block=this))
        elif kind == "calls":
            runs = []
            for _ in range(draw(st.integers(1, 3))):
                index = calls if chat else block
                which = ToolCallPart(index, f"call_{index}", draw(st.sampled_from(["f", None])))
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
            search = {**SEARCH, "id": f"ws_{block}"}  # a stream's items have ids of their own
            tool = ServerToolSummary(block, "web_search", '{"type":"search","query":"q"}',
                                     None, search)  # fmt: skip
            event = {"type": "response.output_item.done", "output_index": block, "item": search}
            parts.append(draw(st.sampled_from([
                Part("text", 1, "other choice", None),
                Part("finish", 1, "stop", None),
                Part("server_tool", 0, "", event if flavor == "responses" else None,
                     server_tool=tool, block=this),
            ])))  # fmt: skip
        elif kind == "usage":
            parts.append(Part("usage", at, "", None, usage=draw(usages())))
        elif draw(st.integers(0, 3)) == 0:  # now and then, an error mid-stream
            parts.append(Part("error", at, "upstream failed", None,
                              error={"type": "server_error", "code": "boom"}))  # fmt: skip
        block += 1
    finish = draw(st.sampled_from(FINISHES))
    if finish is not None:
        parts.append(Part("finish", 0, finish, None))
    if draw(st.booleans()):
        parts.append(Part("usage", at, "", None, usage=draw(usages())))
    ending = draw(st.sampled_from(["end", "end", "error part", "raise"]))
    if ending == "error part":
        parts.append(Part("error", at, "upstream failed", None, error={"type": "server_error"}))
    raised = StreamError("boom", ServerSentEvent("error", "boom")) if ending == "raise" else None
    return parts, raised


@st.composite
def usages(draw: st.DrawFn) -> UsageSummary:
    """A usage report; a total, when said, is the prompt and the completion (the
    Responses clients require `total_tokens` to be their sum)."""
    prompt = draw(st.none() | st.integers(0, 1000))
    cached = None if prompt is None else draw(st.none() | st.integers(0, prompt))
    completion = draw(st.none() | st.integers(0, 1000))
    total = None
    if prompt is not None and completion is not None and draw(st.booleans()):
        total = prompt + completion
    reasoning = draw(st.none() | st.integers(0, 10))
    cost = draw(st.none() | st.floats(0, 1))
    servers = draw(st.none() | st.integers(0, 3))
    return UsageSummary(prompt, completion, total, cached, reasoning, cost, servers)


def expected_of(parts: list[Part], raised: bool) -> tuple[Summary, set[str], bool]:
    """What the written stream should read back as: the summary of the parts the writer
    keeps (those of the first choice, before an error; a tool only a Responses stream
    ran), the kinds it must say it left out, and whether the stream fails (an error
    part, or the parts `raised`)."""
    dropped: set[str] = set()
    kept: list[Part] = []
    ended = False
    for part in parts:
        if ended:
            dropped.add(part.kind)
        elif part.kind == "error":
            ended = True
        elif part.choice not in (None, 0) or (
            part.kind == "server_tool" and not isinstance(part.chunk, dict)
        ):
            dropped.add(part.kind)
        else:
            kept.append(part)
    failed = ended or raised
    if failed:
        dropped |= unread_when_failed(kept)
    return _summary_of_parts(kept), dropped, failed


def unread_when_failed(kept: list[Part]) -> set[str]:
    """What a failed response counts as said where no reader reads it: the usage so
    far (the latest one, when it counts anything), and a finish reason."""
    usages = [p.usage for p in kept if p.kind in ("start", "usage") and p.usage is not None]
    finishes = [p for p in kept if p.kind == "finish" and p.text]
    said = {"finish"} if finishes else set()
    if usages and usages[-1] != UsageSummary():
        said.add("usage")
    return said


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(part_streams())
def test_random_parts_write_a_valid_stream_that_reads_back_the_same(
    drawn: tuple[list[Part], Exception | None],
) -> None:
    parts, raised = drawn
    source: Iterable[Part] = parts if raised is None else raising(parts, raised)
    data, writer, caught = written(source)
    expected, dropped, failed = expected_of(parts, raised is not None)
    checked = check_responses(data)
    back_parts, raised_back = read_back(data)
    back = _summary_of_parts(back_parts)
    if failed and expected.choices and back.choices:  # the open item's opaque: counted
        cut_off = expected.choices[0].reasoning_items[len(back.choices[0].reasoning_items) :]
        dropped |= {"signature" if i.kind == "signature" else "redacted_reasoning"
                    for i in cut_off}  # fmt: skip
    assert {kind for kind, _ in writer.dropped} == dropped
    assert bool(caught) == bool(dropped), "said once when something was left out"
    assert (checked.terminal == "response.failed") == failed
    assert (checked.error is not None) == failed
    assert raised_back == failed
    if not expected.choices:
        assert all(not c.text and not c.tool_calls for c in back.choices)
        return
    want, got = expected.choices[0], back.choices[0]
    assert (got.text, got.reasoning, got.refusal) == (want.text, want.reasoning, want.refusal)
    # Calls are numbered by output_index: one of a higher index may start first.
    assert sorted((t.id, t.name, t.arguments) for t in got.tool_calls) == sorted(
        (t.id, t.name, t.arguments) for t in want.tool_calls
    )
    opaque = [(i.kind, i.value) for i in got.reasoning_items]
    meant = [(i.kind, i.value) for i in want.reasoning_items]
    if failed:  # a reasoning item the error cut off is never done: its opaque goes
        assert opaque == meant[: len(opaque)]
    else:
        assert opaque == meant
    assert [(t.name, t.arguments, t.output) for t in got.server_tools] == [
        (t.name, t.arguments, t.output) for t in want.server_tools
    ]
    assert [(c.url, c.title) for c in back.citations] == [
        (c.url, c.title) for c in expected.citations
    ]
    if failed:
        assert got.finish_reason is None
        assert dataclasses.asdict(back.usage) == dataclasses.asdict(UsageSummary())
        return
    why = want.finish_reason if want.finish_reason in ("length", "content_filter") else None
    assert got.finish_reason == (why or ("tool_calls" if got.tool_calls else "stop"))
    u = expected.usage
    prompt, completion = u.prompt_tokens or 0, u.completion_tokens or 0
    total = u.total_tokens if u.total_tokens is not None else prompt + completion
    assert dataclasses.asdict(back.usage) == dataclasses.asdict(
        dataclasses.replace(
            u,
            prompt_tokens=prompt,
            completion_tokens=completion,
            total_tokens=total,
            cached_prompt_tokens=u.cached_prompt_tokens or 0,
            reasoning_tokens=u.reasoning_tokens or 0,
        )
    ), "counts the source did not say are 0 (Responses requires them)"


@st.composite
def shared_streams(draw: st.DrawFn) -> list[Part]:
    """Parts of meanings all three protocols hold: reasoning, text, tool calls (one
    after another), a finish and usage, as chat's reader gives them."""
    parts = [Part("start", None, "", None, identity=Identity("chatcmpl-x", "m", 1))]
    calls = 0
    for _ in range(draw(st.integers(0, 5))):
        kind = draw(st.sampled_from(["reasoning", "text", "call"]))
        if kind == "call":
            which = ToolCallPart(calls, f"call_{calls}", draw(st.sampled_from(["f", "g"])))
            text = json.dumps({"v": draw(JSON_VALUES)}) if draw(st.booleans()) else ""
            cuts = draw(st.lists(st.integers(0, len(text)), max_size=2))
            parts += [Part("tool_call", 0, p, None, tool_call=which)
                      for p in (pieces_of(text, cuts) if text else [""])]  # fmt: skip
            calls += 1
        else:
            parts += [Part(kind, 0, t, None) for t in draw(st.lists(TEXT, min_size=1, max_size=2))]
    finish = draw(st.sampled_from(FINISHES))
    if finish is not None:
        parts.append(Part("finish", 0, finish, None))
    if draw(st.booleans()):
        prompt, completion = draw(st.integers(0, 500)), draw(st.integers(0, 500))
        usage = UsageSummary(prompt, completion, prompt + completion)
        parts.append(Part("usage", None, "", None, usage=usage))
    return parts


def shared(parts: Iterable[Any]) -> dict[str, Any]:
    """The meanings chat, Messages and Responses all hold, as a summary of `parts` says
    them: the finish as a response's status can carry it."""
    summary = _summary_of_parts(parts)
    choice = summary.choices[0] if summary.choices else None
    calls = [] if choice is None else [(t.name, t.arguments or "{}") for t in choice.tool_calls]
    finish = None if choice is None else choice.finish_reason
    if finish not in ("length", "content_filter"):
        finish = "tool_calls" if calls else "stop"
    return {
        "reasoning": "" if choice is None else choice.reasoning,
        "text": "" if choice is None else choice.text,
        "tool_calls": calls,
        "finish": finish,
        "usage": (summary.usage.prompt_tokens or 0, summary.usage.completion_tokens or 0),
    }


PROTOCOLS = ("chat", "messages", "responses")


def through(parts: Iterable[Any], protocol: str) -> list[Any]:
    """Parts written in `protocol` and read back."""
    data = b"".join(CHAT.write_parts(parts, protocol=protocol))
    return list(CHAT.iter_parts(data, protocol=protocol))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shared_streams())
def test_random_parts_say_the_same_through_every_pair_of_protocols(parts: list[Part]) -> None:
    """chat -> Messages, chat -> Responses, Messages -> chat, ... (all six): what all
    three hold is unchanged."""
    want = shared(parts)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing of these meanings is left out
        for first in PROTOCOLS:
            once = through(parts, first)
            assert shared(once) == want, first
            for second in PROTOCOLS:
                if second != first:
                    assert shared(through(once, second)) == want, (first, second)
