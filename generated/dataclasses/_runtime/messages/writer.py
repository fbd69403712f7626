"""Any protocol's `Part`s written as an Anthropic Messages stream: server-sent events
(`event: <type>` and `data: <compact JSON>`) that the strictest clients accept
(anthropic-sdk-python's `MessageStream`, the Vercel AI SDK's `@ai-sdk/anthropic`,
Claude Code)."""

# Private names are shared between these files and used by the generated code.
# pyright: reportPrivateUsage=false, reportUnusedFunction=false, reportUnusedClass=false

from __future__ import annotations

import re
import uuid
from collections import deque
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator
from typing import Any, Final

from ..errors import StreamDecodeError
from ..json_text import _json, _json_string, _json_text, _wire_text
from ..parts import _CALL_SCHEME, Identity, Part, UsageSummary, _marked, _name_joined
from ..sse import StreamError
from ..writing import _EventWriter


class MessagesLossWarning(UserWarning):
    """Parts a Messages stream could not hold were left out of it (another choice than
    the first, a web page another protocol cited, a tool the server ran): the
    writer's `dropped` counts them, by kind and why."""


_MESSAGES_STOP: Final = {
    "stop": "end_turn",
    "length": "max_tokens",
    "tool_calls": "tool_use",
    "content_filter": "refusal",
}
"""Chat's finish reasons as Anthropic's stop reasons; any other is kept as it is."""

_MESSAGES_ERROR_TYPES: Final = frozenset(
    (
        "invalid_request_error",
        "authentication_error",
        "billing_error",
        "permission_error",
        "not_found_error",
        "request_too_large",
        "rate_limit_error",
        "api_error",
        "timeout_error",
        "overloaded_error",
    )
)
"""The error types of Anthropic's API; an upstream's other type is an `api_error`."""


