"""What the agents carry back, through the bridges: a Gemini thought signature rides a
Messages thinking block's `signature` (Claude Code sends thinking blocks back) and a
Responses reasoning item's `encrypted_content` (Codex asks for
`reasoning.encrypted_content` and sends reasoning items back), marked with its scheme,
and `to_request` puts it back on the call that carried it; and a failed attempt's output
is never written as done, nor merged into its retry's.

The streams are chat streams in Gemini's documented shape
(ai.google.dev/gemini-api/docs/thought-signatures, "OpenAI compatibility": the signature
in `tool_calls[].extra_content.google.thought_signature`), written by our writers, read
back by our accumulators in every target and by anthropic-sdk-python and openai-python,
and sent back as the agents send them."""

from __future__ import annotations

import importlib
import json
import warnings
from types import ModuleType
from typing import Any

import anthropic
import openai
import pytest

from generator.render.targets import TARGETS as REGISTRY
from tests.helpers.messages_judges import read_with_anthropic_sdk
from tests.helpers.responses_judges import read_with_openai_sdk

CHAT = {name: importlib.import_module(f"generated.{name}.chat") for name in REGISTRY}
PROTOCOLS = {
    "messages": {name: importlib.import_module(f"generated.{name}.messages") for name in REGISTRY},
    "responses": {
        name: importlib.import_module(f"generated.{name}.responses") for name in REGISTRY
    },
}
HEAD = {"id": "chatcmpl-g1", "object": "chat.completion.chunk", "created": 1, "model": "gemini-3"}
SIGNATURES = {"call_paris": "CiQBjz1rX2Sig/A+==", "call_london": "CiQBjz1rX2Sig/B+=="}
"""Thought signatures as Gemini sends them: base64."""
QUESTION = "Weather in Paris and London?"
RESULTS = {"call_paris": "sunny", "call_london": "rain"}


def sse(chunk: dict[str, Any]) -> str:
    return f"data: {json.dumps(chunk)}\n\n"


def delta(fields: dict[str, Any], finish: str | None = None) -> str:
    return sse({**HEAD, "choices": [{"index": 0, "delta": fields, "finish_reason": finish}]})


def gemini_stream(*, reasoning: str = "", each: bool = True) -> bytes:
    """Two parallel calls, each with its own signature (`each`; else the first only, as
    Gemini signs a step's first call), in its first chunk with the call's id and name;
    the arguments split across chunks; usage in the last chunk."""
    out = [delta({"role": "assistant", "content": None})]
    if reasoning:
        out.append(delta({"reasoning_content": reasoning}))
    for index, (ident, city) in enumerate((("call_paris", "Paris"), ("call_london", "London"))):
        first: dict[str, Any] = {
            "index": index,
            "id": ident,
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city": '},
        }
        if each or index == 0:
            first["extra_content"] = {"google": {"thought_signature": SIGNATURES[ident]}}
        out.append(delta({"tool_calls": [first]}))
        rest = {"index": index, "function": {"arguments": f'"{city}"}}'}}
        out.append(delta({"tool_calls": [rest]}))
    out.append(delta({}, "tool_calls"))
    usage = {"prompt_tokens": 20, "completion_tokens": 9, "total_tokens": 29}
    out.append(sse({**HEAD, "choices": [], "usage": usage}))
    return ("".join(out) + "data: [DONE]\n\n").encode()


def bridged(body: bytes, protocol: str, target: str = "msgspec") -> bytes:
    chat = CHAT[target]
    return b"".join(chat.write_parts(chat.iter_parts(body), protocol=protocol))


def accumulated(module: ModuleType, protocol: str, body: bytes) -> Any:
    accumulator = (
        module.MessageAccumulator() if protocol == "messages" else module.ResponseAccumulator()
    )
    for event in module.iter_events(body):
        accumulator.add(event)
    return accumulator


