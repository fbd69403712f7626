"""The reading of a JSON object by a table of its type's fields: one pass over the keys
present, and, when that pass meets a problem, the search for the problem every target
reports (the first in spec order)."""

# Private names are shared between these files and used by the generated code.
# pyright: reportPrivateUsage=false, reportUnusedFunction=false, reportUnusedClass=false

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, TypeAlias

from .errors import ChunkDecodeError, _key
from .values import _EXACT, _unexpected

_REJECT: Final = 0
_KEEP: Final = 1
_EMPTY: Final = 2
"""What a null does: it is an error, it is kept, or it reads as the empty default."""

_Row: TypeAlias = tuple[str, Callable[[Any], Any], int, bool]
"""A field of a table: (Python name, or "" for the wire key; decoder; what a null does;
whether the key is required)."""


def _required(decode: Callable[[Any], Any], name: str = "") -> _Row:
    """A key that must be present and not null."""
    return (name, decode, _REJECT, True)


def _required_nullable(decode: Callable[[Any], Any], name: str = "") -> _Row:
    """A key that must be present, and may be null."""
    return (name, decode, _KEEP, True)


def _optional(decode: Callable[[Any], Any], name: str = "") -> _Row:
    """A key that may be absent, and is not null when present."""
    return (name, decode, _REJECT, False)


def _nullable(decode: Callable[[Any], Any], name: str = "") -> _Row:
    """A key that may be absent or null."""
    return (name, decode, _KEEP, False)


def _defaulted(decode: Callable[[Any], Any], name: str = "") -> _Row:
    """A list that reads as empty when absent or null (and is written back so)."""
    return (name, decode, _EMPTY, False)


class _Shape:
    """How the objects of one type are read: its fields by wire key, in spec order."""

    __slots__ = ("defaults", "fast", "order", "report", "required", "rows", "strict")

    def __init__(
        self,
        rows: dict[str, _Row],
        *,
        report: tuple[str, str] | None = None,
        strict: bool = False,
    ) -> None:
        self.report = report
        """(has, lacks): an object with key `has` and without `lacks` is an error report
        (the type's `error_when`)."""
        self.strict = strict
        """Whether a key the table does not list is an error (the strict profile)."""
        self.rows = {
            key: (name or key, decode, nulls, required)
            for key, (name, decode, nulls, required) in rows.items()
        }
        self.fast = {
            key: (name, decode, nulls, _EXACT.get(decode))
            for key, (name, decode, nulls, _) in self.rows.items()
        }
        """Wire key -> (name, decoder, what a null does, the type taken without a
        call)."""
        self.required = tuple(row[0] for row in self.rows.values() if row[3])
        self.order = {key: index for index, key in enumerate(rows)}
        """The position of each key in spec order."""
        self.defaults = tuple(
            (row[0], row[1]) for row in self.rows.values() if row[2] == _EMPTY
        )
        """The names of the lists read as their empty default when absent, with their
        decoders."""


class _Retry(Exception):
    """Raised by `_read` on anything to report: `_problem` then says what and where."""


def _read(data: Any, shape: _Shape) -> tuple[dict[str, Any], dict[str, Any]]:
    """The fast reading of an object: its known values by name and its other keys, both
    in arrival order. Only the keys present cost time, which matters when the spec
    describes many keys (every vendor's) and a chunk carries a few."""
    if data.__class__ is not dict:
        raise _Retry
    fields = shape.fast
    known: dict[str, Any] = {}
    other: dict[str, Any] = {}
    for key, value in data.items():
        field = fields.get(key)
        if field is None:
            other[key] = value
        elif value is not None:
            known[field[0]] = value if type(value) is field[3] else field[1](value)
        elif field[2] == _KEEP:
            known[field[0]] = None
        elif field[2] == _EMPTY:
            known[field[0]] = field[1]([])
        else:
            raise _Retry
    for name in shape.required:
        if name not in known:
            raise _Retry
    return known, other


def _problem(data: Any, shape: _Shape) -> ChunkDecodeError:
    """The first problem of an object `_read` refused, key by key in spec order (then an
    unknown key, when the shape is strict), so that every target reports the same one.
    """
    if data.__class__ is not dict:
        return _unexpected("an object", data)
    for key, (_, decode, nulls, required) in shape.rows.items():
        if key not in data:
            if required:
                return ChunkDecodeError("missing required key").under(_key(key))
            continue
        value = data[key]
        if value is None:
            if nulls == _REJECT:
                return ChunkDecodeError("must not be null").under(_key(key))
            continue
        try:
            decode(value)
        except ChunkDecodeError as exc:
            return exc.under(_key(key))
    if shape.strict:
        for key in data:
            if key not in shape.rows:
                return ChunkDecodeError("unknown key").under(_key(key))
    raise AssertionError("_read refuses only what _problem finds")
