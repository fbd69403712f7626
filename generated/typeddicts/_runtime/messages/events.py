"""What each event of a Messages stream is: every event is named by its payload's
`type` (`message_start`, `content_block_delta`, ...), whatever its `event:` line says.
"""

# Private names are shared between these files and used by the generated code.
# pyright: reportPrivateUsage=false, reportUnusedFunction=false, reportUnusedClass=false

from __future__ import annotations

from ..errors import StreamDecodeError
from ..sse import KEPT_EVENTS, StreamError, _Chunk, _cut, _error_of, _Events, _type_of


class _MessagesEvents(_Events[_Chunk]):
    """The events of a Messages stream, read by their payload whatever their `event:`
    line says (one named otherwise is kept in `mismatched`); an `error` is the server's
    error, and `message_stop` completes the stream until another message starts (one
    body may hold several messages), so reading goes on to the end of the source. Data
    that is no JSON object is another event, but for an `event: error`'s, which is the
    server's error all the same (raised, as chat raises it)."""

    __slots__ = ()

    def decide(self, name: bytes, payload: bytes) -> _Chunk | None:
        if not payload.lstrip().startswith(b"{"):
            if name == b"error":  # the server's error in words (a proxy's): raised
                event = self.event = self._event(name, payload)
                raise StreamError(_error_of(event.data), event)
            if payload.strip():
                event = self.event = self._event(name or b"message", payload)
                self._other(event)
            return None
        try:
            chunk = self._loads(payload)
        except StreamDecodeError as error:
            event = self.event = self._event(name or b"message", payload)
            if name == b"error":  # an error, however broken its JSON: raised
                raise StreamError(_error_of(event.data), event) from None
            if not self._skip:
                raise
            self._skipped(event, error)
            return None
        kind = _type_of(chunk)
        mismatched = name and name.decode("utf-8", "replace") != kind
        if mismatched and len(self.mismatched) < KEPT_EVENTS:
            self.mismatched.append(_cut(self._event(name, payload)))
        if kind == "error" or name == b"error":
            event = self.event = self._event(name or b"error", payload)
            raise StreamError(_error_of(event.data), event)
        if kind == "message_stop":
            self.complete = True
        elif kind == "message_start":
            self.complete = False
        return chunk
