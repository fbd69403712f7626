"""What the msgspec target adds: the key-by-key reading of what msgspec refuses (unknown
keys, NaN, half of a surrogate pair), the unknown keys kept beside each struct, and
writing."""

# Private names are shared between these files and used by the generated code.
# pyright: reportPrivateUsage=false, reportUnusedFunction=false, reportUnusedClass=false

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, Protocol, TypeVar

import msgspec

from .errors import StreamDecodeError
from .objects import _problem, _read, _Retry, _Shape

_S = TypeVar("_S")
_Read = TypeVar("_Read", bound=msgspec.Struct)

_MSGSPEC_REFUSES: Final = (msgspec.MsgspecError, UnicodeEncodeError, RecursionError)
"""What msgspec raises on a payload the key-by-key reading must look at (an unknown key,
NaN, half of a surrogate pair, an error, or a value nested deeper than msgspec goes from
where it was called: the key-by-key reading keeps an `any` value as json read it)."""
_NO_EXTRA: Final[dict[str, Any]] = {}
_EXTRA: Final[dict[int, dict[str, Any]]] = {}
"""The keys the spec does not describe of each object read key by key, by id. A struct
holds its fields only (structs are not tracked by the garbage collector, which would
halve the reading speed with many chunks alive, and so they can have neither a
`__dict__` nor weak references); an object read key by key is of a `_Read` subclass
whose `__del__` drops its entry."""
_ENCODER: Final = msgspec.json.Encoder()


class _Struct(Protocol):
    @classmethod
    def from_dict(cls, data: Any) -> Any: ...

    def to_dict(self) -> dict[str, Any]: ...


def _read_struct(
    cls: Callable[..., _S],
    data: Any,
    shape: _Shape,
    tag: str = "",
) -> _S:
    """An object read key by key by its type's table; its unknown keys are kept in
    `_EXTRA` (in a strict shape, they are an error). The `tag` field is msgspec's, not
    the struct's: it is checked, not passed."""
    try:
        known, other = _read(data, shape)
    except (_Retry, StreamDecodeError):
        raise _problem(data, shape) from None
    if tag:
        known.pop(tag, None)
    decoded = cls(**known)
    if other:
        _EXTRA[id(decoded)] = other
    return decoded


def _read_other(cls: Callable[[], _S], data: Any, shape: _Shape) -> _S:
    """The other member of an open union, read key by key: every key of `data`, its
    tag too, is kept as it came (msgspec tags the struct itself with "")."""
    try:
        _read(data, shape)  # checked: the tag is a string
    except (_Retry, StreamDecodeError):
        raise _problem(data, shape) from None
    decoded = cls()
    _EXTRA[id(decoded)] = dict(data)
    return decoded


def _forget_extra(self: object, _forget: Callable[..., object] = _EXTRA.pop) -> None:
    """`__del__` of a struct read key by key."""
    _forget(id(self), None)


def _reduce_read(self: _Struct) -> tuple[Callable[[Any], Any], tuple[dict[str, Any]]]:
    """`__reduce__` of a struct read key by key: its unknown keys live beside it, so a
    copy or a pickle reads it back from its JSON."""
    return (type(self).from_dict, (self.to_dict(),))


def _copy_read(self: _Read) -> _Read:
    """`__copy__` of a struct read key by key, sharing its unknown keys (read-only), as
    a shallow copy shares."""
    copied = msgspec.structs.replace(self)
    extra = _EXTRA.get(id(self))
    if extra is not None:
        _EXTRA[id(copied)] = extra
    return copied
