"""What every protocol's writer of `Part`s shares: the loop over the parts (sync and
async) that ends the stream well, or with the error its parts raised, and the tally
of what the protocol could not hold, said once per stream in a warning."""

# Private names are shared between these files and used by the generated code.
# pyright: reportPrivateUsage=false, reportUnusedFunction=false, reportUnusedClass=false

from __future__ import annotations

import warnings
from collections import Counter
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator
from typing import Any, ClassVar

from .parts import Identity, Part, UsageSummary
from .sse import _aclose, _close


class _EventWriter:
    """Writes one stream of `Part`s (from any protocol's reader) as a protocol's
    events: `write(part)` gives the events of a part, `end()` the last ones,
    `fail(...)` the error that ends a stream instead; `stream(parts)` and
    `astream(aparts)` do it all. What is not written is counted in `dropped`, by (kind,
    why), and said once per stream in a warning of the writer's `_loss` class."""

    __slots__ = ("_ended", "_identity", "_started", "_usage", "dropped", "failure")

    _loss: ClassVar[type[UserWarning]] = UserWarning
    _protocol: ClassVar[str] = ""
    _noun: ClassVar[str] = ""
    """What the stream is one of: "completion", "message", "response"."""

    def __init__(self) -> None:
        self.dropped: Counter[tuple[str, str]] = Counter()
        """What was not written, by (part kind, why)."""
        self.failure: BaseException | None = None
        """The error the parts raised, written as the stream's error."""
        self._identity: Identity | None = None
        self._usage: UsageSummary | None = None
        self._started = False  # the first events written
        self._ended = False  # the last event written

    def _told(self, part: Part) -> bool:
        """Whether a part writes nothing now: it is dropped (after the end, of another
        choice than the first, a second start), or it tells what comes later (the
        usage so far). The first start is kept (its identity, and the usage it
        carries as the usage so far) and is not told: the writer writes its opening
        events with it, as it comes."""
        kind = part.kind
        if self._ended:
            self._drop(kind, f"after the end of the {self._noun}")
        elif part.choice not in (None, 0):
            self._drop(kind, f"of another choice than the first: a {self._noun} is one")
        elif kind == "start":
            if self._started or self._identity is not None:
                self._drop(kind, "a second start")
            else:
                self._identity = part.identity or Identity(None, None, None)
                if part.usage is not None:
                    self._usage = part.usage
                return False
        elif kind == "usage":
            self._usage = part.usage
        else:
            return False
        return True

    def write(self, part: Part) -> list[bytes]:
        raise NotImplementedError

    def end(self) -> list[bytes]:
        raise NotImplementedError

    def fail(self, error: Any, message: str | None = None) -> list[bytes]:
        raise NotImplementedError

    def stream(self, parts: Iterable[Part]) -> Iterator[bytes]:
        """The events of all `parts`, to the end."""
        iterator = iter(parts)
        try:
            while True:
                try:
                    part = next(iterator)
                except StopIteration:
                    break
                # An error of the upstream's: written as the event, kept in failure.
                except Exception as error:  # noqa: BLE001, RUF100
                    self.failure = error
                    yield from self.fail(error)
                    return
                yield from self.write(part)
            yield from self.end()
        finally:
            _close(iterator)
            _close(parts)
            self._warn()

    async def astream(self, parts: AsyncIterable[Part]) -> AsyncIterator[bytes]:
        """`stream` for parts that arrive asynchronously."""
        iterator = aiter(parts)
        try:
            while True:
                try:
                    part = await anext(iterator)
                except StopAsyncIteration:
                    break
                # An error of the upstream's: written as the event, kept in failure.
                except Exception as error:  # noqa: BLE001, RUF100
                    self.failure = error
                    for event in self.fail(error):
                        yield event
                    return
                for event in self.write(part):
                    yield event
            for event in self.end():
                yield event
        finally:
            await _aclose(iterator)
            await _aclose(parts)
            self._warn()

    def _drop(self, kind: str, why: str) -> None:
        self.dropped[(kind, why)] += 1

    def _warn(self) -> None:
        _warn_dropped(self.dropped, self._protocol, self._loss, stacklevel=4)


def _warn_dropped(
    dropped: Counter[tuple[str, str]],
    protocol: str,
    loss: type[UserWarning],
    stacklevel: int = 3,
) -> None:
    """Say once what a stream's writer left out (in the frame of the code reading the
    writer's stream, `stacklevel` frames up)."""
    if dropped:
        said = ", ".join(
            f"{count} {kind} ({why})" for (kind, why), count in sorted(dropped.items())
        )
        warnings.warn(f"not written as {protocol}: {said}", loss, stacklevel=stacklevel)
