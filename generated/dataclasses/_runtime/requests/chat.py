"""A chat-completions request read into a `_Conversation`, and written from one in a
backend's dialect (`_RequestDialect`): the assistant's reasoning and its signatures
where that backend wants them back."""

# Private names are shared between these files and used by the generated code.
# pyright: reportPrivateUsage=false, reportUnusedFunction=false, reportUnusedClass=false

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from ..parts import _ANTHROPIC_FORMAT
from .dialects import _RequestDialect
from .vocabulary import (
    _budget_of,
    _CallPiece,
    _Content,
    _Conversation,
    _effort_of,
    _foreign_parts,
    _ForeignPart,
    _is_json_list,
    _is_json_object,
    _json_object,
    _json_objects,
    _Losses,
    _MediaPiece,
    _path_get,
    _path_pop,
    _path_set,
    _Piece,
    _read_effort,
    _ReasoningPiece,
    _refused,
    _ResultPiece,
    _TextPiece,
    _ToolSpec,
    _Turn,
)

_CHAT_READ: Final = frozenset(
    (
        "model",
        "messages",
        "tools",
        "tool_choice",
        "parallel_tool_calls",
        "max_tokens",
        "max_completion_tokens",
        "stream",
        "stream_options",
        "temperature",
        "top_p",
        "stop",
        "user",
        "reasoning_effort",
    )
)
"""The keys of a chat request a `_Conversation` holds; the others stay in its `rest`."""

_MESSAGE_READ: Final = frozenset(
    ("role", "content", "refusal", "tool_calls", "tool_call_id")
)
"""The keys of a chat message a `_Turn` holds, with the reasoning keys of every dialect;
the others stay in its `rest`."""

_FORMATS: Final = {_ANTHROPIC_FORMAT: "messages"}
"""The scheme of a signature in `reasoning_details` by the entry's `format`
(OpenRouter's word for Anthropic's thinking blocks)."""


def _read_chat_request(
    data: dict[str, Any], dialects: Sequence[_RequestDialect], losses: _Losses
) -> _Conversation:
    """A chat request's conversation; reasoning and signatures are read wherever any
    dialect puts them. Tools and a tool choice only chat has stay in `rest`, said by
    a request of another protocol (`_said_of_rest`)."""
    said = _Conversation(model=data.get("model"), protocol="chat")
    rest = {k: v for k, v in data.items() if k not in _CHAT_READ}
    options = _json_object(data.get("stream_options"))
    if any(k != "include_usage" for k in options):  # what else it tunes, kept
        rest["stream_options"] = {
            k: v for k, v in options.items() if k != "include_usage"
        }
    for message in _json_objects(data.get("messages")):
        said.turns.append(_chat_turn(message, dialects, losses))
    for tool in data.get("tools") or ():
        function = _json_object(_json_object(tool).get("function"))
        if isinstance(function.get("name"), str):
            said.tools.append(
                _ToolSpec(
                    function["name"],
                    function.get("description"),
                    function.get("parameters"),
                    function.get("strict"),
                )
            )
        else:
            rest.setdefault("tools", []).append(tool)
    choice = data.get("tool_choice")
    if _is_json_object(choice):
        name = _path_get(choice, "function.name")
        if choice.get("type") == "function" and isinstance(name, str):
            said.tool_choice = ("tool", name)
        else:
            rest["tool_choice"] = choice
    elif isinstance(choice, str):
        said.tool_choice = choice
    said.parallel_tool_calls = data.get("parallel_tool_calls")
    said.max_tokens = data.get("max_completion_tokens", data.get("max_tokens"))
    said.stream = data.get("stream")
    said.include_usage = _path_get(data, "stream_options.include_usage")
    said.temperature = data.get("temperature")
    said.top_p = data.get("top_p")
    stop = data.get("stop")
    said.stop = [stop] if isinstance(stop, str) else stop
    said.user = data.get("user")
    _read_effort(said.thinking, data.get("reasoning_effort"))
    for dialect in dialects:
        _read_switch(rest, dialect, said)
    said.rest = rest
    return said


