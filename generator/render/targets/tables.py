"""The field tables of the targets that read JSON themselves (dataclasses, TypedDicts,
msgspec's key-by-key reading): for each field its row of the model's `_Shape`, its
decoder spelled from the runtime's (generator/runtime/values.py), and its encoder."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal, TypeAlias

from ...ir.model import (
    EnumRef,
    Field,
    ListOf,
    MapOf,
    Model,
    ModelRef,
    Scalar,
    Spec,
    TypeExpr,
    Union,
    json_kind,
    parts,
)
from ...ir.naming import snake

_SCALAR_DECODERS = {"string": "_str", "int": "_int", "float": "_float", "bool": "_bool"}
_WORDS = {
    "bool": "a boolean",
    "int": "an integer",
    "float": "a number",
    "string": "a string",
    "list": "a list",
    "object": "an object",
}
# The Python types json gives a value of each JSON kind (a number may be an int).
_PY_TYPES = {
    "bool": ("bool",),
    "int": ("int",),
    "float": ("float", "int"),
    "string": ("str",),
    "list": ("list",),
    "object": ("dict",),
}


Holds: TypeAlias = Literal["object", "objects", "other"]
"""What a field's value holds that is written by a call (`Tables.holds`)."""


_ENTRY_WIDTH = 78
"""The longest entry of a union's members that fits a line of a reader at the top
level (88 columns, indented by eight)."""


def union_reader(name: str) -> str:
    """The module's reader of a union the spec names: `_CONTENT_BLOCK_READER`."""
    return f"_{snake(name).upper()}_READER"


class Tables:
    """Decoders, encoders and table rows for one spec; `model_decoder(name)` is how the
    target decodes a named type (`Choice.from_dict`, `validate_choice`)."""

    def __init__(
        self,
        spec: Spec,
        model_decoder: Callable[[str], str],
        python_name: Callable[[Field], str],
    ) -> None:
        self.spec = spec
        self.model_decoder = model_decoder
        self.python_name = python_name

    def decoder(self, expr: TypeExpr) -> str:
        """The expression of the function that decodes `expr`."""
        if isinstance(expr, Scalar):
            return _SCALAR_DECODERS.get(expr.kind, "_any")
        if isinstance(expr, EnumRef):
            if expr.open:
                return "_str"
            values = ", ".join(repr(v.value) for v in self.spec.enum(expr.name).values)
            return f"_one_of({values})"
        if isinstance(expr, ModelRef):
            return self.model_decoder(expr.name)
        if isinstance(expr, ListOf):
            if expr.item == Scalar("any"):
                return "_list"
            return f"_list_of({self.decoder(expr.item)})"
        if isinstance(expr, MapOf):
            if expr.value == Scalar("any"):
                return "_map"
            return f"_map_of({self.decoder(expr.value)})"
        if expr.name is not None:
            return union_reader(expr.name)
        return self.union_decoder(expr)

    def union_decoder(self, expr: Union) -> str:
        """The expression of the function that decodes a union, whether named or not."""
        if expr.discriminator is not None:
            other = f", {self.model_decoder(expr.other)}" if expr.other else ""
            if expr.absent:
                other = f"{other or ', None'}, absent={self.model_decoder(expr.absent)}"
            return f"_tagged({expr.discriminator!r}, {{{self._members(expr)}}}{other})"
        return f"_either({self.describe(expr)!r}, {{{self._kinds(expr)}}})"

    def _members(self, union: Union) -> str:
        members = []
        for option in union.options:
            assert isinstance(option, ModelRef)
            if option.name == union.other:
                continue
            tag = next(
                f for f in self.spec.model(option.name).fields if f.wire == union.discriminator
            )
            assert isinstance(tag.type, EnumRef)
            for value in self.spec.enum(tag.type.name).values:
                entry = f"{value.value!r}: {self.decoder(option)}"
                if len(entry) > _ENTRY_WIDTH:
                    # In parentheses, the formatter puts a long decoder on a line of its own.
                    entry = f"{value.value!r}: ({self.decoder(option)})"
                members.append(entry)
        return ", ".join(members)

    def _kinds(self, union: Union) -> str:
        """Python type -> decoder of each alternative (None: taken as it is); an integer
        goes to an int alternative if there is one, else to a number."""
        taken: dict[str, str] = {}
        for option in sorted(union.options, key=lambda o: json_kind(o) != "int"):
            plain = isinstance(option, Scalar) or (isinstance(option, EnumRef) and option.open)
            decode = "None" if plain else self.decoder(option)
            for py_type in _PY_TYPES[json_kind(option)]:
                taken.setdefault(py_type, decode)
        order = [t for kind in _PY_TYPES.values() for t in kind]
        return ", ".join(f"{t}: {taken[t]}" for t in sorted(taken, key=order.index))

    def describe(self, expr: TypeExpr) -> str:
        """What a value of `expr` is, as an error message says it was expected."""
        if isinstance(expr, EnumRef) and not expr.open:
            values = ", ".join(repr(v.value) for v in self.spec.enum(expr.name).values)
            return f"one of {values}"
        if isinstance(expr, Union):
            return " or ".join(self.describe(option) for option in expr.options)
        return _WORDS[json_kind(expr)]

    def row(self, field: Field) -> str:
        """The field's row of its model's table: `wire key: _how(decoder[, name])`."""
        if field.has_default:
            how = "_defaulted"
        elif field.required:
            how = "_required_nullable" if field.nullable else "_required"
        else:
            how = "_nullable" if field.nullable else "_optional"
        name = self.python_name(field)
        renamed = f", {name!r}" if name != field.wire else ""
        return f"{field.wire!r}: {how}({self.decoder(field.type)}{renamed})"

    def shape_options(self, model: Model) -> str:
        """The keywords of a model's `_Shape` after its rows: its error-report keys, and
        whether unknown keys are an error (the strict profile)."""
        options = ""
        if model.error_when is not None:
            options += f", report={(model.error_when.has, model.error_when.lacks)!r}"
        return options + (", strict=True" if self.spec.options.strict else "")

    def holds(self, field: Field) -> Holds | None:
        """What a field's value holds that is written by a call: `object` (a model),
        `objects` (a list of models), `other` (models deeper in a union, a map or
        nested lists), or None (nothing: the value is written as it is)."""
        expr = field.type
        if not any(isinstance(p, ModelRef) for p in parts(expr)):
            return None
        if isinstance(expr, ModelRef):
            return "object"
        if isinstance(expr, ListOf) and isinstance(expr.item, ModelRef):
            return "objects"
        return "other"

    def writer(self, field: Field) -> str | None:
        """The runtime's function that writes a field's value (None: as it is)."""
        holds = self.holds(field)
        if holds is None:
            return None
        if holds == "other":
            return "_encoded"  # None stays None
        writer = "_as_dict" if holds == "object" else "_as_dicts"
        return f"{writer}_or_null" if field.nullable else writer

    def encoder(self, field: Field, value: str) -> str:
        """The expression that writes `value`, a field's value: the `writer`'s work,
        spelled out in place."""
        holds = self.holds(field)
        if holds is None:
            return value
        if holds == "other":
            return f"_encoded({value})"
        if holds == "object":
            call = f"{value}.to_dict()"
        else:
            call = f"[item.to_dict() for item in {value}]"
        return f"None if {value} is None else {call}" if field.nullable else call
