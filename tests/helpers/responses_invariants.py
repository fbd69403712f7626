"""What an OpenAI Responses stream must hold for the strictest clients (openai-python's
`ResponseStream`, `@ai-sdk/openai`'s Responses model): `check_responses(data)` reads the
server-sent events and asserts every invariant, saying which event broke which."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, cast

TERMINALS = {
    "response.completed": "completed",
    "response.incomplete": "incomplete",
    "response.failed": "failed",
}
"""The terminal events, with the status their response has."""
INCOMPLETE_REASONS = ("max_output_tokens", "content_filter")
PARTS = {"message": ("output_text", "refusal"), "reasoning": ("reasoning_text",)}
"""The content parts each kind of item may have."""
TEXTS = {
    # delta/done event -> (part type, key of its text in the part and the done event)
    "response.output_text": ("output_text", "text"),
    "response.refusal": ("refusal", "refusal"),
    "response.reasoning_text": ("reasoning_text", "text"),
}
STREAMED = {
    # delta/done event -> (item type, key of the streamed string in the item and done event)
    "response.function_call_arguments": ("function_call", "arguments"),
    "response.custom_tool_call_input": ("custom_tool_call", "input"),
}
ITEM_EVENTS = {
    *(f"{prefix}.{end}" for prefix in [*TEXTS, *STREAMED] for end in ("delta", "done")),
    "response.content_part.added",
    "response.content_part.done",
    "response.output_text.annotation.added",
    "response.reasoning_summary_part.added",
    "response.reasoning_summary_part.done",
    "response.reasoning_summary_text.delta",
    "response.reasoning_summary_text.done",
}
"""The events that address an item by `output_index` and `item_id`."""


@dataclass
class Event:
    name: str
    data: dict[str, Any]
    number: int
    """Its place in the stream, from 0."""


@dataclass
class Part:
    """A content part (or summary part) as its events built it."""

    type: str
    text: str = ""
    text_done: bool = False
    done: bool = False


@dataclass
class Item:
    """An output item as its events built it."""

    added: dict[str, Any]
    parts: list[Part] = field(default_factory=list[Part])
    summary: list[Part] = field(default_factory=list[Part])
    streamed: str = ""
    """Its function call arguments or custom tool input, the deltas joined."""
    streamed_done: bool = False
    done: dict[str, Any] | None = None


@dataclass
class Checked:
    """What a valid stream said, for tests to look at."""

    events: list[Event]
    items: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    """Each item as its `output_item.done` left it, in output_index order."""
    terminal: str = ""
    """"response.completed", "response.incomplete" or "response.failed"."""
    response: dict[str, Any] = field(default_factory=dict[str, Any])
    """The terminal event's response."""
    usage: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    """The data of the `error` event before `response.failed`, if there was one."""

    @property
    def count(self) -> int:
        """How many events the stream had."""
        return len(self.events)


def events_of(data: bytes) -> list[Event]:
    """The events of a server-sent-event stream: each has one `event:` line and one
    `data:` line of JSON (an object whose `type` is the event's name), and ends with a
    blank line."""
    text = data.decode("utf-8")
    assert text.endswith("\n\n") or not text, "the stream ends with a blank line"
    events: list[Event] = []
    for number, block in enumerate(b for b in text.split("\n\n") if b):
        lines = block.split("\n")
        assert len(lines) == 2, f"event {number}: two lines, not {lines!r}"
        assert lines[0].startswith("event: "), f"event {number}: no `event:` line: {lines[0]!r}"
        assert lines[1].startswith("data: "), f"event {number}: {lines[1]!r}"
        name, payload = lines[0][7:], json.loads(lines[1][6:], object_pairs_hook=_unique)
        payload = _object(payload, f"event {number}: data is an object")
        assert (
            payload.get("type") == name
        ), f"event {number}: `event: {name}` but data.type {payload.get('type')!r}"
        events.append(Event(name, payload, number))
    return events


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [key for key, _ in pairs]
    assert len(keys) == len(set(keys)), f"a key twice: {keys}"
    return dict(pairs)


def _object(value: Any, message: str) -> dict[str, Any]:
    """`value`, asserted to be a JSON object."""
    assert isinstance(value, dict), message
    return cast(dict[str, Any], value)