def _read_switch(
    rest: dict[str, Any], dialect: _RequestDialect, said: _Conversation
) -> None:
    """The reasoning switch as `dialect` spells it, taken out of `rest`."""
    thinking = said.thinking
    if dialect.effort and dialect.effort not in _CHAT_READ:
        _read_effort(thinking, _path_pop(rest, dialect.effort))
    if dialect.budget:
        budget = _path_pop(rest, dialect.budget)
        if isinstance(budget, int):
            thinking.budget = budget
    if dialect.switch:
        value = _path_pop(rest, dialect.switch)
        if value is not None and value in dialect.switch_values:
            thinking.enabled = value == dialect.switch_values[0]


def _said_of_rest(key: str, value: Any, losses: _Losses) -> bool:
    """Say the tools and the tool choice a chat request kept in `rest` (only chat has
    them) for a request of another protocol; whether `key` is one of them."""
    if key == "tools":
        for tool in value:
            losses.drop(f"tool {_named(tool)}", "only function tools cross protocols")
    elif key == "tool_choice":
        kind = _json_object(value).get("type")
        losses.drop(f"tool choice {kind!r}", "only a function is named")
    return key in ("tools", "tool_choice")


def _said_of_turns(turns: list[_Turn], protocol: str, losses: _Losses) -> None:
    """Say the keys of chat messages a request of another protocol has no place for
    (a participant's `name`)."""
    for turn in turns:
        for key in turn.rest:
            losses.drop(
                f"the key {key!r} of a message of the {turn.role}",
                f"a {protocol} request has no place for it",
            )


def _named(tool: Any) -> str:
    """A tool's name (chat's is under its type's key: `custom.name`), else its type."""
    fields = _json_object(tool)
    kind = fields.get("type")
    inner = _json_object(fields.get(kind)) if isinstance(kind, str) else {}
    name = inner.get("name") or fields.get("name") or kind
    return repr(name) if isinstance(name, str) else "of no name"


def _chat_turn(
    message: dict[str, Any], dialects: Sequence[_RequestDialect], losses: _Losses
) -> _Turn:
    role = message.get("role") or "user"
    content = message.get("content")
    if role == "tool":
        call_id = message.get("tool_call_id") or ""
        return _Turn("tool", (_ResultPiece(call_id, _chat_content(content, losses)),))
    pieces: list[_Piece] = []
    refusal = message.get("refusal")
    refusals = [refusal] if isinstance(refusal, str) else []
    if role == "assistant":
        pieces += _chat_reasoning(message, dialects, losses)
        if _is_json_list(content):  # a refusal part is the turn's refusal
            refusals += [r for r in map(_refused_part, content) if r is not None]
            content = [p for p in content if _refused_part(p) is None]
    pieces += _chat_content(content, losses)
    for call in message.get("tool_calls") or ():
        pieces.append(_chat_call(_json_object(call), dialects))
    read = _MESSAGE_READ | {k for d in dialects for k in (d.reasoning, d.details) if k}
    # An empty value (OpenAI's `annotations: []` on every answer) says nothing.
    rest = {k: v for k, v in message.items() if k not in read and _says_something(v)}
    refused = "\n\n".join(refusals) if refusals else None
    return _Turn(role, tuple(pieces), refused, rest)


def _says_something(value: Any) -> bool:
    """Whether a value says something: not None, and no empty text, list or object."""
    return value is not None and value not in ("", [], {})


def _refused_part(part: Any) -> str | None:
    """The refusal of an assistant's content part of type "refusal" (the other spelling
    of its `refusal`), else None."""
    said = _json_object(part)
    refusal = said.get("refusal")
    return (
        refusal if said.get("type") == "refusal" and isinstance(refusal, str) else None
    )


