"""The base of the dataclasses target's classes: each reads itself from JSON data by its
class's table."""

# Private names are shared between these files and used by the generated code.
# pyright: reportPrivateUsage=false, reportUnusedFunction=false, reportUnusedClass=false

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Final, Self

from .errors import ChunkDecodeError, _reject_error_report
from .extra import _NO_EXTRA, _Extra
from .objects import _problem, _read, _Retry, _Shape

_new_object: Final = object.__new__


class _Object:
    """Base of every generated dataclass: `from_dict` reads by the class's `_fields`.

    In the lenient profile each class also has `extra`: the keys the spec does not
    describe, as they arrived, read-only (assign a new mapping to change them);
    `to_dict` writes them back after the known keys."""

    __slots__ = ()
    _fields: ClassVar[_Shape]
    """The class's fields by wire key, in spec order: how each is read."""

    if TYPE_CHECKING:  # each subclass is a dataclass, with its own __init__

        def __init__(self, **fields: Any) -> None: ...

    @classmethod
    def from_dict(cls, data: Any) -> Self:
        """Decode a JSON object, checking every known key; raises `ChunkDecodeError`."""
        shape = cls._fields
        if shape.report is not None:
            _reject_error_report(data, shape.report)
        try:
            known, other = _read(data, shape)
        except (_Retry, ChunkDecodeError):
            raise _problem(data, shape) from None
        if not shape.strict:
            known["extra"] = _Extra(other) if other else _NO_EXTRA
        return cls._made(known)

    @classmethod
    def _made(cls, known: dict[str, Any]) -> Self:
        """The object of the values read, by name: a slotted class's `__init__`."""
        return cls(**known)


class _WideObject(_Object):
    """Base of the dataclasses that declare many fields (a chunk, a choice, a delta:
    every vendor's), of which an object carries a few. They are not slotted: the values
    read become the instance's attributes as they are, and an absent key reads its class
    default (`UNSET`), where `__init__` would store every declared field."""

    @classmethod
    def _made(cls, known: dict[str, Any]) -> Self:
        made = _new_object(cls)
        made.__dict__ = known
        made._share()
        return made

    def _share(self) -> None:
        """Shares the values the spec says repeat (in the classes that have such): run
        on the objects read, not on those built."""
