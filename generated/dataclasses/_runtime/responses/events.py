"""What each event of a Responses stream is: every event is named by its payload's
`type` (`response.created`, `response.output_text.delta`, ...), whatever its `event:`
line says, or whether it has one (OpenRouter sends none); `data: [DONE]` may end it
(OpenRouter, Dynamo), or nothing does (OpenAI)."""

# Private names are shared between these files and used by the generated code.
# pyright: reportPrivateUsage=false, reportUnusedFunction=false, reportUnusedClass=false

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, Literal, NoReturn, cast

from ..errors import StreamDecodeError
from ..json_text import _json
from ..sse import (
    KEPT_EVENTS,
    ServerSentEvent,
    StreamError,
    _Chunk,
    _cut,
    _error_of,
    _Events,
    _type_of,
)

_RESPONSES_TERMINAL: Final = frozenset(("response.completed", "response.incomplete"))
"""The events that end a response well (`response.failed` ends it with an error)."""


class _ResponsesEvents(_Events[_Chunk]):
    """The events of a Responses stream, read by their payload whatever their `event:`
    line says (one named otherwise is kept in `mismatched`). An `error` event and a
    `response.failed` are the server's error (`StreamError`); `response.completed` and
    `response.incomplete` complete the stream until another response starts, and
    `data: [DONE]` ends it. An `event: error` is the server's error whatever its data
    (a JSON object or not), as in chat. Each `sequence_number` is checked against the
    last one: where numbers are skipped, `gaps` says so; a stream without them is read
    as well. Other data that is no JSON object is another event."""

    __slots__ = ("_number",)

    def __init__(
        self,
        loads: Callable[[bytes], _Chunk],
        on_error: Literal["raise", "skip"] = "raise",
    ) -> None:
        super().__init__(loads, on_error)
        self._number: int | None = None
        """The `sequence_number` of the last numbered event."""

    def decide(self, name: bytes, payload: bytes) -> _Chunk | None:
        if name == b"error" and not payload.lstrip().startswith(b"{"):
            self._failed(name, payload)
        if not payload.lstrip().startswith(b"{"):
            stripped = payload.strip()
            if stripped == b"[DONE]":
                self.done = self.complete = True
                self.event = self._event(name or b"message", b"[DONE]")
            elif stripped:
                self._other(self._named(name, payload))
            return None
        try:
            chunk = self._loads(payload)
        except StreamDecodeError as error:
            if name == b"error":
                self._failed(name, payload)
            event = self._named(name, payload)
            if not self._skip:
                raise
            self._skipped(event, error)
            return None
        kind = _type_of(chunk)
        if kind.__class__ is not str:
            kind = None  # a `type` that is no string (a list) names no event
        named = name not in (b"", b"message")
        mismatched = named and name.decode("utf-8", "replace") != kind
        if mismatched and len(self.mismatched) < KEPT_EVENTS:
            self.mismatched.append(_cut(self._event(name, payload)))
        self._count(chunk)
        if kind == "error" or name == b"error":
            event = self._named(name or b"error", payload)
            raise StreamError(_error_of(event.data), event)
        if kind == "response.failed":
            event = self._named(name, payload)
            raise StreamError(_responses_failure(event.data), event)
        if kind in _RESPONSES_TERMINAL:
            self.complete = True
        elif kind == "response.created":
            self.complete = False
        return chunk

    def _failed(self, name: bytes, payload: bytes) -> NoReturn:
        """The server's error, whatever its data (text, a list, broken JSON): raised,
        as chat and Messages raise it."""
        event = self._named(name, payload)
        raise StreamError(_error_of(event.data), event)

    def _named(self, name: bytes, payload: bytes) -> ServerSentEvent:
        event = self.event = self._event(name or b"message", payload)
        return event

    def _count(self, chunk: object) -> None:
        """Check the event's `sequence_number` against the last one's."""
        number: Any = (
            cast(dict[str, Any], chunk).get("sequence_number")
            if isinstance(chunk, dict)
            else getattr(chunk, "sequence_number", None)
        )
        if number.__class__ is not int:
            return
        last = self._number
        if last is not None and number != last + 1 and len(self.gaps) < KEPT_EVENTS:
            self.gaps.append((last + 1, number))
        self._number = number


def _responses_failure(data: str) -> Any:
    """The error of a `response.failed` event: its response's `error` object, or the
    whole payload when it has none (Dynamo sends `error: null`)."""
    try:
        payload = _json(data)
    except StreamDecodeError:
        return data
    response: Any = payload.get("response") if payload.__class__ is dict else None
    error: Any = response.get("error") if response.__class__ is dict else None
    return error if error.__class__ is dict else payload
