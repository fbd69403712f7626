"""Any protocol's `Part`s written as a Responses stream: server-sent events (`event:
<type>` and `data: <compact JSON>`) that the strictest clients accept (openai-python's
`ResponseStreamState`, the Vercel AI SDK's OpenAI Responses model, Codex)."""

# Private names are shared between these files and used by the generated code.
# pyright: reportPrivateUsage=false, reportUnusedFunction=false, reportUnusedClass=false

from __future__ import annotations

import copy
import time
import uuid
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator, Mapping
from typing import Any, Final

from ..json_text import _json_string, _json_text, _wire_text
from ..parts import (
    _CALL_SCHEME,
    _REASONING_SEPARATOR,
    Citation,
    Identity,
    Part,
    ToolCallPart,
    UsageSummary,
    _marked,
    _name_joined,
)
from ..sse import StreamError
from ..writing import _EventWriter
from .reader import _RESPONSES_INCOMPLETE


class ResponsesLossWarning(UserWarning):
    """Parts a Responses stream could not hold were left out of it (another choice
    than the first, a tool another protocol's server ran): the writer's `dropped`
    counts them, by kind and why."""


_RESPONSES_ENDS: Final[dict[str, str | None]] = {
    "stop": None,
    "tool_calls": None,
    "function_call": None,
    "length": "max_output_tokens",
    "content_filter": "content_filter",
    # Anthropic's: the output was cut off, by the window rather than the limit.
    "model_context_window_exceeded": "max_output_tokens",
}
"""The finish reasons (chat's, and those other protocols keep as they are) a response
can end with: None, `completed`; else `incomplete`, and why, in Responses' terms. A
reason a response ends otherwise than it reads back (`_RESPONSES_INCOMPLETE`), or one
not listed (`pause_turn`: `completed`), is counted in `dropped`."""

_OPAQUE_KEYS: Final = (
    ("encrypted_content", "redacted_reasoning"),
    ("signature", "signature"),
)
"""The keys a reasoning item holds opaque reasoning in, and the kind of its part."""

_RESPONSES_PREFIXES: Final = ("resp_", "chatcmpl-", "msg_", "gen-")
"""The prefixes of the source's response id left out of the ids made from it."""


