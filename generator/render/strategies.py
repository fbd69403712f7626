"""Hypothesis strategies for every spec type, as Python expressions, for the generated
property tests.

A strategy draws any JSON value its type allows: required keys always, optional keys
or not, null wherever the spec allows it, every union alternative. A lenient spec's
strategies also draw unknown keys at every level and values an open enum does not list;
the strict profile's (OpenAI's own spec, which the differential tests feed to
openai-python) draw neither.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ir.model import EnumRef, ListOf, MapOf, Model, ModelRef, Scalar, Spec, TypeExpr, Union
from ..ir.naming import snake

# The leaf strategies, defined by the template: text (non-ASCII included), integers of
# any size (beyond 2**53 too), finite floats (and integers, which a float key accepts
# and keeps), and any JSON value.
_SCALARS = {
    "string": "_TEXT",
    "int": "_INT",
    "float": "_NUMBER",
    "bool": "st.booleans()",
    "any": "_JSON",
}


@dataclass(frozen=True)
class ModelStrategy:
    """The strategy of one object type: `name = _object(required, optional, ...)`."""

    name: str
    model: str
    required: tuple[tuple[str, str], ...]
    """(wire key, strategy expression) of the keys always drawn."""
    optional: tuple[tuple[str, str], ...]
    """(wire key, strategy expression) of the keys drawn or left out."""
    unknown: bool
    """Whether keys the spec does not describe are drawn too."""
    error_when: tuple[str, str] | None
    """(has, lacks): payloads that are error reports, not this type, are not drawn."""


def strategy_name(model: str, prefix: str = "") -> str:
    return prefix + snake(model)


def for_spec(spec: Spec, prefix: str = "") -> tuple[ModelStrategy, ...]:
    """One strategy per type, leaves first (the order of `spec.models`), each named after
    its type in snake_case after `prefix`."""
    return tuple(_model(model, spec, prefix) for model in spec.models)


def _model(model: Model, spec: Spec, prefix: str) -> ModelStrategy:
    required: list[tuple[str, str]] = []
    optional: list[tuple[str, str]] = []
    for field in model.fields:
        value = _expr(field.type, spec, prefix)
        if field.nullable or field.has_default:  # a defaulted list reads null as empty
            value = f"st.none() | {value}"
        (required if field.required else optional).append((field.wire, value))
    rule = model.error_when
    return ModelStrategy(
        name=strategy_name(model.name, prefix),
        model=model.name,
        required=tuple(required),
        optional=tuple(optional),
        unknown=not spec.options.strict,
        error_when=(rule.has, rule.lacks) if rule else None,
    )


def _expr(expr: TypeExpr, spec: Spec, prefix: str) -> str:
    if isinstance(expr, Scalar):
        return _SCALARS[expr.kind]
    if isinstance(expr, ListOf):
        return f"st.lists({_expr(expr.item, spec, prefix)}, max_size=3)"
    if isinstance(expr, MapOf):
        return f"st.dictionaries(_TEXT, {_expr(expr.value, spec, prefix)}, max_size=3)"
    if isinstance(expr, ModelRef):
        return strategy_name(expr.name, prefix)
    if isinstance(expr, EnumRef):
        values = tuple(v.value for v in spec.enum(expr.name).values)
        listed = f"st.sampled_from({values!r})"
        return f"{listed} | _TEXT" if expr.open and not spec.options.strict else listed
    assert isinstance(expr, Union)
    return f"st.one_of({', '.join(_expr(option, spec, prefix) for option in expr.options)})"