def _chat_reasoning(
    message: dict[str, Any], dialects: Sequence[_RequestDialect], losses: _Losses
) -> list[_Piece]:
    """An assistant message's reasoning: structured details (`_details_reasoning`)
    before the text of the first reasoning key that has any."""
    text = ""
    for dialect in dialects:
        said = message.get(dialect.reasoning) if dialect.reasoning else None
        if isinstance(said, str) and said:
            text = said
            break
    for dialect in dialects:
        details = message.get(dialect.details) if dialect.details else None
        if isinstance(details, list) and details:
            return _details_reasoning(details, dialect.name, text, losses)
    return [_ReasoningPiece(text)] if text else []


def _details_reasoning(
    details: Any, scheme: str, text: str, losses: _Losses
) -> list[_Piece]:
    """Structured reasoning with its text: kept whole, of its dialect's scheme, when it
    holds its text (as OpenRouter writes it); else as the chat writer writes another
    protocol's (the text in the reasoning key, the details only a signature whose
    `format` names its scheme, `_FORMATS`, and opaque reasoning), that signature with
    the text, so that a Messages thinking block reads back as one."""
    entries = _json_objects(details)
    texts = (d.get("text") or d.get("summary") for d in entries)
    own = "".join(t for t in texts if isinstance(t, str))
    signed = [d for d in entries if _signed_by(d) is not None]
    if own or not signed:
        signature = next((d["signature"] for d in signed), None)
        encrypted = next((d.get("data") for d in entries if d.get("data")), None)
        return [
            _ReasoningPiece(own or text, signature, encrypted, scheme, None, details)
        ]
    if len(signed) > 1:  # the texts of its blocks are one: no signature fits it
        losses.drop(
            f"the signatures of {len(signed)} thinking blocks",
            "their texts came run together: each signs its own",
        )
        return [_ReasoningPiece(text)]
    pieces: list[_Piece] = []
    for entry in entries:
        made = _signed_by(entry)
        if made is not None:
            pieces.append(_ReasoningPiece(text, entry["signature"], scheme=made))
        else:  # opaque reasoning, of its dialect's scheme
            data = entry.get("data")
            encrypted = data if isinstance(data, str) else None
            pieces.append(
                _ReasoningPiece(encrypted=encrypted, scheme=scheme, source=[entry])
            )
    return pieces


def _signed_by(entry: dict[str, Any]) -> str | None:
    """The scheme of an entry's signature, by its `format` (`_FORMATS`), if any."""
    signature = entry.get("signature")
    if not isinstance(signature, str) or not signature:
        return None
    return _FORMATS.get(str(entry.get("format")))


def _chat_call(call: dict[str, Any], dialects: Sequence[_RequestDialect]) -> _CallPiece:
    custom = _json_object(call.get("custom"))
    if call.get("type") == "custom":  # a custom tool's call: its input is free text
        name, given = custom.get("name"), custom.get("input")
        return _CallPiece(
            call.get("id") or "",
            name if isinstance(name, str) else "",
            given if isinstance(given, str) else "",
            custom=True,
        )
    function = _json_object(call.get("function"))
    arguments = function.get("arguments")
    signature: str | None = None
    scheme: str | None = None
    for dialect in dialects:
        found = _path_get(call, dialect.signature) if dialect.signature else None
        if isinstance(found, str) and found != dialect.unsigned:
            signature, scheme = found, dialect.name
            break
    return _CallPiece(
        call.get("id") or "",
        function.get("name") or "",
        arguments if isinstance(arguments, str) else "",
        signature,
        scheme,
    )


def _given_parts(content: Any) -> list[Any]:
    """Content that is no text as its parts: a list, or one part that is no list."""
    if _is_json_list(content):
        return content
    return [] if content is None else [content]