def next_request(protocol: str, assistant: list[dict[str, Any]]) -> dict[str, Any]:
    """The agent's next request: the question, the assistant's turn as it sends it back,
    and the results of both calls."""
    if protocol == "messages":
        results = [
            {"type": "tool_result", "tool_use_id": ident, "content": text}
            for ident, text in RESULTS.items()
        ]
        return {
            "model": "gemini-3",
            "max_tokens": 1024,
            "messages": [
                {"role": "user", "content": QUESTION},
                *assistant,
                {"role": "user", "content": results},
            ],
        }
    outputs = [
        {"type": "function_call_output", "call_id": ident, "output": text}
        for ident, text in RESULTS.items()
    ]
    return {
        "model": "gemini-3",
        "include": ["reasoning.encrypted_content"],
        "input": [{"role": "user", "content": QUESTION}, *assistant, *outputs],
    }


def converted(
    module: ModuleType, request: dict[str, Any], protocol: str, dialect: str | None = None
) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """`to_request` and what its warnings said was left out."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = module.to_request(request, protocol=protocol, dialect=dialect)
    said = [d for w in caught for d in getattr(w.message, "dropped", ())]
    return out, said


def assistant_of(chat: dict[str, Any]) -> dict[str, Any]:
    [assistant] = [m for m in chat["messages"] if m["role"] == "assistant"]
    assert isinstance(assistant, dict)
    return assistant


def signed_calls(assistant: dict[str, Any], where: str) -> dict[str, Any]:
    return {
        call["id"]: (call.get("extra_content") or {}).get(where, {}).get("thought_signature")
        for call in assistant["tool_calls"]
    }


def codex_sends(item: dict[str, Any]) -> dict[str, Any]:
    """An output item as Codex sends it back (codex-rs/protocol/src/models.rs,
    `ResponseItem`): the keys it keeps, without `id` or `status`."""
    keep = {
        "reasoning": ("type", "summary", "content", "encrypted_content"),
        "function_call": ("type", "name", "arguments", "call_id"),
        "message": ("type", "role", "content"),
    }[item["type"]]
    return {k: item[k] for k in keep if item.get(k) is not None}


# --- 1. the thought signature ---------------------------------------------------------


@pytest.mark.parametrize("target", list(REGISTRY))
@pytest.mark.parametrize("protocol", ["messages", "responses"])
def test_a_thought_signature_goes_back_on_its_call_through_either_protocol(
    protocol: str, target: str
) -> None:
    module = PROTOCOLS[protocol][target]
    body = bridged(gemini_stream(), protocol, target)
    turn = accumulated(module, protocol, body)
    assistant = CHAT[target].assistant_message(turn, protocol=protocol)
    request = next_request(protocol, assistant)
    for dialect, where in (("gemini", "google"), ("vertex", "vertex")):
        chat, said = converted(module, request, "chat", dialect)
        message = assistant_of(chat)
        assert signed_calls(message, where) == SIGNATURES, dialect
        assert [m["role"] for m in chat["messages"]] == ["user", "assistant", "tool", "tool"]
        assert "chunkspec:" not in json.dumps(chat)
        assert not [d for d in said if "signature" in d[0]], said
    deepseek, said = converted(module, request, "chat", "deepseek")
    assert "extra_content" not in json.dumps(deepseek)
    assert "chunkspec:" not in json.dumps(deepseek)
    assert {d[0] for d in said} >= {
        "the signature on call 'call_paris'",
        "the signature on call 'call_london'",
    }, said


@pytest.mark.parametrize("protocol", ["messages", "responses"])
def test_the_signature_is_marked_right_before_its_call_and_reasoning_stays_apart(
    protocol: str,
) -> None:
    """The carrier block or item holds only the signature, marked `chunkspec:gemini:`,
    right before its call; the reasoning before the calls stays in its own."""
    body = bridged(gemini_stream(reasoning="Two cities: two calls."), protocol)
    module = PROTOCOLS[protocol]["dataclasses"]
    result = accumulated(module, protocol, body).result()
    if protocol == "messages":
        blocks = [json.loads(module.dumps(block)) for block in result.content]
        shapes = [(b["type"], b.get("thinking"), b.get("signature", b.get("id"))) for b in blocks]
        assert shapes == [
            ("thinking", "Two cities: two calls.", ""),
            ("thinking", "", "chunkspec:gemini:" + SIGNATURES["call_paris"]),
            ("tool_use", None, "call_paris"),
            ("thinking", "", "chunkspec:gemini:" + SIGNATURES["call_london"]),
            ("tool_use", None, "call_london"),
        ]
    else:
        items = [json.loads(module.dumps(item)) for item in result.output]
        shapes = [
            (
                i["type"],
                [s["text"] for s in i.get("summary", [])],
                i.get("encrypted_content") or i.get("call_id"),
            )
            for i in items
        ]
        assert shapes == [
            ("reasoning", ["Two cities: two calls."], None),
            ("reasoning", [], "chunkspec:gemini:" + SIGNATURES["call_paris"]),
            ("function_call", [], "call_paris"),
            ("reasoning", [], "chunkspec:gemini:" + SIGNATURES["call_london"]),
            ("function_call", [], "call_london"),
        ]
    # Back to a reasoning dialect: the text alone, as reasoning; the signatures said.
    chat = CHAT["dataclasses"]
    turn = accumulated(module, protocol, body)
    [deepseek] = chat.assistant_message(turn, protocol="chat", dialect="deepseek")
    assert deepseek["reasoning_content"] == "Two cities: two calls."
    [gemini] = chat.assistant_message(turn, protocol="chat", dialect="gemini")
    assert signed_calls(gemini, "google") == SIGNATURES


def test_claude_code_sends_back_what_anthropic_sdk_read_and_the_signatures_return() -> None:
    """anthropic-sdk-python's `MessageStream` reads the carrier blocks as thinking blocks
    with their signature; sent back as it read them (as Claude Code does), each
    signature goes back on its call."""
    body = bridged(gemini_stream(reasoning="Two cities."), "messages")
    message = read_with_anthropic_sdk(body)["message"]
    kinds = [(b["type"], b.get("signature")) for b in message["content"]]
    assert kinds == [
        ("thinking", ""),
        ("thinking", "chunkspec:gemini:" + SIGNATURES["call_paris"]),
        ("tool_use", None),
        ("thinking", "chunkspec:gemini:" + SIGNATURES["call_london"]),
        ("tool_use", None),
    ]
    assistant = [{"role": "assistant", "content": message["content"]}]
    request = next_request("messages", assistant)
    module = PROTOCOLS["messages"]["pydantic"]
    chat, _ = converted(module, request, "chat", "gemini")
    assert signed_calls(assistant_of(chat), "google") == SIGNATURES
    chat, said = converted(module, request, "chat", "deepseek")
    assert assistant_of(chat)["reasoning_content"] == "Two cities."
    assert ("the signature on call 'call_paris'", "deepseek takes none") in said


def test_codex_sends_back_what_openai_sdk_read_and_the_signatures_return() -> None:
    """openai-python reads the carrier items as reasoning items with
    `encrypted_content`; sent back as Codex sends its items (no id, no status), each
    signature goes back on its call."""
    body = bridged(gemini_stream(reasoning="Two cities."), "responses")
    output = read_with_openai_sdk(body)["response"]["output"]
    carried = [i.get("encrypted_content") for i in output if i["type"] == "reasoning"]
    assert carried == [None] + ["chunkspec:gemini:" + s for s in SIGNATURES.values()]
    request = next_request("responses", [codex_sends(item) for item in output])
    module = PROTOCOLS["responses"]["typeddicts"]
    chat, _ = converted(module, request, "chat", "gemini")
    assert signed_calls(assistant_of(chat), "google") == SIGNATURES
    chat, said = converted(module, request, "chat", "vertex")
    assert signed_calls(assistant_of(chat), "vertex") == SIGNATURES
    chat, said = converted(module, request, "chat", "deepseek")
    assert assistant_of(chat)["reasoning_content"] == "Two cities."
    assert ("the signature on call 'call_london'", "deepseek takes none") in said


def test_a_signature_on_the_first_call_only_stays_there() -> None:
    """Gemini signs a step's first call: the second gets none back (Gemini's rule is
    the first call's)."""
    for protocol in ("messages", "responses"):
        module = PROTOCOLS[protocol]["msgspec"]
        turn = accumulated(module, protocol, bridged(gemini_stream(each=False), protocol))
        request = next_request(protocol, CHAT["msgspec"].assistant_message(turn, protocol=protocol))
        chat, _ = converted(module, request, "chat", "gemini")
        assert signed_calls(assistant_of(chat), "google") == {
            "call_paris": SIGNATURES["call_paris"],
            "call_london": None,
        }, protocol


