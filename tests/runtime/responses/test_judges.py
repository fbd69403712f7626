"""The judges of OpenAI Responses streams (tests/helpers/responses_judges.py) read hand-checked
bodies as we expect, and `check_responses` (tests/helpers/responses_invariants.py) passes them and
fails each invariant broken once: the meanings below were worked out by hand from the
events, not copied from what the clients returned."""

from __future__ import annotations

import asyncio
import copy
import json
import re
from collections.abc import Callable
from typing import Any

import openai
import pytest

from tests.helpers.responses_invariants import check_responses
from tests.helpers.responses_judges import (
    aread_with_openai_sdk,
    meanings_of_ai_sdk_reading,
    meanings_of_response,
    read_many_with_ai_sdk,
    read_many_with_openai_sdk,
    read_with_ai_sdk,
    read_with_openai_sdk,
)

Events = list[tuple[str, dict[str, Any]]]
"""A stream as `(event name, data)` pairs."""


def numbered(*payloads: dict[str, Any]) -> Events:
    """Each payload named by its type, with `sequence_number` 0, 1, 2... added."""
    return [(p["type"], {**p, "sequence_number": n}) for n, p in enumerate(payloads)]


def sse(events: Events) -> bytes:
    """An SSE body: each event as `event: ...` and `data: ...` lines."""
    return "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events).encode()


RESPONSE_ID = "resp_68af4030592c81938ec0a5fbab4a3e9f"


def response(status: str, output: list[Any], usage: Any, **more: Any) -> dict[str, Any]:
    return {
        "id": RESPONSE_ID,
        "object": "response",
        "created_at": 1756315696,
        "status": status,
        "error": None,
        "incomplete_details": None,
        "model": "gpt-5-2025-08-07",
        "output": output,
        "usage": usage,
        **more,
    }


START: tuple[dict[str, Any], ...] = (
    {"type": "response.created", "response": response("in_progress", [], None)},
    {"type": "response.in_progress", "response": response("in_progress", [], None)},
)

# After OpenAI's documented streams (reasoning with a summary, then a message, then a
# function call): a reasoning item with two summary parts (the first in two deltas) and
# its encrypted content on done; a message whose text comes in two deltas; a function
# call whose arguments come in pieces that split keys and values. Usage: 1200 input
# tokens of which 1024 cached, 300 output tokens of which 128 reasoning.
RS = "rs_68af4030baa48193b0b43b4c2a176a1a"
MSG = "msg_68af40337a3c8193a9b9a3f8f4e1b0c2"
FC = "fc_68af4034f2b08193b7e9d0f5a2c83e71"
CALL = "call_Wm9MdHk2aXNjb3Vyc2U"
ENCRYPTED = "gAAAAABor0A2Yk5lQ0hKWnBkT3NhX0VwZ3d5c3NxbWZ1"
SUMMARY_1 = ("**Checking the weather**\n\nThe user wants ", "the weather in Paris.")
SUMMARY_2 = "I'll call get_weather in Celsius."
TEXT = ("Let me check ", "the weather for you.")
ARGUMENTS = ['{"loc', 'ation": "Par', 'is, France", "un', 'it": "celsius"}']
REASONING_DONE: dict[str, Any] = {
    "id": RS,
    "type": "reasoning",
    "summary": [
        {"type": "summary_text", "text": "".join(SUMMARY_1)},
        {"type": "summary_text", "text": SUMMARY_2},
    ],
    "encrypted_content": ENCRYPTED,
}
TEXT_PART: dict[str, Any] = {
    "type": "output_text",
    "annotations": [],
    "logprobs": [],
    "text": "".join(TEXT),
}
MESSAGE_DONE: dict[str, Any] = {
    "id": MSG,
    "type": "message",
    "status": "completed",
    "content": [TEXT_PART],
    "role": "assistant",
}
CALL_DONE: dict[str, Any] = {
    "id": FC,
    "type": "function_call",
    "status": "completed",
    "arguments": "".join(ARGUMENTS),
    "call_id": CALL,
    "name": "get_weather",
}
USAGE: dict[str, Any] = {
    "input_tokens": 1200,
    "input_tokens_details": {"cached_tokens": 1024},
    "output_tokens": 300,
    "output_tokens_details": {"reasoning_tokens": 128},
    "total_tokens": 1500,
}


def summary(kind: str, index: int, **more: Any) -> dict[str, Any]:
    return {
        "type": f"response.reasoning_summary_{kind}",
        "item_id": RS,
        "output_index": 0,
        "summary_index": index,
        **more,
    }


def in_message(kind: str, **more: Any) -> dict[str, Any]:
    return {"type": kind, "item_id": MSG, "output_index": 1, "content_index": 0, **more}


