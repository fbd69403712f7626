"""How each target spells a spec type as a Python annotation."""

from __future__ import annotations

from generator.ir import EnumRef, Field, ListOf, MapOf, ModelRef, Scalar, TypeExpr, Union

_STDLIB_SCALARS = {"string": "str", "int": "int", "float": "float", "bool": "bool", "any": "Any"}
# pydantic turns an int read into a `float` field into a float, and `1` would come back
# as `1.0`; `int | float` keeps whichever the wire had.
_PYDANTIC_SCALARS = {**_STDLIB_SCALARS, "float": "int | float"}


def annotation(expr: TypeExpr, target: str) -> str:
    """The annotation of a type, without the nullable or unset parts of a field."""
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
    spelled = " | ".join(annotation(option, target) for option in expr.options)
    if target == "pydantic" and expr.discriminator is not None:
        return f"Annotated[{spelled}, Discriminator({expr.discriminator!r})]"
    return spelled


def field_annotation(field: Field, target: str) -> str:
    """The annotation of a field: its type, `| None` when nullable, and (for
    dataclasses) the unset marker when the key may be absent."""
    text = annotation(field.type, target)
    if target == "dataclasses" and not field.required and not field.has_default:
        text += " | _Unset"
    if field.nullable:
        text += " | None"
    return text


def uses_discriminator(expr: TypeExpr) -> bool:
    """Whether a type holds a union told apart by a discriminator key."""
    if isinstance(expr, ListOf):
        return uses_discriminator(expr.item)
    if isinstance(expr, MapOf):
        return uses_discriminator(expr.value)
    if isinstance(expr, Union):
        return expr.discriminator is not None or any(uses_discriminator(o) for o in expr.options)
    return False


def pydantic_field(field: Field) -> str:
    """The annotation and default of a field in a pydantic model, as `annotation = default`.

    A key that may be absent defaults to None and is told apart from null by
    `model_fields_set`; where null itself is not allowed a validator rejects it.
    """
    base = annotation(field.type, "pydantic")
    alias = f"alias={field.wire!r}" if field.names.pydantic != field.wire else ""
    if field.has_default:
        args = ", ".join(a for a in (f"default_factory={default_factory(field)}", alias) if a)
        return f"Annotated[{base}, _NULL_AS_EMPTY] = Field({args})"
    if field.required:
        text = f"{base} | None" if field.nullable else base
        return f"{text} = Field({alias})" if alias else text
    text = f"{base} | None" if field.nullable else f"Annotated[{base} | None, _NOT_NULL]"
    return f"{text} = Field(None, {alias})" if alias else f"{text} = None"


def default_factory(field: Field) -> str:
    """The callable that makes a field's default; the spec only allows `[]`."""
    assert field.default == []
    return "list"
