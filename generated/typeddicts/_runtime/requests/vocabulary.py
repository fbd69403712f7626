"""What a request says, in no protocol's terms: the conversation every protocol's
request is read into and written from (`to_request`, `assistant_message`), as `Part`s
are for streams. Each protocol's file reads its request's JSON data into a
`_Conversation` and writes one back as JSON data; what a protocol cannot hold is
reported in `_Losses`, never dropped silently."""

# Private names are shared between these files and used by the generated code.
# pyright: reportPrivateUsage=false, reportUnusedFunction=false, reportUnusedClass=false

from __future__ import annotations

import copy
import hashlib
import json
import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, TypeGuard

from ..parts import _unmarked


class RequestLossWarning(UserWarning):
    """A request was written without something its protocol (or backend) has no place
    for: `dropped` lists each (what, why)."""

    def __init__(self, message: str, dropped: tuple[tuple[str, str], ...]) -> None:
        super().__init__(message)
        self.dropped = dropped


@dataclass(frozen=True, slots=True)
class _TextPiece:
    text: str
    cache: Any = None
    """Anthropic's `cache_control` on it (a prompt-cache breakpoint), as it came."""


@dataclass(frozen=True, slots=True)
class _MediaPiece:
    """An image, a file or audio: `url` (a data: URL for inline data) or a file id."""

    kind: str
    """"image", "file" or "audio"."""
    url: str | None = None
    file_id: str | None = None
    media_type: str | None = None
    name: str | None = None
    detail: str | None = None
    """An image's `detail` ("low", "high", "auto"), as chat and Responses say it."""
    cache: Any = None


@dataclass(frozen=True, slots=True)
class _ReasoningPiece:
    """One block of reasoning: its text, and what the backend wants back unchanged (a
    `signature` over the text, or `encrypted` reasoning), made by `scheme`: the
    protocol or chat dialect that wrote it ("messages", "responses", "openrouter",
    "gemini"...). A signature is sent back only to where its scheme is read."""

    text: str = ""
    signature: str | None = None
    encrypted: str | None = None
    scheme: str | None = None
    id: str | None = None
    source: Any = None
    """The item as its scheme wrote it (a Responses reasoning item, OpenRouter's
    `reasoning_details`), written back verbatim to the same scheme."""
    carried: bool = False
    """Whether it is a signature another protocol carried for the call after it (a
    Gemini thought signature in a Messages thinking block or a Responses reasoning
    item, marked with its scheme: `_marked`), which goes back on that call."""


@dataclass(frozen=True, slots=True)
class _CallPiece:
    """A tool call: its arguments as JSON text; a signature that rides on it (Gemini's
    thought signature) with its scheme."""

    id: str
    name: str
    arguments: str
    signature: str | None = None
    scheme: str | None = None
    custom: bool = False
    """Whether it calls a custom tool (chat's `custom`, Responses' `custom_tool_call`),
    whose `arguments` are its free-text input."""


@dataclass(frozen=True, slots=True)
class _ForeignPart:
    """A content part its protocol's reader does not know (a vendor's `video_url` in
    chat), as it came: a request of the same protocol carries it (`_foreign_parts`), any
    other says it."""

    protocol: str
    part: Any


_Content = _TextPiece | _MediaPiece | _ForeignPart
"""What a message's or a tool result's content holds."""


@dataclass(frozen=True, slots=True)
class _ResultPiece:
    """A tool's result for the call `call_id`: its text, or texts, media and parts."""

    call_id: str
    content: tuple[_Content, ...]
    is_error: bool = False
    cache: Any = None


_Piece = _Content | _ReasoningPiece | _CallPiece | _ResultPiece


@dataclass(frozen=True, slots=True)
class _Turn:
    """One message: `role` is "system", "developer", "user", "assistant" or "tool"
    (whose pieces are results)."""

    role: str
    pieces: tuple[_Piece, ...]
    refusal: str | None = None
    rest: dict[str, Any] = field(default_factory=dict[str, Any])
    """The keys of its chat message the chat reader does not know (a participant's
    `name`), as they came: a chat request carries them, any other says them."""


