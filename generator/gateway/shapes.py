"""The conversation each protocol's request must carry, checked before it is translated.

`to_request` reads what it understands and skips the rest, so a conversation of the
wrong shape (`messages: [1, 2]`, a message without its role, no `messages` at all) would
reach the upstream shortened or empty, and be answered as if the client had asked that.
It is refused instead, with the 400 the protocol's own API gives: Anthropic's
`invalid_request_error` with its field path (`messages.0.role: Field required`),
OpenAI's with its `param` and `code` (`messages[0].role`, `missing_required_parameter`)."""

from __future__ import annotations

from typing import cast

from .errors import ErrorInfo
from .policy import Json

MESSAGES_ROLES = ("user", "assistant", "system")
"""The roles a Messages request may give: Anthropic's two, and the system message Claude
Code sends in the middle of its conversation (tests/fixtures/agents/README.md), which
the translation places where the upstream's dialect takes it. The error names
Anthropic's two, as its API does."""
CHAT_ROLES = ("system", "assistant", "user", "function", "tool", "developer")
"""The roles chat takes, in the order OpenAI's error lists them."""


def problem(protocol: str, body: Json) -> ErrorInfo | None:
    """Why `body`'s conversation cannot be a request of `protocol`, or None."""
    if protocol == "messages":
        return _messages(body)
    if protocol == "chat":
        return _chat(body)
    return _responses(body)


def _messages(body: Json) -> ErrorInfo | None:
    """Anthropic's checks, in its words (pydantic's, with the field's path)."""
    if "messages" not in body:
        return _anthropic("messages: Field required")
    given = body["messages"]
    if not isinstance(given, list):
        return _anthropic("messages: Input should be a valid list")
    if not given:
        return _anthropic("messages: at least one message is required")
    for at, message in enumerate(given):
        where = f"messages.{at}"
        if not isinstance(message, dict):
            return _anthropic(
                f"{where}: Input should be a valid dictionary or object to extract fields from"
            )
        fields = cast(Json, message)
        if "role" not in fields:
            return _anthropic(f"{where}.role: Field required")
        if fields["role"] not in MESSAGES_ROLES:
            return _anthropic(f"{where}.role: Input should be 'user' or 'assistant'")
        if "content" not in fields:
            return _anthropic(f"{where}.content: Field required")
        if not isinstance(fields["content"], str | list):
            return _anthropic(f"{where}.content: Input should be a valid string or list")
    return None


def _chat(body: Json) -> ErrorInfo | None:
    """OpenAI's checks of a chat request's `messages`, in its words."""
    given = body.get("messages")
    if given is None:
        return _missing("messages")
    if not isinstance(given, list):
        return invalid_type("messages", "an array of objects", given)
    if not given:
        return _openai(
            "Invalid 'messages': empty array. Expected an array with minimum length 1, but "
            "got an empty array instead.",
            "messages",
            "empty_array",
        )
    for at, message in enumerate(given):
        where = f"messages[{at}]"
        if not isinstance(message, dict):
            return invalid_type(where, "an object", message)
        role: object = cast(Json, message).get("role")
        if role is None:
            return _missing(f"{where}.role")
        if role not in CHAT_ROLES:
            supported = ", ".join(repr(name) for name in CHAT_ROLES[:-1])
            return _openai(
                f"Invalid value: {role!r}. Supported values are: {supported}, and "
                f"{CHAT_ROLES[-1]!r}.",
                f"{where}.role",
                "invalid_value",
            )
    return None


def _responses(body: Json) -> ErrorInfo | None:
    """OpenAI's checks of a Responses request's `input` (which may be left out: the
    request may name its conversation in other ways, which `policy` judges)."""
    given = body.get("input")
    if given is None or isinstance(given, str):
        return None
    if not isinstance(given, list):
        return invalid_type("input", "one of a string or an array of input items", given)
    for at, item in enumerate(given):
        where = f"input[{at}]"
        if not isinstance(item, dict):
            return invalid_type(where, "an object", item)
        fields = cast(Json, item)
        if "type" not in fields and "role" not in fields:  # a message says its role
            return _missing(f"{where}.role")
    return None


def _anthropic(message: str) -> ErrorInfo:
    return ErrorInfo(400, message, "invalid_request_error")


def _openai(message: str, param: str, code: str) -> ErrorInfo:
    return ErrorInfo(400, message, "invalid_request_error", code, param)


def _missing(param: str) -> ErrorInfo:
    return _openai(f"Missing required parameter: '{param}'.", param, "missing_required_parameter")


def invalid_type(param: str, expected: str, got: object) -> ErrorInfo:
    return _openai(
        f"Invalid type for '{param}': expected {expected}, but got {_json_kind(got)} instead.",
        param,
        "invalid_type",
    )


def _json_kind(value: object) -> str:
    """What a JSON value is, as OpenAI's errors name it."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a decimal"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object" if isinstance(value, dict) else "null"
