"""Responses events read into `Part`s, one event (JSON data, as `json.loads` gives it)
at a time, in chat's terms: a finish reason and usage as chat spells them, so that any
writer (chat's, Messages', Responses') reads them the same way."""

# Private names are shared between these files and used by the generated code.
# pyright: reportPrivateUsage=false, reportUnusedFunction=false, reportUnusedClass=false

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable, Iterator
from typing import Any, Final

from ..json_text import _json_text
from ..parts import (
    _REASONING_SEPARATOR,
    Citation,
    Identity,
    Part,
    ServerToolSummary,
    ToolCallPart,
    UsageSummary,
)
from ..reading import _count_of, _events_aparts, _events_parts, _items_of

_RESPONSES_DELTAS: Final = {
    "response.output_text.delta": ("text", "content_index", "text"),
    "response.refusal.delta": ("refusal", "content_index", "refusal"),
    "response.reasoning_summary_text.delta": ("summary", "summary_index", "reasoning"),
    "response.reasoning_text.delta": ("content", "content_index", "reasoning"),
    # Open Responses' name for reasoning text.
    "response.reasoning.delta": ("content", "content_index", "reasoning"),
    "response.function_call_arguments.delta": ("arguments", "", "tool_call"),
    "response.custom_tool_call_input.delta": ("arguments", "", "tool_call"),
}
"""The events that carry a piece of text: which of its item's texts it continues (the
channel, and the key of the event that numbers it), and the kind of its part."""

_RESPONSES_DONE: Final = {
    "response.output_text.done": ("text", "content_index", "text", "text"),
    "response.refusal.done": ("refusal", "content_index", "refusal", "refusal"),
    "response.reasoning_summary_text.done": (
        "summary",
        "summary_index",
        "reasoning",
        "text",
    ),
    "response.reasoning_text.done": ("content", "content_index", "reasoning", "text"),
    "response.reasoning.done": ("content", "content_index", "reasoning", "text"),
    "response.function_call_arguments.done": (
        "arguments",
        "",
        "tool_call",
        "arguments",
    ),
    "response.custom_tool_call_input.done": ("arguments", "", "tool_call", "input"),
}
"""The events that say a text whole: as `_RESPONSES_DELTAS`, and the key of the text."""

_RESPONSES_STARTS: Final = frozenset(
    ("response.created", "response.in_progress", "response.queued")
)

_RESPONSES_INCOMPLETE: Final = {"max_output_tokens": "length"}
"""Why a response is incomplete, in chat's finish reasons; another reason
(`content_filter`) is kept as it is."""

_RESPONSES_CALLS: Final = frozenset(("function_call", "custom_tool_call"))
"""The items that are calls of the client's tools."""


