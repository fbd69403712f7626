"""Any protocol's `Part`s written as an Anthropic Messages stream: server-sent events
(`event: <type>` and `data: <compact JSON>`) that the strictest clients accept
(anthropic-sdk-python's `MessageStream`, the Vercel AI SDK's `@ai-sdk/anthropic`,
Claude Code)."""

# Private names are shared between these files and used by the generated code.
# pyright: reportPrivateUsage=false, reportUnusedFunction=false, reportUnusedClass=false

from __future__ import annotations

import uuid
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator
from typing import Any, Final

from ..json_text import _json_string, _json_text, _wire_text
from ..parts import _CALL_SCHEME, Identity, Part, UsageSummary, _marked
from ..sse import StreamError
from ..writing import _EventWriter


class MessagesLossWarning(UserWarning):
    """Parts a Messages stream could not hold were left out of it (another choice than
    the first, a citation without its location, a tool the server ran): the writer's
    `dropped` counts them, by kind and why."""


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
      name), whose input comes
      as `input_json_delta`s carrying every piece, the first one included; a call
      that got no arguments gets `{}`. A piece of another call (another index or
      id) closes the call's block. Chat's parts say no block, so while a call of
      theirs is open the parts that are not its pieces (reasoning a server
      interleaves with a call's last arguments) are held, and written after its
      block, once another call starts, the choice finishes, or the stream ends. A
      piece of a call whose block has closed (two calls' pieces interleaved) can no
      longer be written, and is counted.
    - A thinking block gets a `signature_delta` before it stops when a "signature"
      part comes for it; one without a signature gets none. (Anthropic's API always
      signs a thinking block, and refuses an unsigned one sent back to it on the next
      turn; other backends' reasoning has no signature to give.) A signature that
      rides on a chat tool call (Gemini's) is a thinking block of its own, with no
      text, right before the call's block, its signature marked with its scheme
      (`chunkspec:gemini:…`, see `_marked`): never taken for Anthropic's.
    - `message_delta` once, after the last block: the stop reason in Anthropic's
      terms (`stop` is `end_turn`, `length` `max_tokens`, `tool_calls` `tool_use`,
      `content_filter` `refusal`; another kept as it is; null when the source sent
      none), and the usage always, in Anthropic's terms: `input_tokens` excludes the
      cache reads and writes (`prompt_tokens` less `cached_prompt_tokens` and
      `cache_write_tokens`), which are `cache_read_input_tokens` and
      `cache_creation_input_tokens`; `output_tokens` is always a number (0 when
      unknown); a count the source did not say is absent, never null; what Messages
      has no key for is kept in keys of its own (`cost_usd`, `reasoning_tokens`,
      `server_tool_calls`, and `total_tokens` when it is not input plus output),
      which both SDKs leave alone.
    - `message_stop` last; or, when the source reported an error, was cut off, or its
      parts raised, an `error` event (`{"type": "error", "error": {"type", "message"}}`)
      instead of the rest, never `message_stop`.

    A message holds one choice: parts of another are not written. What is not written
    is counted in `dropped`, by (kind, why), and said once per stream in a
    `MessagesLossWarning`."""

    __slots__ = (
        "_calls",
        "_held",
        "_id",
        "_latest",
        "_next",
        "_open",
        "_stop",
    )

    _loss = MessagesLossWarning
    _protocol = "Messages"
    _noun = "message"

    def __init__(self) -> None:
        super().__init__()
        self._id = ""
        self._stop: str | None = None
        self._next = 0  # the index of the next block
        self._open: _MessagesOpen | None = None
        self._calls: dict[object, int | None] = {}
        """Each tool call seen, by its key, with its block's index (None: closed)."""
        self._latest: object = None
        """The key of the call the latest piece belonged to."""
        self._held: list[Part] | None = None
        """While a call from chat (whose parts have no `block`) is open: the parts
        that came since, other than its pieces, written once it is done."""

    def write(self, part: Part) -> list[bytes]:
        """The events of one part (none, while it only tells what comes later)."""
        out: list[bytes] = []
        if self._told(part):
            return out
        kind = part.kind
        if kind == "start":
            self._begin(out)  # at once: the client hears before the first token
            return out
        held = self._held
        if held is not None and not (
            kind == "tool_call" and self._key(part) == self._open_key()
        ):
            if kind in ("finish", "error") or (
                kind == "tool_call" and self._key(part) not in self._calls
            ):
                self._flush(out)  # the call's block is done: what waited follows it
            elif kind != "tool_call":
                held.append(part)  # the open call may have more pieces
                return out
        if kind == "error":
            return out + self.fail(part.error, part.text)
        self._begin(out)
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
        elif kind == "tool_call":
            self._tool_call(out, part)
        elif kind == "finish":
            if part.text:
                self._stop = _MESSAGES_STOP.get(part.text, part.text)
        elif kind == "citation":
            self._drop(kind, "a citation needs its location in a document or page")
        elif kind == "server_tool":
            self._drop(kind, "a tool the server ran has no block in Messages")
        else:
            self._drop(kind, "a kind of part Messages has no place for")
        return out

    def end(self) -> list[bytes]:
        """The last events: the open block stopped, `message_delta` and
        `message_stop`."""
        out: list[bytes] = []
        if self._ended:
            return out
        self._flush(out)
        self._begin(out)
        self._close(out)
        self._ended = True
        delta = {"stop_reason": self._stop, "stop_sequence": None}
        usage = _messages_usage_object(self._usage, final=True)
        out.append(
            _messages_event({"type": "message_delta", "delta": delta, "usage": usage})
        )
        out.append(_messages_event({"type": "message_stop"}))
        return out

    def fail(self, error: Any, message: str | None = None) -> list[bytes]:
        """The `error` event that ends the stream instead of `message_stop`: for an
        error object (its `type` kept when it is one of Anthropic's), a
        `StreamError`, or any other exception."""
        out: list[bytes] = []
        if self._ended:
            return out
        self._flush(out)  # what the source said before its error, written
        self._ended = True
        body = _messages_error(error, message)
        out.append(_messages_event({"type": "error", "error": body}))
        return out

    def _flush(self, out: list[bytes]) -> None:
        """Stop the open call's block, and write the parts held while it was open."""
        held = self._held
        if held is None:
            return
        self._held = None
        self._close(out)
        for part in held:
            out.extend(self.write(part))

    def _open_key(self) -> object:
        block = self._open
        return None if block is None else block.key

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
        """Stop the open block; a tool call that got no arguments gets `{}`."""
        block = self._open
        if block is None:
            return
        self._open = None
        if block.kind == "tool_use":
            if block.raw is not None:
                text = _wire_text({_RAW: "".join(block.raw)})
                out.append(
                    _messages_delta(
                        block.index, "input_json_delta", "partial_json", text
                    )
                )
            elif not block.wrote:
                out.append(
                    _messages_delta(
                        block.index, "input_json_delta", "partial_json", "{}"
                    )
                )
            self._calls[block.key] = None
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

    def _signature(self, out: list[bytes], part: Part) -> None:
        """A signature, in the thinking block it signs: the open one; for a part of a
        block not written yet (a thinking block whose text is omitted), or one more
        signature, a new one. A signature of chat's with no thinking block open has
        no block to go in. One that rides on a chat tool call (Gemini's) is a thinking
        block of its own right before the call's block, its signature marked with its
        scheme (`_marked`), which Claude Code sends back and `to_request` puts back on
        that call; one for a call whose block has begun can no longer go before it."""
        if part.tool_call is not None and part.block is None:
            if self._key(part) in self._calls:
                self._drop("signature", "its call's block had begun")
                return
            empty = {"type": "thinking", "thinking": "", "signature": ""}
            carrier = self._start(out, "thinking", None, empty)
            carrier.signed = True
            signature = _marked(_CALL_SCHEME, part.text)
            out.append(
                _messages_delta(
                    carrier.index, "signature_delta", "signature", signature
                )
            )
            self._close(out)
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

    def _tool_call(self, out: list[bytes], part: Part) -> None:
        """A piece of a tool call's arguments, in its block: a call not seen before
        starts one (stopping the open block)."""
        which = part.tool_call
        key = self._key(part)
        self._latest = key
        block = self._open
        if block is None or block.kind != "tool_use" or block.key != key:
            if key in self._calls:
                if part.text:
                    self._drop("tool_call", "a piece of a call whose block had closed")
                return
            ident = which.id if which is not None and which.id else None
            if ident is None:
                ident = f"toolu_{self._id.removeprefix('msg_')}_{self._next}"
            name = which.name if which is not None and which.name else ""
            tool: dict[str, Any] = {"type": "tool_use", "id": ident, "name": name}
            tool["input"] = {}
            block = self._start(out, "tool_use", key, tool)
            self._calls[key] = block.index
            if part.block is None:
                self._held = []  # chat: the call may go on after other parts
        if part.text:
            if (
                block.raw is None
                and not block.wrote
                and part.text.lstrip()[:1] not in "{"
            ):
                block.raw = []  # arguments that are no JSON object: see `_RAW`
            if block.raw is not None:
                block.raw.append(part.text)
                return
            block.wrote = bool(part.text.strip()) or block.wrote
            out.append(
                _messages_delta(
                    block.index, "input_json_delta", "partial_json", part.text
                )
            )


_RAW: Final = "_raw_arguments"
"""The key a tool call's arguments that are no JSON object (a server's cut or broken
text) are written under, as the one key of the call's input: Messages holds an
object there, and its clients refuse anything else. `_MessagesReader` reads them
back as the text they were."""


class _MessagesOpen:
    """The block being written."""

    __slots__ = ("index", "key", "kind", "raw", "signed", "wrote")

    def __init__(self, index: int, kind: str, key: object) -> None:
        self.index = index
        self.kind = kind
        self.raw: list[str] | None = None
        """The pieces of a tool call's arguments that are no JSON object (see
        `_RAW`), held until its block stops."""
        self.key = key
        """What the parts of this block share: their `block` (None from chat), or,
        for a tool call, its index or id."""
        self.wrote = False
        """Whether a tool call's block has had a piece of its arguments."""
        self.signed = False
        """Whether a thinking block has had its signature."""


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
        out["reasoning_tokens"] = u.reasoning_tokens
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
