"""An Anthropic Messages request read into a `_Conversation`, and written from one:
thinking blocks first in an assistant message, with their signatures, and tool results
first in the user message after the calls."""

# Private names are shared between these files and used by the generated code.
# pyright: reportPrivateUsage=false, reportUnusedFunction=false, reportUnusedClass=false

from __future__ import annotations

from typing import Any, Final

from .vocabulary import (
    _arguments_object,
    _arguments_text,
    _bound,
    _budget_of,
    _CallPiece,
    _carried,
    _Conversation,
    _foreign_parts,
    _ForeignPart,
    _is_json_object,
    _json_object,
    _json_objects,
    _Losses,
    _MediaPiece,
    _Piece,
    _read_effort,
    _ReasoningPiece,
    _refused,
    _ResultPiece,
    _TextPiece,
    _ToolSpec,
    _Turn,
)

_MESSAGES_READ: Final = frozenset(
    (
        "model",
        "system",
        "messages",
        "tools",
        "tool_choice",
        "max_tokens",
        "thinking",
        "stream",
        "temperature",
        "top_p",
        "stop_sequences",
        "metadata",
    )
)

_MESSAGES_MAX_TOKENS: Final = 4096
"""The `max_tokens` a Messages request gets when its source set no limit: Messages
requires one (with thinking, this much beyond the thinking budget)."""

_LEAST_BUDGET: Final = 1024
"""Anthropic's least `thinking.budget_tokens`."""

_BUDGET_RULE: Final = "Anthropic wants thinking.budget_tokens below max_tokens"

_SCHEME_MESSAGES: Final = "messages"

_DEFERRED: Final = "held back until a tool_reference loads it (tool search)"
"""Why a tool marked `defer_loading` is not offered: as Anthropic's API does, the model
sees it once a `tool_reference` block in a tool result names it."""


def _referenced(messages: Any) -> frozenset[str]:
    """The tools named by `tool_reference` blocks in the tool results of `messages`
    (the ones tool search has loaded)."""
    names: set[str] = set()
    for message in _json_objects(messages):
        content = message.get("content")
        for block in _json_objects(content if isinstance(content, list) else ()):
            if block.get("type") != "tool_result":
                continue
            inner = block.get("content")
            for ref in _json_objects(inner if isinstance(inner, list) else ()):
                if ref.get("type") == "tool_reference":
                    names.add(str(ref.get("tool_name")))
    return frozenset(names)


def _read_messages_request(data: dict[str, Any], losses: _Losses) -> _Conversation:
    said = _Conversation(model=data.get("model"), protocol="messages")
    system = data.get("system")
    if system:
        said.turns.append(_Turn("system", _messages_texts(system, losses)))
    for message in _json_objects(data.get("messages")):
        said.turns += _messages_turns(message, losses)
    rest = {k: v for k, v in data.items() if k not in _MESSAGES_READ}
    loaded = _referenced(data.get("messages"))
    for tool in data.get("tools") or ():
        spec = _json_object(tool)
        if spec.get("defer_loading") is True and spec.get("name") not in loaded:
            losses.drop(f"the deferred tool {spec.get('name')!r}", _DEFERRED)
        elif "input_schema" in spec and spec.get("type") in (None, "custom"):
            said.tools.append(
                _ToolSpec(
                    spec.get("name") or "",
                    spec.get("description"),
                    spec["input_schema"],
                    cache=spec.get("cache_control"),
                )
            )
        else:
            losses.drop(
                f"server tool {spec.get('name')!r}",
                "only the client's tools cross protocols",
            )
    choice = data.get("tool_choice")
    if _is_json_object(choice):
        kind = str(choice.get("type"))
        said.tool_choice = (
            ("tool", choice.get("name") or "")
            if kind == "tool"
            else {"any": "required"}.get(kind, kind)
        )
        if choice.get("disable_parallel_tool_use") is not None:
            said.parallel_tool_calls = not choice["disable_parallel_tool_use"]
    said.max_tokens = data.get("max_tokens")
    thinking = data.get("thinking")
    if _is_json_object(thinking):
        said.thinking.enabled = thinking.get("type") != "disabled"
        said.thinking.budget = thinking.get("budget_tokens")
    said.stream = data.get("stream")
    said.temperature = data.get("temperature")
    said.top_p = data.get("top_p")
    said.stop = data.get("stop_sequences")
    metadata = data.get("metadata")
    if _is_json_object(metadata):
        said.user = metadata.get("user_id")
    config = rest.get("output_config")
    if _is_json_object(config) and "effort" in config:
        config = rest["output_config"] = dict(config)
        _read_effort(said.thinking, config.pop("effort"))  # adaptive thinking's
        if not config:
            del rest["output_config"]
    said.rest = rest
    return said