class _ResponsesReader:
    """Turns the events of one Responses stream into `Part`s (`read`), as JSON data.

    Every part is of choice 0 (a response is one choice); an item's parts carry its
    `output_index` as `block`, and a tool call's `tool_call.index` is its
    `output_index`. Each item's texts are read from its deltas; a `*.done` event, an
    `output_item.done` and the final response are read for what the deltas did not
    say (a server that sends a text whole, or an item only when it is done), never
    again for what they did. An item's reasoning is its summary or its reasoning text,
    whichever says it first, not both, its parts apart: a "reasoning" part of
    `_REASONING_SEPARATOR` before each part but the first (a writer of one text
    joins them with it, Responses' writer keeps them apart); its `encrypted_content`
    is a "redacted_reasoning" part (opaque reasoning to send back). Each annotation of
    a message (a URL, a file, a file path) is a "citation" part, the annotation as it
    came its `source`. Any other item (a web search, code
    interpreter, MCP or shell call the server ran, a compaction) is a "server_tool"
    part once done, with the whole item as its `source`.

    The finish reason is chat's: "tool_calls" when the response called a tool of the
    client's, "stop" otherwise, and for `response.incomplete` its reason
    (`max_output_tokens` is "length"). Usage is read in chat's terms (`input_tokens`
    includes cached tokens, as `prompt_tokens` does).

    Lenient where real servers are: items are found by `output_index`, else by
    `item_id` (llama.cpp sends no index; GitHub Copilot changes the id on every
    event), else the latest; events without `sequence_number`; a float `created_at`;
    a final response whose output is empty (the ChatGPT backend) or whose ids differ
    from the stream's (OpenRouter: matched in order, see `_paired_output`); a `type`
    that is no string (no type)."""

    __slots__ = ("_ids", "_items", "_started")

    def __init__(self) -> None:
        self._started = False
        self._items: dict[int, _ResponsesItem] = {}
        """The items seen, by `output_index`."""
        self._ids: dict[str, int] = {}
        """The `output_index` of each item id seen."""

    def read(self, event: Any) -> list[Part]:
        """The parts of one event (JSON data)."""
        out: list[Part] = []
        if event.__class__ is not dict:
            return out
        kind = _kind_of(event)
        delta = _RESPONSES_DELTAS.get(kind) if kind is not None else None
        if delta is not None:
            channel, number, meaning = delta
            item = self._item(event)
            piece: Any = event.get("delta")
            if piece.__class__ is str and piece:
                at = _number_of(event, number)
                item.say(channel, at, piece, meaning, event, out)
        elif kind == "response.output_item.added":
            self._added(event, out)
        elif kind == "response.output_item.done":
            added: Any = event.get("item")
            if added.__class__ is dict:
                self._item(event, added).done(added, event, out)
        elif kind in _RESPONSES_DONE:
            channel, number, meaning, key = _RESPONSES_DONE[kind]
            text: Any = event.get(key)
            if text.__class__ is str:
                at = _number_of(event, number)
                self._item(event).whole(channel, at, text, meaning, event, out)
        elif kind == "response.output_text.annotation.added":
            item = self._item(event)
            at = _number_of(event, "content_index")
            item.cited[at] = item.cited.get(at, 0) + 1
            item.cite(event.get("annotation"), event, out)
        elif kind in _RESPONSES_STARTS:
            if not self._started:
                self._start(event, out)
                usage = out[-1].usage
                if usage is not None:  # said at the start: on it, and as a part
                    out.append(Part("usage", 0, "", event, usage=usage))
        elif kind in ("response.completed", "response.incomplete"):
            self._end(event, out)
        elif kind == "response.failed":
            self._failed(event, out)
        elif kind == "error":
            out.append(_responses_error_part(event.get("error") or event, event))
        return out

    def _start(self, event: Any, out: list[Part]) -> None:
        self._started = True
        response = _responses_dict(event.get("response"))
        ident, model = response.get("id"), response.get("model")
        created: Any = response.get("created_at")
        identity = Identity(
            ident if ident.__class__ is str and ident else None,
            model if model.__class__ is str and model else None,
            int(created) if created.__class__ in (int, float) else None,
        )
        usage: Any = response.get("usage")
        known = _responses_usage(usage) if usage.__class__ is dict else None
        out.append(Part("start", 0, "", event, identity=identity, usage=known))

    def _item(self, event: Any, item: Any = None) -> _ResponsesItem:
        """The item an event addresses: by its `output_index`, else its item's id,
        else the latest item (one is made for an event whose item never came)."""
        index: Any = event.get("output_index")
        ident: Any = event.get("item_id")
        if ident is None and item is not None:
            ident = item.get("id")
        if index.__class__ is not int:
            index = self._ids.get(ident) if isinstance(ident, str) else None
        if index is None:
            if self._items:
                index = max(self._items)
                if item is not None and self._items[index].finished:
                    index += 1  # a done item never added after a finished one
            else:
                index = 0
        known = self._items.get(index)
        if known is None:
            known = self._items[index] = _ResponsesItem(index, item or {})
        if isinstance(ident, str):
            self._ids[ident] = index
        return known

    def _added(self, event: Any, out: list[Part]) -> None:
        item: Any = event.get("item")
        if item.__class__ is not dict:
            return  # an empty added event (openai-python tolerates it too)
        index: Any = event.get("output_index")
        if index.__class__ is not int:
            index = max(self._items) + 1 if self._items else 0
            event = {**event, "output_index": index}
        known = self._items.get(index)
        if known is None or known.finished:
            known = self._items[index] = _ResponsesItem(index, item)
        self._item(event, item)
        known.begin(item, event, out)

    def _end(self, event: Any, out: list[Part]) -> None:
        """The final response: the items the stream did not say are read from its
        output (matched with the stream's by id, else in order: the ids in it may be
        new), then the finish and the usage."""
        response = _responses_dict(event.get("response"))
        if not self._started:
            self._start(event, out)
        output = [i for i in _items_of(response.get("output")) if i.__class__ is dict]
        order = sorted(self._items)
        places = {index: at for at, index in enumerate(order)}
        where = {ident: places[index] for ident, index in self._ids.items()}
        pairs = _paired_output(output, len(order), where)
        for item, at in zip(output, pairs, strict=True):
            known = None if at is None else self._items[order[at]]
            if known is None:
                index = max(self._items) + 1 if self._items else 0
                known = self._items[index] = _ResponsesItem(index, item)
                known.begin(item, event, out)
            if not known.finished:
                known.done(item, event, out)
        called = any(i.kind in _RESPONSES_CALLS for i in self._items.values())
        reason = "tool_calls" if called else "stop"
        if event.get("type") == "response.incomplete":
            details = _responses_dict(response.get("incomplete_details"))
            why: Any = details.get("reason")
            reason = _RESPONSES_INCOMPLETE.get(why, why) if why.__class__ is str else ""
            reason = reason or "length"
        out.append(Part("finish", 0, reason, event))
        usage: Any = response.get("usage")
        if usage.__class__ is dict:
            out.append(Part("usage", 0, "", event, usage=_responses_usage(usage)))

    def _failed(self, event: Any, out: list[Part]) -> None:
        response = _responses_dict(event.get("response"))
        usage: Any = response.get("usage")
        if usage.__class__ is dict:
            out.append(Part("usage", 0, "", event, usage=_responses_usage(usage)))
        error: Any = response.get("error")
        out.append(_responses_error_part(error or response, event))


