"""Server-sent events, the same in every target: a stream of them read into the chunks
of the module it is in (with that module's `loads`), sync or async, and chunks written
as them."""

# Private names are shared between these files and used by the generated code.
# pyright: reportPrivateUsage=false, reportUnusedFunction=false, reportUnusedClass=false

from __future__ import annotations

import contextlib
import re
import warnings
from collections.abc import (
    AsyncGenerator,
    AsyncIterable,
    AsyncIterator,
    Awaitable,
    Callable,
    Generator,
    Iterable,
    Iterator,
    Mapping,
)
from dataclasses import dataclass
from typing import (
    Any,
    Final,
    Generic,
    Literal,
    NamedTuple,
    Protocol,
    TypeAlias,
    TypeVar,
    cast,
    runtime_checkable,
)

from .errors import StreamDecodeError
from .json_text import _json

_Chunk = TypeVar("_Chunk")

_Bytes: TypeAlias = "bytes | bytearray | memoryview[int]"
"""What a stream reads as bytes: a piece, or a whole body."""

MAX_EVENT_SIZE: Final = 64 * 1024 * 1024
"""The default limit of one event's size in bytes: a stream that passes it raises
`EventTooLargeError` instead of holding more."""


_SLICE: Final = 64 * 1024
"""The size of the pieces a whole body is read in: read as one piece, every event of it
would be decoded before the first is yielded, holding memory in proportion to the
body, not to its largest event."""


def _in_slices(body: _Bytes | str) -> Iterable[_Bytes | str]:
    """A whole body as pieces of `_SLICE` (a piece may end anywhere, as one from the
    network does)."""
    if len(body) <= _SLICE:
        return (body,)
    return (body[at : at + _SLICE] for at in range(0, len(body), _SLICE))


KEPT_EVENTS: Final = 100
"""How many events that are not chunks, and how many skipped events, a stream keeps
(it counts them all): an upstream's flood of pings cannot grow it without bound."""

KEPT_DATA: Final = 4096
"""How many characters of its data each kept event (other or skipped) keeps."""

KEPT_NAME: Final = 128
"""How many characters of its type each kept event keeps, and each key of
`other_event_counts`: a longer type is cut to its first 127, followed by `…`, so the
types that share those count together."""

MORE_NAMES: Final = "\n(more names)"
"""The key of `other_event_counts` that counts the events of every type past the first
`KEPT_EVENTS` types: a flood of names cannot grow it without bound. An event type is
one line, so none is this key."""

SSE_KEEP_ALIVE: Final = b": keep-alive\n\n"
"""A comment, which readers skip: it keeps an idle connection open."""


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


class SkippedEvent(NamedTuple):
    """An event whose chunk did not decode, skipped by a stream read with
    `on_error="skip"`."""

    event: ServerSentEvent
    error: StreamDecodeError


class RawEvent(NamedTuple, Generic[_Chunk]):
    """The bytes of one event as they arrived (from the end of the event before it, so
    comments and keep-alives are in them too), with what they hold."""

    raw: bytes
    chunk: _Chunk | None
    """The chunk the event carries, or None (a comment, `[DONE]`, another event)."""
    event: ServerSentEvent | None
    """The event when it is not a chunk; None for a chunk, and for bytes that hold no
    event (comments, an event type without data, what follows `[DONE]`)."""
    error: StreamError | StreamDecodeError | None = None
    """What reading the event raised, in place of raising it: the error the server
    reported, or why its chunk did not decode."""


class StreamError(Exception):
    """The server reported an error instead of (more) chunks: an `event: error`, or a
    payload with an `error` object and no `choices`. Chunks before it were yielded."""

    def __init__(self, error: Any, event: ServerSentEvent) -> None:
        self.error = error
        """The error object (or the whole payload, when it has no `error` key)."""
        self.payload = event.data
        """The data of the event, as text."""
        self.event = event.event
        details: Mapping[str, Any] = (
            cast(Mapping[str, Any], error) if isinstance(error, Mapping) else {}
        )
        self.message: object = details.get(
            "message", error if isinstance(error, str) else None
        )
        self.code: object = details.get("code")
        self.type: object = details.get("type")
        self.param: object = details.get("param")
        super().__init__(
            f"the stream reported an error: {self.message!r} (code {self.code!r})"
        )

    def __reduce__(self) -> tuple[Any, ...]:
        # Made again from what made it, for pickle and copy (an exception's default
        # passes its message alone, which this __init__ does not take).
        event = ServerSentEvent(self.event, self.payload)
        return (type(self), (self.error, event), self.__dict__)


