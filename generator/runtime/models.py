"""What the pydantic target adds: the validators its field annotations name, and the
turning of pydantic's errors into a `StreamDecodeError` whose path follows the data."""

# Private names are shared between these files and used by the generated code.
# pyright: reportPrivateUsage=false, reportUnusedFunction=false, reportUnusedClass=false

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, Final, TypeAlias, TypeVar, cast

from pydantic import (
    AfterValidator,
    BaseModel,
    GetCoreSchemaHandler,
    TypeAdapter,
    ValidationError,
    ValidationInfo,
)
from pydantic_core import (
    PydanticCustomError,
    PydanticSerializationError,
    core_schema,
    to_json,
)

from .errors import StreamDecodeError, _error_payload, _key
from .json_text import _SHALLOW, _check_depth, _not_finite_at, _wire_text

_V = TypeVar("_V")
_M = TypeVar("_M", bound=BaseModel)


def _json_kind(value: object) -> str:
    """The JSON kind of a value (or of a model), as it names a union alternative."""
    if value is True or value is False:
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _finite(value: _V) -> _V:
    """An `any` value, checked to hold no float that is not finite (NaN, 1e400): the
    JSON parser of pydantic reads them, and a float field refuses them itself."""
    todo: list[Any] = [value]
    while todo:
        item = todo.pop()
        kind = item.__class__  # compared as a name: no checker narrows `item`
        if kind is float and item - item != 0.0:
            raise PydanticCustomError(
                "finite_number", "Input should be a finite number"
            )
        if kind is dict:
            todo.extend(cast(dict[str, Any], item).values())
        elif kind is list:
            todo.extend(cast(list[Any], item))
    return value


_FINITE: Final = AfterValidator(_finite)


