"""Anthropic Messages events read into `Part`s, one event (JSON data, as `json.loads`
gives it) at a time, in chat's terms: a finish reason and usage as chat spells them, so
that any writer (chat's, Messages') reads them the same way."""

# Private names are shared between these files and used by the generated code.
# pyright: reportPrivateUsage=false, reportUnusedFunction=false, reportUnusedClass=false

from __future__ import annotations

import json
from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable, Iterator
from typing import Any, Final

from ..json_text import _json_text
from ..parts import (
    Citation,
    Identity,
    Part,
    ServerToolSummary,
    ToolCallPart,
    UsageSummary,
)
from ..reading import _count_of, _events_aparts, _events_parts, _items_of

_MESSAGES_FINISH: Final = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "tool_use": "tool_calls",
    "refusal": "content_filter",
}
"""Anthropic's stop reasons in chat's terms; any other (`pause_turn`,
`model_context_window_exceeded`) is kept as it is."""

_MESSAGES_TEXT_DELTAS: Final = {
    "text_delta": ("text", "text"),
    "thinking_delta": ("thinking", "reasoning"),
    "signature_delta": ("signature", "signature"),
}
"""The deltas that carry a text: the delta's key, and the kind of its part."""


class _MessagesReader:
    """Turns the events of one Messages stream into `Part`s (`read`), as JSON data.

    Every part is of choice 0 (a message is one choice); a content block's parts carry
    its index as `block`, and a tool call's `tool_call.index` is its block's index.
    Usage is read in chat's terms: `prompt_tokens` is the input with the cache reads
    and writes (Anthropic's `input_tokens` excludes them), `cached_prompt_tokens` the
    cache reads; the usage of `message_start` and of `message_delta` combine, the
    later keys winning (GLM and LiteLLM send 0 and 0 at the start, the counts at the
    end). `ping`, `message_stop`, and unknown events, blocks and deltas give nothing:
    the event stays in the stream, and the parts that follow are read as usual.

    Lenient where real servers are: a thinking block without a signature (Ollama), a
    message without `type` or `role` (vLLM), `service_tier` beside the usage, an empty
    first `partial_json` (MiniMax), metrics on `message_stop` (Bedrock), a second
    `message_start` (ignored, as anthropic-sdk-python ignores it), a delta whose block
    never started (read by the delta's type; its start, when it comes, adds the id and
    name of its call), a `message_start` after other events (its usage adds the keys
    they did not say).

    What it holds is bounded by the blocks open, never by the indexes: a block is
    forgotten once it stops (a server tool's run is remembered by its id and name,
    for its result)."""

    __slots__ = ("_blocks", "_latest", "_runs", "_started", "_usage")

    def __init__(self) -> None:
        self._started = False
        self._usage: dict[str, Any] = {}
        """The usage so far: `message_start`'s, updated by each `message_delta`."""
        self._blocks: dict[int, _MessagesBlock] = {}
        """The content blocks started and not stopped, by index."""
        self._latest = -1
        """The index of the latest block started (-1: none yet)."""
        self._runs: dict[Any, tuple[int, Any]] = {}
        """The runs of the server's tools, by the id of their block: its index and
        the tool's name."""

    def read(self, event: Any) -> list[Part]:
        """The parts of one event (JSON data)."""
        out: list[Part] = []
        if event.__class__ is not dict:
            return out
        kind: Any = event.get("type")
        if kind == "content_block_delta":
            self._delta(event, out)
        elif kind == "content_block_start":
            block: Any = event.get("content_block")
            index = self._index(event.get("index"), True)
            if block.__class__ is dict:
                self._start_block(index, block, event, out)
        elif kind == "content_block_stop":
            stopped: Any = event.get("index")
            known = None
            if stopped.__class__ is int:
                known = self._blocks.pop(stopped, None)
            if known is not None:
                self._stop_block(known, event, out)
        elif kind == "message_delta":
            self._message_delta(event, out)
        elif kind == "message_start":
            if not self._started:
                self._message_start(event, out)
        elif kind == "error":
            out.append(_messages_error_part(event))
        return out

    def _index(self, index: Any, new: bool) -> int:
        """A block's index; without one, the next (a block that starts) or the
        latest."""
        if index.__class__ is int:
            return int(index)
        return max(self._latest + 1 if new else self._latest, 0)

    def _message_start(self, event: Any, out: list[Part]) -> None:
        self._started = True
        message: Any = event.get("message")
        if message.__class__ is not dict:
            message = {}
        ident, model = message.get("id"), message.get("model")
        identity = Identity(
            ident if ident.__class__ is str and ident else None,
            model if model.__class__ is str and model else None,
            None,
        )
        usage: Any = message.get("usage")
        said: UsageSummary | None = None
        if usage.__class__ is dict:  # a message_delta's counts, come before, win
            self._usage = {**_messages_known(usage), **self._usage}
            said = _messages_usage(self._usage)
        # The usage known at the start (the input tokens) rides on the start too, for
        # a writer that writes its opening events at once; the "usage" part follows.
        out.append(Part("start", 0, "", event, identity=identity, usage=said))
        # A message that holds its content already (programmatic tool calling sends
        # the whole message in message_start, then message_stop).
        content: Any = message.get("content")
        for index, block in enumerate(content if content.__class__ is list else ()):
            if block.__class__ is dict:
                known = self._start_block(index, block, event, out)
                self._stop_block(self._blocks.pop(index, known), event, out)
        reason: Any = message.get("stop_reason")
        if reason.__class__ is str and reason:
            out.append(Part("finish", 0, _messages_finish(reason), event))
        if said is not None:
            out.append(Part("usage", 0, "", event, usage=said))

    def _message_delta(self, event: Any, out: list[Part]) -> None:
        delta: Any = event.get("delta")
        if delta.__class__ is dict:
            reason: Any = delta.get("stop_reason")
            if reason.__class__ is str and reason:
                out.append(Part("finish", 0, _messages_finish(reason), event))
        usage: Any = event.get("usage")
        if usage.__class__ is dict:
            self._usage.update(_messages_known(usage))
            out.append(_messages_usage_part(self._usage, event))

    def _start_block(
        self, index: int, block: Any, event: Any, out: list[Part]
    ) -> _MessagesBlock:
        """Read a block as it starts, with whatever content it holds already (a
        call's pieces come before it: they stay its arguments)."""
        kind: Any = block.get("type")
        came = self._blocks.get(index)
        known = self._blocks[index] = _MessagesBlock(index, kind, block)
        self._latest = max(self._latest, index)
        if kind == "text":
            known.refusal = block.get("refusal") is True  # as our writer marks one
            meaning = "refusal" if known.refusal else "text"
            _messages_text(block.get("text"), meaning, index, event, out)
            for citation in _items_of(block.get("citations")):
                _messages_citation(citation, index, event, out)
        elif kind == "thinking":
            _messages_text(block.get("thinking"), "reasoning", index, event, out)
            _messages_text(block.get("signature"), "signature", index, event, out)
        elif kind == "redacted_thinking":
            data: Any = block.get("data")
            if data.__class__ is str:
                out.append(Part("redacted_reasoning", 0, data, event, block=index))
        elif kind == "tool_use":
            ident, name = block.get("id"), block.get("name")
            known.call = ToolCallPart(
                index,
                ident if ident.__class__ is str and ident else None,
                name if name.__class__ is str and name else None,
            )
            given = _messages_input(block.get("input"))
            known.has_input = bool(given) or (came is not None and came.has_input)
            out.append(
                Part("tool_call", 0, given, event, tool_call=known.call, block=index)
            )
        elif _messages_server_use(kind):
            run: Any = block.get("id")
            if run.__class__ is str:
                self._runs[run] = (index, block.get("name"))
            given = _messages_input(block.get("input"))
            out.append(self._server_tool(known, given, None, event))
        elif isinstance(kind, str) and kind.endswith("_tool_result"):
            self._server_result(known, event, out)
        return known

    def _stop_block(self, known: _MessagesBlock, event: Any, out: list[Part]) -> None:
        """A block has ended: a tool call that got no arguments has `{}` (its input as
        it started), and a server tool's arguments are said whole."""
        if known.kind == "tool_use" and not known.has_input:
            known.has_input = True
            out.append(
                Part(
                    "tool_call", 0, "{}", event, tool_call=known.call, block=known.index
                )
            )
        elif _messages_server_use(known.kind) and known.pieces:
            arguments = "".join(known.pieces)
            known.pieces.clear()
            out.append(self._server_tool(known, arguments, None, event))

    def _delta(self, event: Any, out: list[Part]) -> None:
        delta: Any = event.get("delta")
        if delta.__class__ is not dict:
            return
        index = self._index(event.get("index"), False)
        known = self._blocks.get(index)
        kind: Any = delta.get("type")
        texts = _MESSAGES_TEXT_DELTAS.get(kind) if kind.__class__ is str else None
        if texts is not None:
            key, meaning = texts
            if known is not None and known.refusal:
                meaning = "refusal"
            _messages_text(delta.get(key), meaning, index, event, out)
        elif kind == "input_json_delta":
            piece: Any = delta.get("partial_json")
            if piece.__class__ is not str or not piece:
                return  # an empty first piece (MiniMax), or nothing
            if known is None:  # a delta whose block never started
                known = self._blocks[index] = _MessagesBlock(index, "tool_use", {})
                known.call = ToolCallPart(index, None, None)
                self._latest = max(self._latest, index)
            if _messages_server_use(known.kind):
                known.pieces.append(piece)
                return
            if not known.has_input and piece.startswith(_MESSAGES_RAW_MARK):
                piece = _messages_raw(piece)
            known.has_input = True
            which = known.call or ToolCallPart(index, None, None)
            out.append(Part("tool_call", 0, piece, event, tool_call=which, block=index))
        elif kind == "citations_delta":
            _messages_citation(delta.get("citation"), index, event, out)

    def _server_tool(
        self, known: _MessagesBlock, arguments: str, output: str | None, event: Any
    ) -> Part:
        name: Any = known.source.get("name")
        tool = ServerToolSummary(
            known.index,
            name if name.__class__ is str else None,
            arguments,
            output,
            known.source,
        )
        return Part("server_tool", 0, "", event, server_tool=tool, block=known.index)

    def _server_result(
        self, known: _MessagesBlock, event: Any, out: list[Part]
    ) -> None:
        """The result of a tool the server ran (`web_search_tool_result`...): the
        output of the run its `tool_use_id` names, as JSON text."""
        used: Any = known.source.get("tool_use_id")
        run = self._runs.get(used) if used.__class__ is str else None
        output = _json_text(known.source.get("content"))
        name: Any = None if run is None else run[1]
        tool = ServerToolSummary(
            known.index if run is None else run[0],
            name if name.__class__ is str else None,
            "",
            output,
            known.source,
        )
        out.append(
            Part("server_tool", 0, "", event, server_tool=tool, block=known.index)
        )


