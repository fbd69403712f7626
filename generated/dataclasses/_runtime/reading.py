"""What the readers of named events (Messages, Responses) share: the loop that reads a
stream's events into `Part`s, ending with an "error" part when the stream was cut off,
the lenient getters of JSON data they read with, and their public accumulator
(`_EventAccumulator`)."""

# Private names are shared between these files and used by the generated code.
# pyright: reportPrivateUsage=false, reportUnusedFunction=false, reportUnusedClass=false

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable, Iterator
from typing import Any, ClassVar, Protocol

from .errors import _cut_off_error
from .parts import Part, Summary, _Completion, _StreamAccumulator
from .sse import _Chunk


def _events_parts(
    read: Callable[[Any], list[Part]],
    events: Iterable[Any],
    data: Callable[[Any], Any],
    protocol: str,
) -> Iterator[Part]:
    """The parts `read` makes of each event (read as JSON data by `data`), and an
    "error" part with the `protocol`'s `_cut_off_error` last when `events` is a stream
    cut off before its end (a `StreamError` it raises is raised)."""
    event: Any = None
    for event in events:
        yield from read(data(event))
    if getattr(events, "done", True) is False:
        yield _cut_off_part(protocol, event)


async def _events_aparts(
    read: Callable[[Any], list[Part]],
    events: AsyncIterable[Any],
    data: Callable[[Any], Any],
    protocol: str,
) -> AsyncIterator[Part]:
    """`_events_parts` for events that arrive asynchronously."""
    event: Any = None
    async for event in events:
        for part in read(data(event)):
            yield part
    if getattr(events, "done", True) is False:
        yield _cut_off_part(protocol, event)


def _cut_off_part(protocol: str, event: Any) -> Part:
    error = _cut_off_error(protocol)
    return Part("error", 0, error["message"], event, error=error)


def _not_json_event(accumulator: object, event: object) -> TypeError:
    """The error of an accumulator of JSON data (`_MessagesAccumulator`,
    `_ResponsesAccumulator`) given what is no JSON object."""
    return TypeError(
        f"{type(accumulator).__name__}.add takes an event as JSON data (a dict), "
        f"not a {type(event).__name__}"
    )


def _items_of(value: Any) -> list[Any]:
    """A JSON array, or none."""
    return value if value.__class__ is list else []


def _count_of(data: dict[str, Any], key: str) -> int | None:
    """A count a JSON object holds under `key`, or None."""
    value: Any = data.get(key)
    return value if value.__class__ is int else None


class _AddsUp(Protocol):
    """A protocol's accumulator of events as JSON data (`_MessagesAccumulator`,
    `_ResponsesAccumulator`): the contract of `_StreamAccumulator`, over dicts."""

    def add(self, event: Any) -> None: ...

    def snapshot(self) -> dict[str, Any]: ...

    def end(self) -> None: ...

    def result(self) -> dict[str, Any]: ...

    def summary(self) -> Summary: ...


class _EventAccumulator(_StreamAccumulator[_Chunk, _Completion]):
    """What every `MessageAccumulator` and `ResponseAccumulator` does (see
    `_StreamAccumulator`): each event, read as JSON data (`_json_of`), is added up by
    the protocol's accumulator of JSON data (`_adds`), whose message or response is
    read as the module's type (`_completion`)."""

    __slots__ = ("_adding",)
    _noun = "event"
    _adds: ClassVar[type[_AddsUp]]
    """The protocol's accumulator of JSON data."""
    _protocol: ClassVar[str]
    """The protocol's name, as `assistant_message` takes it: "messages"."""

    def __init__(self) -> None:
        self._adding = self._adds()

    def add(self, chunk: _Chunk) -> None:
        """Add the next event of the stream: an event of this module, as `loads` and
        `iter_events` give. Anything else is a `TypeError` saying so."""
        if chunk.__class__ not in self._takes:
            self._check(chunk)
        self._adding.add(self._json_of(chunk))

    def snapshot(self) -> _Completion:
        """What the events added so far make (an empty one before the first)."""
        return self._completion(self._adding.snapshot())

    def end(self) -> None:
        """Say that the stream has ended: what was held back for the events that might
        follow is final (a tool's input whose block never stopped is read from its
        pieces). `result()` calls it."""
        self._adding.end()

    def result(self) -> _Completion:
        """What the stream added up to, once it has ended (it calls `end()`); of a
        stream cut off, what came."""
        return self._completion(self._adding.result())

    def summary(self) -> Summary:
        """What the events added so far say, in every protocol's terms: the same
        `Summary` a chat stream gives, in chat's terms. Valid mid-stream, as
        `snapshot()` is."""
        return self._adding.summary()

    def _said(self) -> tuple[str, Any]:
        return self._protocol, self._adding.result()

    def _json_of(self, event: _Chunk) -> Any:
        raise NotImplementedError

    def _completion(self, data: dict[str, Any]) -> _Completion:
        raise NotImplementedError
