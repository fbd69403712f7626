"""The ledger of issue 41: what a stream says, counted meaning by meaning, so that a
bridge can be checked to keep each one or to name it in its writer's `dropped`.

A source is drawn in no protocol's terms (`Turn`: choices of blocks, a finish, a usage,
an error) and rendered by this file in the source protocol's own spelling
(`render_chat`, `render_messages`, `render_responses`), with odd orders and indexes.
Its *truth* is the ledger of what the drawing put in (`truth`); what a reader reads is
a ledger too (`ledger_of`, from a `Summary` and the stream's error). `missing` says
which entries of one ledger another does not hold; `unaccounted` which of those no
`dropped` entry names.

An entry is an `Atom`: the Part kind that carries it (the kind a writer's `dropped`
counts), what it is within that kind (a field of `UsageSummary`, a choice), and its
value. The rules that say how each kind is found and which drops account for it are
one table (`RULES`), keyed by Part kind; the meanings of the spec and of the runtime
(`MEANINGS`, the spec's `meanings:`) map onto it (`MEANING_KINDS`), usage counts and
citations field by field from their dataclasses, so that a new count or a new field
of a citation joins the ledger with no edit here, and a new meaning or Part kind
without a rule fails `uncovered`.
"""

from __future__ import annotations

import dataclasses
import json
import re
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Final

import yaml

from tests.helpers.support import runtime

ROOT: Final = Path(__file__).resolve().parents[2]
MODEL: Final = "ledger-model"

# --- a source in no protocol's terms ---------------------------------------------------


@dataclass(frozen=True)
class Reasoning:
    text: str
    pieces: tuple[str, ...]
    """The text as its summary parts (Responses) or details (chat) cut it."""
    signature: str | None = None
    encrypted: str | None = None


@dataclass(frozen=True)
class Redacted:
    data: str


@dataclass(frozen=True)
class Cite:
    kind: str
    """"url" (a web page) or "document" (Anthropic's `char_location`, Responses'
    `file_citation`)."""
    url: str
    title: str | None


@dataclass(frozen=True)
class Text:
    text: str
    cites: tuple[Cite, ...] = ()


@dataclass(frozen=True)
class Refusal:
    text: str


@dataclass(frozen=True)
class Call:
    id: str
    name: str
    arguments: str
    custom: bool = False
    """A custom tool's call (its input free text), where the protocol has one."""


@dataclass(frozen=True)
class Server:
    name: str
    query: str


Block = Reasoning | Redacted | Text | Refusal | Call | Server


@dataclass(frozen=True)
class Choice:
    index: int
    blocks: tuple[Block, ...]
    finish: str | None
    """The source protocol's own reason (`end_turn`, `max_output_tokens`, `stop`)."""


@dataclass(frozen=True)
class Usage:
    prompt: int
    """Chat's sense: cache reads and writes included."""
    completion: int
    cached: int | None = None
    cache_write: int | None = None
    reasoning: int | None = None
    cost: float | None = None
    servers: int | None = None


@dataclass(frozen=True)
class Turn:
    protocol: str
    choices: tuple[Choice, ...]
    usage: Usage | None
    error: str | None
    """The upstream's error message, or "" for a stream cut off without its end."""
    odd: frozenset[str] = frozenset()
    """The odd orders and indexes to render it with (`ODDITIES`)."""
    cuts: tuple[int, ...] = (1,)
    """How texts are cut into pieces: each piece the next of these sizes, cycled."""


ODDITIES: Final = {
    "chat": ("split name", "interleaved calls", "interleaved choices", "usage in last chunk"),
    "messages": ("ping first", "usage at start"),
    "responses": ("gap", "no sequence numbers", "items only when done"),
}
"""Odd but valid spellings each source protocol is rendered with, at random."""


def pieces(text: str, cuts: Sequence[int]) -> list[str]:
    """`text` cut into pieces of the sizes `cuts` gives, cycled (at least one piece)."""
    out: list[str] = []
    at = 0
    step = 0
    while at < len(text):
        size = max(cuts[step % len(cuts)], 1)
        out.append(text[at : at + size])
        at += size
        step += 1
    return out or [""]


# --- chat's spelling ---------------------------------------------------------------------


CHAT_FINISH: Final = {"stop": "stop", "length": "length", "tool_calls": "tool_calls",
                      "content_filter": "content_filter"}  # fmt: skip


def render_chat(turn: Turn, cache_write_key: str | None) -> bytes:
    """The turn as a chat stream (`data: {...}` events)."""
    head = {"id": "chatcmpl-ledger", "object": "chat.completion.chunk", "created": 7,
            "model": MODEL}  # fmt: skip
    lanes = [list(_chat_deltas(turn, choice)) for choice in turn.choices]
    entries = (
        _interleaved(lanes)
        if "interleaved choices" in turn.odd
        else [e for lane in lanes for e in lane]
    )
    chunks = [{**head, "choices": [entry]} for entry in entries]
    if turn.usage is not None and turn.error is None:
        usage = _chat_usage(turn.usage, cache_write_key)
        if "usage in last chunk" in turn.odd and chunks:
            chunks[-1]["usage"] = usage
        else:
            chunks.append({**head, "choices": [], "usage": usage})
    body = "".join(f"data: {json.dumps(chunk)}\n\n" for chunk in chunks)
    if turn.error:
        body += (
            f'data: {json.dumps({"error": {"message": turn.error, "type": "server_error"}})}\n\n'
        )
    elif turn.error is None:
        body += "data: [DONE]\n\n"
    return body.encode()