class _ResponsesWriter(_EventWriter):
    """Writes one stream of `Part`s (from any protocol's reader) as Responses events
    (see `_EventWriter`).

    What the events hold, for any order of parts:

    - `response.created` then `response.in_progress` first, once, with the response
      in progress: `id` from the start part's identity (`resp_` and the source's id;
      a fresh one when the source said none), its model and `created_at`, no output.
      They are written as the start part comes, before anything after it (the
      client hears at once, not after the model's first token); without a start
      part, with the first part.
    - `sequence_number` on every event, from 0 without gaps.
    - Output items numbered from 0 without gaps (`output_index`), each added before
      its parts and deltas and done once, before the terminal event, with the
      `item_id` (and a call's `call_id` and name) it was added with. Text and refusal
      are parts of a `message` item (`output_text`, `refusal`); reasoning is the
      summary text of a `reasoning` item (the text both SDKs read; Responses' raw
      `reasoning_text` is ignored by the Vercel AI SDK); opaque reasoning is its
      `encrypted_content`, and a signature (Anthropic's) its `signature` key, which
      both SDKs leave alone and `_ResponsesReader` reads back; a signature that
      rides on a chat tool call (Gemini's) a reasoning item of its own before the
      call's, its `encrypted_content` the signature marked with its scheme
      (`chunkspec:gemini:…`, see `_marked`). Each tool call is a
      `function_call` item whose arguments come as deltas; calls stay open side by
      side (chat interleaves them) and are done when the response is; a call is
      added once its name is whole (chat may split it across chunks: the call's
      parts without arguments are held until a piece of them, or another part,
      comes; a piece of its name after that is counted in `dropped`). A message or
      reasoning item ends where the parts' `block` changes (a Messages or
      Responses source) or their kind does; the reasoning of a Responses item keeps
      its summary parts (the reader's `_REASONING_SEPARATOR` between them ends one).
      A citation read from a Responses stream is its annotation as it came; another
      is a `url_citation` annotation at the end of the text so far, and one without
      a URL (a document's) is counted in `dropped`. A tool the server ran, read from
      a Responses stream, is written as its item, whole.
    - Every `*.done` says the text its deltas joined; `output_item.done` the item
      whole (`status` "completed").
    - One terminal event, last: `response.completed`; `response.incomplete` for a
      `length` or `model_context_window_exceeded` (`max_output_tokens`) or
      `content_filter` finish (see `_RESPONSES_ENDS`); and when the source
      reported an error, was cut off, or its parts raised, an `error` event then
      `response.failed`, never `completed`; the items still open then (the error cut
      them off) are never done, and the failed response holds only the items done
      before it (Codex keeps every item done, whatever its status, and sends it back
      on its retry): the opaque reasoning of an item cut off is counted in `dropped`,
      and so are the usage and finish reason of a failed response (openai-python
      raises at the `error` event, and never reads the `response.failed` after it,
      which holds the usage). The final response holds every item done, and the
      usage always: `input_tokens` includes the cached ones
      (`input_tokens_details.cached_tokens`), reasoning tokens are in
      `output_tokens_details`, a count the source did not say is 0;
      the cost is `cost` (OpenRouter's key) and the tools the server ran
      `num_server_side_tools_used` (xAI's).

    A response holds one choice: parts of another are not written."""

    __slots__ = (
        "_base",
        "_calls",
        "_created",
        "_finish",
        "_held",
        "_id",
        "_items",
        "_latest",
        "_names",
        "_number",
        "_open",
    )

    _loss = ResponsesLossWarning
    _protocol = "Responses"
    _noun = "response"

    def __init__(self, tool_names: Mapping[str, tuple[str, str]] | None = None) -> None:
        super().__init__()
        self._names = tool_names or {}
        """A call's flat name: its namespace and name (the request's `_tool_names`)."""
        self._id = ""
        self._base = ""
        self._created = 0
        self._finish: str | None = None
        self._number = 0  # the next sequence_number
        self._items: list[dict[str, Any] | None] = []
        """Each item written, by `output_index`, once done (None while open)."""
        self._open: _ResponsesOpen | None = None
        """The message or reasoning item being written."""
        self._calls: dict[object, _ResponsesOpen | None] = {}
        """Each tool call seen, by its key, with its item (None once done)."""
        self._latest: object = None
        """The key of the call the latest piece belonged to."""
        self._held: tuple[object, ToolCallPart] | None = None
        """A call not yet added, its key, and its id and name so far."""

    def write(self, part: Part) -> list[bytes]:
        """The events of one part (none, while it only tells what comes later)."""
        out: list[bytes] = []
        if self._told(part):
            return out
        kind = part.kind
        if kind == "start":
            self._begin(out)  # at once: the client hears before the first token
            return out
        if kind == "finish":
            if part.text:
                self._finish = part.text
            return out
        if kind == "error":
            return self.fail(part.error, part.text)
        self._begin(out)
        if not self._of_held(part):
            self._release(out)
        if kind in ("text", "refusal"):
            if part.text:
                self._text(out, kind, part)
        elif kind == "reasoning":
            if part.text:
                self._reasoning(out, part)
        elif kind in ("signature", "redacted_reasoning"):
            self._opaque(out, part)
        elif kind == "tool_call":
            self._tool_call(out, part)
        elif kind == "citation":
            self._cite(out, part)
        elif kind == "server_tool":
            self._server_tool(out, part)
        else:
            self._drop(kind, "a kind of part Responses has no place for")
        return out

    def end(self) -> list[bytes]:
        """The last events: every open item done, then `response.completed` (or
        `response.incomplete`)."""
        out: list[bytes] = []
        if self._ended:
            return out
        self._begin(out)
        self._release(out)
        self._close_all(out, "completed")
        self._ended = True
        why = self._end_reason()
        response = self._response("incomplete" if why else "completed")
        response["usage"] = _responses_usage_object(self._usage)
        if why:
            response["incomplete_details"] = {"reason": why}
            out.append(self._event("response.incomplete", {"response": response}))
        else:
            out.append(self._event("response.completed", {"response": response}))
        return out

    def fail(self, error: Any, message: str | None = None) -> list[bytes]:
        """The events that end the stream with an error instead: open items left
        undone (`_cut_off`), an `error` event (nested, as OpenAI's API sends it) and
        `response.failed`, for an error object, a `StreamError`, or any other
        exception."""
        out: list[bytes] = []
        if self._ended:
            return out
        self._begin(out)
        self._release(out)
        self._cut_off()
        self._unread()
        self._ended = True
        body = _responses_error(error, message)
        out.append(self._event("error", {"error": body}))
        response = self._response("failed")
        code = body["code"] or "server_error"
        response["error"] = {"code": code, "message": body["message"]}
        response["usage"] = _responses_usage_object(self._usage)
        out.append(self._event("response.failed", {"response": response}))
        return out

    def _end_reason(self) -> str | None:
        """Why the response is incomplete (None: it is complete), and a finish
        reason it cannot say counted."""
        finish = self._finish
        if finish is None:
            return None
        if finish not in _RESPONSES_ENDS:
            self._drop("finish", f"{finish}: no response ends so; written completed")
            return None
        why = _RESPONSES_ENDS[finish]
        if why is not None and _RESPONSES_INCOMPLETE.get(why, why) != finish:
            self._drop("finish", f"{finish}: written incomplete, {why}")
        return why

    def _event(self, kind: str, data: dict[str, Any]) -> bytes:
        """One event, numbered: its type and its compact JSON."""
        data = {"type": kind, "sequence_number": self._number, **data}
        self._number += 1
        text = _wire_text(data)
        return b"event: " + kind.encode() + b"\ndata: " + text.encode() + b"\n\n"

    def _delta(self, kind: str, item: _ResponsesOpen, where: str, text: str) -> bytes:
        """A delta event: the event of nearly every part, written around its text
        alone, as `_event` would write it (`where` is the rest of its address)."""
        number = self._number
        self._number += 1
        return b"".join(
            (
                b"event: ",
                kind.encode(),
                b'\ndata: {"type":"',
                kind.encode(),
                b'","sequence_number":',
                str(number).encode(),
                b',"item_id":',
                _json_string(item.id),
                b',"output_index":',
                str(item.index).encode(),
                where.encode(),
                b',"delta":',
                _json_string(text),
                b"}\n\n",
            )
        )

    def _response(self, status: str) -> dict[str, Any]:
        identity = self._identity or Identity(None, None, None)
        return {
            "id": self._id,
            "object": "response",
            "created_at": self._created,
            "status": status,
            "error": None,
            "incomplete_details": None,
            "model": identity.model or "",
            "output": [item for item in self._items if item is not None],
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            "usage": None,
        }

    def _begin(self, out: list[bytes]) -> None:
        """Write `response.created` and `response.in_progress`, once."""
        if self._started:
            return
        self._started = True
        identity = self._identity or Identity(None, None, None)
        source = identity.id or uuid.uuid4().hex
        base = source
        for prefix in _RESPONSES_PREFIXES:
            base = base.removeprefix(prefix)
        self._base = base or uuid.uuid4().hex
        self._id = source if source.startswith("resp_") else f"resp_{self._base}"
        self._created = (
            identity.created if identity.created is not None else int(time.time())
        )
        response = self._response("in_progress")
        out.append(self._event("response.created", {"response": response}))
        out.append(self._event("response.in_progress", {"response": response}))

    def _add(
        self, out: list[bytes], kind: str, prefix: str, key: object, **fields: Any
    ) -> _ResponsesOpen:
        """Add an item: its `output_item.added`, with `fields`."""
        index = len(self._items)
        self._items.append(None)
        ident = f"{prefix}_{self._base}_{index}"
        item: dict[str, Any] = {"id": ident, "type": kind, **fields}
        if kind != "reasoning":
            item["status"] = "in_progress"
        opened = _ResponsesOpen(index, ident, kind, key, item)
        added = {"output_index": index, "item": item}
        out.append(self._event("response.output_item.added", added))
        return opened

    def _done(self, out: list[bytes], opened: _ResponsesOpen, status: str) -> None:
        """Finish an item: its open part done, then `output_item.done`, whole."""
        self._end_part(out, opened)
        item = copy.copy(opened.item)
        if opened.kind == "message":
            item["content"] = opened.parts
        elif opened.kind == "reasoning":
            item["summary"] = opened.parts
        elif opened.kind == "function_call":
            arguments = "".join(opened.texts)
            item["arguments"] = arguments
            where = {"item_id": opened.id, "output_index": opened.index}
            done = {**where, "name": item["name"], "arguments": arguments}
            out.append(self._event("response.function_call_arguments.done", done))
        if "status" in item or opened.kind == "reasoning":
            item["status"] = status
        self._items[opened.index] = item
        done_item = {"output_index": opened.index, "item": item}
        out.append(self._event("response.output_item.done", done_item))

    def _close_text(self, out: list[bytes]) -> None:
        """Finish the open message or reasoning item."""
        opened = self._open
        if opened is not None:
            self._open = None
            self._done(out, opened, "completed")

    def _cut_off(self) -> None:
        """Leave the open items undone: an item the error cut off gets no
        `output_item.done` and is not in the failed response's output. (Codex keeps
        every item `output_item.done` gives it, whatever its status, and sends it back
        on its retry of the failed request, where it would join the retry's.) The
        opaque reasoning of an open reasoning item, said only when it is done, is
        counted in `dropped`: the source may have finished that item (a signature
        ends a Messages thinking block), but the writer cannot know it did."""
        opened = self._open
        if opened is not None and opened.kind == "reasoning":
            for held, kind in _OPAQUE_KEYS:
                if held in opened.item:
                    self._drop(kind, "its reasoning item was cut off by the error")
        self._open = None
        for key in self._calls:
            self._calls[key] = None

    def _unread(self) -> None:
        """Count what a failed response says where no reader reads it: the usage and
        the finish reason are said only in `response.failed`, after the `error` event,
        where openai-python's reader (and chunkspec's) stops, raising the error. A
        usage that counts nothing says nothing."""
        if self._usage is not None and self._usage != UsageSummary():
            self._drop("usage", "said in response.failed, after the error event")
        if self._finish is not None:
            self._drop("finish", f"{self._finish}: a failed response has none")

    def _close_all(self, out: list[bytes], status: str) -> None:
        """Finish every open item: the message or reasoning one, then the calls."""
        opened = self._open
        if opened is not None:
            self._open = None
            self._done(out, opened, status)
        for key, call in self._calls.items():
            if call is not None:
                self._calls[key] = None
                self._done(out, call, status)

    def _text_item(self, out: list[bytes], kind: str, part: Part) -> _ResponsesOpen:
        """The open item of `kind` ("message" or "reasoning") the part continues, or
        a new one (the open one done first)."""
        opened = self._open
        if opened is None or opened.kind != kind or opened.key != part.block:
            self._close_text(out)
            if kind == "message":
                opened = self._add(
                    out, kind, "msg", part.block, role="assistant", content=[]
                )
            else:
                opened = self._add(out, kind, "rs", part.block, summary=[])
            self._open = opened
        return opened

    def _text(self, out: list[bytes], kind: str, part: Part) -> None:
        """A piece of text or refusal, in its content part of a message item."""
        name = "output_text" if kind == "text" else "refusal"
        item = self._content(out, name, part)
        item.texts.append(part.text)
        where = f',"content_index":{len(item.parts)}'
        if kind == "text":
            where += ',"logprobs":[]'
            out.append(
                self._delta("response.output_text.delta", item, where, part.text)
            )
        else:
            out.append(self._delta("response.refusal.delta", item, where, part.text))

    def _content(self, out: list[bytes], name: str, part: Part) -> _ResponsesOpen:
        """The message item and its content part of type `name` the part continues:
        either is added when it is not the open one."""
        item = self._text_item(out, "message", part)
        if item.part != name:
            self._end_part(out, item)
            item.part = name
            empty: dict[str, Any] = (
                {"type": name, "text": "", "annotations": [], "logprobs": []}
                if name == "output_text"
                else {"type": name, "refusal": ""}
            )
            added = {
                "item_id": item.id,
                "output_index": item.index,
                "content_index": len(item.parts),
                "part": empty,
            }
            out.append(self._event("response.content_part.added", added))
        return item

    def _reasoning(self, out: list[bytes], part: Part) -> None:
        """A piece of reasoning, in the summary text of a reasoning item; the
        separator between two parts of a Responses item's reasoning ends a part."""
        item = self._text_item(out, "reasoning", part)
        number = _part_number(part.chunk)
        between = part.text == _REASONING_SEPARATOR and (
            number is None or number != item.at
        )
        item.at = number
        if between and item.part is not None and _is_responses(part.chunk):
            self._end_part(out, item)
            return
        if item.part is None:
            item.part = "summary_text"
            added = {
                "item_id": item.id,
                "output_index": item.index,
                "summary_index": len(item.parts),
                "part": {"type": "summary_text", "text": ""},
            }
            out.append(self._event("response.reasoning_summary_part.added", added))
        item.texts.append(part.text)
        where = f',"summary_index":{len(item.parts)}'
        kind = "response.reasoning_summary_text.delta"
        out.append(self._delta(kind, item, where, part.text))

    def _end_part(self, out: list[bytes], item: _ResponsesOpen) -> None:
        """The done events of an item's open content or summary part."""
        name = item.part
        if name is None or item.kind == "function_call":
            return
        item.part = None
        text = "".join(item.texts)
        item.texts = []
        at = len(item.parts)
        where: dict[str, Any] = {"item_id": item.id, "output_index": item.index}
        if name == "summary_text":
            done_part: dict[str, Any] = {"type": name, "text": text}
            where["summary_index"] = at
            kind = "response.reasoning_summary_text.done"
            out.append(self._event(kind, {**where, "text": text}))
            kind = "response.reasoning_summary_part.done"
            out.append(self._event(kind, {**where, "part": done_part}))
        else:
            where["content_index"] = at
            if name == "output_text":
                done_part = {
                    "type": name,
                    "text": text,
                    "annotations": item.notes,
                    "logprobs": [],
                }
                item.notes = []
                said: dict[str, Any] = {**where, "text": text, "logprobs": []}
                out.append(self._event("response.output_text.done", said))
            else:
                done_part = {"type": name, "refusal": text}
                said = {**where, "refusal": text}
                out.append(self._event("response.refusal.done", said))
            out.append(
                self._event("response.content_part.done", {**where, "part": done_part})
            )
        item.parts.append(done_part)

    def _opaque(self, out: list[bytes], part: Part) -> None:
        """Opaque reasoning, in the reasoning item it belongs to: the open one (of the
        part's block), unless it holds one already; else a new one. A signature that
        rides on a chat tool call (Gemini's) is a reasoning item of its own right
        before the call's item, done at once: its `encrypted_content` the signature
        marked with its scheme (`_marked`), which Codex sends back and `to_request`
        puts back on that call; one for a call already added can no longer go before
        it."""
        if (
            part.kind == "signature"
            and part.tool_call is not None
            and part.block is None
        ):
            if self._key(part) in self._calls:
                self._drop("signature", "its call's item had been added")
                return
            self._close_text(out)
            item = self._add(out, "reasoning", "rs", None, summary=[])
            item.item["encrypted_content"] = _marked(_CALL_SCHEME, part.text)
            self._done(out, item, "completed")
            return
        key = "encrypted_content" if part.kind == "redacted_reasoning" else "signature"
        opened = self._open
        if (
            opened is None
            or opened.kind != "reasoning"
            or (part.block is not None and opened.key != part.block)
            or key in opened.item
            # A reader reads an item's encrypted content before its signature: encrypted
            # content after a signature goes in an item of its own, to keep their order.
            or (key == "encrypted_content" and "signature" in opened.item)
        ):
            self._close_text(out)
            opened = self._add(out, "reasoning", "rs", part.block, summary=[])
            self._open = opened
        opened.item[key] = part.text

    def _key(self, part: Part) -> object:
        """Which call a tool-call piece belongs to: its index, else its id, else the
        latest call's (a piece that says no call)."""
        which = part.tool_call
        if which is not None and which.index is not None:
            return ("index", which.index)
        if which is not None and which.id:
            return ("id", which.id)
        return self._latest if self._latest is not None else ("index", 0)

    def _of_held(self, part: Part) -> bool:
        """Whether a part belongs to the call held (a piece of it, or a signature
        that rides on it and goes before it)."""
        held = self._held
        return (
            held is not None
            and part.tool_call is not None
            and self._key(part) == held[0]
        )

    def _release(self, out: list[bytes]) -> None:
        """Add the call held: its name is whole."""
        held = self._held
        if held is not None:
            self._held = None
            self._calls[held[0]] = self._add_call(out, *held)

    def _tool_call(self, out: list[bytes], part: Part) -> None:
        """A piece of a tool call's arguments, in its item: a call not seen before
        adds one (the open message or reasoning item done first) once a piece of its
        arguments comes; until then it is held, its name joined."""
        key = self._key(part)
        self._latest = key
        if key in self._calls:
            call = self._calls[key]
            if call is None:
                if part.text:
                    self._drop("tool_call", "a piece of a call already done")
                return
            piece = part.tool_call.name if part.tool_call is not None else None
            if piece and _name_joined(call.name, piece) != call.name:
                self._drop("tool_call", "a piece of its name after its item was added")
        else:
            which = part.tool_call or ToolCallPart(None, None, None)
            if self._held is not None:
                held = self._held[1]
                which = ToolCallPart(
                    which.index,
                    held.id or which.id,
                    _name_joined(held.name, which.name),
                )
            self._held = (key, which)
            if not part.text:
                return
            self._held = None
            call = self._calls[key] = self._add_call(out, key, which)
        if part.text:
            call.texts.append(part.text)
            out.append(
                self._delta(
                    "response.function_call_arguments.delta", call, "", part.text
                )
            )

    def _add_call(
        self, out: list[bytes], key: object, which: ToolCallPart
    ) -> _ResponsesOpen:
        """Add a call's `function_call` item (the open message or reasoning item done
        first)."""
        self._close_text(out)
        index = len(self._items)
        name = which.name or ""
        named: dict[str, str] = {"name": name}
        if name in self._names:  # a function of a namespace, as Codex runs it
            named = {"name": self._names[name][1], "namespace": self._names[name][0]}
        call = self._add(
            out,
            "function_call",
            "fc",
            key,
            call_id=which.id or f"call_{self._base}_{index}",
            **named,
            arguments="",
        )
        call.name = name
        return call

    def _cite(self, out: list[bytes], part: Part) -> None:
        """A cited source: the annotation a Responses stream said, as it came, or a
        `url_citation` annotation at the end of the text so far (of a message item,
        opened for it if none is); a citation without a URL of another protocol's (a
        document's) is counted in `dropped`."""
        cited = part.citation
        if cited is None:
            return
        source: Any = cited.source
        carried = source.__class__ is dict and _is_responses(part.chunk)
        if not carried and not cited.url:
            self._drop(
                "citation",
                "a document's or file's: Responses cites URLs and its own files",
            )
            return
        item = self._open
        if item is None or item.kind != "message" or item.part != "output_text":
            item = self._content(out, "output_text", part)
        note = dict(source) if carried else _url_note(cited, sum(map(len, item.texts)))
        added = {
            "item_id": item.id,
            "output_index": item.index,
            "content_index": len(item.parts),
            "annotation_index": len(item.notes),
            "annotation": note,
        }
        item.notes.append(note)
        out.append(self._event("response.output_text.annotation.added", added))

    def _server_tool(self, out: list[bytes], part: Part) -> None:
        """A tool the server ran: its item whole, when a Responses stream said it."""
        tool = part.server_tool
        source: Any = None if tool is None else tool.source
        event: Any = part.chunk
        kind: Any = event.get("type") if event.__class__ is dict else None
        if source.__class__ is not dict or not str(kind).startswith("response."):
            self._drop("server_tool", "a tool another protocol's server ran")
            return
        self._close_text(out)
        index = len(self._items)
        item = dict(source)
        self._items.append(item)
        added = {"output_index": index, "item": item}
        out.append(self._event("response.output_item.added", added))
        out.append(self._event("response.output_item.done", added))