@dataclass(frozen=True, slots=True)
class _ToolSpec:
    name: str
    description: str | None
    parameters: Any
    """The JSON Schema of the arguments."""
    strict: bool | None = None
    cache: Any = None


@dataclass(slots=True)
class _Thinking:
    """The reasoning switch: on or off, an effort or a budget of tokens."""

    enabled: bool | None = None
    effort: str | None = None
    budget: int | None = None


@dataclass(slots=True)
class _Conversation:
    """A request in no protocol's terms. `tool_choice` is "auto", "none", "required",
    a tool's name as ("tool", name), or None (unsaid). `rest` holds the keys of the
    source that are none of these, carried only to a request of the same protocol."""

    model: str | None = None
    turns: list[_Turn] = field(default_factory=list[_Turn])
    tools: list[_ToolSpec] = field(default_factory=list[_ToolSpec])
    tool_choice: str | tuple[str, str] | None = None
    parallel_tool_calls: bool | None = None
    max_tokens: int | None = None
    thinking: _Thinking = field(default_factory=_Thinking)
    stream: bool | None = None
    include_usage: bool | None = None
    temperature: float | None = None
    top_p: float | None = None
    stop: list[str] | None = None
    user: str | None = None
    protocol: str = ""
    rest: dict[str, Any] = field(default_factory=dict[str, Any])


class _Losses:
    """What a request could not carry, by (what, why), said once in a
    `RequestLossWarning`."""

    __slots__ = ("dropped",)

    def __init__(self) -> None:
        self.dropped: dict[tuple[str, str], None] = {}

    def drop(self, what: str, why: str) -> None:
        self.dropped[(what, why)] = None

    def warn(self, protocol: str) -> None:
        if self.dropped:
            said = "; ".join(f"{what} ({why})" for what, why in self.dropped)
            warnings.warn(
                RequestLossWarning(
                    f"the {protocol} request leaves out: {said}", tuple(self.dropped)
                ),
                stacklevel=3,
            )


def _foreign_parts(piece: _ForeignPart, protocol: str, losses: _Losses) -> list[Any]:
    """A part its reader did not know, as it came for a `protocol` request of its own
    protocol; said for any other, which it means nothing to."""
    if piece.protocol == protocol:
        return [piece.part]
    kind = _json_object(piece.part).get("type")
    losses.drop(f"a content part of type {kind!r}", "no other protocol has it")
    return []


_EFFORT_BUDGETS: Final = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384}
"""A reasoning effort as a budget of tokens, for protocols that take only a budget
(Anthropic's `budget_tokens`: at least 1024), and back (the largest effort a budget
reaches): an effort is no count, so this is a choice, the one LiteLLM makes."""


def _read_effort(thinking: _Thinking, effort: Any) -> None:
    """An effort as it was asked: "none" turns reasoning off."""
    if effort == "none":
        thinking.enabled, thinking.effort = False, None
    elif isinstance(effort, str):
        thinking.effort = effort


def _effort_of(thinking: _Thinking) -> str | None:
    if thinking.effort is not None or thinking.budget is None:
        return thinking.effort
    reached = [e for e, b in _EFFORT_BUDGETS.items() if thinking.budget >= b]
    return reached[-1] if reached else "minimal"


def _budget_of(thinking: _Thinking) -> int | None:
    if thinking.budget is not None or thinking.effort is None:
        return thinking.budget
    return _EFFORT_BUDGETS.get(thinking.effort, _EFFORT_BUDGETS["medium"])


def _is_json_object(value: Any) -> TypeGuard[dict[str, Any]]:
    """Whether `value` is a JSON object (typed as one, where `isinstance` says only
    `dict`)."""
    return isinstance(value, dict)


