"""The decoders of JSON values that the standard-library targets and msgspec's
key-by-key reading use: one per scalar kind, and combinators for the rest. A field's
decoder is spelled from these in its type's table row (`_list_of(Choice.from_dict)`)."""

# Private names are shared between these files and used by the generated code.
# pyright: reportPrivateUsage=false, reportUnusedFunction=false, reportUnusedClass=false

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, TypeVar

from .errors import StreamDecodeError, _key

_T = TypeVar("_T")


def _unexpected(expected: str, value: object) -> StreamDecodeError:
    return StreamDecodeError(f"expected {expected}, got {_describe(value)}")


def _describe(value: object) -> str:
    """A short description of a decoded JSON value, for error messages."""
    if type(value) is str and len(value) <= 40:
        return repr(value)
    if value is None:
        return "null"
    if value is True or value is False:
        return "a boolean"
    if type(value) is int:
        return "an integer"
    if type(value) is float:
        return "a number"
    if type(value) is str:
        return "a string"
    if value.__class__ is list:
        return "a list"
    if value.__class__ is dict:
        return "an object"
    return type(value).__name__


def _object(value: Any) -> dict[str, Any]:
    if value.__class__ is dict:
        return value
    raise _unexpected("an object", value)


def _str(value: Any) -> str:
    if type(value) is str:
        return value
    raise _unexpected("a string", value)


def _int(value: Any) -> int:
    if type(value) is int:
        return value
    raise _unexpected("an integer", value)


def _float(value: Any) -> int | float:
    if type(value) is float or type(value) is int:
        return value
    raise _unexpected("a number", value)


def _bool(value: Any) -> bool:
    if value is True or value is False:
        return value
    raise _unexpected("a boolean", value)


_EXACT: Final[dict[Callable[[Any], Any], type]] = {
    _str: str,
    _int: int,
    _float: float,
    _bool: bool,
}
"""Decoders that return a value of this type unchanged: such a value is taken as it is,
without a call (a union's decoder adds itself, with its first such alternative)."""


def _any(value: Any) -> Any:
    return value


def _list(value: Any) -> list[Any]:
    """A list whose items are any JSON values, kept as they are."""
    if value.__class__ is list:
        return value
    raise _unexpected("a list", value)


def _map(value: Any) -> dict[str, Any]:
    """An object whose values are any JSON values, kept as they are."""
    if value.__class__ is dict:
        return value
    raise _unexpected("an object", value)


def _list_of(decode: Callable[[Any], _T]) -> Callable[[Any], list[_T]]:
    """The decoder of a list whose items `decode` reads."""
    exact: frozenset[type] = frozenset({_EXACT[decode]} if decode in _EXACT else ())

    def decode_list(value: Any) -> list[_T]:
        if value.__class__ is not list:
            raise _unexpected("a list", value)
        # Items of the type the decoder takes as they are (token ids, strings) are
        # checked all at once; others are decoded, and the one that fails is found
        # again to say where.
        if exact and exact.issuperset(map(type, value)):
            return list(value)
        try:
            return [decode(item) for item in value]
        except StreamDecodeError:
            pass
        for index, item in enumerate(value):
            try:
                decode(item)
            except StreamDecodeError as exc:
                raise exc.under(f"[{index}]") from None
        raise AssertionError("a decoder failed once and not again")

    return decode_list


def _map_of(decode: Callable[[Any], _T]) -> Callable[[Any], dict[str, _T]]:
    """The decoder of an object with any keys whose values `decode` reads."""

    def decode_map(value: Any) -> dict[str, _T]:
        if value.__class__ is not dict:
            raise _unexpected("an object", value)
        out: dict[str, _T] = {}
        for key, item in value.items():
            try:
                out[key] = decode(item)
            except StreamDecodeError as exc:
                raise exc.under(_key(key)) from None
        return out

    return decode_map


def _one_of(*values: str) -> Callable[[Any], str]:
    """The decoder of a closed enum: one of `values`, no other."""
    allowed = frozenset(values)
    expected = "one of " + ", ".join(map(repr, values))

    def decode_enum(value: Any) -> str:
        if type(value) is str and value in allowed:
            return value
        raise _unexpected(expected, value)

    return decode_enum


def _tagged(
    key: str,
    members: dict[str, Callable[[Any], _T]],
    other: Callable[[Any], _T] | None = None,
    absent: Callable[[Any], _T] | None = None,
) -> Callable[[Any], _T]:
    """The decoder of a union of objects told apart by the value of `key`; `other`, if
    any, decodes a value whose key is a string no member has (an open union); `absent`,
    if any, a value without the key."""
    expected = "one of " + ", ".join(map(repr, members))
    if other is not None:
        expected = "a string"

    def decode_tagged(value: Any) -> _T:
        obj = _object(value)
        tag = obj.get(key)
        if type(tag) is not str:
            if absent is not None and key not in obj:
                return absent(value)
            raise _unexpected(expected, tag).under(_key(key))
        decode = members.get(tag, other)
        if decode is None:
            raise _unexpected(expected, tag).under(_key(key))
        return decode(value)

    return decode_tagged


def _either(
    expected: str, options: dict[type, Callable[[Any], Any] | None]
) -> Callable[[Any], Any]:
    """The decoder of a union told apart by JSON kind: the Python type json gives a
    value picks its alternative (an integer is a number too, unless an alternative
    takes integers); None takes the value as it is."""

    def decode_either(value: Any) -> Any:
        try:
            decode = options[type(value)]
        except KeyError:
            raise _unexpected(expected, value) from None
        return value if decode is None else decode(value)

    taken = [kind for kind, decode in options.items() if decode is None]
    if taken:
        _EXACT[decode_either] = taken[0]
    return decode_either


def _encoded(value: Any) -> Any:
    """The JSON data of a value that holds objects somewhere in it (a union with an
    object alternative, a map or a list of lists of objects)."""
    to_dict = getattr(value, "to_dict", None)
    if to_dict is not None:
        return to_dict()
    if value.__class__ is list:
        return [_encoded(item) for item in value]
    if value.__class__ is dict:
        return {key: _encoded(item) for key, item in value.items()}
    return value