DOCUMENTED_EVENTS = numbered(
    *START,
    {
        "type": "response.output_item.added",
        "output_index": 0,
        "item": {"id": RS, "type": "reasoning", "summary": []},
    },
    summary("part.added", 0, part={"type": "summary_text", "text": ""}),
    *(summary("text.delta", 0, delta=piece) for piece in SUMMARY_1),
    summary("text.done", 0, text="".join(SUMMARY_1)),
    summary("part.done", 0, part={"type": "summary_text", "text": "".join(SUMMARY_1)}),
    summary("part.added", 1, part={"type": "summary_text", "text": ""}),
    summary("text.delta", 1, delta=SUMMARY_2),
    summary("text.done", 1, text=SUMMARY_2),
    summary("part.done", 1, part={"type": "summary_text", "text": SUMMARY_2}),
    {"type": "response.output_item.done", "output_index": 0, "item": REASONING_DONE},
    {
        "type": "response.output_item.added",
        "output_index": 1,
        "item": {
            "id": MSG,
            "type": "message",
            "status": "in_progress",
            "content": [],
            "role": "assistant",
        },
    },
    in_message(
        "response.content_part.added",
        part={"type": "output_text", "annotations": [], "logprobs": [], "text": ""},
    ),
    *(in_message("response.output_text.delta", delta=piece, logprobs=[]) for piece in TEXT),
    in_message("response.output_text.done", text="".join(TEXT), logprobs=[]),
    in_message("response.content_part.done", part=TEXT_PART),
    {"type": "response.output_item.done", "output_index": 1, "item": MESSAGE_DONE},
    {
        "type": "response.output_item.added",
        "output_index": 2,
        "item": {**CALL_DONE, "status": "in_progress", "arguments": ""},
    },
    *(
        {
            "type": "response.function_call_arguments.delta",
            "item_id": FC,
            "output_index": 2,
            "delta": piece,
        }
        for piece in ARGUMENTS
    ),
    {
        "type": "response.function_call_arguments.done",
        "item_id": FC,
        "output_index": 2,
        "arguments": "".join(ARGUMENTS),
    },
    {"type": "response.output_item.done", "output_index": 2, "item": CALL_DONE},
    {
        "type": "response.completed",
        "response": response("completed", [REASONING_DONE, MESSAGE_DONE, CALL_DONE], USAGE),
    },
)
DOCUMENTED = sse(DOCUMENTED_EVENTS)

PARIS = {"location": "Paris, France", "unit": "celsius"}
DOCUMENTED_MEANINGS: dict[str, Any] = {
    "reasoning": "**Checking the weather**\n\nThe user wants the weather in Paris."
    "\n\nI'll call get_weather in Celsius.",  # two summary parts
    "reasoning_from": ["summary"],
    "encrypted": [ENCRYPTED],
    "text": "Let me check the weather for you.",
    "refusal": "",
    "tool_calls": [(CALL, "get_weather", PARIS)],
    "custom_tool_calls": [],
    "status": "completed",
    "incomplete_reason": None,
    "usage": {
        "prompt_tokens": 1200,
        "completion_tokens": 300,
        "cached_prompt_tokens": 1024,
        "reasoning_tokens": 128,
    },
}

# Raw reasoning (as gpt-oss servers stream it: reasoning_text in a content part), then a
# refusal and a custom tool call with its input in two pieces. No cached or reasoning
# token counts: the details objects hold zeros.
RAW = "rs_raw"
CUSTOM = "ctc_68af40"
RAW_TEXT = ("The user asks for ", "a table drop.")
RAW_DONE: dict[str, Any] = {
    "id": RAW,
    "type": "reasoning",
    "summary": [],
    "content": [{"type": "reasoning_text", "text": "".join(RAW_TEXT)}],
}
REFUSAL_PART: dict[str, Any] = {"type": "refusal", "refusal": "I can't help with that."}
REFUSED: dict[str, Any] = {**MESSAGE_DONE, "content": [REFUSAL_PART]}
CUSTOM_DONE: dict[str, Any] = {
    "id": CUSTOM,
    "type": "custom_tool_call",
    "status": "completed",
    "call_id": "call_custom_1",
    "name": "run_sql",
    "input": "SELECT 1;",
}
SMALL_USAGE: dict[str, Any] = {
    "input_tokens": 31,
    "input_tokens_details": {"cached_tokens": 0},
    "output_tokens": 12,
    "output_tokens_details": {"reasoning_tokens": 0},
    "total_tokens": 43,
}


def raw(kind: str, **more: Any) -> dict[str, Any]:
    return {"type": kind, "item_id": RAW, "output_index": 0, "content_index": 0, **more}


def refused(kind: str, **more: Any) -> dict[str, Any]:
    return {"type": kind, "item_id": MSG, "output_index": 1, "content_index": 0, **more}


