"""What the readers of named events (Messages, Responses) share: the loop that reads a
stream's events into `Part`s, ending with an "error" part when the stream was cut off,
and the lenient getters of JSON data they read with."""

# Private names are shared between these files and used by the generated code.
# pyright: reportPrivateUsage=false, reportUnusedFunction=false, reportUnusedClass=false

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable, Iterator
from typing import Any

from .errors import _cut_off_error
from .parts import Part


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


def _items_of(value: Any) -> list[Any]:
    """A JSON array, or none."""
    return value if value.__class__ is list else []


def _count_of(data: dict[str, Any], key: str) -> int | None:
    """A count a JSON object holds under `key`, or None."""
    value: Any = data.get(key)
    return value if value.__class__ is int else None
