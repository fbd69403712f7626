"""Errors in each client protocol's shape, and an upstream's error read in either shape,
so that its status, message, type and code reach the client (with `retry-after`)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, cast

Json = dict[str, Any]

ANTHROPIC_ERRORS = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    504: "timeout_error",
    529: "overloaded_error",
}
"""Anthropic's error type of each HTTP status (its documented pairs)."""

ANTHROPIC_STATUS = {kind: status for status, kind in ANTHROPIC_ERRORS.items()}

RETRY_HEADERS = ("retry-after", "retry-after-ms", "x-should-retry")
"""The upstream's headers that tell a client when to try again: passed on with its error
(anthropic-sdk-python and openai-python read all three)."""


@dataclass(frozen=True)
class ErrorInfo:
    """What an error says, whoever said it."""

    status: int
    message: str
    type: str | None = None
    code: str | None = None
    param: str | None = None


class Answer(Exception):
    """An answer other than the upstream's, decided before anything is sent."""

    def __init__(self, info: ErrorInfo) -> None:
        super().__init__(info.message)
        self.info = info


def body(protocol: str, error: ErrorInfo) -> Json:
    """The error body a client of `protocol` reads."""
    if protocol == "messages":
        kind = error.type if error.type in ANTHROPIC_STATUS else None
        kind = kind or ANTHROPIC_ERRORS.get(
            error.status, "invalid_request_error" if error.status < 500 else "api_error"
        )
        inner: Json = {"type": kind, "message": error.message}
        if error.code is not None:  # not Anthropic's, but kept: the client may log it
            inner["code"] = error.code
        return {"type": "error", "error": inner}
    kind = error.type or ("invalid_request_error" if error.status < 500 else "server_error")
    inner = {"message": error.message, "type": kind, "param": error.param, "code": error.code}
    return {"error": inner}


def encoded(protocol: str, error: ErrorInfo) -> bytes:
    return json.dumps(body(protocol, error)).encode()


def read_upstream(status: int, content: bytes) -> ErrorInfo:
    """An upstream's error body, of any protocol (or its text, cut short, when it is
    no JSON error)."""
    try:
        data: object = json.loads(content)
    except ValueError:
        data = None
    outer = cast(Json, data) if isinstance(data, dict) else {}
    error = outer.get("error", outer)
    if isinstance(error, list) and error:  # Gemini's OpenAI endpoint: [{"error": ...}]
        first: Any = error[0]
        error = first.get("error", first) if isinstance(first, dict) else first
    if isinstance(error, dict):
        fields = cast(Json, error)
        message = fields.get("message")
        if isinstance(message, str):
            return ErrorInfo(
                status,
                message,
                _text(fields.get("type")),
                _text(fields.get("code")),
                _text(fields.get("param")),
            )
    text = content.decode(errors="replace")[:500] or "the upstream gave no reason"
    return ErrorInfo(status, text)


def _text(value: object) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else json.dumps(value)
