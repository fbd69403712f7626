"""Chat's events, the same in every target: what each event of a chat stream is (a
chunk, `[DONE]`, the server's error, another event), and the writing of a stream of
chunks ended as chat ends one (`[DONE]`, or the error, as OpenAI-compatible servers
write it)."""

# Private names are shared between these files and used by the generated code.
# pyright: reportPrivateUsage=false, reportUnusedFunction=false, reportUnusedClass=false

from __future__ import annotations

import json
from collections.abc import (
    AsyncIterable,
    AsyncIterator,
    Callable,
    Iterable,
    Iterator,
    Mapping,
)
from typing import Any, Final, cast

from ..errors import ErrorReport, StreamDecodeError, _cut_off_error
from ..json_text import _wire_text
from ..sse import StreamError, _aclose, _Chunk, _close, _error_of, _Events


class _ChatEvents(_Events[_Chunk]):
    """What each event of a chat stream is: data that is a JSON object is a chunk (or,
    with an `error` object and no `choices`, which `loads` reports as an `ErrorReport`,
    the server's error); `data: [DONE]` ends the stream; a named event is kept apart as
    another event, but `event: error`, the server's error; other data (a proxy's
    keep-alive text) is another event."""

    __slots__ = ()

    def decide(self, name: bytes, payload: bytes) -> _Chunk | None:
        if name and name != b"message":
            event = self.event = self._event(name, payload)
            if event.event == "error":
                raise StreamError(_error_of(event.data), event)
            self._other(event)
            return None
        if payload.lstrip().startswith(b"{"):
            try:
                return self._loads(payload)
            except StreamDecodeError as error:
                event = self.event = self._event(b"message", payload)
                if isinstance(error, ErrorReport):
                    raise StreamError(_error_of(event.data), event) from None
                if not self._skip:
                    raise
                self._skipped(event, error)
                return None
        stripped = payload.strip()
        if stripped == b"[DONE]":
            self.done = self.complete = True
            self.event = self._event(b"message", b"[DONE]")
        elif stripped:
            event = self.event = self._event(b"message", payload)
            self._other(event)
        return None


SSE_DONE: Final = b"data: [DONE]\n\n"
"""The event that ends a stream of chunks."""


def sse_error(error: StreamError | Mapping[str, Any]) -> bytes:
    """An error as OpenAI-compatible servers write one, and as openai-python raises
    `APIError` on: `data: {"error": {...}}`. An error object (`message`, `type`,
    `code`, `param`...) is written as it is. A `StreamError` keeps what the upstream
    said in whatever form it came (an `event: error`, with or without an `error` key, or
    with text; or a payload with `error`): its error object, the whole payload when it
    had no `error` key, or its text as the `message`. Any `Mapping` is an error object
    (a `MappingProxyType`, a custom one): it is written as the dict of its items."""
    given = cast(object, error)  # a caller's types are not checked
    if isinstance(given, StreamError):
        body = _error_object(given.error)
    elif isinstance(given, Mapping):  # json writes a dict, and no other Mapping
        body = _error_object(given)
    else:
        raise TypeError(
            "sse_error writes an error object (a Mapping) or a StreamError, not "
            f"{type(given).__name__}"
        )
    text = _wire_text({"error": body})
    # JSON text holds no line end (json escapes CR and LF): it is one `data:` line.
    return b"data: " + text.encode() + b"\n\n"


def _error_object(error: Any) -> Any:
    """An upstream's error (`StreamError.error`) as an error object json writes (a dict:
    json writes no other `Mapping`)."""
    if isinstance(error, dict):
        return cast(dict[str, Any], error)
    if isinstance(error, Mapping):
        return dict(cast(Mapping[str, Any], error))
    if isinstance(error, str):
        return {"message": error}
    return {"message": json.dumps(error)}


def _write_sse(
    chunks: Iterable[_Chunk],
    encode: Callable[[_Chunk], bytes],
    end: Callable[[], bytes] | None = None,
) -> Iterator[bytes]:
    """The events of `chunks`, what `end` writes after the last (if anything), then
    `[DONE]`. An upstream's `StreamError` is written instead of `[DONE]`, and so is
    chat's `_cut_off_error` when `chunks` is a stream that ended without `[DONE]`; any
    other error is raised. Closing the writer (a client that went away) closes
    `chunks` when it can be closed: an upstream stream."""
    try:
        for chunk in chunks:
            yield encode(chunk)
    except StreamError as error:
        yield from _last_event(end)
        yield sse_error(error)
        return
    finally:
        _close(chunks)
    yield from _last_event(end)
    yield _end_of(chunks)


async def _awrite_sse(
    chunks: AsyncIterable[_Chunk],
    encode: Callable[[_Chunk], bytes],
    end: Callable[[], bytes] | None = None,
) -> AsyncIterator[bytes]:
    """`_write_sse` for chunks that arrive asynchronously."""
    try:
        async for chunk in chunks:
            yield encode(chunk)
    except StreamError as error:
        for event in _last_event(end):
            yield event
        yield sse_error(error)
        return
    finally:
        await _aclose(chunks)
    for event in _last_event(end):
        yield event
    yield _end_of(chunks)


def _last_event(end: Callable[[], bytes] | None) -> tuple[bytes, ...]:
    """What a writer writes after the last chunk, if anything."""
    event = b"" if end is None else end()
    return (event,) if event else ()


def _end_of(chunks: object) -> bytes:
    """`[DONE]`, unless `chunks` is a stream that did not reach its own: a writer must
    not tell its client that a cut-off stream is complete."""
    if getattr(chunks, "done", True):
        return SSE_DONE
    return sse_error(_cut_off_error("chat"))
