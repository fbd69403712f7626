"""A Responses request read into a `_Conversation`, and written from one: `input`
items (messages, reasoning items with their encrypted content, function calls and
their outputs) and `instructions`."""

# Private names are shared between these files and used by the generated code.
# pyright: reportPrivateUsage=false, reportUnusedFunction=false, reportUnusedClass=false

from __future__ import annotations

from typing import Any, Final

from ..parts import _REASONING_SEPARATOR
from .vocabulary import (
    _bound,
    _CallPiece,
    _carried,
    _Content,
    _Conversation,
    _effort_of,
    _flat_tool_name,
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

_RESPONSES_READ: Final = frozenset(
    (
        "model",
        "instructions",
        "input",
        "tools",
        "tool_choice",
        "parallel_tool_calls",
        "max_output_tokens",
        "reasoning",
        "stream",
        "temperature",
        "top_p",
        "user",
    )
)

_SCHEME_RESPONSES: Final = "responses"

_ASSISTANT_ITEMS: Final = frozenset(("reasoning", "function_call"))


_NO_CITATIONS: Final = "no other protocol's request takes them"
"""Why the citations of an earlier answer (Responses' `annotations`) are left out:
the text they point into is carried."""


def _read_responses_request(data: dict[str, Any], losses: _Losses) -> _Conversation:
    said = _Conversation(model=data.get("model"), protocol="responses")
    instructions = data.get("instructions")
    if isinstance(instructions, str) and instructions:
        said.turns.append(_Turn("system", (_TextPiece(instructions),)))
    items = data.get("input")
    if isinstance(items, str):
        items = [{"role": "user", "content": items}]
    for item in _attempted(_json_objects(items), losses):
        _responses_item(said.turns, item, losses)
    rest = {k: v for k, v in data.items() if k not in _RESPONSES_READ}
    for tool in data.get("tools") or ():
        spec = _json_object(tool)
        kind = spec.get("type")
        if kind == "function":
            said.tools.append(_function_spec(spec))
        elif kind == "namespace":  # Codex's group of functions: each flat, by name
            for inner in _json_objects(spec.get("tools")):
                flat = _function_spec(inner, spec.get("name"))
                if inner.get("type") == "function":
                    said.tools.append(flat)
                else:
                    losses.drop(
                        f"tool of type {inner.get('type')!r} in namespace"
                        f" {spec.get('name')!r}",
                        "only function tools cross protocols",
                    )
        else:
            losses.drop(f"tool of type {kind!r}", "only function tools cross protocols")
    choice = data.get("tool_choice")
    if _is_json_object(choice) and choice.get("type") == "function":
        said.tool_choice = ("tool", choice.get("name") or "")
    elif _is_json_object(choice):
        losses.drop(f"tool choice {choice.get('type')!r}", "only a function is named")
    elif isinstance(choice, str):
        said.tool_choice = choice
    said.parallel_tool_calls = data.get("parallel_tool_calls")
    said.max_tokens = data.get("max_output_tokens")
    reasoning = data.get("reasoning")
    if _is_json_object(reasoning):
        _read_effort(said.thinking, reasoning.get("effort"))
    said.stream = data.get("stream")
    said.temperature = data.get("temperature")
    said.top_p = data.get("top_p")
    said.user = data.get("user")
    said.rest = rest
    return said


def _function_spec(spec: dict[str, Any], namespace: Any = None) -> _ToolSpec:
    """A function tool; one of a namespace under its flat name (`_flat_tool_name`)."""
    return _ToolSpec(
        _call_name(spec, namespace),
        spec.get("description"),
        spec.get("parameters"),
        spec.get("strict"),
    )


def _call_name(item: dict[str, Any], namespace: Any = None) -> str:
    """A function's (or a call's) name; in a namespace, its flat name."""
    name = str(item.get("name") or "")
    if namespace is None:
        namespace = item.get("namespace")
    return _flat_tool_name(str(namespace), name) if namespace else name


def _tool_names(request: dict[str, Any]) -> dict[str, tuple[str, str]]:
    """The flat name each function of a namespace tool of a Responses request has in
    another protocol, and its (namespace, name): to write a call of it back as Codex
    reads it, a `function_call` with `namespace`."""
    names: dict[str, tuple[str, str]] = {}
    for tool in _json_objects(request.get("tools")):
        if tool.get("type") == "namespace" and isinstance(tool.get("name"), str):
            for inner in _json_objects(tool.get("tools")):
                name = str(inner.get("name") or "")
                names[_flat_tool_name(tool["name"], name)] = (tool["name"], name)
    return names


_USER_ROLES: Final = frozenset(("user", "system", "developer"))


def _attempted(items: list[dict[str, Any]], losses: _Losses) -> list[dict[str, Any]]:
    """The input items without a failed attempt's, each left out said: an assistant
    item (reasoning, a message or a call) with `status: "incomplete"` that the
    assistant's output goes on after (a retry said it again) or that ends the input
    (the retry's request), with the outputs of the calls left out; and reasoning that
    ends the input (reasoning leads to a message or a call: alone at the end, it is
    what a failed attempt got done before it failed, which Codex sends back on its
    retry, without a status). An incomplete message the user answers (cut by the
    output limit) stays."""
    kept: list[dict[str, Any]] = []
    calls: set[Any] = set()
    last = len(items)
    while last and (items[last - 1].get("type") == "reasoning"):
        last -= 1
    for at, item in enumerate(items):
        kind = item.get("type") or "message"
        if at >= last:
            losses.drop(
                f"a reasoning item {item.get('id')!r} at the end of the input",
                "a failed attempt's: no message or call follows it",
            )
            continue
        if (
            item.get("status") == "incomplete"
            and _is_assistant_item(item)
            and _retried(items, at)
        ):
            losses.drop(
                f"an incomplete {kind} item {item.get('id') or item.get('call_id')!r}",
                "cut off in a failed attempt that a retry said again",
            )
            if kind == "function_call":
                calls.add(item.get("call_id"))
            continue
        if kind == "function_call_output" and item.get("call_id") in calls:
            losses.drop(
                f"the output of call {item.get('call_id')!r}",
                "its call was cut off in a failed attempt",
            )
            continue
        kept.append(item)
    return kept


def _is_assistant_item(item: dict[str, Any]) -> bool:
    kind = item.get("type") or "message"
    if kind == "message":
        return item.get("role") == "assistant"
    return kind in _ASSISTANT_ITEMS


def _retried(items: list[dict[str, Any]], at: int) -> bool:
    """Whether the assistant's output goes on after item `at` before the user speaks
    again, or the input ends there."""
    for item in items[at + 1 :]:
        if _is_assistant_item(item):
            return True
        if (item.get("type") or "message") == "message" and item.get("role") in (
            _USER_ROLES
        ):
            return False
    return True


def _responses_item(turns: list[_Turn], item: dict[str, Any], losses: _Losses) -> None:
    """One input item into the turns: reasoning, calls and assistant messages in a row
    make one assistant turn, outputs in a row one tool turn."""
    kind = item.get("type") or "message"
    piece: _Piece
    if kind == "message":
        role = item.get("role") or "user"
        content = item.get("content")
        pieces = _responses_content(content, losses)
        if role == "assistant":
            _into(turns, "assistant", pieces, _refusal(content))
        else:
            turns.append(_Turn(role, pieces))
        return
    if kind == "reasoning":
        carried = _carried(item.get("encrypted_content"))
        if carried is not None:  # a signature the Responses writer carried
            _into(turns, "assistant", (carried,))
            return
        texts = [s.get("text") or "" for s in _json_objects(item.get("summary"))]
        if not texts:
            texts = [c.get("text") or "" for c in _json_objects(item.get("content"))]
        piece = _ReasoningPiece(
            _REASONING_SEPARATOR.join(texts),
            encrypted=item.get("encrypted_content"),
            scheme=_SCHEME_RESPONSES,
            id=item.get("id"),
            source=item,
        )
        _into(turns, "assistant", (piece,))
    elif kind == "function_call":
        before = (
            list(turns[-1].pieces) if turns and turns[-1].role == "assistant" else []
        )
        signature, scheme = _bound(before)
        if signature is not None:
            turns[-1] = _Turn("assistant", tuple(before))
        piece = _CallPiece(
            item.get("call_id") or "",
            _call_name(item),
            item.get("arguments") or "",
            signature,
            scheme,
        )
        _into(turns, "assistant", (piece,))
    elif kind == "custom_tool_call":
        given = item.get("input")
        piece = _CallPiece(
            item.get("call_id") or "",
            _call_name(item),
            given if isinstance(given, str) else "",
            custom=True,
        )
        _into(turns, "assistant", (piece,))
    elif kind in ("function_call_output", "custom_tool_call_output"):
        output = item.get("output")
        content = (
            (_TextPiece(output),)
            if isinstance(output, str)
            else _responses_content(output, losses)
        )
        _into(turns, "tool", (_ResultPiece(item.get("call_id") or "", content),))
    else:
        losses.drop(f"an input item of type {kind!r}", "no other protocol has it")


def _into(
    turns: list[_Turn],
    role: str,
    pieces: tuple[_Piece, ...],
    refusal: str | None = None,
) -> None:
    if turns and turns[-1].role == role:
        last = turns[-1]
        refused = "\n\n".join(r for r in (last.refusal, refusal) if r) or None
        turns[-1] = _Turn(role, last.pieces + pieces, refused)
    else:
        turns.append(_Turn(role, pieces, refusal))


def _refusal(content: Any) -> str | None:
    """The refusal of an assistant message's content (its `refusal` parts), if any."""
    refusals = [
        part.get("refusal")
        for part in _json_objects(content if isinstance(content, list) else ())
        if part.get("type") == "refusal"
    ]
    return "\n\n".join(r for r in refusals if isinstance(r, str)) or None


def _responses_content(
    content: Any, losses: _Losses
) -> tuple[_TextPiece | _MediaPiece, ...]:
    if isinstance(content, str):
        return (_TextPiece(content),) if content else ()
    pieces: list[_TextPiece | _MediaPiece] = []
    for part in map(_json_object, content or ()):
        kind = part.get("type")
        if kind in ("input_text", "output_text"):
            if part.get("annotations"):  # an earlier answer's citations
                losses.drop("the annotations of a text", _NO_CITATIONS)
            pieces.append(_TextPiece(part.get("text") or ""))
        elif kind == "input_image":
            pieces.append(
                _MediaPiece(
                    "image",
                    url=part.get("image_url"),
                    file_id=part.get("file_id"),
                    detail=part.get("detail"),
                )
            )
        elif kind == "refusal":
            pass  # the turn's refusal (`_refusal`)
        elif kind == "input_file":
            pieces.append(
                _MediaPiece(
                    "file",
                    url=part.get("file_data") or part.get("file_url"),
                    file_id=part.get("file_id"),
                    name=part.get("filename"),
                )
            )
        else:
            losses.drop(f"a content part of type {kind!r}", "no other protocol has it")
    return tuple(pieces)


# --- writing -------------------------------------------------------------------------


def _write_responses_request(said: _Conversation, losses: _Losses) -> dict[str, Any]:
    data: dict[str, Any] = {}
    if said.model is not None:
        data["model"] = said.model
    system = [p for t in said.turns if t.role == "system" for p in t.pieces]
    if system:
        data["instructions"] = "\n\n".join(
            p.text for p in system if isinstance(p, _TextPiece)
        )
    items: list[dict[str, Any]] = []
    custom = frozenset(
        p.id
        for t in said.turns
        for p in t.pieces
        if isinstance(p, _CallPiece) and p.custom
    )
    for turn in said.turns:
        if turn.role != "system":
            items += _responses_items(turn, losses, custom)
    data["input"] = items
    for tool in said.tools:
        _no_breakpoint(tool.cache, f"tool {tool.name!r}", losses)
    if said.tools:
        data["tools"] = [
            {
                "type": "function",
                "name": t.name,
                **({"description": t.description} if t.description is not None else {}),
                "parameters": t.parameters or {"type": "object", "properties": {}},
                "strict": bool(t.strict),
            }
            for t in said.tools
        ]
    choice = said.tool_choice
    if choice is not None:
        data["tool_choice"] = (
            {"type": "function", "name": choice[1]}
            if isinstance(choice, tuple)
            else choice
        )
    if said.parallel_tool_calls is not None:
        data["parallel_tool_calls"] = said.parallel_tool_calls
    if said.max_tokens is not None:
        data["max_output_tokens"] = said.max_tokens
    effort = _effort_of(said.thinking)
    if said.thinking.enabled is False:
        data["reasoning"] = {"effort": "none"}
    elif effort is not None:
        data["reasoning"] = {"effort": effort}
    for key in ("stream", "temperature", "top_p", "user"):
        value = getattr(said, key)
        if value is not None:
            data[key] = value
    if said.stop:
        losses.drop("stop sequences", "Responses has none")
    if said.protocol == "responses":
        for key, value in said.rest.items():
            data.setdefault(key, value)
    return data


def _responses_items(
    turn: _Turn, losses: _Losses, custom: frozenset[str] = frozenset()
) -> list[dict[str, Any]]:
    """A turn as input items; the results of the calls `custom` names (custom tools')
    as `custom_tool_call_output`."""
    items: list[dict[str, Any]] = []
    text: list[str] = []
    media: list[dict[str, Any]] = []

    def flush() -> None:
        if text or media:
            if turn.role == "assistant":
                items.append({"role": "assistant", "content": "".join(text)})
            else:
                parts = [{"type": "input_text", "text": t} for t in text] + media
                items.append({"role": turn.role, "content": parts})
            text.clear()
            media.clear()

    for piece in turn.pieces:
        if isinstance(piece, _TextPiece):
            _no_breakpoint(piece.cache, "a text", losses)
            text.append(piece.text)
        elif isinstance(piece, _MediaPiece) and turn.role == "assistant":
            losses.drop(
                f"{piece.kind} content in an assistant message",
                "Responses has no place for it",
            )
        elif isinstance(piece, _MediaPiece | _ForeignPart):
            media += _responses_part(piece, losses)
        elif isinstance(piece, _ReasoningPiece):
            flush()
            items += _responses_reasoning_back(piece, losses)
        elif isinstance(piece, _CallPiece):
            flush()
            if piece.signature is not None:
                losses.drop(
                    f"the signature on call {piece.id!r}",
                    _refused(piece.scheme, "Responses"),
                )
            items.append(_responses_call(piece))
        else:
            flush()
            items.append(_responses_output(piece, losses, custom))
    flush()
    if turn.refusal:  # an output message's part, as Responses gives a refusal
        refusal = {"type": "refusal", "refusal": turn.refusal}
        items.append({"type": "message", "role": "assistant", "content": [refusal]})
    return items


def _responses_call(piece: _CallPiece) -> dict[str, Any]:
    """A call as its item: a custom tool's as `custom_tool_call`, its input as is."""
    if piece.custom:
        return {
            "type": "custom_tool_call",
            "call_id": piece.id,
            "name": piece.name,
            "input": piece.arguments,
        }
    return {
        "type": "function_call",
        "call_id": piece.id,
        "name": piece.name,
        "arguments": piece.arguments,
    }


def _responses_output(
    piece: _ResultPiece, losses: _Losses, custom: frozenset[str]
) -> dict[str, Any]:
    """A tool's result as the output item of its call: one text as it is, several
    texts or media as `input_*` parts, each apart (a result that is an error, which
    Responses cannot say, said)."""
    if piece.is_error:
        losses.drop(
            f"that the result of call {piece.call_id!r} is an error",
            "Responses has no place for it",
        )
    _no_breakpoint(piece.cache, f"the result of call {piece.call_id!r}", losses)
    output: str | list[dict[str, Any]] = [
        part for p in piece.content for part in _responses_part(p, losses)
    ]
    texts = [p.text for p in piece.content if isinstance(p, _TextPiece)]
    if len(texts) == len(piece.content) and len(texts) < 2:
        output = "".join(texts)
    kind = (
        "custom_tool_call_output" if piece.call_id in custom else "function_call_output"
    )
    return {"type": kind, "call_id": piece.call_id, "output": output}


def _responses_part(piece: _Content, losses: _Losses) -> list[dict[str, Any]]:
    """A piece of content as `input_*` parts (a part no reader knew, said)."""
    if isinstance(piece, _TextPiece):
        return _responses_text(piece, losses)
    if isinstance(piece, _MediaPiece):
        return _responses_media(piece, losses)
    return _foreign_parts(piece, "responses", losses)


def _responses_text(piece: _TextPiece, losses: _Losses) -> list[dict[str, Any]]:
    _no_breakpoint(piece.cache, "a text", losses)
    return [{"type": "input_text", "text": piece.text}]


def _no_breakpoint(cache: Any, where: str, losses: _Losses) -> None:
    """Say Anthropic's `cache_control` on `where`, left out."""
    if cache is not None:
        losses.drop(
            f"the cache_control of {where}",
            "Responses caches by itself: it takes no breakpoints",
        )


def _responses_media(piece: _MediaPiece, losses: _Losses) -> list[dict[str, Any]]:
    _no_breakpoint(piece.cache, f"{piece.kind} content", losses)
    if piece.kind == "image":
        detail = piece.detail or "auto"  # Responses requires one
        image: dict[str, Any] = {"type": "input_image", "detail": detail}
        if piece.url is not None:
            image["image_url"] = piece.url
        if piece.file_id is not None:
            image["file_id"] = piece.file_id
        return [image]
    if piece.kind == "file":
        file: dict[str, Any] = {"type": "input_file"}
        if piece.url is not None:
            file["file_data" if piece.url.startswith("data:") else "file_url"] = (
                piece.url
            )
        if piece.file_id is not None:
            file["file_id"] = piece.file_id
        if piece.name is not None:
            file["filename"] = piece.name
        return [file]
    losses.drop("audio", "a Responses input takes none")
    return []


def _responses_reasoning_back(
    piece: _ReasoningPiece, losses: _Losses
) -> list[dict[str, Any]]:
    """Reasoning as a reasoning item: only one Responses wrote (its id and encrypted
    content are checked), verbatim."""
    if piece.scheme == _SCHEME_RESPONSES and _is_json_object(piece.source):
        return [piece.source]
    if piece.scheme == _SCHEME_RESPONSES and piece.id is not None:
        item: dict[str, Any] = {
            "type": "reasoning",
            "id": piece.id,
            "summary": (
                [{"type": "summary_text", "text": piece.text}] if piece.text else []
            ),
        }
        if piece.encrypted is not None:
            item["encrypted_content"] = piece.encrypted
        return [item]
    if piece.text or piece.signature or piece.encrypted:
        losses.drop(
            "the assistant's reasoning",
            _refused(piece.scheme, "Responses"),
        )
    return []
