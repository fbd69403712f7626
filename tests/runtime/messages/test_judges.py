"""The judges of Anthropic Messages streams (tests/helpers/messages_judges.py) read hand-checked
bodies as we expect: the meanings below were worked out by hand from the events, not
copied from what the clients returned."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import anthropic
import pytest

from tests.helpers.messages_judges import (
    aread_with_anthropic_sdk,
    meanings_of_ai_sdk_reading,
    meanings_of_sdk_message,
    read_many_with_ai_sdk,
    read_with_ai_sdk,
    read_with_anthropic_sdk,
)


def sse(*events: tuple[str, str]) -> bytes:
    """An SSE body: each `(event, data)` as `event: ...` and `data: ...` lines."""
    return "".join(f"event: {event}\ndata: {data}\n\n" for event, data in events).encode()


SIGNATURE = "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds..."
THINKING_1 = "I need to find the GCD of 1071 and 462 using the Euclidean algorithm.\n\n"
THINKING_2 = "1071 = 2 \u00d7 462 + 147\n462 = 3 \u00d7 147 + 21\n147 = 7 \u00d7 21 + 0"
TOOL_ID = "toolu_01T1x1fJ34qAmk2tNTrN7Up6"

# After Anthropic's documented streams (extended thinking, then tool use): a thinking
# block closed by its signature, a text block with a ping inside it, and a tool_use
# block whose input comes in input_json_delta pieces that split keys and values (the
# first one empty). Usage: 472 fresh + 100 cache-read input tokens, 89 output tokens.
DOCUMENTED = sse(
    (
        "message_start",
        '{"type":"message_start","message":{"id":"msg_01","type":"message",'
        '"role":"assistant","content":[],"model":"claude-sonnet-4-5","stop_reason":null,'
        '"stop_sequence":null,"usage":{"input_tokens":472,"cache_creation_input_tokens":0,'
        '"cache_read_input_tokens":100,"output_tokens":2}}}',
    ),
    (
        "content_block_start",
        '{"type":"content_block_start","index":0,"content_block":{"type":"thinking",'
        '"thinking":""}}',
    ),
    (
        "content_block_delta",
        '{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta",'
        f'"thinking":{json.dumps(THINKING_1)}}}}}',
    ),
    (
        "content_block_delta",
        '{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta",'
        f'"thinking":{json.dumps(THINKING_2)}}}}}',
    ),
    (
        "content_block_delta",
        '{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta",'
        f'"signature":"{SIGNATURE}"}}}}',
    ),
    ("content_block_stop", '{"type":"content_block_stop","index":0}'),
    (
        "content_block_start",
        '{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}',
    ),
    ("ping", '{"type": "ping"}'),
    (
        "content_block_delta",
        '{"type":"content_block_delta","index":1,"delta":{"type":"text_delta",'
        '"text":"The GCD is **21**. "}}',
    ),
    (
        "content_block_delta",
        '{"type":"content_block_delta","index":1,"delta":{"type":"text_delta",'
        '"text":"Now the weather."}}',
    ),
    ("content_block_stop", '{"type":"content_block_stop","index":1}'),
    (
        "content_block_start",
        '{"type":"content_block_start","index":2,"content_block":{"type":"tool_use",'
        f'"id":"{TOOL_ID}","name":"get_weather","input":{{}}}}}}',
    ),
    *(
        (
            "content_block_delta",
            '{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta",'
            f'"partial_json":{json.dumps(piece)}}}}}',
        )
        for piece in ["", '{"location":', ' "San Fra', 'ncisco, CA", "unit": "fah', 'renheit"}']
    ),
    ("content_block_stop", '{"type":"content_block_stop","index":2}'),
    (
        "message_delta",
        '{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},'
        '"usage":{"output_tokens":89}}',
    ),
    ("message_stop", '{"type":"message_stop"}'),
)

WEATHER = {"location": "San Francisco, CA", "unit": "fahrenheit"}
DOCUMENTED_MEANINGS: dict[str, Any] = {
    "reasoning": THINKING_1 + THINKING_2,
    "signatures": [SIGNATURE],
    "redacted": [],
    "text": "The GCD is **21**. Now the weather.",
    "tool_calls": [(TOOL_ID, "get_weather", WEATHER)],
    "server_tool_uses": [],
    "stop_reason": "tool_use",
    "usage": {"prompt_tokens": 572, "completion_tokens": 89, "cached_prompt_tokens": 100},
}

# A redacted thinking block, a web search the server ran (its input in one piece, its
# result a block of its own), then the answer. message_delta repeats the input counts,
# as the API does when it has them; no cache read at all.
SEARCH_ID = "srvtoolu_014hJH82Qum7Td6UV8gDXThB"
REDACTED = "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP"
SEARCHED = sse(
    (
        "message_start",
        '{"type":"message_start","message":{"id":"msg_02","type":"message",'
        '"role":"assistant","content":[],"model":"claude-sonnet-4-5","stop_reason":null,'
        '"stop_sequence":null,"usage":{"input_tokens":2679,"cache_creation_input_tokens":300,'
        '"output_tokens":3}}}',
    ),
    (
        "content_block_start",
        '{"type":"content_block_start","index":0,"content_block":{"type":"redacted_thinking",'
        f'"data":"{REDACTED}"}}}}',
    ),
    ("content_block_stop", '{"type":"content_block_stop","index":0}'),
    (
        "content_block_start",
        '{"type":"content_block_start","index":1,"content_block":{"type":"server_tool_use",'
        f'"id":"{SEARCH_ID}","name":"web_search","input":{{}}}}}}',
    ),
    (
        "content_block_delta",
        '{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta",'
        '"partial_json":"{\\"query\\": \\"weather NYC today\\"}"}}',
    ),
    ("content_block_stop", '{"type":"content_block_stop","index":1}'),
    (
        "content_block_start",
        '{"type":"content_block_start","index":2,"content_block":{"type":'
        f'"web_search_tool_result","tool_use_id":"{SEARCH_ID}","content":[{{"type":'
        '"web_search_result","title":"Weather in New York City","url":'
        '"https://weather.example/nyc","encrypted_content":"Ev0DCioIAhgC","page_age":null}]}}',
    ),
    ("content_block_stop", '{"type":"content_block_stop","index":2}'),
    (
        "content_block_start",
        '{"type":"content_block_start","index":3,"content_block":{"type":"text","text":""}}',
    ),
    (
        "content_block_delta",
        '{"type":"content_block_delta","index":3,"delta":{"type":"text_delta",'
        '"text":"Sunny, 22 °C."}}',
    ),
    ("content_block_stop", '{"type":"content_block_stop","index":3}'),
    (
        "message_delta",
        '{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},'
        '"usage":{"input_tokens":2679,"cache_creation_input_tokens":300,'
        '"cache_read_input_tokens":null,"output_tokens":510,'
        '"server_tool_use":{"web_search_requests":1}}}',
    ),
    ("message_stop", '{"type":"message_stop"}'),
)
SEARCHED_MEANINGS: dict[str, Any] = {
    "reasoning": "",
    "signatures": [],
    "redacted": [REDACTED],
    "text": "Sunny, 22 °C.",
    "tool_calls": [],
    "server_tool_uses": [(SEARCH_ID, "web_search", {"query": "weather NYC today"})],
    "stop_reason": "end_turn",
    "usage": {"prompt_tokens": 2979, "completion_tokens": 510, "cached_prompt_tokens": None},
}

START = (
    "message_start",
    '{"type":"message_start","message":{"id":"msg_03","type":"message","role":"assistant",'
    '"content":[],"model":"claude-sonnet-4-5","stop_reason":null,"stop_sequence":null,'
    '"usage":{"input_tokens":25,"output_tokens":1}}}',
)
TEXT_HELLO = (
    (
        "content_block_start",
        '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}',
    ),
    (
        "content_block_delta",
        '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}',
    ),
)
OVERLOADED = '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'
# Anthropic's documented mid-stream error: the text so far, then an `error` event.
ERRORED = sse(START, *TEXT_HELLO, ("error", OVERLOADED))
# A message_delta without `usage` (the field is required; some servers leave it out).
NO_DELTA_USAGE = sse(
    START,
    *TEXT_HELLO,
    ("content_block_stop", '{"type":"content_block_stop","index":0}'),
    (
        "message_delta",
        '{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null}}',
    ),
    ("message_stop", '{"type":"message_stop"}'),
)


def test_the_anthropic_sdk_reads_the_documented_stream() -> None:
    read = read_with_anthropic_sdk(DOCUMENTED)
    assert meanings_of_sdk_message(read["message"]) == DOCUMENTED_MEANINGS
    message = read["message"]
    assert (message["id"], message["model"], message["stop_sequence"]) == (
        "msg_01",
        "claude-sonnet-4-5",
        None,
    )
    assert message["usage"] == {
        "input_tokens": 472,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 100,
        "output_tokens": 89,
    }
    delta = "content_block_delta"
    # Each raw event, each followed by the SDK's own event for its delta (a ping is not
    # yielded); an empty input_json_delta gets one too.
    assert read["events"] == [
        "message_start",
        "content_block_start",
        *[delta, "thinking"] * 2,
        *[delta, "signature"],
        "content_block_stop",
        "content_block_start",
        *[delta, "text"] * 2,
        "content_block_stop",
        "content_block_start",
        *[delta, "input_json"] * 5,
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]


def test_the_async_anthropic_sdk_reads_the_same() -> None:
    assert asyncio.run(aread_with_anthropic_sdk(DOCUMENTED)) == read_with_anthropic_sdk(DOCUMENTED)


def test_the_anthropic_sdk_reads_redacted_thinking_and_server_tools() -> None:
    read = read_with_anthropic_sdk(SEARCHED)
    assert meanings_of_sdk_message(read["message"]) == SEARCHED_MEANINGS
    assert read["message"]["usage"]["server_tool_use"] == {"web_search_requests": 1}
    [result] = [b for b in read["message"]["content"] if b["type"] == "web_search_tool_result"]
    assert result["content"][0]["url"] == "https://weather.example/nyc"


def test_the_ai_sdk_reads_the_same_meanings() -> None:
    documented, searched = read_many_with_ai_sdk([DOCUMENTED, SEARCHED])
    assert meanings_of_ai_sdk_reading(documented) == {
        **{k: v for k, v in DOCUMENTED_MEANINGS.items() if k != "stop_reason"},
        "finish_reason": "tool-calls",
        "errors": [],
    }
    # Its own usage counts leave the cache out of inputTokens.
    assert documented["usage"] == {
        "inputTokens": 472,
        "outputTokens": 89,
        "totalTokens": 561,
        "cachedInputTokens": 100,
    }
    assert documented["providerMetadata"]["anthropic"]["cacheCreationInputTokens"] == 0
    assert documented["warnings"] == []
    [call] = documented["toolCalls"]
    assert call["invalid"], "get_weather is not declared: streamText flags the call"
    assert [e["toolName"] for e in documented["toolErrors"]] == ["get_weather"]

    assert meanings_of_ai_sdk_reading(searched) == {
        **{k: v for k, v in SEARCHED_MEANINGS.items() if k != "stop_reason"},
        "finish_reason": "stop",
        "errors": [],
    }
    [block] = searched["reasoningBlocks"]
    assert (block["text"], block["redactedData"]) == ("", REDACTED)
    [result] = searched["toolResults"]
    assert (result["toolCallId"], result["toolName"]) == (SEARCH_ID, "web_search")


def test_an_error_event_raises_in_the_anthropic_sdk() -> None:
    """An `error` event raises `APIStatusError` (no subclass: the status is the
    response's, 200) with the event's data as its body; the text read before is lost
    with the stream."""
    with pytest.raises(anthropic.APIStatusError) as raised:
        read_with_anthropic_sdk(ERRORED)
    error = raised.value
    assert type(error) is anthropic.APIStatusError
    assert error.status_code == 200
    assert error.body == json.loads(OVERLOADED)
    assert error.message == str(json.loads(OVERLOADED))
    assert error.__notes__ == [
        "events the anthropic SDK yielded before: "
        "['message_start', 'content_block_start', 'content_block_delta', 'text']"
    ]


def test_an_error_event_is_an_error_part_in_the_ai_sdk() -> None:
    seen = read_with_ai_sdk(ERRORED)
    assert seen["text"] == "Hello"
    assert seen["errors"] == [{"type": "overloaded_error", "message": "Overloaded"}]
    assert seen["finishReason"] == "error"


def test_a_message_delta_without_usage_breaks_the_anthropic_sdk() -> None:
    """The SDK's accumulator reads `event.usage.output_tokens` of every message_delta:
    without `usage` it fails, so a writer that leaves usage out fails this judge."""
    with pytest.raises(AttributeError, match="'NoneType' object has no attribute 'output_tokens'"):
        read_with_anthropic_sdk(NO_DELTA_USAGE)


def test_a_message_delta_without_usage_is_an_error_in_the_ai_sdk() -> None:
    """Its schema rejects the event: an error part, and the stop reason it held is lost."""
    seen = read_with_ai_sdk(NO_DELTA_USAGE)
    assert seen["text"] == "Hello"
    assert [e["name"] for e in seen["errors"]] == ["AI_TypeValidationError"]
    assert "usage" in seen["errors"][0]["message"]
    assert seen["finishReason"] == "unknown"
    assert seen["usage"] == {"inputTokens": 25}