class EventTooLargeError(ValueError):
    """One event of the stream is larger than the size limit (`max_event_size`)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        """The limit passed, in bytes (`max_event_size`)."""
        super().__init__(
            f"an event is larger than max_event_size={limit:,} bytes; reading "
            "stopped there (pass a larger max_event_size if the upstream really sends "
            "events this large)"
        )

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.limit,), self.__dict__)  # see StreamError


class EventlessStreamWarning(UserWarning):
    """A stream's source ended without a single event, though it held lines: they are
    not a server-sent-event stream (JSON Lines, an HTML error page, a file's path given
    as the body), so no chunk came of them. The stream's `eventless` says so too."""


@runtime_checkable
class _Response(Protocol):
    """A response whose body a stream reads and whose `close` it calls: httpx's."""

    def iter_bytes(self) -> Iterator[bytes]: ...

    def close(self) -> None: ...


@runtime_checkable
class _AsyncResponse(Protocol):
    """An async response whose body a stream reads and whose `aclose` it awaits:
    httpx's."""

    def aiter_bytes(self) -> AsyncIterator[bytes]: ...

    async def aclose(self) -> None: ...


class _AiohttpBody(Protocol):
    def iter_any(self) -> AsyncIterator[bytes]: ...


@runtime_checkable
class _AiohttpResponse(Protocol):
    """An aiohttp response: its `content` is read, its `close` called."""

    @property
    def content(self) -> _AiohttpBody: ...

    def close(self) -> None: ...


class _Stream(Generic[_Chunk]):
    """What the sync and the async stream share: the framer, its protocol's events
    (`_Events`: what each event is), and what they have seen.

    After the event that ends the stream (chat's `[DONE]`) no event is read. The chunks
    end there, after one more read of the source: the end of an HTTP body follows
    `[DONE]` at once, and an HTTP client that has read it keeps the connection for the
    next request. Raw events go on to the end of the source, each read as it came: a
    gateway forwards everything. Then the source is closed. What goes wrong after
    `[DONE]` is not raised: the stream is complete.
    """

    def __init__(self, events: _Events[_Chunk], max_event_size: int) -> None:
        size = cast(object, max_event_size)  # a caller's types are not checked
        if not isinstance(size, int) or isinstance(size, bool):
            raise TypeError(
                "max_event_size must be a number of bytes (an int), not "
                f"{size!r}; the default is {MAX_EVENT_SIZE:,}"
            )
        if max_event_size < 1:
            raise ValueError(
                f"max_event_size must be at least 1 byte, not {max_event_size:,}"
            )
        self._events = events
        self._reader = _SseFramer(events, max_event_size)
        self._source: object = None  # what the stream reads, as it was given
        self._as_raw: bool | None = None  # how the stream is read, once it is
        self._closed = False  # whether the source was closed
        self.other_events = events.other_events
        """The first events (at most `KEPT_EVENTS`) that are not chunks, in order, each
        with at most `KEPT_DATA` characters of its data: named events other than
        `error`, and data that is not a JSON object (such as a proxy's keep-alive
        text). `other_event_counts` counts them all."""
        self.other_event_counts = events.other_event_counts
        """How many events that are not chunks came, by event type (`message` for data
        that is not a JSON object): the first `KEPT_EVENTS` types, each cut to
        `KEPT_NAME` characters, and the events of any other type under `MORE_NAMES`."""
        self.skipped = events.skipped
        """With `on_error="skip"`, the first events (at most `KEPT_EVENTS`) whose chunk
        did not decode, in order, each with at most `KEPT_DATA` characters of its data.
        `skipped_count` counts them all."""
        self.mismatched = events.mismatched
        """Of a stream whose payloads say their type (Messages), the first events (at
        most `KEPT_EVENTS`) whose `event:` line named another type, cut as `skipped`
        is: each was read by its payload."""
        self.gaps = events.gaps
        """Of a stream that numbers its events (Responses' `sequence_number`), where
        the numbers skipped: `(expected, came)` for each event whose number was not
        the one after the last, so `came - expected` events were lost when it is
        larger (at most `KEPT_EVENTS` gaps are kept). A stream without numbers has
        none."""

    @property
    def skipped_count(self) -> int:
        """How many events were skipped (`on_error="skip"`)."""
        return self._events.skipped_count

    @property
    def done(self) -> bool:
        """Whether the stream reached its end: `data: [DONE]` (chat), or a
        `message_stop` (Messages); a stream cut off before it ends with `done` False,
        and is not complete."""
        return self._events.complete

    @property
    def eventless(self) -> bool:
        """Whether the source ended without a single event (a block with data; `[DONE]`
        is one): an empty body or comments alone, or lines that are not server-sent
        events at all, which `EventlessStreamWarning` reports as the source ends. False
        until it ends."""
        return self._reader.ended and not self._reader.events

    def _warn_if_foreign(self) -> None:
        """Warn, as the source ends, when it held lines but no event: no chunk came of
        what may look like a stream (in the caller's frame: the one reading this
        stream's generator)."""
        reader = self._reader
        if reader.foreign is not None and not reader.events:
            text = _foreign(reader.foreign, self._source)
            warnings.warn(text, EventlessStreamWarning, stacklevel=3)

    def _read_as(self, raw: bool) -> None:
        if self._as_raw is None:
            self._as_raw = raw
            if raw:
                self._reader.keep_raw()
        elif self._as_raw != raw:
            raise RuntimeError(
                "a stream is read one way: its chunks or its raw_events(), not both"
            )