def _is_json_list(value: Any) -> TypeGuard[list[Any]]:
    """Whether `value` is a JSON list (typed as one, where `isinstance` says only
    `list`)."""
    return isinstance(value, list)


def _json_object(value: Any) -> dict[str, Any]:
    """`value` if it is a JSON object, else an empty one (read with `.get`)."""
    return value if _is_json_object(value) else {}


def _json_objects(items: Any) -> list[dict[str, Any]]:
    """The JSON objects among `items` (a JSON list, or None): others are skipped."""
    return [item for item in items or () if _is_json_object(item)]


_TOOL_NAME: Final = re.compile(r"[^a-zA-Z0-9_-]")
"""What a chat backend refuses in a function's name (`^[a-zA-Z0-9_-]{1,64}$`)."""


def _flat_tool_name(namespace: str, name: str) -> str:
    """The name a function of a namespace (Codex's `namespace` tools) has as a chat
    function: `namespace__name`, other characters as `_`, at most 64 (a longer one
    cut, with a hash of the whole)."""
    flat = _TOOL_NAME.sub("_", f"{namespace}__{name}")
    if len(flat) <= 64:
        return flat
    digest = hashlib.sha256(f"{namespace}\0{name}".encode()).hexdigest()[:8]
    return f"{flat[:55]}_{digest}"


def _data_of(request: Mapping[str, Any]) -> dict[str, Any]:
    """A request's JSON data, copied: reading takes keys out of it."""
    return copy.deepcopy(dict(request))


def _refused(scheme: str | None, where: str) -> str:
    """Why a signature (or reasoning) made by `scheme` is not sent to `where`."""
    return f"made by {scheme or 'an unknown backend'}: {where} would refuse it"


def _carried(value: Any) -> _ReasoningPiece | None:
    """A signature carried in another protocol's place, marked with its scheme
    (`_marked`), as a piece bound to the call after it; None for any other value."""
    marked = _unmarked(value)
    if marked is None:
        return None
    return _ReasoningPiece(signature=marked[1], scheme=marked[0], carried=True)


def _bound(pieces: list[_Piece]) -> tuple[str | None, str | None]:
    """The signature and scheme a call gets from the piece right before it, when that
    is a carried signature (`_carried`), taken out of `pieces`."""
    last = pieces[-1] if pieces else None
    if isinstance(last, _ReasoningPiece) and last.carried:
        pieces.pop()
        return last.signature, last.scheme
    return None, None


def _texts(pieces: tuple[_Piece, ...]) -> str:
    return "".join(p.text for p in pieces if isinstance(p, _TextPiece))


def _arguments_object(call: _CallPiece, losses: _Losses) -> Any:
    """A call's arguments as the object protocols with no JSON text want; arguments
    that are no JSON object are kept under "arguments" and reported."""
    try:
        value: Any = json.loads(call.arguments) if call.arguments.strip() else {}
    except ValueError:
        value = None
    if _is_json_object(value):
        return value
    losses.drop(f"the arguments of call {call.id!r}", "not a JSON object: kept as text")
    return {"arguments": call.arguments}


def _arguments_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _path_get(data: Any, path: str) -> Any:
    """The value at a dotted `path` of JSON data, or None."""
    for key in path.split("."):
        if not _is_json_object(data):
            return None
        data = data.get(key)
    return data


def _path_set(data: dict[str, Any], path: str, value: Any) -> None:
    """Set the value at a dotted `path`, making the objects on the way."""
    *outer, last = path.split(".")
    for key in outer:
        inner = data.get(key)
        if not _is_json_object(inner):
            inner = data[key] = {}
        data = inner
    data[last] = value


def _path_pop(data: dict[str, Any], path: str) -> Any:
    """Take the value at a dotted `path` out of `data` (and the objects it empties)."""
    head, _, tail = path.partition(".")
    if not tail:
        return data.pop(head, None)
    inner = data.get(head)
    if not _is_json_object(inner):
        return None
    value = _path_pop(inner, tail)
    if not inner:
        del data[head]
    return value
