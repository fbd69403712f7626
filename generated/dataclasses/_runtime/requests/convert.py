"""Requests across protocols (`to_request`) and the assistant's turn written back for
the next request (`assistant_message`), through a `_Conversation`."""

# Private names are shared between these files and used by the generated code.
# pyright: reportPrivateUsage=false, reportUnusedFunction=false, reportUnusedClass=false

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final, cast

from ..parts import ChoiceSummary, Part, Summary, _summary_of_parts, _unmarked
from .chat import (
    _chat_messages,
    _chat_turn,
    _read_chat_request,
    _said_of_rest,
    _said_of_turns,
    _write_chat_request,
)
from .dialects import _request_dialect, _RequestDialect
from .messages import (
    _messages_of,
    _messages_turns,
    _read_messages_request,
    _write_messages_request,
)
from .responses import (
    _read_responses_request,
    _responses_item,
    _responses_items,
    _write_responses_request,
)
from .vocabulary import (
    _CallPiece,
    _Conversation,
    _data_of,
    _json_objects,
    _Losses,
    _Piece,
    _ReasoningPiece,
    _refused,
    _TextPiece,
    _Turn,
)

_REQUEST_KINDS: Final = ("chat", "messages", "responses")

_CLIENT_ONLY: Final = "it only describes the client"
"""Why a client-only key (the spec's `client_only` fields) is dropped."""


def _to_request(
    request: Mapping[str, Any],
    source: str,
    protocol: str,
    dialect: str | None,
    dialects: Sequence[_RequestDialect],
    client_only: frozenset[str] = frozenset(),
) -> dict[str, Any]:
    """A `source` request's JSON data as a `protocol` request; a chat one in
    `dialect`. What it cannot carry is said in a `RequestLossWarning`; the keys that
    only describe the client (`client_only`, the spec's) as such."""
    chosen = _chosen(protocol, dialect, dialects)
    data = _data_of(request)
    if source == protocol and source != "chat":
        losses = _Losses()  # only chat has dialects to re-spell
        _uncarried(data, source, losses)
        losses.warn(protocol)
        return data
    losses = _Losses()
    if source == "chat":
        said = _read_chat_request(data, dialects, losses)
    elif source == "messages":
        said = _read_messages_request(data, losses)
    else:
        said = _read_responses_request(data, losses)
    if source != protocol:  # a chat request carries its `rest` as it came
        _say_rest(said.rest, protocol, client_only, losses)
        _said_of_turns(said.turns, protocol, losses)
    written = _write_request(said, protocol, chosen, losses)
    losses.warn(protocol)
    return written


def _say_rest(
    rest: dict[str, Any], protocol: str, client_only: frozenset[str], losses: _Losses
) -> None:
    """Say each key of a request's `rest`, which a `protocol` request has no place
    for."""
    for key, value in rest.items():
        if key in client_only:
            losses.drop(f"the key {key!r}", _CLIENT_ONLY)
        elif not _said_of_rest(key, value, losses):
            losses.drop(f"the key {key!r}", f"a {protocol} request has no place for it")


def _uncarried(data: dict[str, Any], protocol: str, losses: _Losses) -> None:
    """Take out of a Messages or Responses request the signatures its writer carried
    for another backend (a thinking block's `signature` or a reasoning item's
    `encrypted_content` marked with its scheme: `_marked`), which a server of the same
    protocol would refuse as its own; each is said."""
    if protocol == "messages":
        for message in _json_objects(data.get("messages")):
            content = message.get("content")
            if isinstance(content, list):
                blocks = _json_objects(content)
                kept = [b for b in blocks if not _carries(b, "signature", losses)]
                if len(kept) < len(blocks):
                    message["content"] = kept
        return
    items = data.get("input")
    if isinstance(items, list):
        kept = [
            i
            for i in _json_objects(items)
            if not _carries(i, "encrypted_content", losses)
        ]
        if len(kept) < len(_json_objects(items)):
            data["input"] = kept


def _carries(block: dict[str, Any], key: str, losses: _Losses) -> bool:
    marked = _unmarked(block.get(key))
    if marked is None:
        return False
    losses.drop(
        f"a signature carried in a {block.get('type')} for a call",
        _refused(marked[0], "a server of the same protocol"),
    )
    return True


def _chosen(
    protocol: str, dialect: str | None, dialects: Sequence[_RequestDialect]
) -> _RequestDialect:
    if protocol not in _REQUEST_KINDS:
        known = ", ".join(map(repr, _REQUEST_KINDS))
        raise ValueError(f"protocol must be one of {known}, not {protocol!r}")
    if protocol != "chat" and dialect is not None:
        raise ValueError(f"a dialect is chat's: protocol {protocol!r} has none")
    return _request_dialect(dialect, dialects)


