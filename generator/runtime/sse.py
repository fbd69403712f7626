"""Server-sent-event decoding, the same in every target: a stream decodes each event
with the `loads` of the module it is in."""

# Private names are shared between these files and used by the generated code.
# pyright: reportPrivateUsage=false, reportUnusedFunction=false, reportUnusedClass=false

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Final, Generic, TypeVar, cast

from generator.runtime.errors import ErrorReport

_Chunk = TypeVar("_Chunk")


@dataclass(frozen=True)
class ServerSentEvent:
    """One event of a server-sent-event stream, before any JSON is read."""

    event: str
    """The event type; `message` when the stream gave none."""
    data: str
    """The data lines of the event, joined with newlines."""
    id: str | None = None
    """The last event id the stream set, if any."""
    retry: int | None = None
    """The reconnection time the stream asked for, in milliseconds, if any."""


class StreamError(Exception):
    """The server reported an error instead of (more) chunks: an `event: error`, or a
    payload with an `error` object and no `choices`. Chunks before it were yielded."""

    def __init__(self, error: Any, event: ServerSentEvent) -> None:
        self.error = error
        """The error object (or the whole payload, when it has no `error` key)."""
        self.payload = event.data
        """The raw data of the event."""
        self.event = event.event
        details = cast(dict[str, Any], error) if isinstance(error, dict) else {}
        self.message: object = details.get(
            "message", error if isinstance(error, str) else None
        )
        self.code: object = details.get("code")
        self.type: object = details.get("type")
        self.param: object = details.get("param")
        super().__init__(
            f"the stream reported an error: {self.message!r} (code {self.code!r})"
        )


class ChunkStream(Generic[_Chunk]):
    """The chunks of a server-sent-event stream, decoded as they arrive.

    Iterate it once. Afterwards `done` tells whether the stream ended with
    `data: [DONE]`; a stream cut off before it ends with `done` False, and is not
    complete. Events that are not chunks (named events other than `error`, and data
    that is not a JSON object, such as a proxy's keep-alive text) are kept in
    `other_events`, in order.
    """

    def __init__(
        self, source: Iterable[bytes | str], loads: Callable[[str], _Chunk]
    ) -> None:
        self.done = False
        self.other_events: list[ServerSentEvent] = []
        self._source = source
        self._loads = loads

    def __iter__(self) -> Iterator[_Chunk]:
        parser = _EventParser()
        for piece in self._source:
            for event in parser.feed(piece):
                chunk = self._chunk(event)
                if self.done:
                    return
                if chunk is not None:
                    yield chunk
        for event in parser.close():
            chunk = self._chunk(event)
            if self.done:
                return
            if chunk is not None:
                yield chunk

    def _chunk(self, event: ServerSentEvent) -> _Chunk | None:
        if event.event == "error":
            raise StreamError(_error_of(event.data), event)
        data = event.data.strip()
        if event.event != "message" or not data.startswith("{"):
            if data == "[DONE]" and event.event == "message":
                self.done = True
            elif data:
                self.other_events.append(event)
            return None
        try:
            return self._loads(event.data)
        except ErrorReport:
            raise StreamError(_error_of(event.data), event) from None


def _error_of(data: str) -> Any:
    """The error object of an error event's data (or the data itself, if not JSON)."""
    try:
        payload = json.loads(data)
    except ValueError:
        return data
    if isinstance(payload, dict):
        return cast(dict[str, Any], payload).get("error", payload)
    return payload


class _EventParser:
    """The event-stream format of the HTML standard, fed in pieces of any size."""

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")()
        self._text: str = ""
        self._started = False
        self._after_cr = False  # a CR ended the last piece: an LF next is part of it
        self._data: list[str] = []
        self._event = ""
        self._id: str | None = None
        self._retry: int | None = None

    def feed(self, piece: bytes | str) -> list[ServerSentEvent]:
        text = self._decoder.decode(piece) if isinstance(piece, bytes) else piece
        return self._lines(text, final=False)

    def close(self) -> list[ServerSentEvent]:
        """The events left when the source ends (the last line may lack its newline)."""
        return self._lines(self._decoder.decode(b"", final=True), final=True)

    def _lines(self, text: str, final: bool) -> list[ServerSentEvent]:
        if not self._started and text:
            self._started = True
            text = text.removeprefix("\ufeff")
        if self._after_cr and text:
            self._after_cr = False
            text = text.removeprefix("\n")
        text = self._text + text
        events: list[ServerSentEvent] = []
        start = 0
        for match in _LINE_END.finditer(text):
            if match.group() == "\r" and match.end() == len(text):
                self._after_cr = True
            self._line(text[start : match.start()], events)
            start = match.end()
        self._text = text[start:]
        if final:
            if self._text:
                self._line(self._text, events)
                self._text = ""
            self._line("", events)  # a stream ends its last event
        return events

    def _line(self, line: str, events: list[ServerSentEvent]) -> None:
        if not line:
            if self._data:
                event = self._event or "message"
                events.append(
                    ServerSentEvent(event, "\n".join(self._data), self._id, self._retry)
                )
            self._data = []
            self._event = ""
            return
        if line.startswith(":"):
            return  # a comment, such as a keep-alive
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id" and "\0" not in value:
            self._id = value
        elif name == "retry" and value.isdigit():
            self._retry = int(value)


_LINE_END: Final = re.compile(r"\r\n|\r|\n")
