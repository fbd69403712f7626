"""The error types every target raises, and the path segments they carry."""

# Private names are shared between these files and used by the generated code.
# pyright: reportPrivateUsage=false, reportUnusedFunction=false, reportUnusedClass=false

from __future__ import annotations

import json
import re
from typing import Any, Final, cast

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


class StreamDecodeError(ValueError):
    """The input is not a valid chunk or event (of any protocol). `path` points at the
    offending place, as in `$.choices[0].delta.tool_calls[1].index`; `message` says
    what is wrong there.
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
        self._segments: list[str] = []  # innermost first, added while the error rises

    @property
    def path(self) -> str:
        return "$" + "".join(reversed(self._segments))

    def under(self, segment: str) -> StreamDecodeError:
        """Record that the failing value sits under `segment` (`.key` or `[index]`)."""
        self._segments.append(segment)
        return self

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


ChunkDecodeError = StreamDecodeError
"""`StreamDecodeError`'s first name, kept: the same class."""


class ErrorReport(StreamDecodeError):
    """The payload is a server's error report (an `error` object and no `choices`),
    not a chunk. In a stream, `iter_chunks` raises `StreamError` for it instead."""


def _key(key: str) -> str:
    """The path segment of an object key."""
    if _IDENTIFIER.match(key):
        return "." + key
    return "[" + json.dumps(key, ensure_ascii=False) + "]"


def _error_payload(error: Any) -> ErrorReport:
    # A JSON object, or (pydantic, when a vendor types the key) a model with `message`.
    message = (
        cast(dict[str, Any], error).get("message")
        if isinstance(error, dict)
        else getattr(error, "message", error)
    )
    return ErrorReport(f"the payload reports an error instead of a chunk: {message!r}")


def _reject_error_report(data: Any, report: tuple[str, str] | None) -> None:
    """Raise the report of a payload that has key `has` and lacks key `lacks`, the
    (has, lacks) of `report` (a type's `error_when`; None: the type has none)."""
    if report is not None and data.__class__ is dict:
        has, lacks = report
        if data.get(has) is not None and lacks not in data:
            raise _error_payload(data[has]).under(_key(has))


_CUT_OFF_BEFORE: Final = {
    "chat": "data: [DONE]",
    "messages": "message_stop",
    "responses": "its response was complete",
}
"""What a stream of each protocol ends with when it is complete, as the error of one
cut off before it says it."""


def _cut_off_error(protocol: str) -> dict[str, str]:
    """The error of a stream of `protocol` ("chat", "messages", "responses") that ended
    before its end (cut off, or its last event cut mid-JSON and skipped): the "error"
    part its reader gives last, and what a writer copying it ends with instead of the
    end of a complete stream."""
    return {
        "message": f"the upstream stream ended before {_CUT_OFF_BEFORE[protocol]}: "
        "what came is incomplete",
        "type": "incomplete_stream",
    }