OTHER_EVENTS = numbered(
    *START,
    {
        "type": "response.output_item.added",
        "output_index": 0,
        "item": {"id": RAW, "type": "reasoning", "summary": []},
    },
    raw("response.content_part.added", part={"type": "reasoning_text", "text": ""}),
    *(raw("response.reasoning_text.delta", delta=piece) for piece in RAW_TEXT),
    raw("response.reasoning_text.done", text="".join(RAW_TEXT)),
    raw("response.content_part.done", part=RAW_DONE["content"][0]),
    {"type": "response.output_item.done", "output_index": 0, "item": RAW_DONE},
    {
        "type": "response.output_item.added",
        "output_index": 1,
        "item": {"id": MSG, "type": "message", "status": "in_progress", "content": []},
    },
    refused("response.content_part.added", part={"type": "refusal", "refusal": ""}),
    refused("response.refusal.delta", delta="I can't help with that."),
    refused("response.refusal.done", refusal="I can't help with that."),
    refused("response.content_part.done", part=REFUSAL_PART),
    {"type": "response.output_item.done", "output_index": 1, "item": REFUSED},
    {
        "type": "response.output_item.added",
        "output_index": 2,
        "item": {**CUSTOM_DONE, "status": "in_progress", "input": ""},
    },
    *(
        {
            "type": "response.custom_tool_call_input.delta",
            "item_id": CUSTOM,
            "output_index": 2,
            "delta": piece,
        }
        for piece in ("SELECT", " 1;")
    ),
    {
        "type": "response.custom_tool_call_input.done",
        "item_id": CUSTOM,
        "output_index": 2,
        "input": "SELECT 1;",
    },
    {"type": "response.output_item.done", "output_index": 2, "item": CUSTOM_DONE},
    {
        "type": "response.completed",
        "response": response("completed", [RAW_DONE, REFUSED, CUSTOM_DONE], SMALL_USAGE),
    },
)
OTHER = sse(OTHER_EVENTS)

# A message cut by max_output_tokens: "Hello" then `response.incomplete`.
HELLO_PART: dict[str, Any] = {
    "type": "output_text",
    "annotations": [],
    "logprobs": [],
    "text": "Hello",
}
HELLO_DONE: dict[str, Any] = {**MESSAGE_DONE, "status": "incomplete", "content": [HELLO_PART]}


def hello(kind: str, **more: Any) -> dict[str, Any]:
    return {"type": kind, "item_id": MSG, "output_index": 0, "content_index": 0, **more}


HELLO: tuple[dict[str, Any], ...] = (
    *START,
    {
        "type": "response.output_item.added",
        "output_index": 0,
        "item": {"id": MSG, "type": "message", "status": "in_progress", "content": []},
    },
    hello(
        "response.content_part.added",
        part={"type": "output_text", "annotations": [], "logprobs": [], "text": ""},
    ),
    hello("response.output_text.delta", delta="Hello", logprobs=[]),
)
HELLO_CLOSED: tuple[dict[str, Any], ...] = (
    *HELLO,
    hello("response.output_text.done", text="Hello", logprobs=[]),
    hello("response.content_part.done", part=HELLO_PART),
    {"type": "response.output_item.done", "output_index": 0, "item": HELLO_DONE},
)
CUT_USAGE: dict[str, Any] = {
    "input_tokens": 25,
    "input_tokens_details": {"cached_tokens": 0},
    "output_tokens": 1,
    "output_tokens_details": {"reasoning_tokens": 0},
    "total_tokens": 26,
}
INCOMPLETE_EVENTS = numbered(
    *HELLO_CLOSED,
    {
        "type": "response.incomplete",
        "response": response(
            "incomplete",
            [HELLO_DONE],
            CUT_USAGE,
            incomplete_details={"reason": "max_output_tokens"},
        ),
    },
)
INCOMPLETE = sse(INCOMPLETE_EVENTS)

# A server error after "Hello": the message closed, an `error` event, `response.failed`
# (no usage, as OpenAI sends it). The error as the API sends it (nested, what
# @ai-sdk/openai reads) and as openai-python types it (flat, ResponseErrorEvent).
SERVER_ERROR: dict[str, Any] = {"code": "server_error", "message": "The server had an error."}
FAILED_RESPONSE: dict[str, Any] = {
    "type": "response.failed",
    "response": {**response("failed", [HELLO_DONE], None), "error": SERVER_ERROR},
}
NESTED_ERROR: dict[str, Any] = {
    "type": "error",
    "error": {"type": "server_error", **SERVER_ERROR, "param": None},
}
FLAT_ERROR: dict[str, Any] = {"type": "error", **SERVER_ERROR, "param": None}
FAILED_NESTED_EVENTS = numbered(*HELLO_CLOSED, NESTED_ERROR, FAILED_RESPONSE)
FAILED_NESTED = sse(FAILED_NESTED_EVENTS)
FAILED_FLAT = sse(numbered(*HELLO_CLOSED, FLAT_ERROR, FAILED_RESPONSE))
FAILED_ONLY = sse(numbered(*HELLO_CLOSED, FAILED_RESPONSE))
# The stream ends after the message is done: no terminal event at all.
NO_TERMINAL = sse(numbered(*HELLO_CLOSED))