class _ResponsesOpen:
    """An item being written."""

    __slots__ = (
        "at",
        "id",
        "index",
        "item",
        "key",
        "kind",
        "name",
        "notes",
        "part",
        "parts",
        "texts",
    )

    def __init__(
        self, index: int, ident: str, kind: str, key: object, item: dict[str, Any]
    ) -> None:
        self.index = index
        self.id = ident
        self.kind = kind
        self.key = key
        """What the parts of this item share: their `block` (None from chat), or, for
        a tool call, its index or id."""
        self.item = item
        """The item as added, and the keys it gets done (`encrypted_content`)."""
        self.part: str | None = None
        """The type of the content or summary part open (None: none is)."""
        self.texts: list[str] = []
        """The pieces of the open part's text, or of a call's arguments."""
        self.parts: list[dict[str, Any]] = []
        """The content or summary parts done."""
        self.notes: list[dict[str, Any]] = []
        """The annotations of the open text part."""
        self.name = ""
        """A call's name (flat, as the parts said it)."""
        self.at: int | None = None
        """The number the source gave the reasoning part written last (a Responses
        `summary_index` or `content_index`; None: none)."""


def _is_responses(chunk: Any) -> bool:
    """Whether a part came from a Responses stream (its event is one)."""
    kind: Any = chunk.get("type") if chunk.__class__ is dict else None
    return kind.__class__ is str and kind.startswith("response.")