class _MessagesWriter(_EventWriter):
    """Writes one stream of `Part`s (from any protocol's reader) as Messages events
    (see `_EventWriter`).

    What the events hold, for any order of parts:

    - `message_start` first, once: `id` from the start part's identity (`msg_` and
      the source's id; a fresh one when the source said none), the model, role
      `assistant`, no content, no stop reason, and the usage so far (`input_tokens`
      and `output_tokens` 0 until the source says). It is written as the start part
      comes, before anything after it (the client hears at once, not after the
      model's first token), with the usage the start carries: a Messages source's
      `input_tokens` are in it. (Without a start part, it comes with the first part.)
    - Content blocks numbered from 0 without gaps, one open at a time, each started
      before its deltas and stopped before the next starts. A block ends where the
      parts' `block` changes (a Messages source) or their kind does (chat, whose
      parts have none): reasoning is a `thinking` block, text a `text` block (a
      refusal one of its own marked `"refusal": true`: Messages has no refusal
      text), opaque reasoning a `redacted_thinking` block, each tool call a
      `tool_use` block (its id from the call, or `toolu_` and the message's; its
      name, joined from the pieces a chat stream splits it in).
    - A tool call's block is written whole, once its arguments are: its pieces are
      held until they make a JSON value (a bracket that closes the first), or until
      nothing more can come for it (the choice finishes, the stream ends or fails;
      from a Messages source, a part of another block; from chat, another call
      starts after arguments that are no JSON object). Its input is valid JSON
      whatever came: the pieces as they came, as `input_json_delta`s, when they make
      a JSON object; `{}` when there were none; else the text they make under
      `_raw_arguments` (see `_RAW`). Messages cannot interleave blocks, chat streams
      can interleave calls (0, 1, 0, 1): each call's pieces are held apart, and what
      comes after a call that is not whole yet (other calls, reasoning a server
      interleaves with a call's last arguments) waits behind it, in order. What is
      held is what has not been written: the arguments, and the parts behind them.
      A piece of a call whose block was written is counted (whitespace aside).
    - A thinking block gets a `signature_delta` before it stops when a "signature"
      part comes for it; one without a signature gets none. (Anthropic's API always
      signs a thinking block, and refuses an unsigned one sent back to it on the next
      turn; other backends' reasoning has no signature to give.) A signature that
      rides on a chat tool call (Gemini's) is a thinking block of its own, with no
      text, right before the call's block, its signature marked with its scheme
      (`chunkspec:gemini:…`, see `_marked`): never taken for Anthropic's.
    - A citation that came from Messages (its `source` one of Anthropic's citation
      objects) is a `citations_delta` of the text block it belongs to (a new one when
      none is open); another (a web page cited by chat or Responses, which has no
      encrypted index of a search result) is counted.
    - `message_delta` once, after the last block: the stop reason in Anthropic's
      terms (`stop` is `end_turn`, `length` `max_tokens`, `tool_calls` `tool_use`,
      `content_filter` `refusal`; another kept as it is; null when the source sent
      none), and the usage always, in Anthropic's terms: `input_tokens` excludes the
      cache reads and writes (`prompt_tokens` less `cached_prompt_tokens` and
      `cache_write_tokens`), which are `cache_read_input_tokens` and
      `cache_creation_input_tokens`; the reasoning tokens are
      `output_tokens_details.thinking_tokens`; `output_tokens` is always a number (0
      when unknown); a count the source did not say is absent, never null; what
      Messages has no key for is kept in keys of its own (`cost_usd`,
      `server_tool_calls`, and `total_tokens` when it is not input plus output),
      which both SDKs leave alone.
    - `message_stop` last; or, when the source reported an error, was cut off, or its
      parts raised, an `error` event (`{"type": "error", "error": {"type", "message"}}`)
      instead of the rest (after `message_delta` when the source had finished: its
      stop reason and usage), never `message_stop`.

    A message holds one choice: parts of another are not written. What is not written
    is counted in `dropped`, by (kind, why), and said once per stream in a
    `MessagesLossWarning`."""

    __slots__ = (
        "_calls",
        "_id",
        "_latest",
        "_next",
        "_open",
        "_opened_with",
        "_queue",
        "_raw",
        "_stop",
        "_within",
    )

    _loss = MessagesLossWarning
    _protocol = "Messages"
    _noun = "message"

    def __init__(self) -> None:
        super().__init__()
        self._id = ""
        self._stop: str | None = None
        self._opened_with: UsageSummary | None = None
        """The usage `message_start` said."""
        self._next = 0  # the index of the next block
        self._open: _MessagesOpen | None = None
        self._calls: dict[object, _MessagesCall | None] = {}
        """Each tool call seen, by its key: held until written, then None."""
        self._latest: object = None
        """The key of the call the latest piece belonged to."""
        self._queue: deque[_MessagesCall | Part] = deque()
        """What waits to be written, in order: calls not whole yet, and the parts
        that came after the first of them."""
        self._within: list[_MessagesCall] = []
        """The held calls of a Messages source's blocks: done once another block's
        part comes."""
        self._raw: list[_MessagesCall] = []
        """The held calls of chat whose arguments are no JSON object: done once
        another call starts."""

    def write(self, part: Part) -> list[bytes]:
        """The events of one part (none, while it only tells what comes later, or
        waits behind a call not whole yet)."""
        out: list[bytes] = []
        if self._told(part):
            return out
        kind = part.kind
        if kind == "start":
            self._begin(out)  # at once: the client hears before the first token
            return out
        if kind == "error":
            return self.fail(part.error, part.text)
        self._begin(out)
        if part.block is not None:
            self._leave_blocks(part.block)
        if kind == "tool_call":
            self._tool_call(part)
        else:
            if kind == "finish":
                self._all_done()
            if self._queue:
                self._queue.append(part)
            else:
                self._emit(out, part)
        self._drain(out)
        return out

    def end(self) -> list[bytes]:
        """The last events: the calls held written, the open block stopped,
        `message_delta` and `message_stop`."""
        out: list[bytes] = []
        if self._ended:
            return out
        self._all_done()
        self._drain(out)
        self._begin(out)
        self._close(out)
        self._ended = True
        out.append(self._message_delta())
        out.append(_messages_event({"type": "message_stop"}))
        return out

    def _message_delta(self) -> bytes:
        delta = {"stop_reason": self._stop, "stop_sequence": None}
        usage = _messages_usage_object(self._usage, final=True)
        return _messages_event(
            {"type": "message_delta", "delta": delta, "usage": usage}
        )

    def fail(self, error: Any, message: str | None = None) -> list[bytes]:
        """The `error` event that ends the stream instead of `message_stop`: for an
        error object (its `type` kept when it is one of Anthropic's), a
        `StreamError`, or any other exception."""
        out: list[bytes] = []
        if self._ended:
            return out
        self._all_done()
        self._drain(out)  # what the source said before its error, written
        if self._stop is not None:
            # The source finished before it failed: its stop reason and usage go out
            # as a finished message says them, then the error (never message_stop).
            self._begin(out)
            self._close(out)
            out.append(self._message_delta())
        elif (self._usage or UsageSummary()) != (self._opened_with or UsageSummary()):
            self._drop("usage", "a message that failed has no message_delta to hold it")
        self._ended = True
        body = _messages_error(error, message)
        out.append(_messages_event({"type": "error", "error": body}))
        return out

    def _emit(self, out: list[bytes], part: Part) -> None:
        """Write a part that is no piece of a call, now."""
        kind = part.kind
        if kind == "text":
            if part.text:
                self._text(out, "text", "text", "text_delta", part)
        elif kind == "refusal":
            if part.text:
                self._refusal(out, part)
        elif kind == "reasoning":
            if part.text:
                self._text(out, "thinking", "thinking", "thinking_delta", part)
        elif kind == "signature":
            self._signature(out, part)
        elif kind == "redacted_reasoning":
            self._close(out)
            block = {"type": "redacted_thinking", "data": part.text}
            self._start(out, "redacted_thinking", part.block, block)
            self._close(out)
        elif kind == "finish":
            if part.text:
                self._stop = _MESSAGES_STOP.get(part.text, part.text)
        elif kind == "citation":
            self._citation(out, part)
        elif kind == "server_tool":
            self._drop(kind, "a tool the server ran has no block in Messages")
        else:
            self._drop(kind, "a kind of part Messages has no place for")

    def _drain(self, out: list[bytes]) -> None:
        """Write what waits, in order, up to the first call not whole yet."""
        queue = self._queue
        while queue:
            item = queue[0]
            if isinstance(item, _MessagesCall):
                if not item.ready():
                    return
                queue.popleft()
                self._write_call(out, item)
            else:
                queue.popleft()
                self._emit(out, item)

    def _all_done(self) -> None:
        """Nothing more comes for any call held: each is written as it is."""
        for item in self._queue:
            if isinstance(item, _MessagesCall):
                item.done = True
        self._within.clear()
        self._raw.clear()

    def _leave_blocks(self, block: int) -> None:
        """A Messages source's part of `block`: the calls of other blocks are done."""
        within = self._within
        if within and any(call.block != block for call in within):
            for call in within:
                call.done = call.done or call.block != block
            self._within = [call for call in within if not call.done]

    def _key(self, part: Part) -> object:
        """Which call a tool-call piece belongs to: its index, else its id, else the
        latest call's (a piece that says no call)."""
        which = part.tool_call
        if which is not None and which.index is not None:
            return ("index", which.index)
        if which is not None and which.id:
            return ("id", which.id)
        return self._latest if self._latest is not None else ("index", 0)

    def _begin(self, out: list[bytes]) -> None:
        """Write `message_start`, once."""
        if self._started:
            return
        self._started = True
        self._opened_with = self._usage
        identity = self._identity or Identity(None, None, None)
        source = identity.id
        if source is None:
            source = uuid.uuid4().hex
        self._id = source if source.startswith("msg_") else f"msg_{source}"
        message: dict[str, Any] = {
            "id": self._id,
            "type": "message",
            "role": "assistant",
            "model": identity.model or "",
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": _messages_usage_object(self._usage, final=False),
        }
        out.append(_messages_event({"type": "message_start", "message": message}))

    def _start(
        self, out: list[bytes], kind: str, key: object, block: dict[str, Any]
    ) -> _MessagesOpen:
        """Start a block (the open one is stopped first)."""
        self._close(out)
        index = self._next
        self._next += 1
        event = {"type": "content_block_start", "index": index, "content_block": block}
        out.append(_messages_event(event))
        self._open = _MessagesOpen(index, kind, key)
        return self._open

    def _close(self, out: list[bytes]) -> None:
        """Stop the open block."""
        block = self._open
        if block is None:
            return
        self._open = None
        out.append(
            _messages_event({"type": "content_block_stop", "index": block.index})
        )

    def _text(
        self, out: list[bytes], kind: str, key: str, delta: str, part: Part
    ) -> None:
        """A piece of text or reasoning: in the open block of its kind, unless the
        part belongs to another block, or the block is signed (a signature ends a
        thinking block); else in a new one."""
        block = self._open
        if (
            block is None
            or block.kind != kind
            or block.key != part.block
            or block.signed
        ):
            empty = {"type": kind, kind: ""}
            if kind == "thinking":
                empty["signature"] = ""
            block = self._start(out, kind, part.block, empty)
        out.append(_messages_delta(block.index, delta, key, part.text))

    def _refusal(self, out: list[bytes], part: Part) -> None:
        """A piece of a refusal: Messages has no refusal text, so a text block of its
        own, marked `"refusal": true` (a key both SDKs leave alone, which
        `_MessagesReader` reads back)."""
        block = self._open
        if block is None or block.kind != "refusal" or block.key != part.block:
            empty = {"type": "text", "text": "", "refusal": True}
            block = self._start(out, "refusal", part.block, empty)
        out.append(_messages_delta(block.index, "text_delta", "text", part.text))

    def _citation(self, out: list[bytes], part: Part) -> None:
        """A citation Messages made, as it came, in the text block it belongs to;
        another has no place (a web page's citation in Messages is a search result's,
        with its encrypted index)."""
        cited = part.citation
        source: Any = None if cited is None else cited.source
        if source.__class__ is not dict or source.get("type") not in _MESSAGES_CITED:
            self._drop("citation", "a citation Messages did not make has no place")
            return
        block = self._open
        if block is None or block.kind != "text" or block.key != part.block:
            block = self._start(out, "text", part.block, {"type": "text", "text": ""})
        delta = {"type": "citations_delta", "citation": source}
        event = {"type": "content_block_delta", "index": block.index, "delta": delta}
        out.append(_messages_event(event))

    def _signature(self, out: list[bytes], part: Part) -> None:
        """A signature, in the thinking block it signs: the open one; for a part of a
        block not written yet (a thinking block whose text is omitted), or one more
        signature, a new one. A signature of chat's with no thinking block open has
        no block to go in. One that rides on a chat tool call (Gemini's) is a thinking
        block of its own right before the call's block (see `_carrier`)."""
        if part.tool_call is not None and part.block is None:
            self._call_signature(out, part)
            return
        block = self._open
        thinking = block is not None and block.kind == "thinking"
        if (
            block is None
            or not thinking
            or block.signed
            or (part.block is not None and block.key != part.block)
        ):
            if part.block is None and not (thinking and block and block.signed):
                self._drop("signature", "no thinking block is open to hold it")
                return
            empty = {"type": "thinking", "thinking": "", "signature": ""}
            block = self._start(out, "thinking", part.block, empty)
        block.signed = True
        out.append(
            _messages_delta(block.index, "signature_delta", "signature", part.text)
        )

    def _call_signature(self, out: list[bytes], part: Part) -> None:
        """A signature that rides on a chat tool call: written before the call's
        block, now or when the call is (one for a call whose block was written can
        no longer go before it)."""
        key = self._key(part)
        if key not in self._calls:
            self._carrier(out, part.text)
            return
        call = self._calls[key]
        if call is None or call.signature is not None:
            self._drop("signature", "its call's block had begun")
            return
        call.signature = part.text

    def _carrier(self, out: list[bytes], signature: str) -> None:
        """A thinking block of its own for a signature that rides on a call, its
        signature marked with its scheme (`_marked`), which Claude Code sends back
        and `to_request` puts back on that call."""
        empty = {"type": "thinking", "thinking": "", "signature": ""}
        carrier = self._start(out, "thinking", None, empty)
        carrier.signed = True
        marked = _marked(_CALL_SCHEME, signature)
        out.append(
            _messages_delta(carrier.index, "signature_delta", "signature", marked)
        )
        self._close(out)

    def _tool_call(self, part: Part) -> None:
        """A piece of a tool call: held with its call (a call not seen before is held
        behind what waits already)."""
        key = self._key(part)
        self._latest = key
        if key not in self._calls:
            for raw in self._raw:  # chat: a call after one that is no object
                raw.done = True
            self._raw.clear()
            held = self._calls[key] = _MessagesCall(key, part.block)
            self._queue.append(held)
            if part.block is not None:
                self._within.append(held)
        call = self._calls[key]
        if call is None:
            if part.text.strip():
                self._drop("tool_call", "a piece of a call whose block had closed")
            return
        if call.add(part) and part.block is None:
            self._raw.append(call)

    def _write_call(self, out: list[bytes], call: _MessagesCall) -> None:
        """A call's block, whole: its signature's block first, if one came."""
        self._calls[call.key] = None
        if call.signature is not None:
            self._carrier(out, call.signature)
        ident = call.id
        if ident is None:
            ident = f"toolu_{self._id.removeprefix('msg_')}_{self._next}"
        tool: dict[str, Any] = {"type": "tool_use", "id": ident, "name": call.name}
        tool["input"] = {}
        block = self._start(out, "tool_use", call.key, tool)
        for piece in call.input():
            out.append(
                _messages_delta(block.index, "input_json_delta", "partial_json", piece)
            )
        self._close(out)