def test_openai_python_reads_the_documented_stream() -> None:
    read = read_with_openai_sdk(DOCUMENTED)
    assert meanings_of_response(read["response"]) == DOCUMENTED_MEANINGS
    final = read["response"]
    assert (final["id"], final["model"], final["usage"]) == (RESPONSE_ID, "gpt-5-2025-08-07", USAGE)
    # Its events are the raw ones, one for one (its own `snapshot`/`parsed` ride on them).
    assert read["events"] == [name for name, _ in DOCUMENTED_EVENTS]


def test_async_openai_python_reads_the_same() -> None:
    assert asyncio.run(aread_with_openai_sdk(DOCUMENTED)) == read_with_openai_sdk(DOCUMENTED)


def test_the_ai_sdk_reads_the_same_meanings() -> None:
    seen = read_with_ai_sdk(DOCUMENTED)
    assert meanings_of_ai_sdk_reading(seen) == {
        **{k: DOCUMENTED_MEANINGS[k] for k in ("reasoning", "encrypted", "text", "tool_calls")},
        "finish_reason": "tool-calls",
        "usage": DOCUMENTED_MEANINGS["usage"],
        "response_id": RESPONSE_ID,
        "errors": [],
    }
    assert seen["usage"] == {
        "inputTokens": 1200,
        "outputTokens": 300,
        "totalTokens": 1500,
        "reasoningTokens": 128,
        "cachedInputTokens": 1024,
    }
    # One reasoning block per summary part (id `<item id>:<summary index>`); the
    # encrypted content comes with the item's done, so only the last block has it.
    assert seen["reasoningBlocks"] == [
        {"id": f"{RS}:0", "itemId": RS, "text": "".join(SUMMARY_1), "encryptedContent": None},
        {"id": f"{RS}:1", "itemId": RS, "text": SUMMARY_2, "encryptedContent": ENCRYPTED},
    ]
    assert seen["textBlocks"] == [{"id": MSG, "text": "".join(TEXT)}]
    [call] = seen["toolCalls"]
    assert (call["itemId"], call["invalid"]) == (FC, True), "get_weather is not declared"
    assert [e["toolName"] for e in seen["toolErrors"]] == ["get_weather"]
    assert seen["responseMetadata"] == [{"id": RESPONSE_ID, "modelId": "gpt-5-2025-08-07"}]
    assert seen["parts"] == [
        "start",
        "start-step",
        *["reasoning-start", "reasoning-delta", "reasoning-delta", "reasoning-end"],
        *["reasoning-start", "reasoning-delta", "reasoning-end"],
        *["text-start", "text-delta", "text-delta", "text-end"],
        *["tool-input-start", *["tool-input-delta"] * 4, "tool-input-end"],
        *["tool-call", "tool-error", "finish-step", "finish"],
    ]


OTHER_MEANINGS: dict[str, Any] = {
    "reasoning": "The user asks for a table drop.",
    "reasoning_from": ["content"],
    "encrypted": [],
    "text": "",
    "refusal": "I can't help with that.",
    "tool_calls": [],
    "custom_tool_calls": [("call_custom_1", "run_sql", "SELECT 1;")],
    "status": "completed",
    "incomplete_reason": None,
    "usage": {
        "prompt_tokens": 31,
        "completion_tokens": 12,
        "cached_prompt_tokens": 0,
        "reasoning_tokens": 0,
    },
}


def test_openai_python_reads_raw_reasoning_refusals_and_custom_calls() -> None:
    assert meanings_of_response(read_with_openai_sdk(OTHER)["response"]) == OTHER_MEANINGS


def test_the_ai_sdk_drops_raw_reasoning_refusals_and_custom_calls() -> None:
    """@ai-sdk/openai 2 reads no `reasoning_text` (an empty reasoning block for the item),
    no refusal (an empty text block), and no `custom_tool_call` item: its schema of
    `output_item.added` does not know the type, so the event is an unknown chunk."""
    seen = read_with_ai_sdk(OTHER)
    assert meanings_of_ai_sdk_reading(seen) == {
        "reasoning": "",
        "encrypted": [],
        "text": "",
        "tool_calls": [],
        "finish_reason": "stop",
        "usage": OTHER_MEANINGS["usage"],
        "response_id": RESPONSE_ID,
        "errors": [],
    }
    assert seen["reasoningBlocks"] == [
        {"id": f"{RAW}:0", "itemId": RAW, "text": "", "encryptedContent": None}
    ]
    assert seen["textBlocks"] == [{"id": MSG, "text": ""}]