class _MessagesBlock:
    """A content block of the message being read."""

    __slots__ = ("call", "has_input", "index", "kind", "pieces", "refusal", "source")

    def __init__(self, index: int, kind: Any, source: Any) -> None:
        self.index = index
        self.kind = kind
        self.source: Any = source
        """The block as it started (JSON data)."""
        self.call: ToolCallPart | None = None
        """A tool call's index, id and name, for each of its parts."""
        self.has_input = False
        """Whether a tool call's arguments came (a piece, or its input whole)."""
        self.pieces: list[str] = []
        """A server tool's arguments so far."""
        self.refusal = False
        """Whether a text block holds a refusal (`"refusal": true`, as chunkspec's
        writer marks one: Messages has no refusal text)."""


def _messages_server_use(kind: Any) -> bool:
    """Whether a block is a call of a tool the server runs: `server_tool_use`, and the
    beta's `mcp_tool_use` and its like (any `*_tool_use` but the client's `tool_use`).
    """
    return kind.__class__ is str and kind.endswith("_tool_use") and kind != "tool_use"


def _messages_finish(reason: str) -> str:
    """A stop reason in chat's terms."""
    return _MESSAGES_FINISH.get(reason) or reason


def _messages_text(
    text: Any, kind: str, index: int, event: Any, out: list[Part]
) -> None:
    if text.__class__ is str and text:
        out.append(Part(kind, 0, text, event, block=index))