def _chat_content(content: Any, losses: _Losses) -> tuple[_Content, ...]:
    """Content as pieces; a part this reader does not know as it came (`_ForeignPart`):
    a chat request carries it."""
    if isinstance(content, str):
        return (_TextPiece(content),) if content else ()
    pieces: list[_Content] = []
    for given in _given_parts(content):
        part = _json_object(given)
        kind = part.get("type")
        cache = part.get("cache_control")
        if kind == "text":
            pieces.append(_TextPiece(part.get("text") or "", cache))
        elif kind == "image_url":
            pieces.append(
                _MediaPiece(
                    "image",
                    url=_path_get(part, "image_url.url"),
                    detail=_path_get(part, "image_url.detail"),
                    cache=cache,
                )
            )
        elif kind == "file":
            file: dict[str, Any] = part.get("file") or {}
            pieces.append(
                _MediaPiece(
                    "file",
                    url=file.get("file_data"),
                    file_id=file.get("file_id"),
                    name=file.get("filename"),
                    cache=cache,
                )
            )
        elif kind == "input_audio":
            audio: dict[str, Any] = part.get("input_audio") or {}
            pieces.append(
                _MediaPiece(
                    "audio",
                    url=audio.get("data"),
                    media_type=audio.get("format"),
                    cache=cache,
                )
            )
        else:
            pieces.append(_ForeignPart("chat", given))
    return tuple(pieces)


# --- writing -------------------------------------------------------------------------


def _write_chat_request(
    said: _Conversation, dialect: _RequestDialect, losses: _Losses
) -> dict[str, Any]:
    """The chat request of a conversation, in `dialect`."""
    data: dict[str, Any] = {}
    if said.model is not None:
        data["model"] = said.model
    data["messages"] = _chat_conversation(said.turns, dialect, losses)
    tools = [_chat_tool(tool, losses) for tool in said.tools]
    if said.protocol == "chat":  # the tools only chat has, as they came
        tools += said.rest.get("tools", [])
    if tools:
        data["tools"] = tools
    if said.tool_choice is not None:
        choice = said.tool_choice
        data["tool_choice"] = (
            {"type": "function", "function": {"name": choice[1]}}
            if isinstance(choice, tuple)
            else choice
        )
    if said.parallel_tool_calls is not None:
        data["parallel_tool_calls"] = said.parallel_tool_calls
    if said.max_tokens is not None:
        data[dialect.max_tokens] = said.max_tokens
    _write_switch(data, said, dialect, losses)
    for key in ("stream", "temperature", "top_p", "stop", "user"):
        value = getattr(said, key)
        if value is not None:
            data[key] = value
    if said.include_usage is not None:
        data["stream_options"] = {"include_usage": said.include_usage}
    if said.protocol == "chat":
        for key, value in said.rest.items():
            _merged(data, key, value)
    return data


def _merged(data: dict[str, Any], key: str, value: Any) -> None:
    """A key of the source as it came, merged into what was written of it (the
    `stream_options` besides `include_usage`)."""
    written = data.setdefault(key, value)
    if written is not value and _is_json_object(written) and _is_json_object(value):
        data[key] = {**value, **written}


def _write_switch(
    data: dict[str, Any], said: _Conversation, dialect: _RequestDialect, losses: _Losses
) -> None:
    """The reasoning switch as `dialect` spells it: off by its switch (else an effort
    of "none"); on by its switch, with a budget where it takes one (else an effort: a
    budget as the effort it reaches)."""
    thinking = said.thinking
    if thinking.enabled is False:
        if dialect.switch:
            _path_set(data, dialect.switch, dialect.switch_values[1])
        elif dialect.effort:
            _path_set(data, dialect.effort, "none")
        else:
            losses.drop("reasoning turned off", f"{dialect.name} has no switch")
        return
    asked = thinking.effort is not None or thinking.budget is not None
    if dialect.switch and (thinking.enabled or asked):
        _path_set(data, dialect.switch, dialect.switch_values[0])
    if dialect.budget and (thinking.budget is not None or not dialect.effort) and asked:
        _path_set(data, dialect.budget, _budget_of(thinking))
    elif dialect.effort and asked:
        _path_set(data, dialect.effort, _effort_of(thinking))
    elif asked:
        losses.drop("the reasoning effort or budget", f"{dialect.name} takes none")
    elif thinking.enabled and not dialect.switch:
        losses.drop("reasoning turned on", f"{dialect.name} has no switch")