HELLO_MEANINGS: dict[str, Any] = {
    "reasoning": "",
    "reasoning_from": [],
    "encrypted": [],
    "text": "Hello",
    "refusal": "",
    "tool_calls": [],
    "custom_tool_calls": [],
}


def test_a_response_incomplete_raises_in_openai_python() -> None:
    """`get_final_response()` knows only `response.completed`: an incomplete stream raises
    RuntimeError after every event was yielded; the incomplete response is the event's."""
    with pytest.raises(RuntimeError, match=re.escape("Didn't receive a `response.completed`")):
        read_with_openai_sdk(INCOMPLETE)
    read = read_with_openai_sdk(INCOMPLETE, final=False)
    assert read["events"] == [name for name, _ in INCOMPLETE_EVENTS]
    assert meanings_of_response(read["response"]) == {
        **HELLO_MEANINGS,
        "status": "incomplete",
        "incomplete_reason": "max_output_tokens",
        "usage": {
            "prompt_tokens": 25,
            "completion_tokens": 1,
            "cached_prompt_tokens": 0,
            "reasoning_tokens": 0,
        },
    }


def test_a_response_incomplete_is_a_length_finish_in_the_ai_sdk() -> None:
    seen = read_with_ai_sdk(INCOMPLETE)
    meanings = meanings_of_ai_sdk_reading(seen)
    assert (meanings["text"], meanings["finish_reason"], meanings["errors"]) == (
        "Hello",
        "length",
        [],
    )
    assert meanings["usage"] == {
        "prompt_tokens": 25,
        "completion_tokens": 1,
        "cached_prompt_tokens": 0,
        "reasoning_tokens": 0,
    }


def test_openai_python_on_failed_streams() -> None:
    """A nested `error` event (data with an `error` object, as the API sends it) raises
    `openai.APIError` with its message as soon as it is read, before `response.failed`. A
    flat one (openai-python's own ResponseErrorEvent) is yielded like any event, and so is
    `response.failed`; then `get_final_response()` raises RuntimeError, as without an
    error event, or without any terminal event."""
    nested, flat, only, none = read_many_with_openai_sdk(
        [FAILED_NESTED, FAILED_FLAT, FAILED_ONLY, NO_TERMINAL]
    )
    assert type(nested) is openai.APIError
    assert nested.message == SERVER_ERROR["message"]
    assert nested.body == NESTED_ERROR["error"]
    closed = [name for name, _ in numbered(*HELLO_CLOSED)]
    assert nested.__notes__ == [f"events openai-python yielded before: {closed}"]
    for error, ending in ((flat, ["error", "response.failed"]), (only, ["response.failed"])):
        assert isinstance(error, RuntimeError)
        assert str(error) == "Didn't receive a `response.completed` event."
        assert error.__notes__ == [f"events openai-python yielded before: {closed + ending}"]
    assert isinstance(none, RuntimeError)
    assert str(none) == "Didn't receive a `response.completed` event."
    # Read to the end, the failed response is the terminal event's.
    read = read_with_openai_sdk(FAILED_FLAT, final=False)
    assert meanings_of_response(read["response"]) == {
        **HELLO_MEANINGS,
        "status": "failed",
        "incomplete_reason": None,
        "usage": None,
    }
    assert read["response"]["error"] == SERVER_ERROR
    with pytest.raises(openai.APIError, match="The server had an error"):
        read_with_openai_sdk(FAILED_NESTED, final=False)


def test_the_ai_sdk_on_failed_streams() -> None:
    """@ai-sdk/openai 2 passes a nested `error` event on as an error part (the event's
    data) but leaves the finish reason "unknown"; it ignores a flat `error` event and
    `response.failed` altogether (unknown chunks): such a stream reads as one that just
    ended, with no usage, like a stream without any terminal event."""
    nested, flat, only, none = read_many_with_ai_sdk(
        [FAILED_NESTED, FAILED_FLAT, FAILED_ONLY, NO_TERMINAL]
    )
    expected: dict[str, Any] = {
        "reasoning": "",
        "encrypted": [],
        "text": "Hello",
        "tool_calls": [],
        "finish_reason": "unknown",
        "usage": None,
        "response_id": RESPONSE_ID,
        "errors": [],
    }
    assert meanings_of_ai_sdk_reading(nested) == {
        **expected,
        "errors": [{**NESTED_ERROR, "sequence_number": 8}],
    }
    for seen in (flat, only, none):
        assert meanings_of_ai_sdk_reading(seen) == expected
    assert "error" in nested["parts"] and "error" not in flat["parts"]