class _ResponsesItem:
    """An output item of the response being read, and what its parts have said."""

    __slots__ = (
        "call",
        "cited",
        "finished",
        "index",
        "kind",
        "reasoning",
        "said",
        "source",
    )

    def __init__(self, index: int, source: Any) -> None:
        self.index = index
        self.source: Any = source
        """The item as it was added (JSON data)."""
        self.kind = _kind_of(source)
        self.said: dict[tuple[str, Any], str] = {}
        """Each text said so far, by its channel and number."""
        self.reasoning: str | None = None
        """Which channel the item's reasoning is read from: "summary" or "content"."""
        self.call: ToolCallPart | None = None
        self.cited: dict[Any, int] = {}
        """How many annotations of each content part were read."""
        self.finished = False

    def begin(self, item: Any, event: Any, out: list[Part]) -> None:
        """Read an item as it is added, with whatever it holds already."""
        self.source = item
        self.kind = _kind_of(item)
        if self.kind in _RESPONSES_CALLS:
            self._call(item)
            key = "arguments" if self.kind == "function_call" else "input"
            given: Any = item.get(key)
            text = given if given.__class__ is str else ""
            self.said[("arguments", 0)] = text
            out.append(
                Part("tool_call", 0, text, event, tool_call=self.call, block=self.index)
            )
            return
        self._contents(item, event, out, opaque=False)

    def done(self, item: Any, event: Any, out: list[Part]) -> None:
        """Read an item as it is done: what its events did not say, once."""
        if self.finished:
            return
        self.finished = True
        kind = _kind_of(item)
        if kind in _RESPONSES_CALLS:
            self.kind = kind
            if self.call is None or None in (self.call.id, self.call.name):
                self._call(item)
            key = "arguments" if kind == "function_call" else "input"
            given: Any = item.get(key)
            if given.__class__ is str:
                self.whole("arguments", 0, given, "tool_call", event, out)
            elif ("arguments", 0) not in self.said:
                self.whole("arguments", 0, "", "tool_call", event, out)
            return
        if kind in ("message", "reasoning"):
            self._contents(item, event, out)
            return
        tool = _responses_server_tool(self.index, item)
        out.append(
            Part("server_tool", 0, "", event, server_tool=tool, block=self.index)
        )

    def say(
        self, channel: str, at: Any, piece: str, kind: str, event: Any, out: list[Part]
    ) -> None:
        """A piece of one of the item's texts (the first piece of a reasoning part
        after another: the separator first)."""
        key = (channel, at)
        if kind == "reasoning":
            if self.reasoning is None:
                self.reasoning = channel
            elif self.reasoning != channel:
                return  # the same reasoning told the other way
            elif key not in self.said:
                part = Part(kind, 0, _REASONING_SEPARATOR, event, block=self.index)
                out.append(part)
        self.said[key] = self.said.get(key, "") + piece
        if kind == "tool_call":
            if self.call is None:
                self.call = ToolCallPart(self.index, None, None)
            out.append(
                Part(
                    "tool_call", 0, piece, event, tool_call=self.call, block=self.index
                )
            )
        else:
            out.append(Part(kind, 0, piece, event, block=self.index))

    def whole(
        self, channel: str, at: Any, text: str, kind: str, event: Any, out: list[Part]
    ) -> None:
        """One of the item's texts said whole: what it adds to what was said of it (a
        text that says otherwise is left to the accumulator, which keeps it)."""
        said = self.said.get((channel, at))
        if said is None:
            if kind == "tool_call":
                self.said[(channel, at)] = ""
                self.say(channel, at, text, kind, event, out)
                return
            said = ""
        if text.startswith(said) and len(text) > len(said):
            self.say(channel, at, text[len(said) :], kind, event, out)

    def cite(self, annotation: Any, event: Any, out: list[Part]) -> None:
        """A citation part, for any annotation: its URL (None for a file's), its
        title (a file's name), and the annotation as it came."""
        if annotation.__class__ is not dict:
            return
        url: Any = annotation.get("url")
        title: Any = annotation.get("title") or annotation.get("filename")
        # An empty title is none: Responses requires the key, so a writer (ours, of a
        # source without a title) writes "", which must read back as no title.
        cited = Citation(
            url if url.__class__ is str and url else None,
            title if title.__class__ is str and title else None,
            annotation,
        )
        out.append(Part("citation", 0, "", event, citation=cited, block=self.index))

    def _call(self, item: Any) -> None:
        ident: Any = item.get("call_id")
        if ident.__class__ is not str or not ident:
            ident = item.get("id")
        name: Any = item.get("name")
        self.call = ToolCallPart(
            self.index,
            ident if ident.__class__ is str and ident else None,
            name if name.__class__ is str and name else None,
        )

    def _contents(
        self, item: Any, event: Any, out: list[Part], opaque: bool = True
    ) -> None:
        """The texts a message or reasoning item holds, beyond what was said, and,
        once it is done (`opaque`), its opaque reasoning: OpenAI encrypts it again
        between `output_item.added` and `done`, and the last one is to send back."""
        for at, part in enumerate(_items_of(item.get("content"))):
            if part.__class__ is not dict:
                continue
            kind: Any = part.get("type")
            if kind == "output_text":
                self.whole("text", at, part.get("text") or "", "text", event, out)
                notes = _items_of(part.get("annotations"))
                for note in notes[self.cited.get(at, 0) :]:
                    self.cite(note, event, out)
                self.cited[at] = len(notes)
            elif kind == "refusal":
                text: Any = part.get("refusal")
                if text.__class__ is str:
                    self.whole("refusal", at, text, "refusal", event, out)
            elif kind == "reasoning_text" and (
                self.reasoning == "content"
                or (self.reasoning is None and not _items_of(item.get("summary")))
            ):
                text = part.get("text")
                if text.__class__ is str:
                    self.whole("content", at, text, "reasoning", event, out)
        if self.reasoning != "content":
            for at, part in enumerate(_items_of(item.get("summary"))):
                if part.__class__ is dict:
                    text = part.get("text")
                    if text.__class__ is str:
                        self.whole("summary", at, text, "reasoning", event, out)
        if opaque and item.get("type") == "reasoning":
            self._opaque(item, event, out)

    def _opaque(self, item: Any, event: Any, out: list[Part]) -> None:
        """A reasoning item's encrypted content, and a signature (the key chunkspec's
        writer keeps an Anthropic signature in), each once."""
        for key, kind in (("encrypted_content", "redacted_reasoning"), _SIGNED):
            value: Any = item.get(key)
            if value.__class__ is str and value and (key, 0) not in self.said:
                self.said[(key, 0)] = value
                out.append(Part(kind, 0, value, event, block=self.index))