def test_a_carried_signature_never_reaches_anthropic_or_openai_as_theirs() -> None:
    """To a Messages or Responses server (the same protocol, or across), a carried
    signature is left out, and said; an Anthropic signature stays."""
    messages_turn = accumulated(
        PROTOCOLS["messages"]["msgspec"], "messages", bridged(gemini_stream(), "messages")
    )
    assistant = CHAT["msgspec"].assistant_message(messages_turn, protocol="messages")
    ours = {"type": "thinking", "thinking": "Hm.", "signature": "EqQBCkYIBxgC"}
    assistant[0]["content"].insert(0, ours)
    request = next_request("messages", assistant)
    messages = PROTOCOLS["messages"]["msgspec"]
    same, said = converted(messages, request, "messages")
    blocks = same["messages"][1]["content"]
    assert [b["type"] for b in blocks] == ["thinking", "tool_use", "tool_use"]
    assert blocks[0] == ours
    assert said.count(
        ("a signature carried in a thinking for a call",
         "made by gemini: a server of the same protocol would refuse it")
    ) == 1  # fmt: skip
    assert "chunkspec:" not in json.dumps(same)
    responses, said = converted(messages, request, "responses")
    assert "chunkspec:" not in json.dumps(responses)
    assert (
        "the signature on call 'call_paris'",
        "made by gemini: Responses would refuse it",
    ) in said

    responses_turn = accumulated(
        PROTOCOLS["responses"]["msgspec"], "responses", bridged(gemini_stream(), "responses")
    )
    items = CHAT["msgspec"].assistant_message(responses_turn, protocol="responses")
    request = next_request("responses", [codex_sends(i) for i in items])
    module = PROTOCOLS["responses"]["msgspec"]
    same, said = converted(module, request, "responses")
    assert [i.get("type") for i in same["input"]] == [
        None, "function_call", "function_call", "function_call_output", "function_call_output"
    ]  # fmt: skip
    assert len([d for d in said if d[0].startswith("a signature carried")]) == 1
    back, said = converted(module, request, "messages")
    assert "chunkspec:" not in json.dumps(back)
    assert (
        "the signature on call 'call_paris'",
        "made by gemini: Messages would refuse it",
    ) in said