def _messages_texts(
    value: Any, losses: _Losses
) -> tuple[_TextPiece | _MediaPiece, ...]:
    if isinstance(value, str):
        return (_TextPiece(value),)
    pieces: list[_TextPiece | _MediaPiece] = []
    for block in map(_json_object, value or ()):
        piece = _messages_media(block, losses)
        if piece is not None:
            pieces.append(piece)
    return tuple(pieces)


def _messages_media(
    block: dict[str, Any], losses: _Losses
) -> _TextPiece | _MediaPiece | None:
    kind = block.get("type")
    cache = block.get("cache_control")
    _say_citations(block, losses)
    if kind == "text":
        return _TextPiece(block.get("text") or "", cache)
    if kind == "tool_reference":  # tool search's result: the tool is offered from now
        return _TextPiece(f"Tool loaded: {block.get('tool_name')}")
    source = _json_object(block.get("source"))
    if kind == "document" and source.get("type") == "text":
        if block.get("title"):  # a file's title is its name; a text has none
            losses.drop("the title of a document", "no other protocol has it")
        return _TextPiece(source.get("data") or "", cache)  # a plain-text document
    if kind in ("image", "document"):
        url = source.get("url")
        if source.get("type") == "base64":
            url = f"data:{source.get('media_type')};base64,{source.get('data')}"
        return _MediaPiece(
            "image" if kind == "image" else "file",
            url=url,
            file_id=source.get("file_id"),
            media_type=source.get("media_type"),
            name=block.get("title"),
            cache=cache,
        )
    losses.drop(f"a {kind!r} block", "no other protocol has it")
    return None


def _say_citations(block: dict[str, Any], losses: _Losses) -> None:
    """Say what a block has of citations: an earlier answer's (the text they point
    into is carried), a document's switch that asks for them, its `context`."""
    if block.get("citations") and block.get("type") == "text":
        losses.drop("the citations of a text", "no other protocol's request takes them")
    elif _json_object(block.get("citations")).get("enabled"):
        losses.drop("citations asked of a document", "no other protocol has them")
    if block.get("context"):
        losses.drop("the context of a document", "no other protocol has it")


def _messages_turns(message: dict[str, Any], losses: _Losses) -> list[_Turn]:
    """A message's turns: a user message's tool results as a tool turn of their own
    (first, as Messages sends them), the rest as one turn."""
    role = message.get("role") or "user"
    content = message.get("content")
    if isinstance(content, str):
        return [_Turn(role, (_TextPiece(content),))]
    results: list[_Piece] = []
    pieces: list[_Piece] = []
    for block in map(_json_object, content or ()):
        kind = block.get("type")
        if kind == "tool_result":
            results.append(
                _ResultPiece(
                    block.get("tool_use_id") or "",
                    _messages_texts(block.get("content") or "", losses),
                    bool(block.get("is_error")),
                    block.get("cache_control"),
                )
            )
        elif kind == "thinking":
            _cache_unkept(block, losses)
            carried = _carried(block.get("signature"))
            if carried is None:
                pieces.append(
                    _ReasoningPiece(
                        block.get("thinking") or "",
                        signature=block.get("signature") or None,
                        scheme=_SCHEME_MESSAGES,
                    )
                )
            else:  # a signature the Messages writer carried for the next call
                if block.get("thinking"):
                    pieces.append(
                        _ReasoningPiece(block["thinking"], scheme=_SCHEME_MESSAGES)
                    )
                pieces.append(carried)
        elif kind == "redacted_thinking":
            pieces.append(
                _ReasoningPiece(encrypted=block.get("data"), scheme=_SCHEME_MESSAGES)
            )
        elif kind == "tool_use":
            _cache_unkept(block, losses)
            signature, scheme = _bound(pieces)
            pieces.append(
                _CallPiece(
                    block.get("id") or "",
                    block.get("name") or "",
                    _arguments_text(block.get("input", {})),
                    signature,
                    scheme,
                )
            )
        else:
            piece = _messages_media(block, losses)
            if piece is not None:
                pieces.append(piece)
    turns = [_Turn("tool", tuple(results))] if results else []
    if pieces or not results:
        turns.append(_Turn(role, tuple(pieces)))
    return turns


def _cache_unkept(block: dict[str, Any], losses: _Losses) -> None:
    """Say the `cache_control` of a block that no other protocol puts one on (a call,
    thinking)."""
    if block.get("cache_control") is not None:
        losses.drop(
            f"the cache_control of a {block.get('type')} block",
            "no other protocol has a breakpoint there",
        )


def _cached(block: dict[str, Any], cache: Any) -> dict[str, Any]:
    """`block` with the `cache_control` it came with, if any."""
    if cache is not None:
        block["cache_control"] = cache
    return block


# --- writing -------------------------------------------------------------------------