class ChunkStream(_Stream[_Chunk]):
    """The chunks of a server-sent-event stream, decoded as they arrive.

    Iterate it once, or its `raw_events()`. `close()` (or leaving a `with` block)
    stops reading and closes the source when it has `close`; so does the end of the
    stream at `[DONE]`.
    """

    def __init__(
        self,
        source: Iterable[_Bytes | str] | _Bytes | str | _Response,
        events: _Events[_Chunk],
        max_event_size: int = MAX_EVENT_SIZE,
    ) -> None:
        """`events` says what each event is (`_ChatEvents(loads)` reads chat chunks with
        the module's `loads`)."""
        super().__init__(events, max_event_size)
        self._source = source
        self._pieces: Iterable[_Bytes | str]
        if isinstance(source, _Response):
            self._pieces = source.iter_bytes()
        elif isinstance(source, bytes | bytearray | memoryview | str):  # a whole body
            self._pieces = _in_slices(cast("_Bytes | str", source))
        else:
            self._pieces = source
        self._items = self._read()

    def __iter__(self) -> Iterator[_Chunk]:
        self._read_as(False)
        return cast(Iterator[_Chunk], self._items)

    def __next__(self) -> _Chunk:
        return next(self.__iter__())

    def raw_events(self) -> Iterator[RawEvent[_Chunk]]:
        """Every event with the bytes it arrived as, to forward unchanged while
        reading its chunk. What reading an event raises (the server's error, a chunk
        that does not decode) comes on the event as its `error`, and reading goes
        on: only the source's own errors and `EventTooLargeError` are raised."""
        self._read_as(True)
        return cast(Iterator[RawEvent[_Chunk]], self._items)

    def close(self) -> None:
        if not getattr(
            self._items, "gi_running", False
        ):  # else another thread reads it
            self._items.close()
        self._close_source()

    def _close_source(self) -> None:
        if self._closed:
            return
        self._closed = True
        # A response's byte iterator first: left to finish later, an HTTP client's may
        # close a connection that has gone back to the pool meanwhile.
        if self._pieces is not self._source:
            _close(self._pieces)
        _close(self._source)

    def __enter__(self) -> ChunkStream[_Chunk]:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _read(self) -> Generator[Any, None, None]:
        reader = self._reader
        pieces = iter(self._pieces)
        for piece in pieces:
            try:
                items = reader.feed(piece)
            except Exception:
                yield from reader.unsent  # what came before the error, first
                raise
            yield from items
            if self._events.done:
                # The stream is complete: a fault of what follows cannot undo that.
                try:
                    with contextlib.suppress(Exception):
                        if self._as_raw:  # forwarded: the rest, as it comes, to its end
                            yield from _raw_rest(reader.rest(), pieces)
                        else:
                            next(pieces, None)  # see _Stream
                finally:
                    self._close_source()
                return
        try:
            items = reader.close()
        except Exception:
            yield from reader.unsent
            raise
        finally:
            self._close_source()  # the end of the input, whatever it held
        yield from items
        self._warn_if_foreign()


