"""Writing `Part`s, any protocol's, as the chunks of a chat stream in a dialect: the
chat half of every bridge into chat."""

# Private names are shared between these files and used by the generated code.
# pyright: reportPrivateUsage=false, reportUnusedFunction=false, reportUnusedClass=false

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator, Mapping
from typing import Any, Final, cast

from ..json_text import _wire_text
from ..parts import _ANTHROPIC_FORMAT, Citation, Identity, Part
from ..sse import StreamError
from ..writing import _EventWriter
from .dialects import _Dialect, _openai_usage, _ThinkBlocks
from .events import SSE_DONE, sse_error

_CHAT_ROLE: Final = {"role": "assistant", "content": ""}
"""The delta that opens a choice, as OpenAI writes it."""


class ChatLossWarning(UserWarning):
    """Parts a chat stream could not hold were left out of it (a tool the server ran,
    which chat has no place for): the writer's `dropped` counts them, by kind and
    why."""


class _ChatWriter(_EventWriter):
    """Writes the parts of one stream as chat chunks (`data: {...}` events; see
    `_EventWriter`), each meaning where the dialect writes it: the answer in `content`,
    a refusal in `refusal`, reasoning in the dialect's key (or in `content` between its
    tags), signatures and opaque reasoning as OpenRouter's `reasoning_details` entries
    (the one chat spelling that holds them), tool calls numbered from 0 in each choice,
    cited sources as `annotations` (those of no choice on the first), each finish
    reason on its choice, and the last usage report in one chunk after the last
    choice's, where OpenAI writes it (a cost as `usage.cost` and the tools the server
    ran as `server_tool_use_details.tool_calls_executed`, as OpenRouter writes them).
    The id, model and creation time come from the "start" part (a source that gives no
    creation time, as Messages, is given the time of writing), which writes the first
    chunk at once: choice 0 opened with its role, before the model's first token. The
    stream ends with `[DONE]`, or, after an "error" part or an error raised by the
    parts, with the usage said so far and the error (`sse_error`): never `[DONE]`. Each
    call gives the chunks of one part, or of the end, as one piece of bytes (or none).
    A completion holds every choice: unlike the other protocols' writers, parts of any
    choice are written, and a second start writes nothing. What is not written is
    counted in `dropped` and said once per stream in a `ChatLossWarning`."""

    __slots__ = (
        "_blocks",
        "_calls",
        "_dialect",
        "_entries",
        "_head",
        "_names",
        "_open",
    )

    _loss = ChatLossWarning
    _protocol = "chat"
    _noun = "completion"

    def __init__(self, dialect: _Dialect) -> None:
        super().__init__()
        self._dialect = dialect
        self._head: dict[str, Any] | None = None
        """The keys every chunk starts with: id, object, created, model."""
        self._open: set[int] = set()
        """The choices whose first delta (with the role) was written."""
        self._calls: dict[int, dict[object, int]] = {}
        """Of each choice, the index each of its calls was written with, by the call's
        own index or id."""
        self._blocks = _ThinkBlocks()
        self._entries: dict[tuple[int, str], int] = {}
        """Of each choice, how many entries each list it adds to has had."""
        self._names: dict[tuple[int, int], str] = {}
        """The name written so far of each call, by (choice, the call's index)."""

    def write(self, part: Part) -> list[bytes]:
        """The chunk of one part (none for a part that writes nothing yet); an "error"
        part ends the stream (`fail`)."""
        kind = part.kind
        if self._ended:
            self._drop(kind, f"after the end of the {self._noun}")
            return []
        if kind == "start":
            if self._head is not None:
                return []  # a second start, or one after the first chunk was written
            self._head = _chat_head(part.identity)
            # The first choice opened at once (its role, as OpenAI's first chunk): the
            # client hears before the first token, not after the model's prefill.
            return [self._chunk(0, {}, None)]
        if kind == "usage":
            if part.usage is not None:
                self._usage = part.usage
            return []
        if kind == "error":
            return self.fail(part.error, part.text)
        index = part.choice
        if index is None and kind == "citation":
            index = 0  # a source the stream cites (Perplexity's): on the first choice
        if index is None:
            return []
        delta: dict[str, Any] = {}
        finish = None
        if kind in ("text", "reasoning", "refusal"):
            self._texts(delta, index, kind, part.text)
        elif kind == "tool_call":
            self._close_think(delta, index)
            delta["tool_calls"] = [self._call(index, part)]
        elif kind == "signature" and part.tool_call is not None:
            # A signature that rides on a call goes back on it, where Gemini puts it.
            self._close_think(delta, index)
            call = self._call(index, Part("tool_call", index, "", None, part.tool_call))
            if "id" not in call and "name" not in call["function"]:
                call = {"index": call["index"]}  # the call is open: the signature alone
            google = {"google": {"thought_signature": part.text}}
            delta["tool_calls"] = [{**call, "extra_content": google}]
        elif kind in ("signature", "redacted_reasoning"):
            entry = {**_chat_detail(kind, part), "index": self._count(index, kind)}
            delta["reasoning_details"] = [entry]
        elif kind == "citation":
            if part.citation is None or not part.citation.url:
                # A place in a document or file the request gave: chat's needs a URL.
                self._drop(kind, "a citation without a URL has no place")
                return []
            delta["annotations"] = [self._annotation(index, part.citation)]
        elif kind == "finish":
            self._close_think(delta, index)
            finish = part.text
        else:
            self._drop(kind, "a tool the server ran: chat has no place for it")
            return []
        return [self._chunk(index, delta, finish)]

    def end(self) -> list[bytes]:
        """What follows the last part: the think blocks left open closed, the usage
        chunk, if any, and `[DONE]` (none once the stream has ended)."""
        if self._ended:
            return []
        self._ended = True
        out = b""
        for index in sorted(self._open):
            delta: dict[str, Any] = {}
            self._close_think(delta, index)
            if delta:
                out += self._chunk(index, delta, None)
        return [out + self._usage_chunk() + SSE_DONE]

    def fail(self, error: Any, message: str | None = None) -> list[bytes]:
        """The events that end a stream that failed, instead of `[DONE]`: the usage
        said before the error (a Messages `message_start`'s), which nothing after it
        would say, then the error (`_chat_failure`); `message` is the error's words
        when `error` is None. Without a report (a gateway holds it back from a chat
        client that did not ask for usage) only the error."""
        if self._ended:
            return []
        self._ended = True
        return [self._usage_chunk() + _chat_failure(error, message)]

    def _usage_chunk(self) -> bytes:
        """The usage chunk, where OpenAI writes it (b"" without a report): a cost as
        `usage.cost` and the tools the server ran as
        `server_tool_use_details.tool_calls_executed`, as OpenRouter writes them."""
        report = self._usage
        if report is None:
            return b""
        usage = _openai_usage({}, report)
        if report.cost_usd is not None:
            usage["cost"] = report.cost_usd
        if report.server_tool_calls is not None:
            runs = {"tool_calls_executed": report.server_tool_calls}
            usage["server_tool_use_details"] = runs
        return _chat_event({**self._start(), "choices": [], "usage": usage})

    def _count(self, index: int, kind: str) -> int:
        """The index of a choice's next entry of a list the chunks add to (as its
        `tool_calls`, each entry says its index: clients merge them by it)."""
        key = (index, "annotations" if kind == "citation" else "reasoning_details")
        at = self._entries.get(key, 0)
        self._entries[key] = at + 1
        return at

    def _annotation(self, index: int, citation: Citation) -> dict[str, Any]:
        """A cited web page as an entry of a choice's `annotations`."""
        cited = {"url": citation.url}
        if citation.title is not None:
            cited["title"] = citation.title
        at = self._count(index, "citation")
        return {"index": at, "type": "url_citation", "url_citation": cited}

    def _start(self) -> dict[str, Any]:
        if self._head is None:
            self._head = _chat_head(None)
        return dict(self._head)

    def _texts(self, delta: dict[str, Any], index: int, kind: str, text: str) -> None:
        tags = self._dialect.tags
        if kind == "refusal":
            self._close_think(delta, index)
            delta["refusal"] = text
        elif tags is None:
            delta[self._dialect.reasoning if kind == "reasoning" else "content"] = text
        elif kind == "reasoning":
            delta["content"] = self._blocks.tagged(index, text, "", False, tags)
        else:
            delta["content"] = self._blocks.tagged(index, "", text, False, tags)

    def _close_think(self, delta: dict[str, Any], index: int) -> None:
        """Close the think block a think-tags dialect opened (before what is not
        text)."""
        tags = self._dialect.tags
        if tags is not None:
            closed = self._blocks.tagged(index, "", "", True, tags)
            if closed:
                delta["content"] = delta.get("content", "") + closed

    def _call(self, index: int, part: Part) -> dict[str, Any]:
        which = part.tool_call
        key: object = None
        if which is not None:
            key = which.index if which.index is not None else which.id
        calls = self._calls.setdefault(index, {})
        if key is None:  # a piece that says no call: the latest
            key = next(reversed(calls), 0)
        at = calls.get(key)
        name = which.name if which is not None and which.name else ""
        if at is not None:
            function = {"arguments": part.text}
            written = self._names[(index, at)]
            if name and name != written:  # a piece of a name split across chunks
                self._names[(index, at)] = written + name
                function = {"name": name, **function}
            return {"index": at, "function": function}
        at = calls[key] = len(calls)
        self._names[(index, at)] = name
        call_id = which.id if which is not None and which.id else f"call_{at}"
        function = {"name": name, "arguments": part.text}
        return {"index": at, "id": call_id, "type": "function", "function": function}

    def _chunk(self, index: int, delta: dict[str, Any], finish: str | None) -> bytes:
        if index not in self._open:
            self._open.add(index)
            delta = {**_CHAT_ROLE, **delta}
        choice = {"index": index, "delta": delta, "finish_reason": finish}
        return _chat_event({**self._start(), "choices": [choice]})