def _copy(events: Events) -> Events:
    """A copy sharing nothing (the valid streams share their items between events)."""
    return [(name, json.loads(json.dumps(data))) for name, data in events]


def _drift(events: Events) -> bytes:
    """A body of `events` numbered again (the mutations below keep the numbers right)."""
    return sse([(name, {**data, "sequence_number": n}) for n, (name, data) in enumerate(events)])


def test_what_each_client_checks_of_identities() -> None:
    """openai-python checks the identity of items (type, id, call_id) between added, done
    and completed, and the response id; it addresses deltas by output_index and never
    reads item_id. The AI SDK addresses text deltas by item_id (an unknown one is an error
    part) and needs `reasoning_summary_part.added` for every summary part but the first."""
    call_changed = _copy(DOCUMENTED_EVENTS)
    _data(call_changed, DONE, output_index=2)["item"]["call_id"] = "call_other"
    call_changed[-1][1]["response"]["output"][2]["call_id"] = "call_other"
    id_changed = _copy(DOCUMENTED_EVENTS)
    id_changed[-1][1]["response"]["id"] = "resp_other"
    wrong_item = _copy(DOCUMENTED_EVENTS)
    for name, data in wrong_item:
        if name == "response.output_text.delta":
            data["item_id"] = "msg_other"
    no_second_part = [
        (name, data)
        for name, data in DOCUMENTED_EVENTS
        if not (name == "response.reasoning_summary_part.added" and data["summary_index"] == 1)
    ]
    bodies = [_drift(e) for e in (call_changed, id_changed, wrong_item, no_second_part)]
    call, rid, item, part = read_many_with_openai_sdk(bodies)
    assert isinstance(call, RuntimeError) and str(call) == "Completed output item identity changed."
    assert isinstance(rid, RuntimeError) and str(rid) == "Lifecycle response identity changed."
    assert isinstance(item, dict) and isinstance(part, dict)
    assert meanings_of_response(item["response"]) == DOCUMENTED_MEANINGS
    assert meanings_of_response(part["response"]) == DOCUMENTED_MEANINGS
    call, rid, item, part = read_many_with_ai_sdk(bodies)
    assert meanings_of_ai_sdk_reading(call)["tool_calls"] == [("call_other", "get_weather", PARIS)]
    assert meanings_of_ai_sdk_reading(rid)["response_id"] == RESPONSE_ID  # created's
    assert item["errors"] == ["text part msg_other not found"] * 2  # one per delta
    assert item["text"] == "".join(TEXT)  # the deltas still come through fullStream
    # The second summary part's delta, and its end, each an error part; its text is still
    # in the reasoning read (fullStream passes the delta on), in no block.
    assert part["errors"] == [f"reasoning part {RS}:1 not found"] * 2
    assert part["reasoning"] == "".join((*SUMMARY_1, SUMMARY_2))  # its deltas, as they came
    assert [b["id"] for b in part["reasoningBlocks"]] == [f"{RS}:0"]


def test_check_responses_passes_valid_streams() -> None:
    checked = check_responses(DOCUMENTED)
    assert checked.items == [REASONING_DONE, MESSAGE_DONE, CALL_DONE]
    assert (checked.terminal, checked.usage, checked.count) == ("response.completed", USAGE, 28)
    assert checked.error is None
    other = check_responses(OTHER)
    assert (other.items, other.count) == ([RAW_DONE, REFUSED, CUSTOM_DONE], 21)
    incomplete = check_responses(INCOMPLETE)
    assert (incomplete.terminal, incomplete.items) == ("response.incomplete", [HELLO_DONE])
    failed = check_responses(FAILED_NESTED)
    assert (failed.terminal, failed.usage) == ("response.failed", None)
    assert failed.error == {**NESTED_ERROR, "sequence_number": 8}
    assert check_responses(FAILED_FLAT).error == {**FLAT_ERROR, "sequence_number": 8}
    assert check_responses(FAILED_ONLY).error is None


Mutate = Callable[[Events], None]


def _at(events: Events, name: str, nth: int = 0, **where: Any) -> int:
    """The position of the `nth` event named `name` whose data has `where`."""
    found = [
        i
        for i, (n, d) in enumerate(events)
        if n == name and all(d.get(k) == v for k, v in where.items())
    ]
    return found[nth]


def _data(events: Events, name: str, nth: int = 0, **where: Any) -> dict[str, Any]:
    return events[_at(events, name, nth, **where)][1]


def _rename(events: Events) -> None:
    i = _at(events, "response.output_text.done")
    events[i] = ("response.output_text.delta", events[i][1])