def _write_messages_request(said: _Conversation, losses: _Losses) -> dict[str, Any]:
    data: dict[str, Any] = {}
    if said.model is not None:
        data["model"] = said.model
    data["max_tokens"] = said.max_tokens or _MESSAGES_MAX_TOKENS
    system = [
        p for t in said.turns if t.role in ("system", "developer") for p in t.pieces
    ]
    if system:
        texts = [p for p in system if isinstance(p, _TextPiece)]
        data["system"] = (
            texts[0].text
            if len(texts) == 1 and texts[0].cache is None
            else [_cached({"type": "text", "text": p.text}, p.cache) for p in texts]
        )
    data["messages"] = _messages_of(said.turns, losses)
    if said.tools:
        data["tools"] = [
            _cached(
                {
                    "name": t.name,
                    **(
                        {"description": t.description}
                        if t.description is not None
                        else {}
                    ),
                    "input_schema": t.parameters or {"type": "object"},
                },
                t.cache,
            )
            for t in said.tools
        ]
    choice = _messages_tool_choice(said)
    if choice is not None:
        data["tool_choice"] = choice
    _messages_thinking(said, data, losses)
    for key, value in (
        ("stream", said.stream),
        ("temperature", said.temperature),
        ("top_p", said.top_p),
        ("stop_sequences", said.stop),
    ):
        if value is not None:
            data[key] = value
    if said.user is not None:
        data["metadata"] = {"user_id": said.user}
    if said.protocol == "messages":
        for key, value in said.rest.items():
            data.setdefault(key, value)
    return data


def _messages_thinking(
    said: _Conversation, data: dict[str, Any], losses: _Losses
) -> None:
    """The thinking switch by Anthropic's rules, each change said: no thinking with a
    forced tool choice (the choice is what a client that forces a tool needs); a budget
    below `max_tokens`: a limit the source did not set is raised to the budget and
    Messages' default beyond it, one it set cuts the budget (to no thinking where the
    least budget does not fit)."""
    thinking = said.thinking
    if thinking.enabled is False:
        data["thinking"] = {"type": "disabled"}
        return
    if not thinking.enabled and thinking.budget is None and thinking.effort is None:
        return
    if said.tool_choice == "required" or isinstance(said.tool_choice, tuple):
        losses.drop(
            "thinking",
            "Anthropic takes it only with tool_choice auto or none: the forced tool"
            " choice is kept",
        )
        return
    budget = max(_budget_of(thinking) or _LEAST_BUDGET, _LEAST_BUDGET)
    limit: int = data["max_tokens"]
    if said.max_tokens is None:
        data["max_tokens"] = budget + _MESSAGES_MAX_TOKENS
        losses.drop(
            f"the default max_tokens {_MESSAGES_MAX_TOKENS}",
            f"raised to {data['max_tokens']}, the thinking budget and"
            f" {_MESSAGES_MAX_TOKENS} beyond it: {_BUDGET_RULE}",
        )
    elif budget >= limit and limit <= _LEAST_BUDGET:
        losses.drop(
            "thinking",
            f"max_tokens {limit} leaves no room for the least budget,"
            f" {_LEAST_BUDGET}: {_BUDGET_RULE}",
        )
        return
    elif budget >= limit:
        losses.drop(
            f"the thinking budget {budget}", f"cut to {limit - 1}: {_BUDGET_RULE}"
        )
        budget = limit - 1
    data["thinking"] = {"type": "enabled", "budget_tokens": budget}


def _messages_tool_choice(said: _Conversation) -> dict[str, Any] | None:
    choice = said.tool_choice
    if choice is None and said.parallel_tool_calls is None:
        return None
    written: dict[str, Any]
    if isinstance(choice, tuple):
        written = {"type": "tool", "name": choice[1]}
    else:
        written = {"type": {"required": "any"}.get(choice or "auto", choice or "auto")}
    if said.parallel_tool_calls is not None and written["type"] != "none":
        written["disable_parallel_tool_use"] = not said.parallel_tool_calls
    return written


def _messages_of(turns: list[_Turn], losses: _Losses) -> list[dict[str, Any]]:
    """The turns as alternating messages: tool results go first in the user message
    after the calls, with what the user says next."""
    messages: list[dict[str, Any]] = []
    for turn in turns:
        if turn.role in ("system", "developer"):
            continue
        role = "assistant" if turn.role == "assistant" else "user"
        blocks = (
            _messages_assistant(turn, losses)
            if role == "assistant"
            else [b for p in turn.pieces for b in _messages_user_block(p, losses)]
        )
        if not blocks:  # Anthropic refuses an empty message; the next one may merge
            losses.drop(
                f"a turn of the {turn.role} with nothing Messages takes",
                "left out: Messages refuses a message with no content",
            )
            continue
        if messages and messages[-1]["role"] == role:
            messages[-1]["content"] += blocks
        else:
            messages.append({"role": role, "content": blocks})
    for message in messages:
        content = message["content"]
        if (
            len(content) == 1
            and list(content[0]) == ["type", "text"]
            and message["role"] == "user"
        ):
            message["content"] = content[0]["text"]
    return messages


