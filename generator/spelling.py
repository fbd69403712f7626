"""How each target spells a spec type as a Python annotation."""

from __future__ import annotations

from generator.ir import (
    EnumRef,
    Field,
    ListOf,
    MapOf,
    ModelRef,
    Scalar,
    Spec,
    TypeExpr,
    Union,
    json_kind,
    parts,
)

_STDLIB_SCALARS = {"string": "str", "int": "int", "float": "float", "bool": "bool", "any": "Any"}
# pydantic turns an int read into a `float` field into a float, and `1` would come back
# as `1.0`; `int | float` keeps whichever the wire had.
_PYDANTIC_SCALARS = {**_STDLIB_SCALARS, "float": "int | float"}


def annotation(expr: TypeExpr, target: str) -> str:
    """The annotation of a type, without the nullable or unset parts of a field."""
    if target == "msgspec":
        return _msgspec(expr)
    if isinstance(expr, Scalar):
        return (_PYDANTIC_SCALARS if target == "pydantic" else _STDLIB_SCALARS)[expr.kind]
    if isinstance(expr, ListOf):
        return f"list[{annotation(expr.item, target)}]"
    if isinstance(expr, MapOf):
        return f"dict[str, {annotation(expr.value, target)}]"
    if isinstance(expr, ModelRef):
        return expr.name
    if isinstance(expr, EnumRef):
        return f"{expr.name} | str" if expr.open else expr.name
    if target != "pydantic":
        return " | ".join(annotation(option, target) for option in expr.options)
    if expr.discriminator is not None:
        spelled = " | ".join(annotation(option, target) for option in expr.options)
        return f"Annotated[{spelled}, Discriminator({expr.discriminator!r})]"
    # pydantic picks the alternative by the value's JSON kind, so a failure names one
    # alternative instead of listing the error of every member.
    tagged = " | ".join(
        f'Annotated[{spelled}, Tag("~{kind}")]' for kind, spelled in _kind_choices(expr)
    )
    return f"Annotated[{tagged}, Discriminator(_json_kind)]"


def _msgspec(expr: TypeExpr) -> str:
    """msgspec's spelling: like pydantic's scalars (it reads an int into a `float` as a
    float), an open enum as plain `str` (msgspec allows one string type per union), and
    a discriminated union as the union of its tagged structs."""
    if isinstance(expr, Scalar):
        return _PYDANTIC_SCALARS[expr.kind]
    if isinstance(expr, ListOf):
        return f"list[{_msgspec(expr.item)}]"
    if isinstance(expr, MapOf):
        return f"dict[str, {_msgspec(expr.value)}]"
    if isinstance(expr, ModelRef):
        return expr.name
    if isinstance(expr, EnumRef):
        return "str" if expr.open else expr.name
    spelled = [part for option in expr.options for part in _msgspec(option).split(" | ")]
    return " | ".join(dict.fromkeys(spelled))


def msgspec_tags(spec: Spec) -> dict[str, tuple[str, str]]:
    """Model name -> (tag key, tag value) of the types a discriminated union tells apart
    (msgspec writes and reads the tag itself, so it is not a field of its struct)."""
    tags: dict[str, tuple[str, str]] = {}
    for union in (u for m in spec.models for f in m.fields for u in _unions(f.type)):
        if union.discriminator is None:
            continue
        for option in union.options:
            assert isinstance(option, ModelRef)
            field = next(f for f in spec.model(option.name).fields if f.wire == union.discriminator)
            assert isinstance(field.type, EnumRef)
            [value] = [v.value for v in spec.enum(field.type.name).values]
            tags[option.name] = (union.discriminator, value)
    return tags


def _kind_choices(union: Union) -> list[tuple[str, str]]:
    """(JSON kind, pydantic annotation) for each alternative; a float alternative takes
    integers too unless an int alternative does."""
    has_int = Scalar("int") in union.options
    choices = []
    for option in union.options:
        if option == Scalar("float"):
            if not has_int:
                choices.append(("integer", "int"))
            choices.append(("number", "float"))
        else:
            choices.append((_JSON_KINDS[json_kind(option)], annotation(option, "pydantic")))
    return choices


_JSON_KINDS = {
    "string": "string",
    "int": "integer",
    "bool": "boolean",
    "list": "array",
    "object": "object",
}


def field_annotation(field: Field, target: str) -> str:
    """The annotation of a field: its type, `| None` when nullable, and (for
    dataclasses) the unset marker when the key may be absent."""
    text = annotation(field.type, target)
    if target in ("dataclasses", "msgspec") and not field.required and not field.has_default:
        text += " | _Unset"
    if field.nullable:
        text += " | None"
    if target == "typeddicts" and field.required:
        text = f"Required[{text}]"
    return text


def _unions(expr: TypeExpr) -> list[Union]:
    return [p for p in parts(expr) if isinstance(p, Union)]


def uses_kind_union(expr: TypeExpr) -> bool:
    """Whether a type holds a union told apart by JSON kind."""
    return any(u.discriminator is None for u in _unions(expr))


def union_tags(spec: Spec) -> tuple[tuple[str, str], ...]:
    """The (key, value) pairs that tell the members of discriminated unions apart."""
    return tuple(sorted(set(msgspec_tags(spec).values())))


def uses_discriminator(expr: TypeExpr) -> bool:
    """Whether a type holds a union told apart by a discriminator key."""
    return any(u.discriminator is not None for u in _unions(expr))


def pydantic_field(field: Field, track_alias: bool) -> str:
    """The annotation and default of a field in a pydantic model, as `annotation = default`.

    A key that may be absent defaults to None and is told apart from null by
    `model_fields_set`; where null itself is not allowed a validator rejects it. With
    `track_alias`, a field whose Python name is not its wire key records that its wire key
    was read (`_ALIAS_READ`, for `model_post_init`).
    """
    base = annotation(field.type, "pydantic")
    aliased = field.names.pydantic != field.wire
    alias = f"alias={field.wire!r}" if aliased else ""
    if field.has_default:
        args = ", ".join(
            a for a in (f"default_factory={default_factory(field, 'pydantic')}", alias) if a
        )
        text, default = f"Annotated[{base}, _NULL_AS_EMPTY]", f"Field({args})"
    elif field.required:
        text = f"{base} | None" if field.nullable else base
        default = f"Field({alias})" if alias else ""
    else:
        text = f"{base} | None" if field.nullable else f"Annotated[{base} | None, _NOT_NULL]"
        default = f"Field(default=None, {alias})" if alias else "None"
    if aliased and track_alias:
        text = f"Annotated[{text}, _ALIAS_READ]"
    return f"{text} = {default}" if default else text


def default_factory(field: Field, target: str) -> str:
    """The callable that makes a field's default; the spec only allows `[]`. It is the
    list type itself (`list[Choice]`), so type checkers know the items' type."""
    assert field.default == [] and isinstance(field.type, ListOf)
    return annotation(field.type, target)