def _objects(value: Any, message: str) -> list[dict[str, Any]]:
    """`value`, asserted to be a list of JSON objects."""
    assert isinstance(value, list), message
    return [_object(v, message) for v in cast(Iterable[Any], value)]


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def check_responses(data: bytes) -> Checked:
    """Assert every invariant of a Responses stream a writer wrote; return what it said.

    - Each event `event: <data.type>`; `sequence_number` 0, 1, 2... in order.
    - `response.created` first, `response.in_progress` second, each with the response
      (an id, status "in_progress", output []); the same `response.id` in them and the
      terminal event.
    - Items: `output_item.added` with output_index 0, 1, 2... in order, an `id` not used
      before; a `function_call` with a `call_id` and a `name` (which may be empty). Every event about an item
      comes after its `added` and before its `output_item.done`, with its output_index
      and `item_id` equal to the added item's `id`.
    - Content parts (`content_part.added`, content_index 0, 1, ... dense, of a type the
      item takes, starting empty) come before their deltas; summary parts likewise
      (`reasoning_summary_part.added`, summary_index dense). Each `*.done` (output_text,
      refusal, reasoning_text, reasoning_summary_text, function_call_arguments,
      custom_tool_call_input) comes once and holds the joined deltas; `content_part.done`
      and `reasoning_summary_part.done` come after it, once, with the same text.
    - `output_item.done` once per item, after its parts are done, with the added item's
      id and type (a function call's `call_id` and `name` too) and the texts, arguments
      and input the deltas built.
    - Exactly one terminal event (`response.completed`, `.incomplete`, `.failed`), last,
      after every added item is done, but for `response.failed`: the items an error cut
      off are never done (Codex keeps every item done, whatever its status, and sends it
      back on its retry); an `error` event may come only right before
      `response.failed`. Its response has the status of its type, `output` equal to the
      done items in output_index order, and usage with integer `input_tokens`,
      `output_tokens`, and `input_tokens_details.cached_tokens`,
      `output_tokens_details.reasoning_tokens` (a failed response may have null usage);
      an incomplete one has `incomplete_details.reason` in max_output_tokens,
      content_filter.
    """
    events = events_of(data)
    checked = Checked(events)
    assert len(events) >= 3, "a stream has created, in_progress and a terminal event"
    for event in events:
        number = event.data.get("sequence_number")
        assert (
            number == event.number
        ), f"event {event.number} ({event.name}): sequence_number {number!r}, not {event.number}"
    first, second = events[0], events[1]
    assert first.name == "response.created", f"event 0: response.created first, not {first.name}"
    assert (
        second.name == "response.in_progress"
    ), f"event 1: response.in_progress second, not {second.name}"
    response_id = _check_lifecycle(first)
    assert _check_lifecycle(second) == response_id, f"event 1: response.id {response_id!r} changed"
    terminals = [e for e in events if e.name in TERMINALS]
    assert len(terminals) == 1, f"one terminal event, not {[e.name for e in terminals]}"
    [terminal] = terminals
    assert (
        terminal is events[-1]
    ), f"event {terminal.number} ({terminal.name}): the terminal is last"
    items: list[Item] = []
    for event in events[2:-1]:
        where = f"event {event.number} ({event.name})"
        if event.name == "response.output_item.added":
            _check_added(items, event.data, where)
        elif event.name == "response.output_item.done":
            _check_done(items, event.data, where)
        elif event.name in ITEM_EVENTS:
            _check_item_event(items, event, where)
        elif event.name == "error":
            assert (
                event.number == terminal.number - 1 and terminal.name == "response.failed"
            ), f"{where}: an error event only right before response.failed"
            _check_error(event.data, where)
            checked.error = event.data
        else:
            raise AssertionError(f"{where}: an event a writer does not write here")
    where = f"event {terminal.number} ({terminal.name})"
    for index, item in enumerate(items):
        assert (
            item.done is not None or terminal.name == "response.failed"
        ), f"{where}: item {index} added but not done before the terminal"
    response = _object(terminal.data.get("response"), f"{where}: a response")
    assert (
        response.get("id") == response_id
    ), f"{where}: response.id {response.get('id')!r}, not {response_id!r} as created"
    status = TERMINALS[terminal.name]
    assert response.get("status") == status, f"{where}: status {response.get('status')!r}"
    checked.items = [item.done for item in items if item.done is not None]
    assert (
        response.get("output") == checked.items
    ), f"{where}: the terminal response.output is not the done items in output_index order"
    _check_terminal(response, terminal.name, where)
    checked.terminal, checked.response = terminal.name, response
    checked.usage = response.get("usage")
    return checked


def _check_lifecycle(event: Event) -> str:
    where = f"event {event.number} ({event.name})"
    response = _object(event.data.get("response"), f"{where}: a response")
    response_id = response.get("id")
    assert isinstance(response_id, str) and response_id, f"{where}: a response.id"
    assert response.get("status") == "in_progress", f"{where}: status {response.get('status')!r}"
    assert response.get("output") == [], f"{where}: output starts empty"
    return response_id