def _move(name: str, before: str, **where: Any) -> Mutate:
    """Move the first `name` event before the first `before` event whose data has `where`."""

    def mutate(events: Events) -> None:
        event = events.pop(_at(events, name))
        events.insert(_at(events, before, **where), event)

    return mutate


def _drop(name: str, nth: int = 0, **where: Any) -> Mutate:
    def mutate(events: Events) -> None:
        events.pop(_at(events, name, nth, **where))

    return mutate


def _set(name: str, path: str, value: Any, nth: int = 0, **where: Any) -> Mutate:
    def mutate(events: Events) -> None:
        *keys, last = path.split(".")
        data: Any = _data(events, name, nth, **where)
        for key in keys:
            data = data[int(key) if key.isdigit() else key]
        if value is _DELETE:
            del data[last]
        else:
            data[int(last) if last.isdigit() else last] = value

    return mutate


_DELETE = object()
COMPLETED, DONE = "response.completed", "response.output_item.done"


def _insert(at: str, event: dict[str, Any]) -> Mutate:
    def mutate(events: Events) -> None:
        events.insert(_at(events, at), (event["type"], dict(event)))

    return mutate


def _twice(name: str, **where: Any) -> Mutate:
    def mutate(events: Events) -> None:
        i = _at(events, name, **where)
        events.insert(i + 1, copy.deepcopy(events[i]))

    return mutate