def _messages_citation(citation: Any, index: int, event: Any, out: list[Part]) -> None:
    """A citation part, for a citation of any kind, with the citation as it came
    (`source`): the address of a web search result (`url`) or of a search result
    (`source`); none for a place in a document the request sent (`char_location`,
    `page_location`, `content_block_location`), whose title is the document's."""
    if citation.__class__ is not dict:
        return
    url: Any = citation.get("url")
    if url.__class__ is not str or not url:
        url = citation.get("source")
    title: Any = citation.get("title")
    if title.__class__ is not str:
        title = citation.get("document_title")
    cited = Citation(
        url if url.__class__ is str and url else None,
        title if title.__class__ is str else None,
        citation,
    )
    out.append(Part("citation", 0, "", event, citation=cited, block=index))


def _messages_input(value: Any) -> str:
    """A tool's input given whole, as the text of its arguments: "" for none (`{}`,
    which a streamed input starts as), JSON text for an object, a text as it is; the
    arguments that were no JSON object, of an input that holds them under `_RAW`
    alone, as the text they were."""
    if value is None or value == {}:
        return ""
    if value.__class__ is str:
        text = str(value)
        return _messages_raw(text) if text.startswith(_MESSAGES_RAW_MARK) else text
    raw: Any = value.get(_MESSAGES_RAW) if value.__class__ is dict else None
    if raw.__class__ is str and len(value) == 1:
        return str(raw)
    return _json_text(value)