def _check_added(items: list[Item], data: dict[str, Any], where: str) -> None:
    index = data.get("output_index")
    assert index == len(
        items
    ), f"{where}: output_index {index!r}, not {len(items)} (dense, in order of added)"
    item = _object(data.get("item"), f"{where}: an item")
    item_id, kind = item.get("id"), item.get("type")
    assert isinstance(item_id, str) and item_id, f"{where}: an item id"
    assert isinstance(kind, str), f"{where}: an item type"
    assert all(i.added["id"] != item_id for i in items), f"{where}: item id {item_id!r} twice"
    if kind == "function_call":
        # A name may be empty: a source's call that was never named (a stream cut
        # before the call's first chunk) has none to give.
        assert isinstance(item.get("name"), str), f"{where}: a function_call name"
        call_id = item.get("call_id")
        assert isinstance(call_id, str) and call_id, f"{where}: a function_call call_id"
    if kind == "message":
        assert item.get("content") == [], f"{where}: a message starts with no content"
    if kind == "reasoning":
        assert item.get("summary") == [], f"{where}: a reasoning item starts with no summary"
    items.append(Item(item))


def _item_of(items: list[Item], data: dict[str, Any], where: str) -> Item:
    index = data.get("output_index")
    assert isinstance(index, int) and 0 <= index < len(
        items
    ), f"{where}: output_index {index!r} before its output_item.added"
    item = items[index]
    assert item.done is None, f"{where}: item {index} after its output_item.done"
    return item


def _check_item_event(items: list[Item], event: Event, where: str) -> None:
    data, name = event.data, event.name
    item = _item_of(items, data, where)
    kind = item.added["type"]
    assert (
        data.get("item_id") == item.added["id"]
    ), f"{where}: item_id {data.get('item_id')!r}, not the added item's id {item.added['id']!r}"
    prefix, _, end = name.rpartition(".")
    if name == "response.content_part.added":
        new = _object(data.get("part"), f"{where}: a part")
        assert data.get("content_index") == len(
            item.parts
        ), f"{where}: content_index {data.get('content_index')!r}, not {len(item.parts)} (dense)"
        assert new.get("type") in PARTS.get(kind, ()), f"{where}: a {new.get('type')} in a {kind}"
        key = "refusal" if new["type"] == "refusal" else "text"
        assert new.get(key) == "", f"{where}: a part starts empty"
        item.parts.append(Part(new["type"]))
    elif name == "response.content_part.done":
        part = _part_of(item.parts, data.get("content_index"), "content_index", where)
        assert part.text_done, f"{where}: content_part.done before its {part.type} done event"
        key = "refusal" if part.type == "refusal" else "text"
        expected = {"type": part.type, key: part.text}
        got = _object(data.get("part"), f"{where}: a part")
        assert {
            k: got.get(k) for k in expected
        } == expected, (
            f"{where}: content_part.done part {got!r} is not the joined deltas {part.text!r}"
        )
        part.done = True
    elif prefix in TEXTS:
        part_type, key = TEXTS[prefix]
        part = _part_of(item.parts, data.get("content_index"), "content_index", where)
        assert part.type == part_type, f"{where}: into a {part.type} part"
        _text_event(part, data, end, key, where)
    elif name == "response.output_text.annotation.added":
        part = _part_of(item.parts, data.get("content_index"), "content_index", where)
        assert part.type == "output_text", f"{where}: into a {part.type} part"
    elif name == "response.reasoning_summary_part.added":
        assert kind == "reasoning", f"{where}: a summary part in a {kind}"
        assert data.get("summary_index") == len(
            item.summary
        ), f"{where}: summary_index {data.get('summary_index')!r}, not {len(item.summary)} (dense)"
        new = _object(data.get("part"), f"{where}: a part")
        assert new.get("type") == "summary_text", f"{where}: a {new.get('type')} summary part"
        assert new.get("text") == "", f"{where}: a summary part starts empty"
        item.summary.append(Part("summary_text"))
    elif name == "response.reasoning_summary_part.done":
        part = _part_of(item.summary, data.get("summary_index"), "summary_index", where)
        assert part.text_done, f"{where}: summary part done before its text done"
        got = _object(data.get("part"), f"{where}: a part")
        assert (
            got.get("text") == part.text
        ), f"{where}: reasoning_summary_part.done text is not the joined deltas {part.text!r}"
        part.done = True
    elif prefix == "response.reasoning_summary_text":
        part = _part_of(item.summary, data.get("summary_index"), "summary_index", where)
        _text_event(part, data, end, "text", where)
    else:
        item_type, key = STREAMED[prefix]
        assert kind == item_type, f"{where}: into a {kind} item"
        assert not item.streamed_done, f"{where}: after {prefix}.done"
        if end == "delta":
            assert isinstance(data.get("delta"), str), f"{where}: a delta"
            item.streamed += data["delta"]
        else:
            assert (
                data.get(key) == item.streamed
            ), f"{where}: {key} {data.get(key)!r} is not the joined deltas {item.streamed!r}"
            item.streamed_done = True