# (id, the valid stream, the mutation, a piece of the message it must fail with,
# whether the sequence numbers are left as they were)
MUTATIONS: list[tuple[str, Events, Mutate, str, bool]] = [
    ("event-is-type", DOCUMENTED_EVENTS, _rename, "but data.type", True),
    (
        "sequence-contiguous",
        DOCUMENTED_EVENTS,
        _set("response.output_item.added", "sequence_number", 9),
        "sequence_number 9, not 2",
        True,
    ),
    (
        "sequence-present",
        DOCUMENTED_EVENTS,
        _set(COMPLETED, "sequence_number", _DELETE),
        "sequence_number None, not 27",
        True,
    ),
    (
        "created-first",
        DOCUMENTED_EVENTS,
        _move("response.in_progress", "response.created"),
        "response.created first",
        False,
    ),
    (
        "in-progress-second",
        DOCUMENTED_EVENTS,
        _drop("response.in_progress"),
        "response.in_progress second",
        False,
    ),
    (
        "added-before-deltas",
        DOCUMENTED_EVENTS,
        _move("response.output_text.delta", "response.output_item.added", output_index=1),
        "output_index 1 before its output_item.added",
        False,
    ),
    (
        "output-index-dense",
        DOCUMENTED_EVENTS,
        _set("response.output_item.added", "output_index", 3, output_index=2),
        "output_index 3, not 2 (dense",
        False,
    ),
    (
        "item-id",
        DOCUMENTED_EVENTS,
        _set("response.function_call_arguments.delta", "item_id", "fc_other", 2),
        "item_id 'fc_other', not the added item's id",
        False,
    ),
    (
        "call-id-done",
        DOCUMENTED_EVENTS,
        _set(DONE, "item.call_id", "call_other", output_index=2),
        "function_call call_id 'call_other'",
        False,
    ),
    (
        "name-done",
        DOCUMENTED_EVENTS,
        _set(DONE, "item.name", "get_time", output_index=2),
        "function_call name 'get_time'",
        False,
    ),
    (
        "call-id-final",
        DOCUMENTED_EVENTS,
        _set(COMPLETED, "response.output.2", {**CALL_DONE, "call_id": "call_other"}),
        "response.output is not the done items",
        False,
    ),
    (
        "part-added-before-deltas",
        DOCUMENTED_EVENTS,
        _drop("response.content_part.added"),
        "content_index 0 before its part was added",
        False,
    ),
    (
        "content-index-dense",
        DOCUMENTED_EVENTS,
        _set("response.content_part.added", "content_index", 1),
        "content_index 1, not 0 (dense)",
        False,
    ),
    (
        "summary-index-dense",
        DOCUMENTED_EVENTS,
        _set("response.reasoning_summary_part.added", "summary_index", 2, 1),
        "summary_index 2, not 1 (dense)",
        False,
    ),
    (
        "output-text-done",
        DOCUMENTED_EVENTS,
        _set("response.output_text.done", "text", "Let me check."),
        "text 'Let me check.' is not the joined deltas",
        False,
    ),
    (
        "arguments-done",
        DOCUMENTED_EVENTS,
        _set("response.function_call_arguments.done", "arguments", "{}"),
        "arguments '{}' is not the joined deltas",
        False,
    ),
    (
        "summary-text-done",
        DOCUMENTED_EVENTS,
        _set("response.reasoning_summary_text.done", "text", "I'll call.", summary_index=1),
        'text "I\'ll call." is not the joined deltas',
        False,
    ),
    (
        "reasoning-text-done",
        OTHER_EVENTS,
        _set("response.reasoning_text.done", "text", "A table drop."),
        "text 'A table drop.' is not the joined deltas",
        False,
    ),
    (
        "refusal-done",
        OTHER_EVENTS,
        _set("response.refusal.done", "refusal", "No."),
        "refusal 'No.' is not the joined deltas",
        False,
    ),
    (
        "custom-input-done",
        OTHER_EVENTS,
        _set("response.custom_tool_call_input.done", "input", "SELECT 2;"),
        "input 'SELECT 2;' is not the joined deltas",
        False,
    ),
    (
        "content-part-done",
        DOCUMENTED_EVENTS,
        _set("response.content_part.done", "part", {**TEXT_PART, "text": "Let me"}),
        "content_part.done part",
        False,
    ),
    (
        "summary-part-done",
        DOCUMENTED_EVENTS,
        _set("response.reasoning_summary_part.done", "part.text", "x", summary_index=0),
        "reasoning_summary_part.done text",
        False,
    ),
    (
        "item-done-content",
        DOCUMENTED_EVENTS,
        _set(DONE, "item.content.0.text", "Let me check.", output_index=1),
        "message content",
        False,
    ),
    (
        "item-done-arguments",
        DOCUMENTED_EVENTS,
        _set(DONE, "item.arguments", "{}", output_index=2),
        "arguments '{}' is not the joined deltas",
        False,
    ),
    (
        "item-done-once",
        DOCUMENTED_EVENTS,
        _twice(DONE, output_index=0),
        "item 0 after its output_item.done",
        False,
    ),
    (
        "item-done-before-terminal",
        DOCUMENTED_EVENTS,
        _drop(DONE, output_index=2),
        "item 2 added but not done before the terminal",
        False,
    ),
    ("one-terminal", DOCUMENTED_EVENTS, _twice(COMPLETED), "one terminal event, not", False),
    ("a-terminal", DOCUMENTED_EVENTS, _drop(COMPLETED), "one terminal event, not []", False),
    (
        "terminal-last",
        DOCUMENTED_EVENTS,
        _move(COMPLETED, DONE, output_index=2),
        "the terminal is last",
        False,
    ),
    (
        "error-before-failed-only",
        DOCUMENTED_EVENTS,
        _insert(COMPLETED, NESTED_ERROR),
        "an error event only right before response.failed",
        False,
    ),
    (
        "output-order",
        DOCUMENTED_EVENTS,
        _set(COMPLETED, "response.output", [MESSAGE_DONE, REASONING_DONE, CALL_DONE]),
        "response.output is not the done items",
        False,
    ),
    (
        "response-id-in-progress",
        DOCUMENTED_EVENTS,
        _set("response.in_progress", "response.id", "resp_other"),
        "event 1: response.id",
        False,
    ),
    (
        "response-id-terminal",
        DOCUMENTED_EVENTS,
        _set(COMPLETED, "response.id", "resp_other"),
        "response.id 'resp_other', not",
        False,
    ),
    (
        "terminal-status",
        DOCUMENTED_EVENTS,
        _set(COMPLETED, "response.status", "in_progress"),
        "status 'in_progress'",
        False,
    ),
    (
        "usage-present",
        DOCUMENTED_EVENTS,
        _set(COMPLETED, "response.usage", None),
        "usage on the terminal response",
        False,
    ),
    (
        "usage-integers",
        DOCUMENTED_EVENTS,
        _set(COMPLETED, "response.usage.output_tokens", 300.0),
        "usage.output_tokens 300.0",
        False,
    ),
    (
        "usage-details",
        DOCUMENTED_EVENTS,
        _set(COMPLETED, "response.usage.input_tokens_details", _DELETE),
        "usage.input_tokens_details",
        False,
    ),
    (
        "usage-reasoning-tokens",
        DOCUMENTED_EVENTS,
        _set(COMPLETED, "response.usage.output_tokens_details", {}),
        "usage.output_tokens_details.reasoning_tokens None",
        False,
    ),
    (
        "incomplete-reason",
        INCOMPLETE_EVENTS,
        _set("response.incomplete", "response.incomplete_details.reason", "length"),
        "incomplete_details.reason 'length'",
        False,
    ),
]


@pytest.mark.parametrize(
    ("base", "mutate", "message", "as_numbered"),
    [pytest.param(*rest, id=name) for name, *rest in MUTATIONS],
)
def test_check_responses_fails_each_invariant(
    base: Events, mutate: Mutate, message: str, as_numbered: bool
) -> None:
    events = _copy(base)
    mutate(events)
    body = sse(events) if as_numbered else _drift(events)
    with pytest.raises(AssertionError, match=re.escape(message)):
        check_responses(body)
