"""Responses events added up into the final Response, as JSON data, the way
openai-python's `ResponseStreamState` (lib/streaming/responses/_responses.py) builds it,
and tolerant where it raises."""

# Private names are shared between these files and used by the generated code.
# pyright: reportPrivateUsage=false, reportUnusedFunction=false, reportUnusedClass=false

from __future__ import annotations

import copy
from bisect import bisect_left
from typing import Any, Final, cast

from ..parts import Summary, _summary_of_parts
from ..reading import _not_json_event
from .reader import _paired_output, _ResponsesReader

_RESPONSES_LIFECYCLE: Final = frozenset(
    (
        "response.created",
        "response.in_progress",
        "response.queued",
        "response.completed",
        "response.incomplete",
        "response.failed",
    )
)
_RESPONSES_FINAL: Final = frozenset(
    ("response.completed", "response.incomplete", "response.failed")
)

_RESPONSES_TEXTS: Final = {
    # event type: (the list in the item, the key numbering it, the text's key)
    "response.output_text": ("content", "content_index", "text"),
    "response.refusal": ("content", "content_index", "refusal"),
    "response.reasoning_summary_text": ("summary", "summary_index", "text"),
    "response.reasoning_text": ("content", "content_index", "text"),
    "response.reasoning": ("content", "content_index", "text"),
}
"""The texts deltas are appended to and done events say whole: where each is in its
item (a part of the item's `content` or `summary`, by number) and under which key."""

_RESPONSES_PART_TYPES: Final = {
    "response.output_text": "output_text",
    "response.refusal": "refusal",
    "response.reasoning_summary_text": "summary_text",
    "response.reasoning_text": "reasoning_text",
    "response.reasoning": "reasoning_text",
}
"""The type of a part a delta makes when its part was never added."""

_RESPONSES_ARGUMENTS: Final = {
    "response.function_call_arguments": "arguments",
    "response.custom_tool_call_input": "input",
}
"""The events of a call's arguments, and the key of the item that holds them."""


def _responses_empty() -> dict[str, Any]:
    """The response of a stream that said nothing yet."""
    return {"object": "response", "output": []}