def _part_of(parts: list[Part], index: Any, name: str, where: str) -> Part:
    assert isinstance(index, int) and 0 <= index < len(
        parts
    ), f"{where}: {name} {index!r} before its part was added"
    part = parts[index]
    assert not part.done, f"{where}: {name} {index} after its part was done"
    return part


def _text_event(part: Part, data: dict[str, Any], end: str, key: str, where: str) -> None:
    assert not part.text_done, f"{where}: after the part's text was done"
    if end == "delta":
        assert isinstance(data.get("delta"), str), f"{where}: a delta"
        part.text += data["delta"]
    else:
        assert (
            data.get(key) == part.text
        ), f"{where}: {key} {data.get(key)!r} is not the joined deltas {part.text!r}"
        part.text_done = True


def _check_done(items: list[Item], data: dict[str, Any], where: str) -> None:
    item = _item_of(items, data, where)
    done = _object(data.get("item"), f"{where}: an item")
    added = item.added
    for key in ("id", "type"):
        assert (
            done.get(key) == added[key]
        ), f"{where}: {key} {done.get(key)!r}, added {added[key]!r}"
    kind = added["type"]
    if kind == "function_call":
        for key in ("call_id", "name"):
            assert (
                done.get(key) == added[key]
            ), f"{where}: function_call {key} {done.get(key)!r}, added {added[key]!r}"
    if kind in ("function_call", "custom_tool_call"):
        key = STREAMED[
            (
                "response.function_call_arguments"
                if kind == "function_call"
                else "response.custom_tool_call_input"
            )
        ][1]
        assert item.streamed_done, f"{where}: output_item.done before the {key} done event"
        assert (
            done.get(key) == item.streamed
        ), f"{where}: {key} {done.get(key)!r} is not the joined deltas {item.streamed!r}"
    for part in item.parts:
        assert part.done, f"{where}: output_item.done before content_part.done"
    for part in item.summary:
        assert part.done, f"{where}: output_item.done before reasoning_summary_part.done"
    if kind == "message":
        content = _objects(done.get("content"), f"{where}: content")
        got = [
            (p.get("type"), p.get("refusal" if p.get("type") == "refusal" else "text"))
            for p in content
        ]
        assert got == [
            (p.type, p.text) for p in item.parts
        ], f"{where}: message content {got!r} is not its parts' joined deltas"
    if kind == "reasoning":
        summary = [p.get("text") for p in _objects(done.get("summary"), f"{where}: summary")]
        assert summary == [
            p.text for p in item.summary
        ], f"{where}: reasoning summary {summary!r} is not its summary deltas"
        texts = [p.get("text") for p in _objects(done.get("content", []), f"{where}: content")]
        assert texts == [
            p.text for p in item.parts
        ], f"{where}: reasoning content {texts!r} is not its reasoning_text deltas"
    item.done = done


def _check_error(data: dict[str, Any], where: str) -> None:
    # Documented flat (`code`, `message`: openai-python's ResponseErrorEvent), sent nested
    # by the API (`error: {type, code, message, param}`: what @ai-sdk/openai reads).
    error = _object(data.get("error", data), f"{where}: error is an object")
    assert isinstance(error.get("message"), str), f"{where}: an error message"


def _check_terminal(response: dict[str, Any], name: str, where: str) -> None:
    usage = response.get("usage")
    if not (usage is None and name == "response.failed"):
        usage = _object(usage, f"{where}: usage on the terminal response")
        for key in ("input_tokens", "output_tokens"):
            assert _count(usage.get(key)), f"{where}: usage.{key} {usage.get(key)!r}"
        for outer, key in (
            ("input_tokens_details", "cached_tokens"),
            ("output_tokens_details", "reasoning_tokens"),
        ):
            inner = _object(usage.get(outer), f"{where}: usage.{outer}")
            assert _count(inner.get(key)), f"{where}: usage.{outer}.{key} {inner.get(key)!r}"
        if "total_tokens" in usage:
            total = usage["input_tokens"] + usage["output_tokens"]
            assert usage["total_tokens"] == total, f"{where}: usage.total_tokens"
    if name == "response.incomplete":
        details = _object(response.get("incomplete_details"), f"{where}: incomplete_details")
        assert (
            details.get("reason") in INCOMPLETE_REASONS
        ), f"{where}: incomplete_details.reason {details.get('reason')!r}"
    else:
        got = response.get("incomplete_details")
        assert got is None, f"{where}: incomplete_details {got!r}"
    if name == "response.failed":
        error = _object(response.get("error"), f"{where}: a failed response has its error")
        assert isinstance(error.get("message"), str), f"{where}: response.error.message"