def _write_request(
    said: _Conversation, protocol: str, dialect: _RequestDialect, losses: _Losses
) -> dict[str, Any]:
    if protocol == "chat":
        return _write_chat_request(said, dialect, losses)
    if protocol == "messages":
        return _write_messages_request(said, losses)
    return _write_responses_request(said, losses)


def _assistant_message(
    source: Any,
    protocol: str,
    dialect: str | None,
    dialects: Sequence[_RequestDialect],
    choice: int,
) -> list[dict[str, Any]]:
    """The assistant's turn `source` (an accumulator of any protocol, a `Summary`, or
    the `Part`s of a stream) as the items of the next `protocol` request."""
    chosen = _chosen(protocol, dialect, dialects)
    said = getattr(source, "_said", None)
    if said is not None and said()[0] == protocol != "chat":
        return _as_it_came(protocol, said()[1])
    losses = _Losses()
    turn = _turn_of(source, dialects, losses, choice)
    # The keys of an answer no reader knows (`annotations`, `audio`) are an answer's,
    # no request's: said, for chat too.
    _said_of_turns([turn], protocol, losses)
    turn = dataclasses.replace(turn, rest={})
    if protocol == "chat":
        written = _chat_messages(turn, chosen, losses)
    elif protocol == "messages":
        written = _messages_of([turn], losses)
    else:
        written = _responses_items(turn, losses)
    losses.warn(protocol)
    return written


def _as_it_came(protocol: str, data: Any) -> list[dict[str, Any]]:
    """A Messages or Responses turn for the same protocol: as it came, every block or
    item (server tools' included), as both APIs take their own output back."""
    if protocol == "messages":
        return [{"role": "assistant", "content": data.get("content") or []}]
    return _json_objects(data.get("output"))


def _turn_of(
    source: Any, dialects: Sequence[_RequestDialect], losses: _Losses, choice: int
) -> _Turn:
    said = getattr(source, "_said", None)
    if said is not None:
        protocol, data = said()
        return _turn_of_result(protocol, data, dialects, losses, choice)
    if isinstance(source, Summary):
        return _turn_of_summary(source, choice)
    if isinstance(source, Iterable):
        parts = cast(Iterable[Part], source)
        return _turn_of_summary(_summary_of_parts(parts), choice)
    raise TypeError(
        "the assistant's turn comes from an accumulator, a Summary or the parts of a"
        f" stream, not {source!r}"
    )


def _turn_of_result(
    protocol: str,
    data: Any,
    dialects: Sequence[_RequestDialect],
    losses: _Losses,
    choice: int,
) -> _Turn:
    """The assistant's turn in what a stream added up to, read as its protocol's
    request reads an assistant message: every spelling of its reasoning and
    signatures, as they came."""
    if protocol == "chat":
        for one in _json_objects(data.get("choices")):
            if one.get("index", 0) == choice:
                message: dict[str, Any] = dict(one.get("message") or {})
                message["role"] = "assistant"
                return _chat_turn(message, dialects, losses)
        return _Turn("assistant", ())
    if protocol == "messages":
        content: dict[str, Any] = {
            "role": "assistant",
            "content": data.get("content") or [],
        }
        return _messages_turns(content, losses)[-1]
    turns: list[_Turn] = []
    for item in _json_objects(data.get("output")):
        _responses_item(turns, item, losses)
    pieces = tuple(p for t in turns for p in t.pieces)
    refusal = "\n\n".join(t.refusal for t in turns if t.refusal) or None
    return _Turn("assistant", pieces, refusal)


def _turn_of_summary(summary: Summary, choice: int) -> _Turn:
    """A summary's choice as an assistant turn: its reasoning, text and calls. A
    summary does not say which backend made its signatures and encrypted reasoning, so
    they are not sent back (an accumulator's turn has them)."""
    one: ChoiceSummary | None = next(
        (c for c in summary.choices if c.index == choice), None
    )
    if one is None:
        return _Turn("assistant", ())
    pieces: list[_Piece] = []
    opaque = {i.kind: i.value for i in one.reasoning_items}
    if one.reasoning or opaque:
        pieces.append(
            _ReasoningPiece(
                one.reasoning,
                signature=opaque.get("signature"),
                encrypted=opaque.get("encrypted"),
            )
        )
    if one.text:
        pieces.append(_TextPiece(one.text))
    pieces += [
        _CallPiece(c.id or "", c.name or "", c.arguments) for c in one.tool_calls
    ]
    return _Turn("assistant", tuple(pieces), one.refusal or None)
