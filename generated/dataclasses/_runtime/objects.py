"""The reading of a JSON object by a table of its type's fields: one pass over the keys
present, and, when that pass meets a problem, the search for the problem every target
reports (the first in spec order)."""

# Private names are shared between these files and used by the generated code.
# pyright: reportPrivateUsage=false, reportUnusedFunction=false, reportUnusedClass=false

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, TypeAlias

from .errors import StreamDecodeError, _key
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


_Arrangement: TypeAlias = tuple[
    tuple[tuple[str, str, Callable[[Any], Any], int, type | None], ...], tuple[str, ...]
]
"""How to read an object that has a given sequence of keys: (the rows (wire key, name,
decoder, what a null does, the type taken without a call) of its known keys and of the
absent defaulted lists, in spec order; its other keys, in arrival order)."""

_ARRANGED_AT_MOST: Final = 1_000
"""Past this many sequences of keys a shape forgets them: it bounds memory, never
correctness."""


class _Shape:
    """How the objects of one type are read: its fields by wire key, in spec order."""

    __slots__ = ("arranged", "fast", "report", "required", "rows", "strict")

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
        self.required = frozenset(key for key, row in self.rows.items() if row[3])
        self.arranged: dict[tuple[str, ...], _Arrangement | None] = {}
        """How to read an object, for each sequence of keys met (`_arrangement`)."""


def _arrangement(shape: _Shape, keys: tuple[str, ...]) -> _Arrangement | None:
    """How to read an object that has `keys`, in this order; None when no such object
    is valid (a required key is missing, or a strict shape has an unknown one)."""
    present = set(keys)
    other = tuple(key for key in keys if key not in shape.fast)
    if (other and shape.strict) or not shape.required <= present:
        return None
    rows = tuple(
        (key, *row)
        for key, row in shape.fast.items()
        if key in present or row[2] == _EMPTY
    )
    return rows, other


class _Retry(Exception):
    """Raised by `_read` on anything to report: `_problem` then says what and where."""


_NOTHING_ELSE: Final[dict[str, Any]] = {}
"""The other keys of an object that has none (never written to)."""


def _read(data: Any, shape: _Shape) -> tuple[dict[str, Any], dict[str, Any]]:
    """The fast reading of an object: its known values by name in spec order (absent
    defaulted lists as `[]`) and its other keys in arrival order.

    Only the keys present cost time, which matters when the spec describes many keys
    (every vendor's) and a chunk carries a few. A stream repeats a few sequences of
    keys, so each is arranged once (which keys are known, in what order), and then each
    object costs one step per key."""
    if data.__class__ is not dict:
        raise _Retry
    keys = tuple(data)
    arranged = shape.arranged
    try:
        arrangement = arranged[keys]
    except KeyError:
        if len(arranged) >= _ARRANGED_AT_MOST:
            arranged.clear()
        arrangement = arranged[keys] = _arrangement(shape, keys)
    if arrangement is None:
        raise _Retry
    rows, others = arrangement
    known: dict[str, Any] = {}
    for key, name, decode, nulls, exact in rows:
        value = data.get(key)
        if value is not None:
            known[name] = value if type(value) is exact else decode(value)
        elif nulls == _KEEP:
            known[name] = None
        elif nulls == _EMPTY:
            known[name] = decode([])
        else:
            raise _Retry
    if not others:
        return known, _NOTHING_ELSE
    return known, {key: data[key] for key in others}


def _problem(data: Any, shape: _Shape) -> StreamDecodeError:
    """The first problem of an object `_read` refused, key by key in spec order (then an
    unknown key, when the shape is strict), so that every target reports the same one.
    """
    if data.__class__ is not dict:
        return _unexpected("an object", data)
    for key, (_, decode, nulls, required) in shape.rows.items():
        if key not in data:
            if required:
                return StreamDecodeError("missing required key").under(_key(key))
            continue
        value = data[key]
        if value is None:
            if nulls == _REJECT:
                return StreamDecodeError("must not be null").under(_key(key))
            continue
        try:
            decode(value)
        except StreamDecodeError as exc:
            return exc.under(_key(key))
    if shape.strict:
        for key in data:
            if key not in shape.rows:
                return StreamDecodeError("unknown key").under(_key(key))
    raise AssertionError("_read refuses only what _problem finds")