class _NotNull:
    """On a key that may be absent but, when present, must not be null: the field's
    schema without its nullable wrapper, so the default (None) stands only for absence.

    An after-validator would say the same, at the price of a Python call on every
    value; the wording of the error ("must not be null") is `_decode_error`'s.
    """

    @staticmethod
    def __get_pydantic_core_schema__(
        source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        schema = handler(source)
        return schema["schema"] if schema["type"] == "nullable" else schema


_NOT_NULL: Final = _NotNull()


class _FirstMatch:
    """On a union whose alternatives take disjoint JSON kinds, one of them not a number:
    the first alternative that accepts the value is taken.

    A smart union (pydantic's default) tries every alternative until one matches
    exactly, and an object read as a model is no exact match: each value would also be
    tried as every other alternative."""

    @staticmethod
    def __get_pydantic_core_schema__(
        source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        union = cast(core_schema.UnionSchema, handler(source))
        assert union["type"] == "union"
        union["mode"] = "left_to_right"
        # Written by the value's own type: a union serializer tries its alternatives
        # in turn, which costs more than the value itself.
        union["serialization"] = core_schema.simple_ser_schema("any")
        return union


_FIRST_MATCH: Final = _FirstMatch()


class _OpenEnum:
    """On an open enum (`Role | str`): any string, validated as a string.

    The listed values are strings too, so the union would only cost a second check on
    reading and on writing.
    """

    @staticmethod
    def __get_pydantic_core_schema__(
        source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        return core_schema.str_schema(strict=True)


_OPEN_ENUM: Final = _OpenEnum()


_OTHER_MEMBER: Final = "*"
"""The tag of an open union's other member, which takes what no member's tag names."""


def _open_tag(
    key: str, known: tuple[str, ...], absent: str | None = None, open: bool = True
) -> Callable[[object], str | None]:
    """The discriminator of an open union: the tag of the member a value's `key` names,
    or `_OTHER_MEMBER` for a string no member has (None, no string: pydantic reports
    the tag missing). `absent`: the tag of the member a value without the key reads as;
    `open`: whether the union has an other member (if not, an unknown string is given
    back as it is, for pydantic to report)."""
    tags = frozenset(known)

    def open_tag(value: object) -> str | None:
        if isinstance(value, dict):
            mapping = cast("dict[str, object]", value)
            if absent is not None and key not in mapping:
                return absent
            tag = mapping.get(key)
        else:
            tag = getattr(value, key, None)
            if tag is None and absent is not None:
                return absent  # only that member can leave its key out
        if type(tag) is not str:
            return None
        return tag if tag in tags or not open else _OTHER_MEMBER

    # pydantic names a callable discriminator by its name in an error: the key's.
    open_tag.__name__ = key
    return open_tag


def _null_as_empty(value: object) -> object:
    return [] if value is None else value


class _NullAsEmpty:
    """On a list that reads as empty when it is null or absent.

    The list is validated as a nullable list and a null replaced afterwards: a
    before-validator would first turn the whole list from JSON into Python objects.
    """

    @staticmethod
    def __get_pydantic_core_schema__(
        source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        return core_schema.no_info_after_validator_function(
            _null_as_empty, core_schema.nullable_schema(handler(source))
        )


_NULL_AS_EMPTY: Final = _NullAsEmpty()

_AliasesRead: TypeAlias = set[tuple[str | None, str | None]]
"""The validation context of `loads`: (model, field) of the fields read by a wire key
that is not their Python name (`_ALIAS_READ`)."""


def _alias_read(value: _V, info: ValidationInfo) -> _V:
    if info.context.__class__ is set:  # the context of `loads`
        read = cast(_AliasesRead, info.context)
        read.add((info.config.get("title") if info.config else None, info.field_name))
    return value


_ALIAS_READ: Final = AfterValidator(_alias_read)
"""On a field whose Python name is not its wire key: records, in the set `loads` passes
as the validation context, that the wire key was read. pydantic also counts an unknown
key that equals the Python name (`verbose_`) as setting the field; `model_post_init`
tells the two apart."""


def _unknown_key_named_like(model: BaseModel, name: str, context: object) -> bool:
    """Whether field `name` is in the fields set only as an unknown key of that name."""
    extra = model.__pydantic_extra__
    if not extra or name not in extra:
        return False
    if isinstance(context, set):
        return (type(model).__name__, name) not in context
    return (
        getattr(model, name) is None
    )  # read without `loads`: a value means the wire key


def _validate(
    model: type[_M] | TypeAdapter[_M],
    data: str | bytes,
    union_tags: tuple[tuple[str, str], ...],
    report: tuple[str, str] | None = None,
    aliased: bool = False,
) -> _M:
    """`data` validated as `model` (a model, or a union's type adapter); raises
    `StreamDecodeError`. `union_tags` and `report` (the keys of the model's
    `error_when`) help name the problem, as `_decode_error` says; `aliased`: whether
    some field's wire key is not its Python name."""
    if len(data) > _SHALLOW:
        _check_depth(data)
    try:
        # The validator itself, not `model_validate_json`: its wrapper costs as much as
        # several fields.
        validator = (
            model.validator
            if isinstance(model, TypeAdapter)
            else model.__pydantic_validator__
        )
        if not aliased:
            chunk: _M = validator.validate_json(data)
            return chunk
        # By wire name only: an unknown key that happens to be a Python name stays
        # unknown. (Keywords cost as much as a field: given only where they matter.)
        read: _AliasesRead = set()
        chunk = validator.validate_json(
            data, by_alias=True, by_name=False, context=read
        )
        return chunk
    except ValidationError as exc:
        error = exc
    if error.errors()[0]["type"] == "json_invalid":
        # pydantic's JSON parser rejects half of a UTF-16 surrogate pair ("\ud83d"),
        # which streams send when they split a pair across chunks; Python's json reads
        # it.
        try:
            value = json.loads(
                data.decode("utf-8") if isinstance(data, bytes) else data
            )
        except (ValueError, RecursionError):
            raise _decode_error(error, data, union_tags, report) from None
        return _validate_value(model, value, union_tags, report)
    raise _decode_error(error, data, union_tags, report) from None


def _validate_value(
    model: type[_M] | TypeAdapter[_M],
    value: Any,
    union_tags: tuple[tuple[str, str], ...],
    report: tuple[str, str] | None = None,
) -> _M:
    read: _AliasesRead = set()
    try:
        if isinstance(model, TypeAdapter):
            return model.validate_python(
                value, by_alias=True, by_name=False, context=read
            )
        return model.model_validate(value, by_alias=True, by_name=False, context=read)
    except ValidationError as exc:
        raise _decode_error(exc, json.dumps(value), union_tags, report) from None


def _data_path(
    error: Mapping[str, Any], value: Any, union_tags: tuple[tuple[str, str], ...]
) -> list[str]:
    """The path segments of an error's location that exist in the data.

    pydantic's location mixes keys with the names of union members; only the steps
    found in the data are kept, plus the key itself when it is the missing one.
    `union_tags` are the (key, value) pairs that tell the members of a discriminated
    union apart: a step that names a member, not a key.
    """
    segments: list[str] = []
    location = error["loc"]
    for step, part in enumerate(location):
        if isinstance(part, str) and part.startswith("~"):
            continue  # the JSON-kind tag of a union alternative
        if value.__class__ is dict and any(
            tag == part == value.get(key) for key, tag in union_tags
        ):
            continue  # the tag value of a discriminated union
        if isinstance(part, str) and value.__class__ is dict and part in value:
            segments.append(_key(part))
            value = value[part]
        elif (
            isinstance(part, int) and value.__class__ is list and 0 <= part < len(value)
        ):
            segments.append(f"[{part}]")
            value = value[part]
        elif (
            error["type"] == "missing"
            and step == len(location) - 1
            and isinstance(part, str)
        ):
            segments.append(_key(part))
    if error["type"] in ("union_tag_invalid", "union_tag_not_found"):
        discriminator: str = error["ctx"]["discriminator"]
        segments.append(_key(discriminator.strip("'").removesuffix("()")))
    return segments


def _decode_error(
    exc: ValidationError,
    data: str | bytes,
    union_tags: tuple[tuple[str, str], ...],
    report: tuple[str, str] | None,
) -> StreamDecodeError:
    """Turn pydantic's most specific error into a StreamDecodeError whose path follows
    the data; a payload that `report` (has, lacks) calls an error report is one."""
    errors = exc.errors(include_url=False)
    if errors[0]["type"] == "json_invalid":
        return StreamDecodeError(f"invalid JSON: {errors[0]['msg']}")
    if any(e["type"] == "finite_number" for e in errors):
        return _not_finite_at(data)  # located as the other targets locate it
    value: Any = json.loads(data)
    if report is not None:
        has, lacks = report
        if (
            value.__class__ is dict
            and value.get(has) is not None
            and lacks not in value
        ):
            return _error_payload(value[has]).under(_key(has))
    # pydantic reports every member of a failed union; the first error names the key
    # that failed (keys are checked in spec order, as in the other targets), and the
    # deepest error under that key names the real problem.
    located = [(_data_path(e, value, union_tags), e) for e in errors]
    first = located[0][0]
    segments, error = max(
        (pair for pair in located if pair[0][: len(first)] == first),
        key=lambda pair: len(pair[0]),
    )
    cause = error.get("ctx", {}).get("error")
    where, last = error["loc"][:-1], error["loc"][-1] if error["loc"] else None
    if error["input"] is None and error["type"] != "missing":
        result = StreamDecodeError("must not be null")
    elif isinstance(last, str) and last.startswith("~"):
        # Every alternative of a union of JSON kinds refused the value's kind.
        kinds = [
            str(e["loc"][-1])[1:]
            for e in errors
            if e["loc"][:-1] == where and str(e["loc"][-1]).startswith("~")
        ]
        expected, got = ", ".join(kinds), _json_kind(error["input"])
        result = StreamDecodeError(f"expected {expected}, got {got}")
    elif isinstance(cause, StreamDecodeError):
        result = cause
    else:
        result = StreamDecodeError(
            str(cause) if isinstance(cause, ValueError) else error["msg"]
        )
    for segment in reversed(segments):
        result.under(segment)
    return result


def _model_text(value: BaseModel) -> str:
    """A model as compact JSON text: `model_dump_json(exclude_unset=True)`."""
    try:
        text: bytes = value.__pydantic_serializer__.to_json(
            value, by_alias=True, exclude_unset=True
        )
        return text.decode()
    except PydanticSerializationError:
        # A lone UTF-16 surrogate (half of a pair a stream split across chunks, D9)
        # has no UTF-8 spelling, so pydantic cannot write it; json writes its escape.
        return _wire_text(value.model_dump(by_alias=True, exclude_unset=True))


def _encoded(value: Any) -> Any:
    """The JSON data of a value that may hold models (as `model_dump` writes them)."""
    if isinstance(value, BaseModel):
        return value.model_dump(by_alias=True, exclude_unset=True)
    kind = value.__class__
    if kind is list:
        return [_encoded(item) for item in cast(list[Any], value)]
    if kind is dict:
        return {
            key: _encoded(item) for key, item in cast(dict[str, Any], value).items()
        }
    return value


def _pydantic_string(text: str) -> bytes:
    """A text as pydantic writes it in a model."""
    return to_json(text)