def _interleaved(lanes: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """The entries of several lanes, one of each in turn."""
    out: list[dict[str, Any]] = []
    for at in range(max((len(lane) for lane in lanes), default=0)):
        out += [lane[at] for lane in lanes if at < len(lane)]
    return out


def _chat_deltas(turn: Turn, choice: Choice) -> Iterator[dict[str, Any]]:
    index = choice.index
    yield {"index": index, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}
    details = 0
    calls: list[list[dict[str, Any]]] = []
    for block in choice.blocks:
        deltas: list[dict[str, Any]] = []
        if isinstance(block, Reasoning):
            deltas += [{"reasoning_content": p} for p in pieces(block.text, turn.cuts)]
            if block.signature is not None:
                deltas.append({"reasoning_details": [{"type": "reasoning.text", "text": "",
                               "signature": block.signature, "index": details}]})  # fmt: skip
                details += 1
        elif isinstance(block, Redacted):
            deltas.append({"reasoning_details": [{"type": "reasoning.encrypted",
                           "data": block.data, "index": details}]})  # fmt: skip
            details += 1
        elif isinstance(block, Text):
            deltas += [{"content": p} for p in pieces(block.text, turn.cuts)]
            for at, cite in enumerate(block.cites):
                cited = {"url": cite.url} | ({} if cite.title is None else {"title": cite.title})
                note = {"type": "url_citation", "url_citation": cited, "index": at}
                deltas.append({"annotations": [note]})
        elif isinstance(block, Refusal):
            deltas += [{"refusal": p} for p in pieces(block.text, turn.cuts)]
        elif isinstance(block, Call):
            calls.append(list(_chat_call(turn, len(calls), block)))
            continue
        yield from ({"index": index, "delta": d} for d in deltas)
    lanes = (
        _interleaved(calls)
        if "interleaved calls" in turn.odd
        else [e for call in calls for e in call]
    )
    yield from ({"index": index, "delta": {"tool_calls": [call]}} for call in lanes)
    if choice.finish is not None:
        yield {"index": index, "delta": {}, "finish_reason": choice.finish}


def _chat_call(turn: Turn, at: int, call: Call) -> Iterator[dict[str, Any]]:
    """The entries of a call's pieces: its id and name first (its name in two pieces
    when the turn says so), then its arguments."""
    key = "custom" if call.custom else "function"
    given = "input" if call.custom else "arguments"
    name = call.name
    first = name[: len(name) // 2] if "split name" in turn.odd and len(name) > 1 else name
    yield {"index": at, "id": call.id, "type": key, key: {"name": first, given: ""}}
    if first != name:
        yield {"index": at, key: {"name": name[len(first) :]}}
    for piece in pieces(call.arguments, turn.cuts):
        yield {"index": at, key: {given: piece}}


def _chat_usage(usage: Usage, cache_write_key: str | None) -> dict[str, Any]:
    out: dict[str, Any] = {"prompt_tokens": usage.prompt, "completion_tokens": usage.completion,
                           "total_tokens": usage.prompt + usage.completion}  # fmt: skip
    given: dict[str, Any] = {}
    if usage.cached is not None:
        given["cached_tokens"] = usage.cached
    if usage.cache_write is not None and cache_write_key is not None:
        given[cache_write_key] = usage.cache_write
    if given:
        out["prompt_tokens_details"] = given
    if usage.reasoning is not None:
        out["completion_tokens_details"] = {"reasoning_tokens": usage.reasoning}
    if usage.cost is not None:
        out["cost"] = usage.cost
    return out


# --- Messages' spelling -----------------------------------------------------------------


MESSAGES_FINISH: Final = {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length",
                          "tool_use": "tool_calls", "refusal": "content_filter",
                          "pause_turn": "pause_turn",
                          "model_context_window_exceeded": "model_context_window_exceeded"}  # fmt: skip


def render_messages(turn: Turn) -> bytes:
    """The turn as a Messages stream (`event:` and `data:` lines): one choice."""
    [choice] = turn.choices
    usage = turn.usage
    events: list[dict[str, Any]] = []
    if "ping first" in turn.odd:
        events.append({"type": "ping"})
    start_usage: dict[str, Any] = {"input_tokens": 0, "output_tokens": 1}
    if usage is not None and "usage at start" in turn.odd:
        start_usage = _messages_input(usage) | {"output_tokens": 1}
    message: dict[str, Any] = {"id": "msg_ledger", "type": "message", "role": "assistant", "model": MODEL,
               "content": [], "stop_reason": None, "stop_sequence": None,
               "usage": start_usage}  # fmt: skip
    events.append({"type": "message_start", "message": message})
    index = 0
    for block in choice.blocks:
        events += _messages_block(turn, index, block)
        index += 2 if isinstance(block, Server) else 1  # a run and its result
    if turn.error:
        events.append({"type": "error", "error": {"type": "overloaded_error",
                                                  "message": turn.error}})  # fmt: skip
    elif turn.error is None:
        delta = {"stop_reason": choice.finish, "stop_sequence": None}
        final: dict[str, Any] = {"output_tokens": 0}
        if usage is not None:
            final = _messages_input(usage) | _messages_output(usage)
        events.append({"type": "message_delta", "delta": delta, "usage": final})
        events.append({"type": "message_stop"})
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


def _messages_input(usage: Usage) -> dict[str, Any]:
    cached, written = usage.cached or 0, usage.cache_write or 0
    out: dict[str, Any] = {"input_tokens": usage.prompt - cached - written}
    if usage.cached is not None:
        out["cache_read_input_tokens"] = usage.cached
    if usage.cache_write is not None:
        out["cache_creation_input_tokens"] = usage.cache_write
    return out


def _messages_output(usage: Usage) -> dict[str, Any]:
    out: dict[str, Any] = {"output_tokens": usage.completion}
    if usage.reasoning is not None:
        out["output_tokens_details"] = {"thinking_tokens": usage.reasoning}
    if usage.servers is not None:
        out["server_tool_use"] = {"web_search_requests": usage.servers}
    return out


def _messages_block(turn: Turn, index: int, block: Block) -> list[dict[str, Any]]:
    def start(content: dict[str, Any]) -> dict[str, Any]:
        return {"type": "content_block_start", "index": index, "content_block": content}

    def delta(kind: str, **said: Any) -> dict[str, Any]:
        return {"type": "content_block_delta", "index": index, "delta": {"type": kind, **said}}

    stop = {"type": "content_block_stop", "index": index}
    cut = turn.cuts
    if isinstance(block, Reasoning):
        out = [start({"type": "thinking", "thinking": "", "signature": ""})]
        out += [delta("thinking_delta", thinking=p) for p in pieces(block.text, cut)]
        if block.signature is not None:
            out.append(delta("signature_delta", signature=block.signature))
        return [*out, stop]
    if isinstance(block, Redacted):
        return [start({"type": "redacted_thinking", "data": block.data}), stop]
    if isinstance(block, Text | Refusal):
        content: dict[str, Any] = {"type": "text", "text": ""}
        if isinstance(block, Refusal):
            content["refusal"] = True  # chunkspec's own mark: Messages has no refusal text
        out = [start(content)]
        out += [delta("text_delta", text=p) for p in pieces(block.text, cut)]
        for cite in block.cites if isinstance(block, Text) else ():
            out.append(delta("citations_delta", citation=_messages_citation(cite)))
        return [*out, stop]
    if isinstance(block, Call):
        out = [start({"type": "tool_use", "id": block.id, "name": block.name, "input": {}})]
        out += [delta("input_json_delta", partial_json=p) for p in pieces(block.arguments, cut)]
        return [*out, stop]
    ident = f"srvtoolu_{index}"
    use = {"type": "server_tool_use", "id": ident, "name": block.name, "input": {}}
    query = json.dumps({"query": block.query})
    result = {"type": "web_search_tool_result", "tool_use_id": ident,
              "content": [{"type": "web_search_result", "url": "https://r.example/",
                           "title": "r", "encrypted_content": "e", "page_age": None}]}  # fmt: skip
    after = {"type": "content_block_start", "index": index + 1, "content_block": result}
    return [start(use), delta("input_json_delta", partial_json=query), stop, after,
            {"type": "content_block_stop", "index": index + 1}]  # fmt: skip


def _messages_citation(cite: Cite) -> dict[str, Any]:
    if cite.kind == "url":
        return {"type": "web_search_result_location", "url": cite.url, "title": cite.title,
                "cited_text": "c", "encrypted_index": "i"}  # fmt: skip
    return {"type": "char_location", "cited_text": "c", "document_index": 0,
            "document_title": cite.title, "start_char_index": 0, "end_char_index": 1}  # fmt: skip


# --- Responses' spelling ----------------------------------------------------------------


RESPONSES_INCOMPLETE: Final = {"max_output_tokens": "length", "content_filter": "content_filter"}


def render_responses(turn: Turn) -> bytes:
    """The turn as a Responses stream: one choice, each block an item."""
    [choice] = turn.choices
    writer = _ResponsesSource(turn)
    response = {"id": "resp_ledger", "object": "response", "created_at": 7, "model": MODEL,
                "status": "in_progress", "output": [], "usage": None}  # fmt: skip
    writer.emit("response.created", response=response)
    writer.emit("response.in_progress", response=response)
    base = 1 if "gap" in turn.odd else 0
    for at, block in enumerate(choice.blocks):
        writer.item(base + at, at, block)
    if turn.error:
        writer.emit("error", code="server_error", message=turn.error, param=None)
    elif turn.error is None:
        final = {**response, "output": writer.done, "usage": _responses_usage(turn.usage)}
        if choice.finish in RESPONSES_INCOMPLETE:
            final["status"] = "incomplete"
            final["incomplete_details"] = {"reason": choice.finish}
            writer.emit("response.incomplete", response=final)
        else:
            final["status"] = "completed"
            writer.emit("response.completed", response=final)
    return b"".join(writer.events)


def _responses_usage(usage: Usage | None) -> dict[str, Any] | None:
    if usage is None:
        return None
    out: dict[str, Any] = {"input_tokens": usage.prompt,
                           "input_tokens_details": {"cached_tokens": usage.cached or 0},
                           "output_tokens": usage.completion,
                           "output_tokens_details": {"reasoning_tokens": usage.reasoning or 0},
                           "total_tokens": usage.prompt + usage.completion}  # fmt: skip
    if usage.cost is not None:
        out["cost"] = usage.cost
    if usage.servers is not None:
        out["num_server_side_tools_used"] = usage.servers
    return out


class _ResponsesSource:
    """Writes the events of a Responses source, numbered unless the turn says not."""

    def __init__(self, turn: Turn) -> None:
        self.turn = turn
        self.events: list[bytes] = []
        self.done: list[dict[str, Any]] = []
        self.number = 0

    def emit(self, kind: str, **data: Any) -> None:
        event = {"type": kind, **data}
        if "no sequence numbers" not in self.turn.odd:
            event["sequence_number"] = self.number
        self.number += 1
        self.events.append(f"event: {kind}\ndata: {json.dumps(event)}\n\n".encode())

    def item(self, index: int, at: int, block: Block) -> None:
        item = _responses_item(at, block)
        where = {"output_index": index, "item_id": item["id"]}
        whole = "items only when done" in self.turn.odd
        if not whole:
            added = {**item, "status": "in_progress"}
            if isinstance(block, Call):
                added["arguments" if not block.custom else "input"] = ""
            if item["type"] == "message":
                added["content"] = []
            if item["type"] == "reasoning":
                added["summary"] = []
                added.pop("encrypted_content", None)
            self.emit("response.output_item.added", output_index=index, item=added)
            self._deltas(where, block)
        self.emit("response.output_item.done", output_index=index, item=item)
        self.done.append(item)

    def _deltas(self, where: dict[str, Any], block: Block) -> None:
        cut = self.turn.cuts
        if isinstance(block, Reasoning):
            for at, text in enumerate(block.pieces):
                here = {**where, "summary_index": at}
                part = {"type": "summary_text", "text": ""}
                self.emit("response.reasoning_summary_part.added", **here, part=part)
                for piece in pieces(text, cut):
                    self.emit("response.reasoning_summary_text.delta", **here, delta=piece)
                self.emit("response.reasoning_summary_text.done", **here, text=text)
                done = {"type": "summary_text", "text": text}
                self.emit("response.reasoning_summary_part.done", **here, part=done)
        elif isinstance(block, Text | Refusal):
            here = {**where, "content_index": 0}
            refusal = isinstance(block, Refusal)
            empty = {"type": "refusal", "refusal": ""} if refusal else _output_text("", [])
            self.emit("response.content_part.added", **here, part=empty)
            kind = "response.refusal" if refusal else "response.output_text"
            for piece in pieces(block.text, cut):
                self.emit(f"{kind}.delta", **here, delta=piece)
            notes = [_annotation(c) for c in block.cites] if isinstance(block, Text) else []
            for at, note in enumerate(notes):
                self.emit("response.output_text.annotation.added", **here,
                          annotation_index=at, annotation=note)  # fmt: skip
            if refusal:
                self.emit(f"{kind}.done", **here, refusal=block.text)
                done = {"type": "refusal", "refusal": block.text}
            else:
                self.emit(f"{kind}.done", **here, text=block.text)
                done = _output_text(block.text, notes)
            self.emit("response.content_part.done", **here, part=done)
        elif isinstance(block, Call):
            kind = ("response.custom_tool_call_input" if block.custom
                    else "response.function_call_arguments")  # fmt: skip
            for piece in pieces(block.arguments, cut):
                self.emit(f"{kind}.delta", **where, delta=piece)
            key = "input" if block.custom else "arguments"
            self.emit(f"{kind}.done", **where, **{key: block.arguments})


def _output_text(text: str, notes: list[dict[str, Any]]) -> dict[str, Any]:
    return {"type": "output_text", "text": text, "annotations": notes, "logprobs": []}


def _annotation(cite: Cite) -> dict[str, Any]:
    if cite.kind == "url":
        return {"type": "url_citation", "url": cite.url, "title": cite.title or "",
                "start_index": 0, "end_index": 0}  # fmt: skip
    return {"type": "file_citation", "file_id": cite.url, "filename": cite.title or "f",
            "index": 0}  # fmt: skip


def _responses_item(at: int, block: Block) -> dict[str, Any]:
    if isinstance(block, Reasoning):
        item: dict[str, Any] = {"id": f"rs_{at}", "type": "reasoning",
                                "summary": [{"type": "summary_text", "text": t}
                                            for t in block.pieces]}  # fmt: skip
        if block.encrypted is not None:
            item["encrypted_content"] = block.encrypted
        return item
    if isinstance(block, Redacted):
        return {"id": f"rs_{at}", "type": "reasoning", "summary": [],
                "encrypted_content": block.data}  # fmt: skip
    if isinstance(block, Text):
        notes = [_annotation(c) for c in block.cites]
        return {"id": f"msg_{at}", "type": "message", "role": "assistant",
                "status": "completed", "content": [_output_text(block.text, notes)]}  # fmt: skip
    if isinstance(block, Refusal):
        return {"id": f"msg_{at}", "type": "message", "role": "assistant",
                "status": "completed",
                "content": [{"type": "refusal", "refusal": block.text}]}  # fmt: skip
    if isinstance(block, Call):
        if block.custom:
            return {"id": f"ctc_{at}", "type": "custom_tool_call", "call_id": block.id,
                    "name": block.name, "input": block.arguments, "status": "completed"}  # fmt: skip
        return {"id": f"fc_{at}", "type": "function_call", "call_id": block.id,
                "name": block.name, "arguments": block.arguments, "status": "completed"}  # fmt: skip
    return {"id": f"ws_{at}", "type": f"{block.name}_call", "status": "completed",
            "action": {"type": "search", "query": block.query}}  # fmt: skip


RENDER: Final[dict[str, Callable[[Turn, str | None], bytes]]] = {
    "chat": render_chat,
    "messages": lambda turn, _: render_messages(turn),
    "responses": lambda turn, _: render_responses(turn),
}


# --- ledgers ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Atom:
    """One entry of a ledger: the Part kind that carries it, what it is within the
    kind (a choice, a field of `UsageSummary`), and its value."""

    kind: str
    where: str
    value: Any

    def __str__(self) -> str:
        return f"{self.kind}[{self.where}]={self.value!r}"


@dataclass(frozen=True)
class Reading:
    """What a reader read of a stream: its summary, the model it named, its error."""

    summary: Any
    model: str | None
    error: str | None


def truth(turn: Turn, usage_fields: Sequence[str]) -> list[Atom]:
    """The ledger of what a drawn turn says, in chat's terms."""
    atoms: list[Atom] = [Atom("start", "model", MODEL)]
    for choice in turn.choices:
        atoms += _choice_truth(turn, choice)
    usage = turn.usage
    if usage is not None and turn.error is None:
        counts = {"prompt_tokens": usage.prompt, "completion_tokens": usage.completion,
                  "total_tokens": usage.prompt + usage.completion,
                  "cached_prompt_tokens": usage.cached, "cache_write_tokens": usage.cache_write,
                  "reasoning_tokens": usage.reasoning, "cost_usd": usage.cost,
                  "server_tool_calls": usage.servers}  # fmt: skip
        for name, value in counts.items():
            if value is not None:
                atoms.append(Atom("usage", name, value))
        unknown = set(usage_fields) - set(counts)
        assert not unknown, f"UsageSummary has fields the ledger draws no value for: {unknown}"
    if turn.error is not None:
        atoms.append(Atom("error", "message", turn.error or CUT_OFF))
    return atoms


def _choice_truth(turn: Turn, choice: Choice) -> list[Atom]:
    at = str(choice.index)
    texts: dict[str, list[str]] = {"text": [], "reasoning": [], "refusal": []}
    atoms: list[Atom] = []
    for block in choice.blocks:
        if isinstance(block, Reasoning):
            # Responses spells each piece as a summary part of its own, which its reader
            # keeps apart (joined with the separator): each is a block of the text.
            parts = block.pieces if turn.protocol == "responses" else (block.text,)
            texts["reasoning"].extend(parts)
            if block.signature is not None:
                atoms.append(Atom("signature", at, block.signature))
            if block.encrypted is not None:
                atoms.append(Atom("redacted_reasoning", at, block.encrypted))
        elif isinstance(block, Redacted):
            atoms.append(Atom("redacted_reasoning", at, block.data))
        elif isinstance(block, Text):
            texts["text"].append(block.text)
            for cite in block.cites:
                atoms.append(_cite_atom(cite))
        elif isinstance(block, Refusal):
            texts["refusal"].append(block.text)
        elif isinstance(block, Call):
            atoms.append(Atom("tool_call", at, (block.id, block.name, _arguments(block.arguments))))
        else:
            atoms.append(Atom("server_tool", at, block.name))
    for kind, said in texts.items():
        if any(said):
            atoms.append(Atom(kind, at, tuple(t for t in said if t)))
    finish = _truth_finish(turn, choice)
    if finish is not None:
        atoms.append(Atom("finish", at, finish))
    return atoms


def _truth_finish(turn: Turn, choice: Choice) -> str | None:
    """The finish reason the turn says, in chat's terms."""
    if turn.error is not None:
        return None
    if turn.protocol == "chat":
        return choice.finish
    if turn.protocol == "messages":
        return None if choice.finish is None else MESSAGES_FINISH[choice.finish]
    if choice.finish in RESPONSES_INCOMPLETE:
        return RESPONSES_INCOMPLETE[choice.finish]
    called = any(isinstance(b, Call) for b in choice.blocks)
    return "tool_calls" if called else "stop"


def _cite_atom(cite: Cite) -> Atom:
    """A cited source: a web page as the fields a `Citation` has for it (its URL and
    title); a document by what names it (its title, a file's id or name), which some
    field of a `Citation` must hold (`_cited`)."""
    if cite.kind == "url":
        return Atom("citation", "", (("url", cite.url), ("title", cite.title)))
    return Atom("citation", "document", tuple(n for n in (cite.url, cite.title) if n))


def _arguments(text: str) -> str:
    """Arguments as they mean: a JSON value by its value (keys sorted), else the text."""
    try:
        return json.dumps(json.loads(text), sort_keys=True)
    except ValueError:
        return text


def ledger_of(reading: Reading, one_choice: bool = False) -> list[Atom]:
    """The ledger of what a reader read (`Summary` and the stream's error): every
    meaning it holds, field by field."""
    summary = reading.summary
    atoms: list[Atom] = []
    if reading.model is not None:
        atoms.append(Atom("start", "model", reading.model))
    for choice in summary.choices:
        at = str(choice.index)
        for kind in ("text", "reasoning", "refusal"):
            text = getattr(choice, kind)
            if text:
                atoms.append(Atom(kind, at, (text,)))
        for call in choice.tool_calls:
            value = (call.id, call.name, _arguments(call.arguments))
            atoms.append(Atom("tool_call", at, value))
        for item in choice.reasoning_items:
            kind = "signature" if item.kind == "signature" else "redacted_reasoning"
            atoms.append(Atom(kind, at, _unmark(item.value)))
        for tool in choice.server_tools:
            atoms.append(Atom("server_tool", at, tool.name))
        if choice.finish_reason is not None:
            atoms.append(Atom("finish", at, choice.finish_reason))
    for name, value in _fields(summary.usage):
        if value is not None:
            atoms.append(Atom("usage", name, value))
    for cited in summary.citations:
        # The citation as it came (`source`) is no meaning to compare across protocols;
        # the names in it (a document's title, a file's id) say which document it is.
        said = tuple((k, v) for k, v in _fields(cited) if v is not None and k != "source")
        names = (*_strings(getattr(cited, "source", None)), *(v for _, v in said))
        atoms.append(Atom("citation", "", (*said, ("names", tuple(sorted(set(names)))))))
    if reading.error is not None:
        atoms.append(Atom("error", "message", error_meaning(reading.error)))
    return atoms


CUT_OFF: Final = "(cut off)"


def error_meaning(message: str) -> str:
    """An error's message; the readers' own words for a stream cut off before its end
    as one meaning, whatever protocol said it."""
    return CUT_OFF if re.search(r"stream ended before", message) else message


def _strings(value: Any) -> Iterator[str]:
    """Every text in JSON data."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for inner in value.values():
            yield from _strings(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _strings(inner)


def _fields(value: Any) -> list[tuple[str, Any]]:
    return [(f.name, getattr(value, f.name)) for f in dataclasses.fields(value)]


def _unmark(value: Any) -> Any:
    """A signature another protocol carried for chat's tool call (`chunkspec:<scheme>:`)
    as the signature it carries."""
    if isinstance(value, str) and value.startswith("chunkspec:"):
        return value.split(":", 2)[-1]
    return value


# --- the rules: how each kind is found, and what accounts for it ------------------------


@dataclass(frozen=True)
class Rule:
    found: Callable[[Atom, list[Atom]], bool]
    """Whether an atom of the source is in the target's ledger (consuming what it
    matched, for kinds a stream may hold several times)."""
    doc: str


def _equal(atom: Atom, target: list[Atom]) -> bool:
    """Found as it is (each once: two equal calls are two entries)."""
    for at, other in enumerate(target):
        if other.kind == atom.kind and other.where == atom.where and other.value == atom.value:
            del target[at]
            return True
    return False


def _spliced(atom: Atom, target: list[Atom]) -> bool:
    """A text's blocks in order, in the target's text of the choice, with at most a
    separator (white space) between them and nothing else: a text said twice, cut or
    changed is not found."""
    for other in target:
        if other.kind == atom.kind and other.where == atom.where:
            return _splices(other.value[0], atom.value)
    return False


def _splices(text: str, blocks: Sequence[str]) -> bool:
    at = 0
    for block in blocks:
        found = text.find(block, at)
        if found < 0 or text[at:found].strip() or (at == 0 and found != 0):
            return False
        at = found + len(block)
    return not text[at:].strip()


def _cited(atom: Atom, target: list[Atom]) -> bool:
    """A cited source: found when a citation of the target has every field the
    source's says, with the same value (a target's citation may say more: the summary
    holds a page once, with the first title said of it)."""
    if atom.where == "document":  # a drawn document: some citation names it
        return any(set(_names(other)) & set(atom.value) for other in target)
    want = {k: v for k, v in atom.value if v is not None and k != "names"}
    if "url" not in want:  # a document read: the target's names it too
        return any(set(_names(other)) & set(_names(atom)) for other in target)
    return any(
        other.kind == "citation" and all(dict(other.value).get(k) == v for k, v in want.items())
        for other in target
    )


def _names(atom: Atom) -> tuple[str, ...]:
    """The names a citation atom holds (its fields' texts, and those of its source)."""
    if atom.kind != "citation":
        return ()
    said = dict(atom.value)
    return (*said.get("names", ()), *(v for k, v in said.items() if isinstance(v, str)))


RULES: Final[dict[str, Rule]] = {
    "start": Rule(_equal, "the model the stream names"),
    "text": Rule(_spliced, "the choice's answer, its blocks in order"),
    "reasoning": Rule(_spliced, "the choice's reasoning, its blocks in order"),
    "refusal": Rule(_spliced, "the choice's refusal"),
    "signature": Rule(_equal, "each signature, as its value"),
    "redacted_reasoning": Rule(_equal, "each opaque reasoning, as its value"),
    "tool_call": Rule(_equal, "each call: its id, its name and its arguments' value"),
    "server_tool": Rule(_equal, "each tool the server ran, by name"),
    "citation": Rule(_cited, "each cited source, every field it has"),
    "finish": Rule(_equal, "the choice's finish reason, in chat's terms"),
    "usage": Rule(_equal, "each count of UsageSummary the stream said, field by field"),
    "error": Rule(_equal, "the upstream's error message, or that it was cut off"),
}
"""How each Part kind is found in a target's ledger; keyed by the kinds writers count
in `dropped`."""

_BY_CHOICE: Final = frozenset(
    ("text", "reasoning", "refusal", "signature", "redacted_reasoning", "tool_call",
     "server_tool", "finish")
)  # fmt: skip

MEANING_KINDS: Final = {
    "text": "text",
    "reasoning": "reasoning",
    "refusal": "refusal",
    "reasoning_signature": "signature",
    "reasoning_encrypted": "redacted_reasoning",
    "tool_calls": "tool_call",
    "server_tools": "server_tool",
    "finish_reason": "finish",
    "citations": "citation",
}
"""The Part kind each meaning of the spec and the runtime is carried by; the usage
counts (the fields of `UsageSummary`) are "usage"."""


def spec_meanings() -> list[str]:
    """The meanings the spec's core file declares (`meanings:`)."""
    core = yaml.safe_load((ROOT / "spec/chat_completion_chunk.yaml").read_text())
    return list(core["meanings"])


def part_kinds(part_class: type) -> list[str]:
    """The Part kinds the `Part` docstring lists (`- "kind", "kind": ...`)."""
    doc = part_class.__doc__ or ""
    kinds: list[str] = []
    for line in doc.splitlines():
        head = re.match(r'\s*- ((?:"\w+"(?:, )?)+):', line)
        if head:
            kinds += re.findall(r'"(\w+)"', head.group(1))
    return kinds


def uncovered(
    meanings: Iterable[str], kinds: Iterable[str], usage_fields: Iterable[str]
) -> list[str]:
    """What has no ledger rule: a meaning that maps to no kind, a kind with no rule."""
    counts = set(usage_fields)
    out = [f"meaning {m!r} has no ledger rule" for m in meanings
           if m not in MEANING_KINDS and m not in counts]  # fmt: skip
    out += [f"Part kind {k!r} has no ledger rule" for k in kinds if k not in RULES]
    return out


def accounted(atom: Atom, dropped: Iterable[tuple[str, str]]) -> bool:
    """Whether a `dropped` entry (kind, why) names the atom: its Part kind, or for a
    usage count the count itself."""
    names = {atom.kind}
    if atom.kind == "usage":
        names.add(atom.where)
    return any(kind in names for kind, _ in dropped)


def missing(source: list[Atom], target: list[Atom]) -> list[Atom]:
    """The atoms of `source` the `target` ledger does not hold (by `RULES`)."""
    left = list(target)
    out: list[Atom] = []
    for atom in source:
        rule = RULES.get(atom.kind)
        assert rule is not None, f"Part kind {atom.kind!r} has no ledger rule"
        if not rule.found(atom, left):
            out.append(atom)
    return out


def one_choice(atoms: list[Atom]) -> list[Atom]:
    """The atoms of a target that holds one choice: those of the others are the
    first's no more (a bridge drops them, and says so)."""
    return [a for a in atoms if a.kind not in _BY_CHOICE or a.where == "0"]


@dataclass
class Found:
    """What one direction's ledger found."""

    problems: list[str] = field(default_factory=list[str])

    def add(self, what: str, atoms: Iterable[Atom]) -> None:
        self.problems += [f"{what}: {atom}" for atom in atoms]


# --- reading and bridging, as the generated modules expose them -------------------------


def read(chunks: ModuleType, protocol: str, body: bytes) -> Reading:
    """What `protocol`'s reader reads of a stream (`iter_parts`, and for chat its
    accumulator, whose summary holds the signatures and opaque reasoning that chat's
    parts do not carry): the summary, the model, the error it ended with."""
    parts: list[Any] = []
    error: str | None = None
    try:
        parts.extend(chunks.iter_parts([body], protocol=protocol))
    except chunks.StreamError as raised:
        error = str(raised.message)
    for part in parts:
        if part.kind == "error":
            error = part.text
    starts = [p.identity for p in parts if p.kind == "start" and p.identity is not None]
    model = starts[0].model if starts else None
    summary = runtime(chunks, "_summary_of_parts")(parts)
    if protocol == "chat":
        accumulator = chunks.ChunkAccumulator()
        try:
            for chunk in chunks.iter_chunks([body]):
                accumulator.add(chunk)
        except chunks.StreamError:
            pass
        summary = accumulator.summary()
    return Reading(summary, model, error)


def writer_for(chunks: ModuleType, protocol: str) -> Any:
    """A writer of `protocol` (chat in its default dialect), whose `dropped` counts
    what it did not write."""
    if protocol == "chat":
        dialect = chunks._dialect_named("reasoning_content", chunks._DIALECTS)
        return runtime(chunks, "_ChatWriter")(dialect)
    family = chunks._protocol(protocol)
    name = "_MessagesWriter" if protocol == "messages" else "_ResponsesWriter"
    return runtime(family, name)()


def bridge(chunks: ModuleType, source: str, target: str, body: bytes) -> tuple[bytes, Any]:
    """A `source` stream written as a `target` one, and the writer's `dropped`."""
    writer = writer_for(chunks, target)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the losses are read from `dropped`
        data = b"".join(writer.stream(chunks.iter_parts([body], protocol=source)))
    return data, writer.dropped


# --- requests: the same ledger over a request's conversation ----------------------------


REQUEST_KEYWORDS: Final[dict[str, tuple[str, ...]]] = {
    "_TextPiece.text": ("text", "content", "system", "instructions"),
    "_ReasoningPiece.text": ("reasoning", "thinking"),
    "_ReasoningPiece.signature": ("signature", "reasoning", "thinking"),
    "_ReasoningPiece.encrypted": ("encrypted", "reasoning", "redacted"),
    "_CallPiece.name": ("call",),
    "_CallPiece.arguments": ("call", "arguments"),
    "_CallPiece.signature": ("signature",),
    "_ResultPiece.content": ("result", "output"),
    "_ResultPiece.is_error": ("error",),
    "_ResultPiece.cache": ("cache_control",),
    "_CallPiece.custom": ("custom",),
    "_ForeignPart.part": ("content part", "key"),
    "_MediaPiece": ("image", "file", "audio", "media"),
    "_Turn.refusal": ("refusal",),
}
"""The words a `RequestLossWarning`'s (what, why) uses for each meaning of a request's
conversation, by piece and field; a field not here is named by its own name."""

REQUEST_NOT_MEANINGS: Final = frozenset(
    ("_ReasoningPiece.scheme", "_ReasoningPiece.id", "_ReasoningPiece.source",
     "_ReasoningPiece.carried", "_CallPiece.id", "_CallPiece.scheme", "_ResultPiece.call_id",
     "_MediaPiece.name", "_ForeignPart.protocol")
)  # fmt: skip
"""Fields that say where a meaning came from or which call it answers, not a meaning of
their own (a call's id is part of its call and of its result's entry)."""


def request_ledger(conversation: Any) -> list[Atom]:
    """The ledger of a request's conversation: each turn's texts (by role, joined),
    and every other field of every piece, field by field (a new field of a piece
    joins with no edit here)."""
    atoms: list[Atom] = []
    texts: dict[str, list[str]] = {}
    for turn in conversation.turns:
        role = "system" if turn.role in ("system", "developer") else turn.role
        if turn.refusal:
            atoms.append(Atom("_Turn.refusal", role, turn.refusal))
        for piece in turn.pieces:
            atoms += _piece_atoms(role, piece, texts)
    atoms += [Atom("_TextPiece.text", role, tuple(t)) for role, t in texts.items() if any(t)]
    return atoms


def _piece_atoms(role: str, piece: Any, texts: dict[str, list[str]]) -> list[Atom]:
    kind = type(piece).__name__
    if kind == "_TextPiece":
        texts.setdefault(role, []).append(piece.text)
        return [Atom(f"{kind}.{k}", role, v) for k, v in _fields(piece) if k != "text" and v]
    if kind == "_MediaPiece":
        # `auto` is the detail an image has when none is said (Responses requires one).
        media = tuple(
            (k, v)
            for k, v in _fields(piece)
            if v is not None and k != "name" and (k, v) != ("detail", "auto")
        )
        return [Atom("_MediaPiece", role, media)]
    if kind == "_ResultPiece":
        said = "".join(p.text for p in piece.content if type(p).__name__ == "_TextPiece")
        result = [Atom("_ResultPiece.content", piece.call_id, said)]
        for inner in piece.content:
            result += [
                dataclasses.replace(a, where=piece.call_id) for a in _piece_atoms(role, inner, {})
            ]
        if piece.is_error:
            result.append(Atom("_ResultPiece.is_error", piece.call_id, True))
        return result
    out: list[Atom] = []
    if kind == "_ReasoningPiece" and piece.encrypted is None:
        # OpenRouter's details are kept whole, to go back verbatim: their opaque data.
        for detail in piece.source if isinstance(piece.source, list) else ():
            if isinstance(detail, dict) and detail.get("type") == "reasoning.encrypted":
                out.append(Atom("_ReasoningPiece.encrypted", role, detail.get("data")))
    ident = getattr(piece, "id", None) if kind == "_CallPiece" else role
    for name, value in _fields(piece):
        key = f"{kind}.{name}"
        if key in REQUEST_NOT_MEANINGS or value in (None, "", False):
            continue
        if key == "_CallPiece.arguments":
            value = _arguments(value)
        out.append(Atom(key, str(ident), _unmark(value)))
    return out


def request_missing(source: list[Atom], target: list[Atom]) -> list[Atom]:
    """The atoms of a source request the target's does not hold: a role's texts in
    order in the target's texts of that role (what another meaning became may be
    between them: a refusal written as text), every other as it is, each once."""
    left = list(target)
    out: list[Atom] = []
    for atom in source:
        if atom.kind == "_TextPiece.text":
            joined = "".join(t for a in left if a.kind == atom.kind and a.where == atom.where
                             for t in a.value)  # fmt: skip
            found = _in_order(joined, atom.value)
        elif atom.kind == "_MediaPiece":
            found = _anywhere(atom, left)
        else:
            found = _equal(atom, left)
        if not found:
            out.append(atom)
    return out


def _anywhere(atom: Atom, target: list[Atom]) -> bool:
    """Found as it is, in any place: the media of a tool result go in the next user
    message where a tool message takes only text (chat), as docs/requests.md says."""
    for at, other in enumerate(target):
        if other.kind == atom.kind and other.value == atom.value:
            del target[at]
            return True
    return False


def _in_order(text: str, pieces: Sequence[str]) -> bool:
    at = 0
    for piece in pieces:
        found = text.find(piece, at)
        if found < 0:
            return False
        at = found + len(piece)
    return True


def request_accounted(atom: Atom, dropped: Iterable[tuple[str, str]]) -> bool:
    """Whether a (what, why) of a `RequestLossWarning` names the atom's meaning."""
    field_name = atom.kind.rpartition(".")[2]
    words = REQUEST_KEYWORDS.get(atom.kind, (field_name, field_name.replace("_", " ")))
    return any(w in f"{what} {why}".lower() for what, why in dropped for w in words)


def request_unruled(piece_classes: Iterable[type]) -> list[str]:
    """The fields of the conversation's pieces the ledger has no rule for: a new one
    must say which words its loss is named by (`REQUEST_KEYWORDS`), or that it is no
    meaning (`REQUEST_NOT_MEANINGS`)."""
    out: list[str] = []
    for cls in piece_classes:
        for f in dataclasses.fields(cls):
            key = f"{cls.__name__}.{f.name}"
            known = key in REQUEST_KEYWORDS or key in REQUEST_NOT_MEANINGS
            if not known and cls.__name__ not in ("_MediaPiece", "_TextPiece", "_Turn"):
                out.append(f"request meaning {key!r} has no ledger rule")
    return out


def read_request(chunks: ModuleType, protocol: str, data: dict[str, Any]) -> Any:
    """A request's conversation, as `protocol`'s request reader reads it."""
    losses = runtime(chunks, "_Losses")()
    given = json.loads(json.dumps(data))  # the readers take keys out of what they read
    if protocol == "chat":
        return runtime(chunks, "_read_chat_request")(given, chunks._REQUEST_DIALECTS, losses)
    if protocol == "messages":
        return runtime(chunks, "_read_messages_request")(given, losses)
    return runtime(chunks, "_read_responses_request")(given, losses)


def convert(
    source: ModuleType, data: dict[str, Any], protocol: str, dialect: str | None
) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """`to_request`, and what its `RequestLossWarning` says it dropped."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        written: dict[str, Any] = source.to_request(
            json.loads(json.dumps(data)), protocol=protocol, dialect=dialect
        )
    dropped: list[tuple[str, str]] = []
    for warning in caught:
        dropped += list(getattr(warning.message, "dropped", ()))
    return written, dropped


def request_holds(atoms: list[Atom], kind: str, where: str, value: Any) -> bool:
    """Whether a request's ledger holds a meaning this file put in it: an atom whose
    kind contains `kind`, of `where`, whose value is `value` (for media: has every
    field of `value`)."""
    for atom in atoms:
        if kind not in atom.kind or atom.where != where:
            continue
        if atom.kind == "_MediaPiece":
            if set(value) <= set(atom.value):
                return True
        elif value is None or atom.value == value:
            return True
    return False
