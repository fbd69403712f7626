"""The base of the dataclasses target's classes: each reads itself from JSON data by its
class's table; the wide ones hold only the keys an object has."""

# Private names are shared between these files and used by the generated code.
# pyright: reportPrivateUsage=false, reportUnusedFunction=false, reportUnusedClass=false

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable
from operator import methodcaller
from typing import TYPE_CHECKING, Any, ClassVar, Final, Self, TypeAlias, TypeVar, cast

from .errors import StreamDecodeError, _reject_error_report
from .extra import _NO_EXTRA, _Extra
from .objects import _ARRANGED_AT_MOST, _problem, _read, _Retry, _Shape
from .unset import UNSET

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
        """Decode a JSON object, checking every known key; raises
        `StreamDecodeError`."""
        shape = cls._fields
        if shape.report is not None:
            _reject_error_report(data, shape.report)
        try:
            known, other = _read(data, shape)
        except (_Retry, StreamDecodeError):
            raise _problem(data, shape) from None
        if other and not shape.strict:
            known["extra"] = _Extra(other)  # else the default, the shared empty one
        return cls._made(known)

    @classmethod
    def _made(cls, known: dict[str, Any]) -> Self:
        """The object of the values read, by name: a slotted class's `__init__`."""
        return cls(**known)


_Writing: TypeAlias = tuple[
    tuple[tuple[str, str, Callable[[Any], Any] | None], ...], bool
]
"""How to write an object that has a given sequence of attributes: (name, wire key,
writer or None for a value written as it is) of each field it holds, in spec order; and
whether it has `extra` to write after them."""


class _WideObject(_Object):
    """Base of the dataclasses that declare many fields (a chunk, a choice, a delta:
    every vendor's), of which an object carries a few. They are not slotted, and an
    object holds only its keys: the values read, or the keywords given to `__init__`
    (`_sparse`), become its attributes as they are, and an absent key reads its class
    default (`UNSET`). Building and writing cost a step per key present, not per field
    declared (a chunk declares 31)."""

    _writers: ClassVar[dict[str, Callable[[Any], Any]]] = {}
    """How the values of the fields that hold objects are written, by name; the other
    values are written as they are."""
    _arranged: ClassVar[dict[tuple[str, ...], _Writing]]
    """How to write an object, for each sequence of attributes met (`_writing`)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._arranged = {}

    @classmethod
    def _made(cls, known: dict[str, Any]) -> Self:
        made = _new_object(cls)
        made.__dict__ = known
        made._share()
        return made

    def _share(self) -> None:
        """Shares the values the spec says repeat (in the classes that have such): run
        on the objects read, not on those built."""

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of this object: known keys in spec order, then `extra`."""
        values = self.__dict__
        keys = tuple(values)  # a stream repeats a few: each is arranged once
        arranged = self._arranged
        try:
            fields, extra = arranged[keys]
        except KeyError:
            if len(arranged) >= _ARRANGED_AT_MOST:
                arranged.clear()
            fields, extra = arranged[keys] = self._writing(keys)
        out: dict[str, Any] = {}
        for name, key, write in fields:
            value = values[name]
            if value is not UNSET:
                out[key] = value if write is None else write(value)
        if extra and values["extra"]:
            out.update(values["extra"])
        return out

    @classmethod
    def _writing(cls, keys: tuple[str, ...]) -> _Writing:
        """How to write an object whose attributes are `keys`, in this order."""
        present, writers = set(keys), cls._writers
        fields = tuple(
            (name, key, writers.get(name))
            for key, (name, *_) in cls._fields.rows.items()
            if name in present
        )
        return fields, "extra" in present and not cls._fields.strict


_Wide = TypeVar("_Wide", bound=type[_WideObject])


def _sparse(cls: _Wide) -> _Wide:
    """Gives a wide dataclass an `__init__` that keeps the keywords given: it checks
    them as the dataclass's own does (whose signature it shows), and adds the defaults
    of the absent lists. An absent `extra` reads the shared empty one, as a class
    default."""
    assert not hasattr(cls, "__post_init__")  # which this __init__ does not call
    fields = dataclasses.fields(cast(Any, cls))  # a dataclass by now
    names = frozenset(f.name for f in fields)
    required = tuple(
        f.name
        for f in fields
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    )
    defaults = tuple(
        (f.name, f.default_factory)
        for f in fields
        if f.default_factory is not dataclasses.MISSING and f.name != "extra"
    )

    def __init__(self: _WideObject, **given: Any) -> None:
        if not names.issuperset(given):
            name = next(name for name in given if name not in names)
            raise TypeError(
                f"{cls.__qualname__}.__init__() got an unexpected keyword argument"
                f" {name!r}"
            )
        for name in required:
            if name not in given:
                raise TypeError(
                    f"{cls.__qualname__}.__init__() missing 1 required keyword-only"
                    f" argument: {name!r}"
                )
        for name, default in defaults:
            if name not in given:
                given[name] = default()
        self.__dict__ = given

    __init__.__qualname__ = cls.__init__.__qualname__
    __init__.__signature__ = inspect.signature(cls.__init__)  # type: ignore[attr-defined]
    cls.__init__ = __init__  # type: ignore[method-assign,assignment]
    if "extra" in names:  # read-only: one empty mapping serves every object
        cls.extra = _NO_EXTRA  # type: ignore[attr-defined]
    return cls


# The writers a wide class's `_writers` names: a value that holds objects, as JSON data
# (None stays None in a nullable field).

_as_dict: Final = methodcaller("to_dict")
"""An object's `to_dict()`, called from C."""


def _as_dict_or_null(value: Any) -> Any:
    return None if value is None else value.to_dict()


def _as_dicts(value: list[Any]) -> list[dict[str, Any]]:
    return [item.to_dict() for item in value]


def _as_dicts_or_null(value: list[Any] | None) -> list[dict[str, Any]] | None:
    return None if value is None else [item.to_dict() for item in value]