def _messages_user_block(piece: _Piece, losses: _Losses) -> list[dict[str, Any]]:
    if isinstance(piece, _ResultPiece):
        block: dict[str, Any] = {"type": "tool_result", "tool_use_id": piece.call_id}
        content = [b for p in piece.content for b in _messages_user_block(p, losses)]
        block["content"] = (
            content[0]["text"]
            if len(content) == 1 and list(content[0]) == ["type", "text"]
            else content
        )
        if piece.is_error:
            block["is_error"] = True
        return [_cached(block, piece.cache)]
    if isinstance(piece, _TextPiece):
        text = {"type": "text", "text": piece.text}
        return [_cached(text, piece.cache)] if piece.text else []
    if isinstance(piece, _MediaPiece):
        return _messages_media_block(piece, losses)
    if isinstance(piece, _ForeignPart):
        return _foreign_parts(piece, "messages", losses)
    losses.drop(
        f"a {type(piece).__name__} in a user message", "Messages has no place for it"
    )
    return []


def _messages_media_block(piece: _MediaPiece, losses: _Losses) -> list[dict[str, Any]]:
    kind = "image" if piece.kind == "image" else "document"
    if piece.kind == "audio":
        losses.drop("audio", "Messages takes none")
        return []
    url = piece.url
    if url is not None and url.startswith("data:") and ";base64," in url:
        media_type, _, data = url[5:].partition(";base64,")
        source: dict[str, Any] = {
            "type": "base64",
            "media_type": media_type,
            "data": data,
        }
    elif url is not None:
        source = {"type": "url", "url": url}
    elif piece.file_id is not None:
        source = {"type": "file", "file_id": piece.file_id}
    else:
        losses.drop(f"an {piece.kind} with no data", "nothing to send")
        return []
    if piece.detail not in (None, "auto"):
        losses.drop(f"the detail {piece.detail!r} of an image", "Messages has none")
    return [_cached({"type": kind, "source": source}, piece.cache)]


def _messages_assistant(turn: _Turn, losses: _Losses) -> list[dict[str, Any]]:
    """An assistant turn's blocks: thinking first (only what Messages signed: a
    thinking block without its signature is refused), then text, then calls."""
    thinking: list[dict[str, Any]] = []
    blocks: list[dict[str, Any]] = []
    for piece in turn.pieces:
        if isinstance(piece, _ReasoningPiece):
            thinking += _thinking_blocks(piece, losses)
        elif isinstance(piece, _TextPiece):
            if piece.text:
                blocks.append(
                    _cached({"type": "text", "text": piece.text}, piece.cache)
                )
        elif isinstance(piece, _CallPiece):
            blocks.append(
                {
                    "type": "tool_use",
                    "id": piece.id,
                    "name": piece.name,
                    "input": _tool_input(piece, losses),
                }
            )
            if piece.signature is not None:
                losses.drop(
                    f"the signature on call {piece.id!r}",
                    _refused(piece.scheme, "Messages"),
                )
        elif isinstance(piece, _ForeignPart):
            blocks += _foreign_parts(piece, "messages", losses)
        else:
            losses.drop(
                f"a {type(piece).__name__} in an assistant message",
                "Messages has no place",
            )
    if turn.refusal:
        losses.drop("the assistant's refusal", "Messages has none: written as its text")
        blocks.append({"type": "text", "text": turn.refusal})
    return thinking + blocks


def _tool_input(call: _CallPiece, losses: _Losses) -> Any:
    """A call's `input`: its arguments; a custom tool's free-text input (Messages
    has no custom tools) under "input", said."""
    if not call.custom:
        return _arguments_object(call, losses)
    losses.drop(
        f"that call {call.id!r} is of a custom tool",
        "Messages has no custom tools: a tool_use with its text under 'input'",
    )
    return {"input": call.arguments}


def _thinking_blocks(piece: _ReasoningPiece, losses: _Losses) -> list[dict[str, Any]]:
    if piece.scheme != _SCHEME_MESSAGES:
        if piece.text or piece.signature or piece.encrypted:
            losses.drop(
                "the assistant's reasoning",
                _refused(piece.scheme, "Messages"),
            )
        return []
    if piece.encrypted is not None:
        return [{"type": "redacted_thinking", "data": piece.encrypted}]
    if piece.signature is None:
        losses.drop("thinking without its signature", "Messages would refuse it")
        return []
    return [{"type": "thinking", "thinking": piece.text, "signature": piece.signature}]
