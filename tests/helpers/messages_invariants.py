"""What a Messages stream must hold for the strictest clients (anthropic-sdk-python's
`MessageStream`, `@ai-sdk/anthropic`, Claude Code): `check_messages(data)` reads the
server-sent events and asserts every invariant, saying which event broke which."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

STOP_REASONS = ("end_turn", "max_tokens", "tool_use", "refusal", "stop_sequence", "pause_turn")
"""Anthropic's stop reasons; a writer keeps a source's other reasons as they came."""
DELTAS = {
    "text": ("text_delta", "citations_delta"),
    "thinking": ("thinking_delta", "signature_delta"),
    "redacted_thinking": (),
    "tool_use": ("input_json_delta",),
}
"""The deltas each kind of block may have."""


@dataclass
class Event:
    name: str
    data: Any
    number: int
    """Its place in the stream, from 0."""


@dataclass
class Checked:
    """What a valid stream said, for tests to look at."""

    events: list[Event]
    blocks: list[dict[str, Any]] = field(default_factory=list)
    """Each block as its events built it (input pieces joined in `partial_json`)."""
    error: dict[str, Any] | None = None
    """The error the stream ended with, if it did."""


def events_of(data: bytes) -> list[Event]:
    """The events of a server-sent-event stream: each has one `event:` line and one
    `data:` line of JSON, and ends with a blank line."""
    text = data.decode("utf-8")
    assert text.endswith("\n\n") or not text, "the stream ends with a blank line"
    events = []
    for number, block in enumerate(b for b in text.split("\n\n") if b):
        lines = block.split("\n")
        assert len(lines) == 2, f"event {number}: two lines, not {lines!r}"
        assert lines[0].startswith("event: "), f"event {number}: {lines[0]!r}"
        assert lines[1].startswith("data: "), f"event {number}: {lines[1]!r}"
        name, payload = lines[0][7:], json.loads(lines[1][6:], object_pairs_hook=_unique)
        assert isinstance(payload, dict), f"event {number}: data is an object"
        assert payload.get("type") == name, f"event {number}: type {payload.get('type')!r}"
        events.append(Event(name, payload, number))
    return events


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [key for key, _ in pairs]
    assert len(keys) == len(set(keys)), f"a key twice: {keys}"
    return dict(pairs)


def _no_null(usage: dict[str, Any], where: str) -> None:
    for key, value in usage.items():
        assert value is not None, f"{where}: usage.{key} is null (absent is unknown)"
        if key.endswith("_tokens"):
            assert isinstance(value, int) and not isinstance(value, bool), f"{where}: {key}"
            assert value >= 0, f"{where}: usage.{key} is {value}"


def check_messages(data: bytes, json_inputs: bool = True) -> Checked:
    """Assert every invariant of a Messages stream a writer wrote; return what it said.

    - `message_start` first and once (unless the stream is only an error): an id
      `msg_...`, type `message`, role `assistant`, a model, no content, no stop reason,
      usage with `input_tokens` and `output_tokens` as ints, no null count.
    - Blocks numbered 0, 1, 2... as they start; one open at a time; each delta in the
      open block and of a type its block takes; `tool_use` starts with an id, a name
      and input `{}`, its pieces are not empty and join into a JSON object (unless
      not `json_inputs`: a source whose arguments are no JSON);
      `redacted_thinking` starts with its data and has no delta; in a thinking block a
      `signature_delta` comes after every `thinking_delta`.
    - `message_delta` once, after every block stopped: a stop reason (or null) and a
      usage whose `output_tokens` is an int, no count null.
    - `message_stop` last, once, after `message_delta`.
    - Or an `error` event last (`error.type` and `error.message` strings), and no
      `message_stop`.
    """
    events = events_of(data)
    checked = Checked(events)
    assert events, "a stream has events"
    last = events[-1]
    if last.name == "error":
        error = last.data.get("error")
        assert isinstance(error, dict), f"event {last.number}: error is an object"
        assert isinstance(error.get("type"), str) and error["type"], "error.type"
        assert isinstance(error.get("message"), str), "error.message is a string"
        checked.error = error
        assert all(e.name != "message_stop" for e in events), "an error, and message_stop"
        assert all(e.name != "error" for e in events[:-1]), "one error, last"
        body = events[:-1]
    else:
        assert last.name == "message_stop", f"the last event is {last.name}"
        body = events
    if not body:
        return checked
    first = body[0]
    assert first.name == "message_start", f"the first event is {first.name}"
    _check_start(first)
    assert [e.name for e in body].count("message_start") == 1, "message_start twice"
    open_block: dict[str, Any] | None = None
    ended = False
    for event in body[1:]:
        where = f"event {event.number} ({event.name})"
        assert not ended or event.name == "message_stop", f"{where}: after message_delta"
        payload = event.data
        if event.name == "content_block_start":
            assert open_block is None, f"{where}: block {open_block and open_block['index']} open"
            assert payload["index"] == len(checked.blocks), f"{where}: index {payload['index']}"
            open_block = _check_block_start(payload["content_block"], where)
            open_block["index"] = payload["index"]
            checked.blocks.append(open_block)
        elif event.name == "content_block_delta":
            assert open_block is not None, f"{where}: no block open"
            assert payload["index"] == open_block["index"], f"{where}: index {payload['index']}"
            _check_delta(open_block, payload["delta"], where)
        elif event.name == "content_block_stop":
            assert open_block is not None, f"{where}: no block open"
            assert payload["index"] == open_block["index"], f"{where}: index {payload['index']}"
            _check_stop(open_block, where, json_inputs)
            open_block = None
        elif event.name == "message_delta":
            assert open_block is None, f"{where}: block {open_block and open_block['index']} open"
            delta, usage = payload.get("delta"), payload.get("usage")
            assert isinstance(delta, dict), f"{where}: a delta"
            reason = delta.get("stop_reason")
            assert reason is None or isinstance(reason, str), f"{where}: stop_reason"
            assert isinstance(usage, dict), f"{where}: usage is always there"
            assert isinstance(usage.get("output_tokens"), int), f"{where}: output_tokens"
            _no_null(usage, where)
            ended = True
        elif event.name == "message_stop":
            assert ended, f"{where}: message_stop before message_delta"
        else:
            raise AssertionError(f"{where}: an event a writer does not write")
    if last.name == "message_stop":
        assert ended, "message_delta came"
    return checked


def _check_start(event: Event) -> None:
    message = event.data.get("message")
    assert isinstance(message, dict), "message_start holds the message"
    assert isinstance(message.get("id"), str) and message["id"].startswith("msg_"), "id"
    assert len(message["id"]) > 4, "an id after msg_"
    assert message.get("type") == "message" and message.get("role") == "assistant"
    assert isinstance(message.get("model"), str), "model"
    assert message.get("content") == [], "content starts empty"
    assert message.get("stop_reason") is None, "no stop reason yet"
    usage = message.get("usage")
    assert isinstance(usage, dict), "message_start has usage"
    assert isinstance(usage.get("input_tokens"), int), "input_tokens"
    assert isinstance(usage.get("output_tokens"), int), "output_tokens"
    _no_null(usage, "message_start")


def _check_block_start(block: Any, where: str) -> dict[str, Any]:
    assert isinstance(block, dict), f"{where}: content_block"
    kind = block.get("type")
    assert kind in DELTAS, f"{where}: a block of type {kind!r}"
    built = {"type": kind, "deltas": []}
    if kind == "text":
        assert block.get("text") == "", f"{where}: a text block starts empty"
        built["text"] = ""
    elif kind == "thinking":
        assert block.get("thinking") == "", f"{where}: a thinking block starts empty"
        assert block.get("signature") == "", f"{where}: its signature too"
        built.update(thinking="", signature=None)
    elif kind == "redacted_thinking":
        assert isinstance(block.get("data"), str), f"{where}: redacted data"
        built["data"] = block["data"]
    else:
        assert isinstance(block.get("id"), str) and block["id"], f"{where}: a tool_use id"
        assert isinstance(block.get("name"), str), f"{where}: a tool_use name"
        assert block.get("input") == {}, f"{where}: input starts as {{}}"
        built.update(id=block["id"], name=block["name"], partial_json="")
    return built


def _check_delta(block: dict[str, Any], delta: Any, where: str) -> None:
    assert isinstance(delta, dict), f"{where}: a delta"
    kind = delta.get("type")
    assert kind in DELTAS[block["type"]], f"{where}: {kind} in a {block['type']} block"
    block["deltas"].append(kind)
    if kind == "text_delta":
        assert isinstance(delta.get("text"), str) and delta["text"], f"{where}: text"
        block["text"] += delta["text"]
    elif kind == "thinking_delta":
        assert isinstance(delta.get("thinking"), str) and delta["thinking"], where
        assert block["signature"] is None, f"{where}: thinking after the signature"
        block["thinking"] += delta["thinking"]
    elif kind == "signature_delta":
        assert isinstance(delta.get("signature"), str), f"{where}: signature"
        block["signature"] = (block["signature"] or "") + delta["signature"]
    elif kind == "input_json_delta":
        piece = delta.get("partial_json")
        assert isinstance(piece, str) and piece, f"{where}: a piece of input"
        block["partial_json"] += piece


def _check_stop(block: dict[str, Any], where: str, json_inputs: bool) -> None:
    if block["type"] == "tool_use":
        text = block["partial_json"]
        assert text, f"{where}: a tool call's input came (`{{}}` when it has none)"
        if not json_inputs:
            return
        try:
            value = json.loads(text)
        except ValueError as error:
            raise AssertionError(f"{where}: input {text!r} is no JSON: {error}") from None
        assert isinstance(value, dict), f"{where}: input {text!r} is no object"
