"""Anthropic Messages events added up into the final Message, as JSON data, the way
anthropic-sdk-python's `accumulate_event` (lib/streaming/_messages.py) builds it."""

# Private names are shared between these files and used by the generated code.
# pyright: reportPrivateUsage=false, reportUnusedFunction=false, reportUnusedClass=false

from __future__ import annotations

import copy
from typing import Any, Final, cast

from ..errors import StreamDecodeError
from ..json_text import _json
from ..parts import Summary, _summary_of_parts
from ..reading import _not_json_event
from .reader import _MessagesReader


class _MessagesAccumulator:
    """Adds the events of one Messages stream (JSON data) into its Message, as
    anthropic-sdk-python does: `message_start` gives the message; each block is put at
    its index; a text, a thinking and a citation are appended, a signature is
    replaced (there is one per block); the pieces of a tool's input are joined and
    read as JSON once its block stops (a text that is no JSON is kept as the input, as
    text: never lost); `message_delta` sets `stop_reason` and `stop_sequence`, its
    `stop_details` and any other key of its delta when not null, and merges its usage
    key by key (a null says nothing). Unknown keys, events, blocks and deltas are kept
    where they came; a delta of another type than its block's (a server's bug the SDK
    drops) is kept in `misplaced`.

    More lenient than the SDK, which raises: an event before `message_start` starts
    an empty message, which the `message_start` that follows merges into (its id,
    model and usage added, what came kept); a delta whose block never started starts
    one of the delta's type, which its `content_block_start` merges into (the texts
    that came kept); a text or thinking delta whose text is null adds nothing. A
    second `message_start` is ignored, as the SDK ignores it. Blocks are found by
    their index in a map: an index of 10**9 costs what an index of 1 does."""

    __slots__ = (
        "_at",
        "_inputs",
        "_pending",
        "_started",
        "error",
        "message",
        "misplaced",
    )

    def __init__(self) -> None:
        self.message: dict[str, Any] | None = None
        """The message so far (None before `message_start`)."""
        self._at: dict[int, int] = {}
        """The place in `content` of each block, by its index."""
        self._inputs: dict[int, str] = {}
        """The input pieces of each tool block, joined: its arguments as they came."""
        self._pending: set[int] = set()
        """The tool blocks whose input has pieces and has not been read yet."""
        self.error: Any = None
        """The error object of an `error` event, if one came."""
        self.misplaced: list[Any] = []
        """The deltas of another type than their block's, in order."""
        self._started = False
        """Whether `message_start` came (an event before it starts a message too)."""

    def add(self, event: Any) -> None:
        """Add one event (JSON data: a dict; anything else is a `TypeError`)."""
        if event.__class__ is not dict and not isinstance(cast(object, event), dict):
            raise _not_json_event(self, event)
        kind = event.get("type")
        if kind == "message_start":
            if not self._started:
                self._started = True
                self._start(event.get("message"))
            return
        if kind == "error":
            self.error = event.get("error", event)
            return
        if kind not in _MESSAGES_ACCUMULATED:
            return  # ping, message_stop, an unknown event
        if self.message is None:
            self.message = _messages_empty()
        if kind == "content_block_start":
            block: Any = event.get("content_block")
            index: Any = event.get("index")
            if block.__class__ is dict and index.__class__ is int:
                self._place(index, copy.deepcopy(block))
        elif kind == "content_block_delta":
            self._delta(event)
        elif kind == "content_block_stop":
            stopped: Any = event.get("index")
            if stopped.__class__ is int:
                self._parse(stopped)
        else:
            self._message_delta(event)

    def _start(self, given: Any) -> None:
        """`message_start`'s message; merged into the message events before it began
        (their blocks and usage kept, after the blocks it holds)."""
        message: dict[str, Any] = {}
        if given.__class__ is dict:
            message = copy.deepcopy(given)
        content: Any = message.get("content")
        if content.__class__ is not list:
            content = message["content"] = []
        came, at = self.message, self._at
        self.message, self._at = message, {}
        for place in range(len(content)):  # blocks it holds (programmatic tool calling)
            self._at[place] = place
        if came is None:
            return
        for key, value in came.items():
            if key == "usage" and value.__class__ is dict:
                usage: Any = message.get("usage")
                merged: dict[str, Any] = usage if usage.__class__ is dict else {}
                message["usage"] = {**merged, **value}  # what came later wins
            elif key != "content" and (value is not None or key not in message):
                message[key] = value
        blocks: list[Any] = came["content"]
        for index, place in at.items():
            if index not in self._at:
                self._at[index] = len(content)
                content.append(blocks[place])

    def _content(self) -> list[Any]:
        assert self.message is not None
        content: Any = self.message.get("content")
        if content.__class__ is not list:
            content = self.message["content"] = []
            self._at.clear()
        return cast(list[Any], content)

    def _place(self, index: int, block: dict[str, Any]) -> dict[str, Any]:
        """Put a block that starts at its index; one that deltas started already takes
        the start's keys, and keeps what its deltas brought."""
        content = self._content()
        place = self._at.get(index)
        if place is None:
            self._at[index] = len(content)
            content.append(block)
            return block
        came: Any = content[place]
        if came.__class__ is dict:
            block = _messages_merged(block, came)
        content[place] = block
        return block

    def _block(self, index: int) -> dict[str, Any] | None:
        place = self._at.get(index)
        if place is None:
            return None
        block: Any = self._content()[place]
        return block if block.__class__ is dict else None

    def _delta(self, event: Any) -> None:
        delta: Any = event.get("delta")
        index: Any = event.get("index")
        if delta.__class__ is not dict or index.__class__ is not int:
            return
        kind = delta.get("type")
        block = self._block(index)
        if block is None:
            started = _MESSAGES_STARTS.get(kind)
            if started is None:
                self.misplaced.append(event)
                return
            block = self._place(index, copy.deepcopy(started))
        has = block.get("type")
        if kind == "text_delta" and has == "text":
            so_far = _messages_str(block.get("text"))
            block["text"] = so_far + _messages_str(delta.get("text"))
        elif kind == "input_json_delta" and has in ("tool_use", "server_tool_use"):
            piece = delta.get("partial_json")
            if piece.__class__ is str and piece:
                self._inputs[index] = self._inputs.get(index, "") + piece
                self._pending.add(index)
        elif kind == "citations_delta" and has == "text":
            citations = block.get("citations")
            if citations.__class__ is not list or not citations:
                block["citations"] = [delta.get("citation")]
            else:
                citations.append(delta.get("citation"))
        elif kind == "thinking_delta" and has == "thinking":
            so_far = _messages_str(block.get("thinking"))
            block["thinking"] = so_far + _messages_str(delta.get("thinking"))
        elif kind == "signature_delta" and has == "thinking":
            block["signature"] = delta.get("signature")
        else:
            self.misplaced.append(event)

    def _parse(self, index: int) -> None:
        """The input of a tool block whose pieces are all here, read as JSON (kept as
        text when it is no JSON); a block without pieces keeps the input it began
        with."""
        if index not in self._pending:
            return
        self._pending.discard(index)
        block = self._block(index)
        if block is not None:
            block["input"] = _messages_parsed(self._inputs[index])

    def _message_delta(self, event: Any) -> None:
        message = self.message
        assert message is not None
        delta: Any = event.get("delta")
        if delta.__class__ is dict:
            message["stop_reason"] = delta.get("stop_reason")
            message["stop_sequence"] = delta.get("stop_sequence")
            for key, value in delta.items():
                if key not in ("stop_reason", "stop_sequence") and value is not None:
                    message[key] = copy.deepcopy(value)
        usage: Any = event.get("usage")
        if usage.__class__ is dict:
            merged: Any = message.get("usage")
            if merged.__class__ is not dict:
                merged = message["usage"] = {}
            for key, value in usage.items():
                if value is not None:
                    merged[key] = copy.deepcopy(value)

    def snapshot(self) -> dict[str, Any]:
        """The message so far, a copy (an empty one before any event), a valid Message
        at any point: a tool's input whose block has not stopped is its pieces so far
        once they make a JSON object, and until then the input its block started with
        (`summary()` gives the text they make)."""
        if self.message is None:
            return _messages_empty()
        message = copy.deepcopy(self.message)
        for index in self._pending:
            place = self._at.get(index)
            parsed = _messages_parsed(self._inputs[index])
            if place is not None and parsed.__class__ is dict:
                message["content"][place]["input"] = parsed
        return message

    def end(self) -> None:
        """Say that the stream has ended: the input of a tool whose block never stopped
        is read from its pieces, as its block's stop would read it."""
        for index in list(self._pending):
            self._parse(index)

    def result(self) -> dict[str, Any]:
        """The message, once the stream has ended (it calls `end()`; a stream cut off
        gives what came)."""
        self.end()
        if self.message is None:
            self.message = _messages_empty()
        return self.message

    def summary(self) -> Summary:
        """What the message says so far, in the terms of every protocol: the same
        `Summary` as a chat stream's (read from the message by `_MessagesReader`, a
        tool's arguments as the text its pieces made)."""
        message = copy.copy(self.message or {})
        content = message["content"] = list(message.get("content") or [])
        for index, text in self._inputs.items():
            place = self._at.get(index)
            if place is not None and content[place].__class__ is dict:
                content[place] = {**content[place], "input": text}
        return _summary_of_parts(
            _MessagesReader().read({"type": "message_start", "message": message})
        )