def _part_number(chunk: Any) -> int | None:
    """Which part of its item a Responses event addresses (`summary_index`, else
    `content_index`); None for another event."""
    if not _is_responses(chunk):
        return None
    number: Any = chunk.get("summary_index", chunk.get("content_index"))
    return number if number.__class__ is int else None


def _url_note(cited: Citation, at: int) -> dict[str, Any]:
    """A `url_citation` annotation of a cited source, at `at` in its text."""
    return {
        "type": "url_citation",
        "url": cited.url,
        "title": cited.title or "",
        "start_index": at,
        "end_index": at,
    }


def _responses_usage_object(usage: UsageSummary | None) -> dict[str, Any]:
    """A usage in Responses' terms, every count a number (0 when unknown)."""
    u = usage or UsageSummary()
    given = u.prompt_tokens or 0
    made = u.completion_tokens or 0
    details: dict[str, Any] = {"cached_tokens": u.cached_prompt_tokens or 0}
    if u.cache_write_tokens is not None:
        details["cache_write_tokens"] = u.cache_write_tokens
    out: dict[str, Any] = {
        "input_tokens": given,
        "input_tokens_details": details,
        "output_tokens": made,
        "output_tokens_details": {"reasoning_tokens": u.reasoning_tokens or 0},
        "total_tokens": u.total_tokens if u.total_tokens is not None else given + made,
    }
    if u.cost_usd is not None:
        out["cost"] = u.cost_usd
    if u.server_tool_calls is not None:
        out["num_server_side_tools_used"] = u.server_tool_calls
    return out