def _chat_head(identity: Identity | None) -> dict[str, Any]:
    """The keys every chunk of a stream starts with, from the source's identity."""
    given = identity or Identity(None, None, None)
    created = given.created if given.created is not None else int(time.time())
    return {
        "id": given.id or f"chatcmpl-{uuid.uuid4().hex}",
        "object": "chat.completion.chunk",
        "created": created,
        "model": given.model or "",
    }


def _chat_detail(kind: str, part: Part) -> dict[str, Any]:
    """A signature or opaque reasoning as an entry of OpenRouter's
    `reasoning_details`. A signature not on a call is Anthropic's (a thinking block's,
    as every writer takes it), so its entry says so in OpenRouter's `format`: the next
    request reads it back as a Messages signature over the text in the reasoning key."""
    if kind == "signature":
        return {
            "type": "reasoning.text",
            "signature": part.text,
            "format": _ANTHROPIC_FORMAT,
        }
    return {"type": "reasoning.encrypted", "data": part.text}


def _chat_failure(error: Any, message: str | None = None) -> bytes:
    """The event that ends a stream that failed: the upstream's own error as it said
    it (a `StreamError`, an "error" part's error object), or what was raised or said,
    as an error object."""
    if isinstance(error, StreamError):
        return sse_error(error)
    if isinstance(error, Mapping):
        return sse_error(cast(Mapping[str, Any], error))
    if isinstance(error, BaseException):
        said = str(error) or type(error).__name__
    elif error is not None:
        said = str(error)
    else:
        said = message if message is not None else "the upstream stream failed"
    return sse_error({"message": said, "type": "upstream_error"})


def _chat_event(chunk: dict[str, Any]) -> bytes:
    return b"data: " + _wire_text(chunk).encode() + b"\n\n"


def _write_chat(parts: Iterable[Part], dialect: _Dialect) -> Iterator[bytes]:
    """`parts` (any protocol's) as the events of a chat stream (see `_ChatWriter`)."""
    return _ChatWriter(dialect).stream(parts)


def _awrite_chat(parts: AsyncIterable[Part], dialect: _Dialect) -> AsyncIterator[bytes]:
    """`_write_chat` for parts that arrive asynchronously."""
    return _ChatWriter(dialect).astream(parts)