def _messages_empty() -> dict[str, Any]:
    """The message of a stream that said nothing yet."""
    return {"type": "message", "role": "assistant", "content": []}


_MESSAGES_ACCUMULATED = frozenset(
    (
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
    )
)
"""The events that change the message after `message_start`."""

_MESSAGES_STARTS: dict[Any, dict[str, Any]] = {
    "text_delta": {"type": "text", "text": ""},
    "citations_delta": {"type": "text", "text": ""},
    "thinking_delta": {"type": "thinking", "thinking": "", "signature": ""},
    "signature_delta": {"type": "thinking", "thinking": "", "signature": ""},
    "input_json_delta": {"type": "tool_use", "input": {}},
}
"""The block a delta whose block never started starts, by the delta's type."""


def _messages_str(value: Any) -> str:
    return value if value.__class__ is str else ""


_MESSAGES_JOINED: Final = ("text", "thinking")
"""The keys of a block whose texts add up, piece after piece."""


def _messages_merged(start: dict[str, Any], came: dict[str, Any]) -> dict[str, Any]:
    """A block's `content_block_start` merged into the block its deltas started before
    it: the start's keys, the texts that came after the start's own, the citations
    that came after the start's, and a signature that came kept."""
    merged = {**came, **start}
    for key in _MESSAGES_JOINED:
        if key in came:
            merged[key] = _messages_str(start.get(key)) + _messages_str(came[key])
    cited: Any = came.get("citations")
    if cited.__class__ is list and cited:
        given: Any = start.get("citations")
        merged["citations"] = (given if given.__class__ is list else []) + cited
    if came.get("signature"):
        merged["signature"] = came["signature"]
    return merged


def _messages_parsed(text: str) -> Any:
    """A tool's input from its JSON text; the text itself when it is no JSON."""
    try:
        return _json(text)
    except StreamDecodeError:
        return text