_SIGNED: Final = ("signature", "signature")
"""The key a reasoning item holds an Anthropic signature in, as chunkspec's writer
writes it (Responses has no signature), and the kind of its part."""


def _responses_server_tool(index: int, item: Any) -> ServerToolSummary:
    """An item of a tool the server ran (or any item that is not a message, reasoning
    or a call of the client's): its name (the type without `_call`), its arguments
    (`arguments`, else its `action` or `code` as JSON text) and its output (`output`,
    else its `outputs` or `results` as JSON text)."""
    kind: Any = item.get("type")
    name = kind.removesuffix("_call") if kind.__class__ is str else None
    arguments: Any = item.get("arguments")
    if arguments.__class__ is not str:
        given = next((item[k] for k in ("action", "code") if k in item), None)
        arguments = "" if given is None else _json_text(given)
    output: Any = item.get("output")
    if output is not None and output.__class__ is not str:
        output = _json_text(output)
    if output is None:
        given = next((item[k] for k in ("outputs", "results") if k in item), None)
        output = None if given is None else _json_text(given)
    return ServerToolSummary(index, name, arguments, output, item)


def _kind_of(value: Any) -> str | None:
    """An event's or item's `type`: None when it is no string (a list, say)."""
    kind: Any = value.get("type")
    return kind if kind.__class__ is str else None