_RAW: Final = "_raw_arguments"
"""The key a tool call's arguments that are no JSON object (a server's cut or broken
text) are written under, as the one key of the call's input: Messages holds an
object there, and its clients refuse anything else. `_MessagesReader` reads them
back as the text they were."""

_MESSAGES_CITED: Final = frozenset(
    (
        "char_location",
        "page_location",
        "content_block_location",
        "search_result_location",
        "web_search_result_location",
    )
)
"""The citations Messages makes (`TextCitation`), carried as they came."""


class _MessagesOpen:
    """The block being written."""

    __slots__ = ("index", "key", "kind", "signed")

    def __init__(self, index: int, kind: str, key: object) -> None:
        self.index = index
        self.kind = kind
        self.key = key
        """What the parts of this block share: their `block` (None from chat), or,
        for a tool call, its index or id."""
        self.signed = False
        """Whether a thinking block has had its signature."""


_MESSAGES_BRACKETS: Final = re.compile(r'["{}\[\]]')
"""What changes the depth of JSON text outside its strings (a quote opens one)."""

_MESSAGES_QUOTED: Final = re.compile(r'["\\]')
"""What ends a JSON string, or escapes the character after it."""


class _MessagesCall:
    """A tool call held until its block can be written whole: its id, its name
    joined from its pieces, the pieces of its arguments, and how far they have come
    (the depth of their brackets, outside strings: they are whole once the first
    bracket closes)."""

    __slots__ = (
        "block",
        "depth",
        "done",
        "escaped",
        "first",
        "id",
        "key",
        "name",
        "pieces",
        "quoted",
        "signature",
        "whole",
    )

    def __init__(self, key: object, block: int | None) -> None:
        self.key = key
        self.block = block
        self.id: str | None = None
        self.name = ""
        self.pieces: list[str] = []
        self.signature: str | None = None
        """A signature that rode on the call (Gemini's), for a block before it."""
        self.first = ""
        """The first character of the arguments that is no whitespace."""
        self.depth = 0
        self.quoted = False
        self.escaped = False
        self.whole = False
        """Whether the arguments' first bracket has closed."""
        self.done = False
        """Whether nothing more can come for the call."""

    def ready(self) -> bool:
        return self.done or self.whole

    def add(self, part: Part) -> bool:
        """Add a part's id, piece of name and piece of arguments; True when the
        arguments have just shown they are no JSON object."""
        which = part.tool_call
        if which is not None:
            if self.id is None and which.id:
                self.id = which.id
            self.name = _name_joined(self.name, which.name) or ""
        text = part.text
        if not text:
            return False
        self.pieces.append(text)
        if self.first:
            self._scan(text)
            return False
        self.first = text.lstrip()[:1]
        if not self.first:
            return False
        self._scan(text)
        return self.first != "{"

    def _scan(self, text: str) -> None:
        """Follow the brackets of a piece (strings and their escapes skipped)."""
        at, end = 0, len(text)
        if self.escaped:
            self.escaped, at = False, 1
        while at < end and not self.whole:
            found = (_MESSAGES_QUOTED if self.quoted else _MESSAGES_BRACKETS).search(
                text, at
            )
            if found is None:
                return
            at = found.end()
            mark = found.group()
            if mark == '"':
                self.quoted = not self.quoted
            elif mark == "\\":
                self.escaped = at == end
                at += 1
            elif mark in "{[":
                self.depth += 1
            else:
                self.depth -= 1
                self.whole = self.depth == 0

    def input(self) -> list[str]:
        """The pieces of the block's input: as they came when they make a JSON
        object, `{}` for none, else their text under `_RAW` (white space too: a
        custom tool's input may be only that)."""
        text = "".join(self.pieces)
        if not text:
            return ["{}"]
        if self.first == "{":
            try:
                value = _json(text)
            except StreamDecodeError:
                value = None
            if value.__class__ is dict:
                return self.pieces
        return [_wire_text({_RAW: text})]