def test_a_signature_after_its_call_began_is_said_not_misplaced() -> None:
    """A signature on a later chunk of a call (a proxy that moves it) can no longer go
    before the call: left out, and said, never bound to the next call."""
    ident = "call_paris"
    body = "".join(
        [
            delta({"role": "assistant", "tool_calls": [{
                "index": 0, "id": ident, "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": '}}]}),
            delta({"tool_calls": [{
                "index": 0, "function": {"arguments": '"Paris"}'},
                "extra_content": {"google": {"thought_signature": SIGNATURES[ident]}}}]}),
            delta({}, "tool_calls"),
            "data: [DONE]\n\n",
        ]
    ).encode()  # fmt: skip
    chat = CHAT["dataclasses"]
    for protocol, loss in (
        ("messages", chat.MessagesLossWarning),
        ("responses", chat.ResponsesLossWarning),
    ):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            written = b"".join(chat.write_parts(chat.iter_parts(body), protocol=protocol))
        assert [w.category for w in caught] == [loss], protocol
        assert "signature" in str(caught[0].message)
        assert b"chunkspec:" not in written


# --- 2. a failed attempt, then its retry ---------------------------------------------


def failed_stream(reasoning: str, text: str = "") -> bytes:
    """A stream that reasons (and says `text`), then fails mid-way with an error chunk."""
    out = [delta({"role": "assistant", "reasoning_content": reasoning})]
    if text:
        out.append(delta({"content": text}))
    error = {"error": {"message": "upstream overloaded", "type": "server_error", "code": 500}}
    out.append(sse(error))
    return "".join(out).encode()


def retry_stream() -> bytes:
    call = {
        "index": 0,
        "id": "call_marker",
        "type": "function",
        "function": {"name": "exec_command", "arguments": '{"cmd": "echo marker"}'},
    }
    return "".join(
        [
            delta({"role": "assistant", "reasoning_content": "The user wants a marker."}),
            delta({"tool_calls": [call]}, "tool_calls"),
            "data: [DONE]\n\n",
        ]
    ).encode()


def events(body: bytes) -> list[dict[str, Any]]:
    """The data of each event of a body our writers wrote."""
    return [
        json.loads(block.split(b"data: ", 1)[1])
        for block in body.split(b"\n\n")
        if b"data: " in block
    ]


def codex_records(body: bytes) -> list[dict[str, Any]]:
    """The items Codex keeps from a stream, failed or not: every `output_item.done`'s
    item, as it comes (codex-rs/codex-api/src/sse/responses.rs; recorded at once by
    codex-rs/core/src/stream_events_utils.rs), sent back as Codex sends items."""
    return [
        codex_sends(e["item"]) for e in events(body) if e["type"] == "response.output_item.done"
    ]


def test_a_failed_responses_stream_never_does_the_items_the_error_cut_off() -> None:
    body = bridged(failed_stream("The user wants a"), "responses")
    seen = events(body)
    assert [e["type"] for e in seen][-2:] == ["error", "response.failed"]
    assert [e["type"] for e in seen if e["type"].startswith("response.output_item")] == [
        "response.output_item.added"
    ]
    assert seen[-1]["response"]["output"] == []
    assert codex_records(body) == []
    with pytest.raises(openai.APIError, match="upstream overloaded"):
        read_with_openai_sdk(body)


def test_codex_retry_after_a_failed_stream_sends_only_the_retry_reasoning() -> None:
    """Codex after an error mid-stream: it retries the request with what it recorded
    of the failed attempt, then sends the retry's items with the call's output. The
    failed attempt leaves nothing, and DeepSeek gets the retry's reasoning alone."""
    attempt = codex_records(bridged(failed_stream("The user wants a"), "responses"))
    retry = codex_records(bridged(retry_stream(), "responses"))
    user = {"role": "user", "content": [{"type": "input_text", "text": "Echo marker."}]}
    output = {"type": "function_call_output", "call_id": "call_marker", "output": "marker"}
    module = PROTOCOLS["responses"]["msgspec"]
    again, said = converted(module, {"model": "m", "input": [user, *attempt]}, "chat", "deepseek")
    assert [m["role"] for m in again["messages"]] == ["user"]
    request = {"model": "m", "input": [user, *attempt, *retry, output]}
    chat, said = converted(module, request, "chat", "deepseek")
    assert assistant_of(chat)["reasoning_content"] == "The user wants a marker."
    assert said == []


def test_a_failed_attempts_incomplete_items_are_left_out_and_said() -> None:
    """The items a client kept with their status (as the Responses writer did them
    before: "incomplete"), then the retry's: the incomplete ones, and the output of an
    incomplete call, are left out and said; an incomplete answer the user went on from
    stays."""
    user = {"role": "user", "content": "Echo marker."}
    failed = [
        {"type": "reasoning", "id": "rs_1", "summary": [
            {"type": "summary_text", "text": "The user wants a"}], "status": "incomplete"},
        {"type": "function_call", "id": "fc_1", "call_id": "call_cut", "name": "exec_command",
         "arguments": '{"cmd": "ec', "status": "incomplete"},
        {"type": "function_call_output", "call_id": "call_cut", "output": "bad arguments"},
    ]  # fmt: skip
    retry = [
        {"type": "reasoning", "id": "rs_2", "summary": [
            {"type": "summary_text", "text": "The user wants a marker."}], "status": "completed"},
        {"type": "function_call", "id": "fc_2", "call_id": "call_marker", "name": "exec_command",
         "arguments": '{"cmd": "echo marker"}', "status": "completed"},
        {"type": "function_call_output", "call_id": "call_marker", "output": "marker"},
    ]  # fmt: skip
    module = PROTOCOLS["responses"]["pydantic"]
    chat, said = converted(
        module, {"model": "m", "input": [user, *failed, *retry]}, "chat", "deepseek"
    )
    assert [m["role"] for m in chat["messages"]] == ["user", "assistant", "tool"]
    assistant = assistant_of(chat)
    assert assistant["reasoning_content"] == "The user wants a marker."
    assert [c["id"] for c in assistant["tool_calls"]] == ["call_marker"]
    assert [d[0] for d in said] == [
        "an incomplete reasoning item 'rs_1'",
        "an incomplete function_call item 'fc_1'",
        "the output of call 'call_cut'",
    ]
    cut_answer = {"type": "message", "role": "assistant", "status": "incomplete",
                  "content": [{"type": "output_text", "text": "Once upon a"}]}  # fmt: skip
    went_on = {"model": "m", "input": [user, cut_answer, {"role": "user", "content": "Go on."}]}
    chat, said = converted(module, went_on, "chat", "deepseek")
    assert [m.get("content") for m in chat["messages"]] == ["Echo marker.", "Once upon a", "Go on."]
    assert said == []


def test_reasoning_a_failed_attempt_completed_stays_apart_from_the_retry() -> None:
    """A stream that failed after its reasoning item was done (in its answer): Codex
    kept that item, without a status. Its retry's request ends with it (left out, said);
    the next request holds both reasoning items in a row: kept apart, never run
    together."""
    attempt = codex_records(bridged(failed_stream("The user wants a", "Sure"), "responses"))
    assert [i["type"] for i in attempt] == ["reasoning"]
    retry = codex_records(bridged(retry_stream(), "responses"))
    user = {"role": "user", "content": "Echo marker."}
    output = {"type": "function_call_output", "call_id": "call_marker", "output": "marker"}
    module = PROTOCOLS["responses"]["dataclasses"]
    again, said = converted(module, {"model": "m", "input": [user, *attempt]}, "chat", "deepseek")
    assert [m["role"] for m in again["messages"]] == ["user"]
    assert [d[1] for d in said] == ["a failed attempt's: no message or call follows it"]
    chat, _ = converted(
        module, {"model": "m", "input": [user, *attempt, *retry, output]}, "chat", "deepseek"
    )
    assert assistant_of(chat)["reasoning_content"] == "The user wants a\n\nThe user wants a marker."


def test_a_failed_messages_stream_ends_in_an_error_and_anthropic_sdk_keeps_nothing() -> None:
    """The Messages writer ends a failed stream with an `error` event, never
    `message_stop`: anthropic-sdk-python raises (and Claude Code, which reads the same
    way, retries the whole request, keeping nothing of the failed attempt)."""
    body = bridged(failed_stream("The user wants a"), "messages")
    names = [e["type"] for e in events(body)]
    assert names[-1] == "error" and "message_stop" not in names
    with pytest.raises(anthropic.APIStatusError, match="upstream overloaded"):
        read_with_anthropic_sdk(body)