class _ResponsesAccumulator:
    """Adds the events of one Responses stream (JSON data) into its Response, as
    openai-python does: the lifecycle events (`created`, `in_progress`, ...) give the
    response; items are put in the order of their `output_index`, parts in the order
    of their `content_index` or `summary_index` (a number skipped leaves no hole: the
    lists hold what came, whatever the numbers say); each delta is appended to the
    text it addresses; a `*.done` event, `content_part.done` and `output_item.done`
    replace what they say (they are authoritative); a URL or file annotation is
    appended to its part. The final
    event's response (`completed`, `incomplete`, `failed`) is the result, unless its
    output is empty or missing (the ChatGPT backend): then the items the stream
    built are its output. The final output is matched with the items built by id,
    else in order (see `_paired_output`).

    Where openai-python raises, this keeps going and keeps what it saw in `drift`:
    an item whose id or `call_id` changes between `added` and `done` (OpenAI's
    tool search, GitHub Copilot's rotating ids), a response id that changes, and an
    event for an item never added (one is made). Unknown keys, items and events are
    kept where they came."""

    __slots__ = ("_final", "_numbers", "_places", "drift", "error", "response")

    def __init__(self) -> None:
        self.response: dict[str, Any] | None = None
        """The response so far (None before the first lifecycle event)."""
        self._final: dict[str, Any] | None = None
        """The final event's response, as it came."""
        self.error: Any = None
        """The error object of an `error` event, or of a failed response."""
        self.drift: list[tuple[str, Any, Any]] = []
        """What changed that should not have: (what, before, after), in order."""
        self._places: list[int] = []
        """The `output_index` of each item of the output, in order."""
        self._numbers: dict[tuple[int, str], list[int]] = {}
        """The numbers of the parts of an item's `content` or `summary`, in order, by
        the item's `output_index` and the list (none: they are numbered 0, 1...)."""

    def add(self, event: Any) -> None:
        """Add one event (JSON data: a dict; anything else is a `TypeError`)."""
        if event.__class__ is not dict and not isinstance(cast(object, event), dict):
            raise _not_json_event(self, event)
        kind: Any = event.get("type")
        if kind.__class__ is not str:
            return
        if kind in _RESPONSES_LIFECYCLE:
            self._lifecycle(kind, event)
            return
        if kind == "error":
            self.error = event.get("error", event)
            return
        self._response()  # an event before the first lifecycle one starts it
        if kind == "response.output_item.added":
            item: Any = event.get("item")
            if item.__class__ is dict:
                self._put(event, copy.deepcopy(item))
            return
        if kind == "response.output_item.done":
            item = event.get("item")
            if item.__class__ is dict:
                self._done_item(event, copy.deepcopy(item))
            return
        head, _, tail = kind.rpartition(".")
        if kind in ("response.content_part.added", "response.content_part.done"):
            self._part(event, "content", "content_index", event.get("part"))
        elif kind in (
            "response.reasoning_summary_part.added",
            "response.reasoning_summary_part.done",
        ):
            self._part(event, "summary", "summary_index", event.get("part"))
        elif kind in ("response.reasoning_part.added", "response.reasoning_part.done"):
            self._part(event, "content", "content_index", event.get("part"))  # vLLM
        elif head in _RESPONSES_TEXTS and tail in ("delta", "done"):
            self._text(head, tail, event)
        elif head in _RESPONSES_ARGUMENTS and tail in ("delta", "done"):
            self._arguments(head, tail, event)
        elif kind == "response.output_text.annotation.added":
            note: Any = event.get("annotation")
            if note is not None:
                part = self._part_of(event, "content", "content_index", "output_text")
                notes = part.setdefault("annotations", [])
                if notes.__class__ is list:
                    notes.append(copy.deepcopy(note))

    def snapshot(self) -> dict[str, Any]:
        """The response so far, a copy (an empty one before any event)."""
        if self.response is None:
            return _responses_empty()
        return copy.deepcopy(self.response)

    def end(self) -> None:
        """Say that the stream has ended: nothing changes, since nothing is held back
        (each event is added as it comes). `result()` calls it."""

    def result(self) -> dict[str, Any]:
        """The response, as the final event said it (its output backfilled from the
        stream's items when it is empty); what came, for a stream cut off before. It
        calls `end()`."""
        self.end()
        built = self._response()
        final = self._final
        if final is None:
            return built
        output: Any = final.get("output")
        if output.__class__ is not list or not output:
            final = {**final, "output": built.get("output", [])}
        return final

    def summary(self) -> Summary:
        """What the response says, in every protocol's terms: its result read as a
        stream that sent only its final event."""
        reader = _ResponsesReader()
        response = self.result()
        final = "response.completed"
        status = response.get("status")
        if status == "incomplete":
            final = "response.incomplete"
        elif status == "failed" or (self._final is None and self.error is not None):
            final = "response.failed"
        elif self._final is None:
            final = ""  # no finish, no usage: the stream was cut off
        parts = reader.read({"type": "response.created", "response": response})
        if final:
            parts += reader.read({"type": final, "response": response})
        else:
            end = {"type": "response.completed", "response": response}
            parts += [p for p in reader.read(end) if p.kind not in ("finish", "usage")]
        return _summary_of_parts(parts)

    def _response(self) -> dict[str, Any]:
        if self.response is None:
            self.response = _responses_empty()
        return self.response

    def _lifecycle(self, kind: str, event: Any) -> None:
        given: Any = event.get("response")
        if given.__class__ is not dict:
            return
        response = self._response()
        ident: Any = response.get("id")
        if ident is not None and given.get("id") not in (None, ident):
            self.drift.append(("response id", ident, given.get("id")))
        output = self._output()
        response.update(copy.deepcopy(given))
        response["output"] = output  # the items are the stream's until the end
        if kind in _RESPONSES_FINAL:
            self._compare_final(given.get("output"), output)
            self._final = copy.deepcopy(given)
            if kind == "response.failed":
                self.error = given.get("error") or self.error

    def _compare_final(self, final: Any, output: list[Any]) -> None:
        """Keep in `drift` what the final output changed of the items built."""
        items = [
            i for i in (final if final.__class__ is list else ()) if i.__class__ is dict
        ]
        where: dict[str, int] = {}
        for place, known in enumerate(output):
            ident: Any = known.get("id") if known.__class__ is dict else None
            if ident.__class__ is str:
                where.setdefault(ident, place)
        pairs = _paired_output(items, len(output), where)
        for item, at in zip(items, pairs, strict=True):
            built: Any = None if at is None else output[at]
            if built.__class__ is dict:
                self._compare(built, item)

    def _output(self) -> list[Any]:
        response = self._response()
        output: Any = response.get("output")
        if output.__class__ is not list:
            output = response["output"] = []
        return cast(list[Any], output)

    def _position(self, event: Any) -> int:
        """Where in the output the item an event addresses is: the place of its
        `output_index` (made for it), else of the item its `item_id` names, else the
        latest item's."""
        output = self._output()
        index: Any = event.get("output_index")
        if index.__class__ is int and index >= 0:
            return self._place(index)
        ident: Any = event.get("item_id")
        for at, item in enumerate(output):
            if item.__class__ is dict and ident is not None and item.get("id") == ident:
                return at
        return len(output) - 1 if output else self._place(0)

    def _place(self, index: int) -> int:
        """The place in the output of the item at `output_index` (an empty one made,
        in order, when none is)."""
        places = self._places
        at = bisect_left(places, index)
        if at == len(places) or places[at] != index:
            places.insert(at, index)
            self._output().insert(at, None)
        return at

    def _put(self, event: Any, item: dict[str, Any]) -> None:
        index: Any = event.get("output_index")
        if index.__class__ is not int or index < 0:
            index = self._places[-1] + 1 if self._places else 0
        self._set(self._place(index), item)

    def _set(self, at: int, item: dict[str, Any]) -> None:
        """An item put in its place: its parts are numbered as it holds them."""
        self._output()[at] = item
        index = self._places[at]
        for where in ("content", "summary"):
            self._numbers.pop((index, where), None)

    def _item(self, event: Any) -> tuple[int, dict[str, Any]]:
        """The place of the item an event addresses, and the item (one is made when
        it was never added)."""
        output = self._output()
        at = self._position(event)
        item: Any = output[at]
        if item.__class__ is not dict:
            ident: Any = event.get("item_id")
            item = output[at] = {} if ident is None else {"id": ident}
        return at, cast(dict[str, Any], item)

    def _done_item(self, event: Any, item: dict[str, Any]) -> None:
        """An item done replaces the one added, keeping what changed in `drift`."""
        at, before = self._item(event)
        self._compare(before, item)
        self._set(at, item)

    def _compare(self, before: dict[str, Any], after: dict[str, Any]) -> None:
        """Keep in `drift` what changed of an item's identity."""
        for key in ("id", "call_id"):
            was, now = before.get(key), after.get(key)
            if was is not None and now is not None and was != now:
                self.drift.append((f"item {key}", was, now))

    def _part_of(
        self, event: Any, where: str, number: str, kind: str | None
    ) -> dict[str, Any]:
        """The part of an item an event addresses (one of `kind` is made when it was
        never added)."""
        place, item = self._item(event)
        parts: Any = item.get(where)
        if parts.__class__ is not list:
            parts = item[where] = []
        given: Any = event.get(number, 0)
        if given.__class__ is not int or given < 0:
            given = 0
        key = (self._places[place], where)
        numbers = self._numbers.get(key)
        if numbers is None or len(numbers) != len(parts):
            numbers = self._numbers[key] = list(range(len(parts)))
        at = bisect_left(numbers, given)
        if at == len(numbers) or numbers[at] != given:
            numbers.insert(at, given)
            parts.insert(at, None)
        part: Any = parts[at]
        if part.__class__ is not dict:
            part = parts[at] = {} if kind is None else {"type": kind}
        return cast(dict[str, Any], part)

    def _part(self, event: Any, where: str, number: str, part: Any) -> None:
        if part.__class__ is not dict:
            return
        known = self._part_of(event, where, number, None)
        known.clear()
        known.update(copy.deepcopy(part))

    def _text(self, head: str, tail: str, event: Any) -> None:
        where, number, key = _RESPONSES_TEXTS[head]
        part = self._part_of(event, where, number, _RESPONSES_PART_TYPES[head])
        if tail == "delta":
            piece: Any = event.get("delta")
            if piece.__class__ is str:
                text: Any = part.get(key)
                part[key] = (text if text.__class__ is str else "") + piece
        else:
            whole: Any = event.get(key)
            if whole.__class__ is str:
                part[key] = whole

    def _arguments(self, head: str, tail: str, event: Any) -> None:
        key = _RESPONSES_ARGUMENTS[head]
        _, item = self._item(event)
        if tail == "delta":
            piece: Any = event.get("delta")
            if piece.__class__ is str:
                text: Any = item.get(key)
                item[key] = (text if text.__class__ is str else "") + piece
        else:
            whole: Any = event.get(key)
            if whole.__class__ is str:
                item[key] = whole