def _responses_error(error: Any, message: str | None) -> dict[str, Any]:
    """An error as Responses' `error` event holds one: `type`, `code`, `message`,
    `param`."""
    if isinstance(error, StreamError):
        kind: Any = error.type
        code: Any = error.code
        said: Any = error.message
    elif isinstance(error, BaseException):
        kind, code, said = None, None, f"{type(error).__name__}: {error}"
    elif error.__class__ is dict:
        kind, code, said = error.get("type"), error.get("code"), error.get("message")
    else:
        kind, code, said = None, None, error
    if message:
        said = message
    if said is None:
        said = "the upstream stream failed"
    elif said.__class__ is not str:
        said = _json_text(said)
    return {
        "type": kind if kind.__class__ is str else "server_error",
        "code": code if code.__class__ is str else None,
        "message": str(said),
        "param": None,
    }


def _write_responses(
    parts: Iterable[Part], tool_names: Mapping[str, tuple[str, str]] | None = None
) -> Iterator[bytes]:
    """`parts` (any protocol's) as the events of a Responses stream (see
    `_ResponsesWriter`); a call named in `tool_names` as its namespace's."""
    return _ResponsesWriter(tool_names).stream(parts)


def _awrite_responses(
    parts: AsyncIterable[Part], tool_names: Mapping[str, tuple[str, str]] | None = None
) -> AsyncIterator[bytes]:
    """`_write_responses` for parts that arrive asynchronously."""
    return _ResponsesWriter(tool_names).astream(parts)