def _messages_known(usage: Any) -> dict[str, Any]:
    """The keys of a usage object that say something (not null)."""
    return {key: value for key, value in usage.items() if value is not None}


def _messages_usage(usage: dict[str, Any]) -> UsageSummary:
    """A Messages usage object in chat's terms. Anthropic's `input_tokens` excludes the
    cache reads and writes, chat's `prompt_tokens` includes them; the count of tools
    the server ran is the sum of `server_tool_use`'s; the reasoning tokens are
    `output_tokens_details.thinking_tokens`. The keys a writer adds where Messages has
    no place (`cost_usd`, `total_tokens`, `server_tool_calls`) are read back, and the
    top-level `reasoning_tokens` older versions of it wrote."""
    count = _count_of
    given = count(usage, "input_tokens")
    read = count(usage, "cache_read_input_tokens")
    written = count(usage, "cache_creation_input_tokens")
    prompt = None if given is None else given + (read or 0) + (written or 0)
    completion = count(usage, "output_tokens")
    total = count(usage, "total_tokens")
    if total is None and prompt is not None and completion is not None:
        total = prompt + completion
    servers = count(usage, "server_tool_calls")
    used: Any = usage.get("server_tool_use")
    if servers is None and used.__class__ is dict:
        counts = [v for v in used.values() if v.__class__ is int]
        servers = sum(counts) if counts else None
    cost: Any = usage.get("cost_usd")
    if cost.__class__ not in (int, float):
        cost = usage.get("cost")
    details: Any = usage.get("output_tokens_details")
    thinking = count(details, "thinking_tokens") if details.__class__ is dict else None
    return UsageSummary(
        prompt_tokens=prompt,
        completion_tokens=completion,
        total_tokens=total,
        cached_prompt_tokens=read,
        cache_write_tokens=written,
        reasoning_tokens=(
            thinking if thinking is not None else count(usage, "reasoning_tokens")
        ),
        cost_usd=float(cost) if cost.__class__ in (int, float) else None,
        server_tool_calls=servers,
    )


def _messages_usage_part(usage: dict[str, Any], event: Any) -> Part:
    return Part("usage", 0, "", event, usage=_messages_usage(usage))


def _messages_error_part(event: Any) -> Part:
    """The "error" part of an `error` event: its message, and its error object."""
    error: Any = event.get("error")
    if error is None:
        error = event
    message: Any = error.get("message") if error.__class__ is dict else error
    if message.__class__ is not str:
        message = _json_text(message)
    return Part("error", 0, message, event, error=error)


_MESSAGES_RAW: Final = "_raw_arguments"
"""The one key of the input of a call whose arguments were no JSON object (the
writer's `_RAW`)."""

_MESSAGES_RAW_MARK: Final = '{"_raw_arguments":'
"""How the input of a call whose arguments were no JSON object starts, as the writer
writes it (`_RAW`)."""


def _messages_raw(piece: str) -> str:
    """The arguments a call's input holds under `_raw_arguments`, when that is its one
    key; else the piece as it is."""
    try:
        value = json.loads(piece)
    except ValueError:
        return piece
    if value.__class__ is not dict or len(value) != 1:
        return piece
    raw = value.get("_raw_arguments")
    return raw if raw.__class__ is str else piece


def _messages_parts_of(
    events: Iterable[Any], data: Callable[[Any], Any]
) -> Iterator[Part]:
    """The parts of a stream of events (see `_events_parts`)."""
    return _events_parts(_MessagesReader().read, events, data, "messages")


def _messages_aparts_of(
    events: AsyncIterable[Any], data: Callable[[Any], Any]
) -> AsyncIterator[Part]:
    """`_messages_parts_of` for events that arrive asynchronously."""
    return _events_aparts(_MessagesReader().read, events, data, "messages")