class AsyncChunkStream(_Stream[_Chunk]):
    """The chunks of a server-sent-event stream read from an async source, decoded as
    they arrive: `async for chunk in stream`. It needs no particular event loop.

    Iterate it once, or its `raw_events()`. `aclose()` (or leaving an `async with`
    block) stops reading and closes the source when it has `aclose` or `close`; so
    does the end of the stream at `[DONE]`.
    """

    def __init__(
        self,
        source: AsyncIterable[_Bytes | str] | _AsyncResponse | _AiohttpResponse,
        events: _Events[_Chunk],
        max_event_size: int = MAX_EVENT_SIZE,
    ) -> None:
        """`events` says what each event is (`_ChatEvents(loads)` reads chat chunks with
        the module's `loads`)."""
        super().__init__(events, max_event_size)
        self._source = source
        self._pieces: AsyncIterable[_Bytes | str]
        if isinstance(source, _AsyncResponse):
            self._pieces = source.aiter_bytes()
        elif isinstance(source, _AiohttpResponse):
            self._pieces = source.content.iter_any()
        else:
            self._pieces = source
        self._items = self._read()

    def __aiter__(self) -> AsyncIterator[_Chunk]:
        self._read_as(False)
        return cast(AsyncIterator[_Chunk], self._items)

    async def __anext__(self) -> _Chunk:
        return await self.__aiter__().__anext__()

    def raw_events(self) -> AsyncIterator[RawEvent[_Chunk]]:
        """Every event with the bytes it arrived as, to forward unchanged while
        reading its chunk. What reading an event raises (the server's error, a chunk
        that does not decode) comes on the event as its `error`, and reading goes
        on: only the source's own errors and `EventTooLargeError` are raised."""
        self._read_as(True)
        return cast(AsyncIterator[RawEvent[_Chunk]], self._items)

    async def aclose(self) -> None:
        # When another task is reading, closing the source is what ends its read.
        if not getattr(self._items, "ag_running", False):
            await self._items.aclose()
        await self._close_source()

    async def _close_source(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._pieces is not self._source:  # as ChunkStream does
            await _aclose(self._pieces)
        await _aclose(self._source)

    async def __aenter__(self) -> AsyncChunkStream[_Chunk]:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def _read(self) -> AsyncGenerator[Any, None]:
        reader = self._reader
        pieces = aiter(self._pieces)
        async for piece in pieces:
            try:
                items = reader.feed(piece)
            except Exception:
                for item in reader.unsent:  # what came before the error, first
                    yield item
                raise
            for item in items:
                yield item
            if self._events.done:
                # The stream is complete: a fault of what follows cannot undo that.
                try:
                    with contextlib.suppress(Exception):
                        if self._as_raw:  # forwarded: the rest, as it comes, to its end
                            if rest := reader.rest():
                                yield RawEvent(rest, None, None)
                            async for later in pieces:
                                if later:
                                    yield RawEvent(_as_bytes(later), None, None)
                        else:
                            await anext(pieces, None)  # see _Stream
                finally:
                    await self._close_source()
                return
        try:
            items = reader.close()
        except Exception:
            for item in reader.unsent:
                yield item
            raise
        finally:
            await self._close_source()  # the end of the input, whatever it held
        for item in items:
            yield item
        self._warn_if_foreign()


class _Events(Generic[_Chunk]):
    """What a protocol makes of each event of its stream (`decide`), and what the stream
    keeps of the events that are not its chunks. Each protocol's events subclass it
    (`_ChatEvents`, `_MessagesEvents`): the framer (`_SseFramer`) reads the format and
    knows no protocol, and a protocol's events know no bytes but an event's name and
    data."""

    __slots__ = (
        "_loads",
        "_skip",
        "complete",
        "done",
        "event",
        "gaps",
        "id",
        "mismatched",
        "other_event_counts",
        "other_events",
        "retry",
        "skipped",
        "skipped_count",
    )

    def __init__(
        self,
        loads: Callable[[bytes], _Chunk],
        on_error: Literal["raise", "skip"] = "raise",
    ) -> None:
        """`loads` decodes a chunk's data; `on_error="skip"` keeps an event whose chunk
        does not decode in `skipped`, instead of raising its error."""
        if on_error not in ("raise", "skip"):
            raise ValueError(f"on_error must be 'raise' or 'skip', not {on_error!r}")
        self._loads = loads
        self._skip = on_error == "skip"
        self.done = False
        """Whether the stream has ended (chat's `[DONE]`): no event after it is read."""
        self.complete = False
        """Whether the stream reached its end: `done`, or, of a protocol that reads on
        to the end of the source (Messages), its last event."""
        self.event: ServerSentEvent | None = None
        """The event `decide` made of what was not a chunk (`[DONE]`, another event,
        one that raised), for a raw event: the framer sets it to None first."""
        self.id: str | None = None
        """The last event id the stream set (the framer sets it)."""
        self.retry: int | None = None
        """The reconnection time the stream asked for, in milliseconds."""
        self.mismatched: list[ServerSentEvent] = []
        self.gaps: list[tuple[int, int]] = []
        self.other_events: list[ServerSentEvent] = []
        self.other_event_counts: dict[str, int] = {}
        self.skipped: list[SkippedEvent] = []
        self.skipped_count = 0

    def decide(self, name: bytes, payload: bytes) -> _Chunk | None:
        """The chunk an event carries (its `event:` name, b"" when it had none, and its
        data), or None: the event is kept apart (`event`, `other_events`), ends the
        stream (`done`), or was skipped. Raises `StreamError` for the server's error,
        and `StreamDecodeError` for a chunk that does not decode (unless skipped)."""
        raise NotImplementedError

    def keep_raw(self) -> None:
        """Raw events carry what reading them raised: none is skipped."""
        self._skip = False

    def _other(self, event: ServerSentEvent) -> None:
        """Count an event that is not a chunk, and keep it, cut, while few are kept."""
        counts = self.other_event_counts
        name = _cut_name(event.event)
        if name not in counts and len(counts) >= KEPT_EVENTS:
            name = MORE_NAMES  # past as many types as events are kept: counted together
        counts[name] = counts.get(name, 0) + 1
        if len(self.other_events) < KEPT_EVENTS:
            self.other_events.append(_cut(event))

    def _skipped(self, event: ServerSentEvent, error: StreamDecodeError) -> None:
        """Count a skipped event, and keep it, cut, while few are kept."""
        self.skipped_count += 1
        if len(self.skipped) < KEPT_EVENTS:
            self.skipped.append(SkippedEvent(_cut(event), _kept(error)))

    def _event(self, name: bytes, payload: bytes) -> ServerSentEvent:
        return ServerSentEvent(
            name.decode("utf-8", "replace"),
            payload.decode("utf-8", "replace"),
            self.id,
            self.retry,
        )


class _SseFramer(Generic[_Chunk]):
    """The event-stream format of the HTML standard, read from bytes in pieces of any
    size, each event decoded as it ends.

    Each read is scanned from where the last line ended, never from the start of what
    came before, and an unfinished line grows in place until it ends: the cost stays in
    proportion to the input however finely it is split. Lines are split as bytes
    (CR and LF never occur inside a UTF-8 sequence), so a chunk's JSON goes to `loads`
    as it arrived, never decoded and encoded again.
    """

    def __init__(self, events: _Events[_Chunk], limit: int) -> None:
        self._events = events
        """What each event is, as its protocol says (`decide`)."""
        self._decide = events.decide
        self.ended = False  # the source ended (close() was called)
        self.events = False  # an event (a block with data) came
        self.foreign: bytes | None = None  # the first line that is no field, cut
        self.unsent: list[Any] = []  # what the last feed read, for when it raised
        self._limit = limit
        self._raw: bytearray | None = None  # the unfinished event's bytes, if kept
        self._piece = b""
        self._mark = 0  # where the unfinished event starts in the piece
        self._carried = 0  # the unfinished event's bytes in earlier pieces
        self._tail = bytearray()  # the unfinished line (grown in place: see _keep)
        # The event's data: its first line as it came, and, from a second line on, all
        # of it grown in place (an object per line would hold 40 bytes per line).
        self._data: bytes | None = None
        self._more: bytearray | None = None
        self._name = b""
        self._first = True  # before the first line, which may start with a BOM
        self._after_cr = False  # a CR ended the last piece: an LF next is part of it
        self._held = False  # an event of exactly the limit waits for it: see _dispatch

    def rest(self) -> bytes:
        """The bytes of the last piece after the event that ended the stream."""
        return self._piece[self._mark :]

    def keep_raw(self) -> None:
        """Yield each event as a `RawEvent` with the bytes it arrived as."""
        self._raw = bytearray()
        self._events.keep_raw()

    def feed(self, data: _Bytes | str) -> list[Any]:
        """The chunks (or raw events) of the events `data` ends."""
        out: list[Any] = []
        self.unsent = out  # first: a bad piece must not send the last one's again
        piece = data if isinstance(data, bytes) else _as_bytes(data)
        self._piece = piece
        self._mark = 0
        at = 0
        if self._after_cr and piece:
            self._after_cr = False
            lf = piece.startswith(b"\n")
            if self._held:
                self._held = False
                if lf:  # the event's CRLF ends here: one byte past the limit
                    raise EventTooLargeError(self._limit)
                if self._dispatch(0):  # its CR alone ended it: at the limit, not past
                    return out
            elif lf:
                at = 1
                if not self._carried:  # the CR ended an event: so does this LF
                    self._carried = -1
        if self._tail:
            next_line = self._end_tail(piece, at)
            if next_line == _UNFINISHED:
                return self._keep(piece, at)
            if next_line == _DONE:
                return out
            at = next_line
        # The usual piece, read here without a call per line: its lines end in LF or
        # CRLF. A CR alone ends a line too: from the first one, `_lines` reads on, as
        # it reads the first line of the stream (which may start with a BOM).
        cr = b"\r" in piece
        find = piece.find
        if not self._first:
            while (end := find(b"\n", at)) >= 0:
                stop = end
                if cr:
                    if end > at and piece[end - 1] == 13:
                        stop = end - 1
                    if find(b"\r", at, stop) >= 0:
                        break
                if stop == at:
                    if self._dispatch(end + 1):
                        return out
                elif piece.startswith(b"data: ", at):
                    if self._data is None:
                        self._data = piece[at + 6 : stop]
                    else:
                        self._add_data(piece[at + 6 : stop])
                else:
                    self._line(piece[at:stop], end + 1)
                at = end + 1
        if cr or self._first:
            at = self._lines(piece, at)
            if at == _DONE:
                return out
        return self._keep(piece, at)

    def close(self) -> list[Any]:
        """The events left when the source ends (the last line may lack its end)."""
        self._piece = b""
        self._mark = 0
        out: list[Any] = []
        self.unsent = out
        self.ended = True
        self._after_cr = self._held = False  # no LF follows: a held event ends as it is
        if self._tail:
            line = bytes(self._tail)
            self._tail = bytearray()
            self._line(line, 0)
        if not self._events.done:
            self._dispatch(0)  # the end of the stream ends its last event
        return out

    def _end_tail(self, piece: bytes, at: int) -> int:
        """Finish the unfinished line with the start of `piece`: where the next line
        starts, `_UNFINISHED` when `piece` does not finish it, `_DONE` when the stream
        is done."""
        end = piece.find(b"\n", at)
        cr = piece.find(b"\r", at, len(piece) if end < 0 else end)
        if cr >= 0:  # a CR ends the line, with the LF after it if there is one
            next_line = cr + 2 if cr + 1 == end else cr + 1
            end = cr
            self._after_cr = cr + 1 == len(piece)
        elif end >= 0:
            next_line = end + 1
        else:
            return _UNFINISHED
        self._tail += memoryview(piece)[at:end]
        line = bytes(self._tail)
        self._tail = bytearray()
        return _DONE if self._line(line, next_line) else next_line

    def _lines(self, piece: bytes, at: int) -> int:
        """Read the lines of `piece` whatever ends them: where the unfinished line
        starts, or `_DONE`."""
        for found in _LINE_END.finditer(piece, at):
            next_line = found.end()
            if found.group() == b"\r" and next_line == len(piece):
                self._after_cr = True
            if self._line(piece[at : found.start()], next_line):
                return _DONE
            at = next_line
        return at

    def _keep(self, piece: bytes, at: int) -> list[Any]:
        """Keep the unfinished line (from `at`) and event, within the size limit. They
        grow in place, in proportion to what each read brings (a list of the pieces
        would hold an object per piece: 20 times the bytes for reads of 2 bytes)."""
        rest = len(piece) - self._mark
        if rest:
            self._carried += rest
            if self._carried > self._limit:
                raise EventTooLargeError(self._limit)
            if self._raw is not None:
                self._raw += memoryview(piece)[self._mark :]
        if at < len(piece):
            self._tail += memoryview(piece)[at:]
        return self.unsent

    def _line(self, line: bytes, next_line: int) -> bool:
        """Read one line; True when it ends the stream."""
        if self._first:
            self._first = False
            line = line.removeprefix(b"\xef\xbb\xbf")
        if line.startswith(b"data: "):
            self._add_data(line[6:])
            return False
        if not line:
            return self._dispatch(next_line)
        if line.startswith(b":"):
            return False  # a comment, such as a keep-alive
        name, _, value = line.partition(b":")
        value = value.removeprefix(b" ")
        if name == b"data":
            self._add_data(value)
        elif name == b"event":
            self._name = value
        elif name == b"id" and b"\0" not in value:
            self._events.id = value.decode("utf-8", "replace")
        elif name == b"retry" and value.isdigit():
            self._events.retry = int(value)
        elif self.foreign is None and name not in _FIELDS:
            # Kept, cut, for the warning of a stream without events (see _Stream).
            self.foreign = line[:KEPT_NAME]
        return False

    def _add_data(self, value: bytes) -> None:
        """Add a data line to the event's data."""
        if self._data is None:
            self._data = value
            return
        more = self._more
        if more is None:
            more = self._more = bytearray(self._data)
        more += b"\n"
        more += value

    def _dispatch(self, end: int) -> bool:
        """End the event whose last line ends at `end` in the piece; True when it
        ends the stream."""
        size = self._carried + end - self._mark
        if size > self._limit:
            raise EventTooLargeError(self._limit)
        if size == self._limit and self._after_cr and end == len(self._piece):
            # The CR that ends the event ends the read: an LF at the start of the next
            # read would be the event's too (CRLF), one byte past the limit. The next
            # read decides, so that an event is refused by its bytes alone, wherever
            # the network split them; only an event of exactly the limit waits.
            self._held = True
            return False
        raw = b""
        if self._raw is not None:
            if self._raw:
                self._raw += memoryview(self._piece)[self._mark : end]
                raw = bytes(self._raw)
                self._raw = bytearray()
            else:
                raw = self._piece[self._mark : end]
        self._mark = end
        self._carried = 0
        payload = self._data if self._more is None else bytes(self._more)
        if payload is None:
            self._name = b""
            if raw:
                self.unsent.append(RawEvent(raw, None, None))
            return False
        self._data = self._more = None
        # One store per event, unmeasurable beside its reading (a method swapped in
        # for the first event only cost a fifth of msgspec's speed: `vars(self)` made
        # every attribute of the reader slower to read).
        self.events = True
        name = self._name
        self._name = b""
        if self._raw is None:
            chunk = self._decide(name, payload)
            if chunk is not None:
                self.unsent.append(chunk)
            return self._events.done
        events = self._events
        events.event = None
        try:
            chunk = self._decide(name, payload)
        except (StreamError, StreamDecodeError) as error:
            self.unsent.append(RawEvent(raw, None, events.event, error))
            return False
        event = None if chunk is not None else events.event
        self.unsent.append(RawEvent(raw, chunk, event))
        return events.done


def _cut(event: ServerSentEvent) -> ServerSentEvent:
    """The event with at most `KEPT_DATA` characters of its data and `KEPT_NAME` of its
    type, to be kept."""
    name = _cut_name(event.event)
    if name is event.event and len(event.data) <= KEPT_DATA:
        return event
    return ServerSentEvent(name, event.data[:KEPT_DATA], event.id, event.retry)


def _cut_name(name: str) -> str:
    """An event type as kept: at most `KEPT_NAME` characters, the last `…` if cut."""
    return name if len(name) <= KEPT_NAME else name[: KEPT_NAME - 1] + "…"


def _kept(error: StreamDecodeError) -> StreamDecodeError:
    """`error` as kept with its cut event, holding no more than that event: at most
    `KEPT_DATA` characters of its message and of its path (keys as long as the payload,
    or a path as deep), and neither the traceback (its frames' locals hold the whole
    payload; a skipped event is not raised again) nor the context or cause of the
    error raised (their tracebacks hold it too)."""
    kept = type(error)(error.message[:KEPT_DATA])
    return kept.under(error.path[1:KEPT_DATA])  # the path is "$" and its segments


def _foreign(line: bytes, source: object) -> str:
    """What a stream says of a source that held lines but no event; `line` is the first
    that is no field of the format."""
    text = (
        "the stream ended without a single event: its lines are not server-sent events,"
        f" so no chunk came of them (the first: {line.decode('utf-8', 'replace')!r})"
    )
    start = line.lstrip()
    if start.startswith(b"{"):
        return text + (
            "; these lines look like JSON Lines; a server-sent-event stream has "
            "`data: ` before each"
        )
    if start.startswith(b"<"):
        return text + "; it looks like an HTML page: check the response's status"
    if isinstance(source, str) and _PATH_LIKE.fullmatch(source):
        return text + (
            "; a str source is the body itself, and this one looks like a file's path:"
            " to read the file, pass it open (open(path, 'rb'))"
        )
    return text


def _close(source: object) -> None:
    """Close a source that can be closed, unless it is running (in another thread)."""
    close = getattr(source, "close", None)
    if callable(close) and not getattr(source, "gi_running", False):
        close()


async def _aclose(source: object) -> None:
    """Close a source that can be closed (`aclose`, or `close`, awaited if it must be),
    unless it is running (in another task)."""
    close = getattr(source, "aclose", None) or getattr(source, "close", None)
    if callable(close) and not getattr(source, "ag_running", False):
        closed = close()
        if isinstance(closed, Awaitable):
            await closed


def _raw_rest(rest: bytes, pieces: Iterator[_Bytes | str]) -> Iterator[RawEvent[Any]]:
    """What follows [DONE] (`rest` of its piece, then the other pieces), as raw
    events."""
    if rest:
        yield RawEvent(rest, None, None)
    for piece in pieces:
        if piece:
            yield RawEvent(_as_bytes(piece), None, None)


def _as_bytes(data: object) -> bytes:
    """The UTF-8 bytes of text (a lone surrogate in it, which `loads` reports, kept),
    or the bytes of a bytes-like piece."""
    if isinstance(data, str):
        return data.encode("utf-8", "surrogatepass")
    if isinstance(data, bytes | bytearray | memoryview):
        return bytes(cast("_Bytes", data))
    raise TypeError(
        f"a stream's pieces are bytes (or bytearray, memoryview) or str, not "
        f"{type(data).__name__}"
    )


def _type_of(event: object) -> object:
    """The `type` of a decoded event: an object's attribute, or a dict's key."""
    if isinstance(event, dict):
        return cast(dict[str, object], event).get("type")
    return getattr(event, "type", None)


def _error_of(data: str) -> Any:
    """The error object of an error event's data (or the data itself, if not JSON)."""
    try:
        payload = _json(data)
    except StreamDecodeError:  # not JSON, nested past MAX_DEPTH, or NaN: text
        return data
    if isinstance(payload, dict):
        return cast(dict[str, Any], payload).get("error", payload)
    return payload


_LINE_END: Final = re.compile(rb"\r\n|\r|\n")
_FIELDS: Final = frozenset((b"data", b"event", b"id", b"retry"))
"""The fields of the format: a line of another name is ignored, as the format says."""
_PATH_LIKE: Final = re.compile(r"[^\r\n]*[/\\.][^\r\n]*")
"""One line with a slash, backslash or dot in it: a str source that may be a path."""
_UNFINISHED: Final = -1  # a piece ended inside a line
_DONE: Final = -2  # the stream ended (chat's [DONE])