def _chat_tool(tool: _ToolSpec, losses: _Losses) -> dict[str, Any]:
    if tool.cache is not None:
        losses.drop(f"the cache_control of tool {tool.name!r}", "chat tools take none")
    function: dict[str, Any] = {"name": tool.name}
    if tool.description is not None:
        function["description"] = tool.description
    if tool.parameters is not None:
        function["parameters"] = tool.parameters
    if tool.strict is not None:
        function["strict"] = tool.strict
    return {"type": "function", "function": function}


def _chat_conversation(
    turns: list[_Turn], dialect: _RequestDialect, losses: _Losses
) -> list[dict[str, Any]]:
    """The turns as chat messages: the media of tool results in the user message after
    the tool messages (with what the user says next); system messages where the dialect
    takes them (`system`)."""
    messages: list[dict[str, Any]] = []
    media = False  # whether the last message holds the media of tool results
    for turn in turns:
        written = _chat_messages(turn, dialect, losses)
        if media and turn.role == "user" and written:
            said = messages.pop()["content"]
            written[0]["content"] = said + _as_parts(written[0]["content"])
        media = turn.role == "tool" and bool(written) and written[-1]["role"] == "user"
        messages += written
    if dialect.system == "first":
        messages = _system_first(messages)
    return messages


def _system_first(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One system message, first: every system message joined into it, in order (many
    chat templates raise "System message must be at the beginning" otherwise)."""
    system = [m for m in messages if m["role"] == "system"]
    if len(system) < 2 and (not system or messages[0] is system[0]):
        return messages
    contents = [m["content"] for m in system]
    joined: str | list[dict[str, Any]]
    if all(isinstance(c, str) for c in contents):
        joined = "\n\n".join(c for c in contents if c)
    else:
        joined = [part for c in contents for part in _as_parts(c)]
    rest = [m for m in messages if m["role"] != "system"]
    return [{"role": "system", "content": joined}, *rest]


def _as_parts(content: Any) -> list[dict[str, Any]]:
    """Chat content as content parts."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    return list(content or ())


def _chat_messages(
    turn: _Turn, dialect: _RequestDialect, losses: _Losses
) -> list[dict[str, Any]]:
    """A turn as chat messages: results each as a `tool` message (before the rest of a
    user turn, as chat wants them right after the calls), then the media of the results
    in one user message (a tool message takes only text), the rest as one message."""
    results = [p for p in turn.pieces if isinstance(p, _ResultPiece)]
    messages = [_chat_result(r, dialect, losses) for r in results]
    media = [part for r in results for part in _result_media(r, dialect, losses)]
    if media:
        messages.append({"role": "user", "content": media})
    rest = tuple(p for p in turn.pieces if not isinstance(p, _ResultPiece))
    if turn.role == "assistant":
        messages.append(_chat_assistant(turn, dialect, losses))
    elif rest or not results:
        role = turn.role if turn.role != "tool" else "user"
        if role == "developer" and not dialect.developer:
            role = "system"
        content = [p for p in rest if isinstance(p, _Content)]
        messages.append(
            {"role": role, "content": _chat_parts(tuple(content), dialect, losses)}
        )
    if messages:  # the message's keys as they came, on the message it became
        own = messages[0] if turn.role == "tool" else messages[-1]
        for key, value in turn.rest.items():
            own.setdefault(key, value)
    return messages


def _chat_result(
    result: _ResultPiece, dialect: _RequestDialect, losses: _Losses
) -> dict[str, Any]:
    """A tool's result as a `tool` message: its text, as chat's tool messages take
    only text, saying where its media went (`_result_media`)."""
    if result.is_error:
        losses.drop("that a tool result is an error", "chat has no place for it")
    texts = [p for p in result.content if isinstance(p, _TextPiece)]
    media = [p for p in result.content if isinstance(p, _MediaPiece)]
    foreign = [p for p in result.content if isinstance(p, _ForeignPart)]
    taken = [p for p in media if _takes(dialect, p) and _fits(p)]
    if taken:
        texts.append(
            _TextPiece(f"[{_count(taken)} of this result: in the next user message]")
        )
    if len(taken) < len(media):
        left = [p for p in media if p not in taken]
        texts.append(
            _TextPiece(f"[{_count(left)} of this result: left out, not readable here]")
        )
    if media:  # one text: the result's, then where its media went
        cache = next((p.cache for p in texts if p.cache is not None), None)
        texts = [_TextPiece("\n".join(p.text for p in texts if p.text), cache)]
    if result.cache is not None and texts:  # the result's breakpoint: at its end
        texts[-1] = _TextPiece(texts[-1].text, result.cache)
    elif result.cache is not None:
        _uncached(result.cache, "an empty tool result", dialect, losses)
    return {
        "role": "tool",
        "tool_call_id": result.call_id,
        "content": _chat_parts((*texts, *foreign), dialect, losses),
    }


def _result_media(
    result: _ResultPiece, dialect: _RequestDialect, losses: _Losses
) -> list[dict[str, Any]]:
    """The media of a tool's result as content parts of the user message after the
    tool messages, led by a line naming the call (what the dialect does not take is
    said)."""
    media = tuple(p for p in result.content if isinstance(p, _MediaPiece))
    if not media:
        return []
    for piece in media:
        if not _takes(dialect, piece):
            losses.drop(f"{_a(piece.kind)} in a tool result", _untaken(dialect, piece))
    parts = _chat_parts(tuple(p for p in media if _takes(dialect, p)), dialect, losses)
    if not parts:
        return []
    lead = {"type": "text", "text": f"[the result of tool call {result.call_id}:]"}
    return [lead, *_as_parts(parts)]


def _takes(dialect: _RequestDialect, piece: _MediaPiece) -> bool:
    """Whether the dialect takes media of the piece's kind (the spec's `media`)."""
    return piece.kind in dialect.media


def _fits(piece: _MediaPiece) -> bool:
    """Whether chat has a content part for the piece: an image by URL, a file by its
    data or file id, audio by its data."""
    if piece.kind == "file":
        return piece.file_id is not None or _inline(piece.url)
    return piece.url is not None


def _a(kind: str) -> str:
    """A kind of media as the warning says it: "an image", "a file", "audio"."""
    return {"image": "an image", "file": "a file"}.get(kind, kind)


def _untaken(dialect: _RequestDialect, piece: _MediaPiece) -> str:
    return f"{dialect.name} takes no {piece.kind} content parts"


def _count(media: list[_MediaPiece]) -> str:
    """ "the image", "2 images", "an image and a file"."""
    kinds = [p.kind for p in media]
    if len(kinds) == 1:
        return f"the {kinds[0]}"
    said = sorted(set(kinds))
    return " and ".join(
        f"{kinds.count(k)} {k}s" if kinds.count(k) > 1 else f"1 {k}" for k in said
    )


def _chat_parts(
    pieces: tuple[_Content, ...], dialect: _RequestDialect, losses: _Losses
) -> str | list[dict[str, Any]]:
    """Content as one string when it is all text, else as content parts (media the
    dialect does not take left out, and said; parts no reader knew as they came)."""
    texts = [p for p in pieces if isinstance(p, _TextPiece)]
    cached = any(p.cache is not None for p in texts) and dialect.cache_control
    if len(texts) == len(pieces) and len(texts) < 2 and not cached:
        for text in texts:  # one string (parts only for a breakpoint it takes)
            _uncached(text.cache, "a text", dialect, losses)
        return "".join(p.text for p in texts)  # several texts stay apart
    parts: list[dict[str, Any]] = []
    for piece in pieces:
        written = len(parts)
        if isinstance(piece, _ForeignPart):
            parts += _foreign_parts(piece, "chat", losses)
            continue
        if isinstance(piece, _TextPiece):
            parts.append({"type": "text", "text": piece.text})
        elif not _takes(dialect, piece):
            losses.drop(_a(piece.kind), _untaken(dialect, piece))
        elif piece.kind == "image" and piece.url is not None:
            image = {"url": piece.url}
            if piece.detail is not None:
                image["detail"] = piece.detail
            parts.append({"type": "image_url", "image_url": image})
        elif piece.kind == "file" and (piece.file_id or _inline(piece.url)):
            file = {
                "file_data": piece.url if _inline(piece.url) else None,
                "file_id": piece.file_id,
                "filename": _filename(piece),
            }
            parts.append({"type": "file", "file": {k: v for k, v in file.items() if v}})
        elif piece.kind == "audio" and piece.url is not None:
            audio = {"data": piece.url, "format": piece.media_type or "wav"}
            parts.append({"type": "input_audio", "input_audio": audio})
        else:
            losses.drop(
                f"{_a(piece.kind)} by {_how(piece)}", "chat has no place for it"
            )
        if len(parts) > written and piece.cache is not None:
            if dialect.cache_control:
                parts[-1]["cache_control"] = piece.cache
            else:
                _uncached(piece.cache, "a content part", dialect, losses)
    return parts


def _uncached(
    cache: Any, where: str, dialect: _RequestDialect, losses: _Losses
) -> None:
    """Say Anthropic's `cache_control` on `where`, left out: the dialect takes none
    (`cache_control` in the spec), or not there."""
    if cache is not None:
        why = (
            f"{dialect.name} takes it on content parts only"
            if dialect.cache_control
            else f"{dialect.name} takes none"
        )
        losses.drop(f"the cache_control of {where}", why)


def _chat_assistant(
    turn: _Turn, dialect: _RequestDialect, losses: _Losses
) -> dict[str, Any]:
    """An assistant message as `dialect` wants it back: reasoning in its key (on the
    turns it names, a placeholder where there is none), structured reasoning verbatim
    when it is the dialect's own, the signature on the calls it names."""
    message: dict[str, Any] = {"role": "assistant"}
    texts = [p for p in turn.pieces if isinstance(p, _TextPiece)]
    text = "".join(p.text for p in texts)
    for said in texts:
        _uncached(said.cache, "an assistant's text", dialect, losses)
    calls = [p for p in turn.pieces if isinstance(p, _CallPiece)]
    reasoning = [p for p in turn.pieces if isinstance(p, _ReasoningPiece)]
    message["content"] = text if text or not calls else None
    if any(isinstance(p, _ForeignPart) for p in turn.pieces):
        message["content"] = _assistant_parts(turn, losses)
    if turn.refusal is not None:
        message["refusal"] = turn.refusal
    _chat_reasoning_back(message, reasoning, bool(calls), dialect, losses)
    if calls:
        message["tool_calls"] = [_chat_call_back(c, dialect, losses) for c in calls]
        if dialect.signature:
            _sign_first_call(message["tool_calls"], calls, reasoning, dialect, losses)
    for piece in turn.pieces:
        if isinstance(piece, _MediaPiece):
            losses.drop(
                f"an {piece.kind} in an assistant message", "chat has no place for it"
            )
    return message


def _assistant_parts(turn: _Turn, losses: _Losses) -> list[Any]:
    """An assistant's content as parts, in order: its texts, and the parts no reader
    knew as they came (`_foreign_parts`)."""
    parts: list[Any] = []
    for piece in turn.pieces:
        if isinstance(piece, _TextPiece):
            parts.append({"type": "text", "text": piece.text})
        elif isinstance(piece, _ForeignPart):
            parts += _foreign_parts(piece, "chat", losses)
    return parts


def _chat_reasoning_back(
    message: dict[str, Any],
    reasoning: list[_ReasoningPiece],
    calls: bool,
    dialect: _RequestDialect,
    losses: _Losses,
) -> None:
    """The reasoning of an assistant message where `dialect` takes it back: its
    structured details (its own verbatim, else the text as details), its text in its
    key (or the placeholder), on the turns it names. A signature goes back only in the
    dialect's own details or on a call (`_sign_first_call`); any other is said."""
    # Blocks or items apart stay apart (two reasoning items in a row: a failed
    # attempt's, then its retry's).
    text = "\n\n".join(p.text for p in reasoning if p.text)
    if dialect.details is not None:
        own = [p.source for p in reasoning if p.scheme == dialect.name and p.source]
        details = [d for source in own for d in source] or [
            {"type": "reasoning.text", "text": p.text, "index": i}
            for i, p in enumerate(reasoning)
            if p.text
        ]
        if details:
            message[dialect.details] = details
    needs = dialect.reasoning_turns == "all" or calls
    if dialect.reasoning is not None and needs:
        if text:
            message[dialect.reasoning] = text
        elif dialect.placeholder is not None:
            message[dialect.reasoning] = dialect.placeholder
    if text and dialect.reasoning is None and dialect.details is None:
        losses.drop("the assistant's reasoning", f"{dialect.name} takes none back")
    for piece in reasoning:
        if (
            (piece.signature or piece.encrypted)
            and not (dialect.details and piece.scheme == dialect.name)
            and not (calls and dialect.signature and dialect.reads(piece.scheme))
        ):
            losses.drop(
                "a reasoning signature" if piece.signature else "encrypted reasoning",
                _refused(piece.scheme, dialect.name),
            )


def _chat_call_back(
    call: _CallPiece, dialect: _RequestDialect, losses: _Losses
) -> dict[str, Any]:
    if call.custom:  # as chat spells a custom tool's call
        custom = {"name": call.name, "input": call.arguments}
        return {"id": call.id, "type": "custom", "custom": custom}
    written: dict[str, Any] = {
        "id": call.id,
        "type": "function",
        "function": {"name": call.name, "arguments": call.arguments},
    }
    if call.signature is not None and dialect.signature is None:
        losses.drop(f"the signature on call {call.id!r}", f"{dialect.name} takes none")
    return written


def _sign_first_call(
    written: list[dict[str, Any]],
    calls: list[_CallPiece],
    reasoning: list[_ReasoningPiece],
    dialect: _RequestDialect,
    losses: _Losses,
) -> None:
    """The signature where `dialect` reads it: on each call that came with one of its
    scheme, else (the first call, or each) a signature of its scheme from the
    reasoning, else its `unsigned` stand-in."""
    path = dialect.signature
    assert path is not None
    spare = [p.signature for p in reasoning if p.signature and dialect.reads(p.scheme)]
    for index, (message, call) in enumerate(zip(written, calls, strict=True)):
        if call.signature is not None and dialect.reads(call.scheme):
            _path_set(message, path, call.signature)
            continue
        if call.signature is not None:
            losses.drop(
                f"the signature on call {call.id!r}",
                _refused(call.scheme, dialect.name),
            )
        if index == 0 or dialect.signature_calls == "each":
            signature = spare.pop(0) if spare else dialect.unsigned
            if signature is not None:
                _path_set(message, path, signature)


def _filename(piece: _MediaPiece) -> str | None:
    """A file's name; for its data without one, "document" and the subtype of its media
    type ("document.pdf"): OpenAI refuses `file_data` without a `filename` (it says
    "Missing required parameter: '...file.file_id'", openai/openai-agents-python#1513).
    """
    if piece.name or not _inline(piece.url):
        return piece.name
    assert piece.url is not None
    media_type = piece.url[5:].partition(";")[0].partition(",")[0]
    subtype = media_type.rpartition("/")[2]
    return f"document.{subtype}" if subtype.isalnum() else "document"


def _inline(url: str | None) -> bool:
    """Whether a file's URL is its data (a data: URL), which is all chat takes."""
    return url is not None and url.startswith("data:")


def _how(piece: _MediaPiece) -> str:
    return "URL" if piece.url is not None else "file id"