def _number_of(event: Any, key: str) -> int:
    """Which part of its item an event addresses, by `key` (`content_index`...): 0
    when the event has none, or one that is no integer."""
    number: Any = event.get(key, 0) if key else 0
    return number if number.__class__ is int else 0


def _paired_output(
    final: list[dict[str, Any]], count: int, where: dict[str, int]
) -> list[int | None]:
    """Which of the `count` items a stream built (in `output_index` order) each item
    of the final output is: the one its id names (`where`: an id's place), else the
    next one no id named, in order (a server that gives the items new ids at the end,
    OpenRouter); None past them. A stream's indexes may skip (an item at 1, none at
    0): places, not indexes, are matched."""
    found: list[int | None] = []
    for item in final:
        ident: Any = item.get("id")
        found.append(where.get(ident) if ident.__class__ is str else None)
    taken = {at for at in found if at is not None}
    left = iter([at for at in range(count) if at not in taken])
    return [at if at is not None else next(left, None) for at in found]


def _responses_dict(value: Any) -> dict[str, Any]:
    return value if value.__class__ is dict else {}


def _responses_usage(usage: dict[str, Any]) -> UsageSummary:
    """A Responses usage object in chat's terms: `input_tokens` includes the cached
    tokens, as `prompt_tokens` does; the cost is OpenRouter's `cost`, and the tools
    the server ran are xAI's `num_server_side_tools_used`."""
    count = _count_of
    prompt = count(usage, "input_tokens")
    completion = count(usage, "output_tokens")
    total = count(usage, "total_tokens")
    if total is None and prompt is not None and completion is not None:
        total = prompt + completion
    given = _responses_dict(usage.get("input_tokens_details"))
    made = _responses_dict(usage.get("output_tokens_details"))
    cost: Any = usage.get("cost")
    return UsageSummary(
        prompt_tokens=prompt,
        completion_tokens=completion,
        total_tokens=total,
        cached_prompt_tokens=count(given, "cached_tokens"),
        cache_write_tokens=count(given, "cache_write_tokens"),
        reasoning_tokens=count(made, "reasoning_tokens"),
        cost_usd=float(cost) if cost.__class__ in (int, float) else None,
        server_tool_calls=count(usage, "num_server_side_tools_used"),
    )


def _responses_error_part(error: Any, event: Any) -> Part:
    """The "error" part of an `error` event or a failed response: its message, and
    its error object."""
    message: Any = error.get("message") if error.__class__ is dict else error
    if message.__class__ is not str:
        message = _json_text(message)
    return Part("error", 0, message, event, error=error)


def _responses_parts_of(
    events: Iterable[Any], data: Callable[[Any], Any]
) -> Iterator[Part]:
    """The parts of a stream of events (see `_events_parts`)."""
    return _events_parts(_ResponsesReader().read, events, data, "responses")


def _responses_aparts_of(
    events: AsyncIterable[Any], data: Callable[[Any], Any]
) -> AsyncIterator[Part]:
    """`_responses_parts_of` for events that arrive asynchronously."""
    return _events_aparts(_ResponsesReader().read, events, data, "responses")