def _messages_event(data: dict[str, Any]) -> bytes:
    """One event: its type and its compact JSON (which holds no line end)."""
    text = _wire_text(data)
    return (
        b"event: " + str(data["type"]).encode() + b"\ndata: " + text.encode() + b"\n\n"
    )


def _messages_delta(index: int, kind: str, key: str, text: str) -> bytes:
    """A `content_block_delta` event: the event of nearly every part, written around
    its text alone (`kind` and `key` are the writer's own names, which need no
    escape), as `_messages_event` would write it."""
    return b"".join(
        (
            b'event: content_block_delta\ndata: {"type":"content_block_delta","index":',
            str(index).encode(),
            b',"delta":{"type":"',
            kind.encode(),
            b'","',
            key.encode(),
            b'":',
            _json_string(text),
            b"}}\n\n",
        )
    )


def _messages_usage_object(usage: UsageSummary | None, final: bool) -> dict[str, Any]:
    """A usage in Anthropic's terms. `message_start`'s (not `final`) has both counts,
    0 while unknown; `message_delta`'s has every count known, `output_tokens` always."""
    u = usage or UsageSummary()
    out: dict[str, Any] = {}
    cached = u.cached_prompt_tokens
    written = u.cache_write_tokens
    if u.prompt_tokens is not None:
        out["input_tokens"] = max(u.prompt_tokens - (cached or 0) - (written or 0), 0)
    elif not final:
        out["input_tokens"] = 0
    if written is not None:
        out["cache_creation_input_tokens"] = written
    if cached is not None:
        out["cache_read_input_tokens"] = cached
    out["output_tokens"] = u.completion_tokens or 0
    if not final:
        return out
    if u.reasoning_tokens is not None:
        out["output_tokens_details"] = {"thinking_tokens": u.reasoning_tokens}
    if u.server_tool_calls is not None:
        out["server_tool_calls"] = u.server_tool_calls
    if u.cost_usd is not None:
        out["cost_usd"] = u.cost_usd
    total = u.total_tokens
    if total is not None and (
        u.prompt_tokens is None
        or u.completion_tokens is None
        or total != u.prompt_tokens + u.completion_tokens
    ):
        out["total_tokens"] = total
    return out


def _messages_error(error: Any, message: str | None) -> dict[str, str]:
    """An error as Messages writes one: a `type` of Anthropic's and a `message`."""
    if isinstance(error, StreamError):
        kind: Any = error.type
        said: Any = error.message
    elif isinstance(error, BaseException):
        kind, said = None, f"{type(error).__name__}: {error}"
    elif error.__class__ is dict:
        kind, said = error.get("type"), error.get("message")
    else:
        kind, said = None, error
    if message:
        said = message
    if said is None:
        said = "the upstream stream failed"
    elif said.__class__ is not str:
        said = _json_text(said)
    return {
        "type": kind if kind in _MESSAGES_ERROR_TYPES else "api_error",
        "message": str(said),
    }


def _write_messages(parts: Iterable[Part]) -> Iterator[bytes]:
    """`parts` (any protocol's) as the events of a Messages stream (see
    `_MessagesWriter`)."""
    return _MessagesWriter().stream(parts)


def _awrite_messages(parts: AsyncIterable[Part]) -> AsyncIterator[bytes]:
    """`_write_messages` for parts that arrive asynchronously."""
    return _MessagesWriter().astream(parts)
