"""The msgspec target: Structs msgspec reads in one pass when every key is one the
spec describes, and the field table reads key by key otherwise; needs msgspec."""

from __future__ import annotations

from functools import cached_property
from typing import ClassVar

from ...ir.model import (
    EnumRef,
    Field,
    ListOf,
    MapOf,
    Model,
    ModelRef,
    Scalar,
    TypeExpr,
    Union,
    parts,
    union_tags,
)
from ...ir.naming import DATACLASS_RESERVED
from .base import NUMBER_SCALARS, Target


class Msgspec(Target):
    name = "msgspec"
    render_cost = 4
    runtime = ("errors", "values", "objects", "structs", "sharing", "json_text")
    native_text = True
    string_writers = "_ENCODER.encode, _json_string"
    reserved = DATACLASS_RESERVED
    # Only per-stream values: a struct is read in C, where a Python `__post_init__` on
    # every logprob token costs more than the copy saves (logprob reads 25 % slower).
    shares = ("stream",)
    exact_text = False
    imports: ClassVar[dict[str, tuple[str, str]]] = {
        "MappingProxyType": ("types", "MappingProxyType"),
        "msgspec": ("msgspec", ""),
        "UNSET": ("msgspec", "UNSET"),
        "_Unset": ("msgspec", "UnsetType"),
    }

    def spelled(self, expr: TypeExpr) -> str:
        """Like pydantic's scalars (msgspec reads an int into a `float` as a float), an
        open enum as plain `str` (msgspec allows one string type per union), and a
        discriminated union as the union of its tagged structs."""
        if isinstance(expr, Scalar):
            return NUMBER_SCALARS[expr.kind]
        if isinstance(expr, ListOf):
            return f"list[{self.spelled(expr.item)}]"
        if isinstance(expr, MapOf):
            return f"dict[str, {self.spelled(expr.value)}]"
        if isinstance(expr, ModelRef):
            return expr.name
        if isinstance(expr, EnumRef):
            return "str" if expr.open else expr.name
        spelled = [part for option in expr.options for part in self.spelled(option).split(" | ")]
        return " | ".join(dict.fromkeys(spelled))

    @cached_property
    def tags(self) -> dict[str, tuple[str, str]]:
        """Model name -> (tag key, tag value) of the types a discriminated union tells
        apart (msgspec writes and reads the tag itself: it is not a struct field)."""
        return union_tags(self.spec)

    @cached_property
    def others(self) -> dict[str, str]:
        """Model name -> tag key of the other member of each open union: msgspec tags it
        with "" (every member of a union of structs is tagged) and it keeps the key's
        value among its unknown keys."""
        unions = [p for m in self.spec.models for f in m.fields for p in parts(f.type)]
        unions += [named.union for named in self.spec.unions]
        return {
            u.other: u.discriminator
            for u in unions
            if isinstance(u, Union) and u.other and u.discriminator
        }

    @cached_property
    def absents(self) -> frozenset[str]:
        """The members a union reads a value without its key as (`absent:`): msgspec
        tags them as the others, and such a value, read key by key, is of their
        `_…Untagged` class, which writes no tag back."""
        return frozenset(named.union.absent for named in self.spec.unions if named.union.absent)

    def tag_field(self, model: Model) -> Field | None:
        tag = self.tags.get(model.name)
        key = tag[0] if tag else self.others.get(model.name)
        return next((f for f in model.fields if key and f.wire == key), None)

    def struct_fields(self, model: Model) -> list[Field]:
        tag = self.tag_field(model)
        return [f for f in model.fields if f is not tag]

    def bases(self, model: Model) -> str:
        # gc=False: the structs hold JSON data, which has no cycles; tracked, every chunk
        # read feeds the garbage collector (half the reading speed with many chunks alive).
        options = ["msgspec.Struct", "kw_only=True", "forbid_unknown_fields=True", "gc=False"]
        tag = self.tags.get(model.name)
        if model.name in self.others:
            tag = (self.others[model.name], "")
        if tag:
            options += [f"tag_field={tag[0]!r}", f"tag={tag[1]!r}"]
        return ", ".join(options)

    def default(self, field: Field) -> str:
        rename = [f"name={field.wire!r}"] if self.python_name(field) != field.wire else []
        if field.has_default:
            factory = f"default_factory={self.default_factory(field)}"
            return f" = msgspec.field({', '.join([factory, *rename])})"
        if not field.required:
            if rename:
                return f" = msgspec.field({', '.join(['default=UNSET', *rename])})"
            return " = UNSET"
        return f" = msgspec.field({rename[0]})" if rename else ""

    def encode(self, field: Field) -> str:
        return self.tables.encoder(field, f"self.{self.python_name(field)}")

    def error_check(self, model: Model, var: str) -> str:
        """A check that a struct msgspec read may be an error report after all (when
        both keys of the model's `error_when` are fields; otherwise msgspec refuses a
        report as an unknown key)."""
        rule = model.error_when
        fields = {f.wire: f for f in model.fields}
        if rule is None or rule.has not in fields or rule.lacks not in fields:
            return ""
        has = f"{var}.{self.python_name(fields[rule.has])}"
        present = f"{has} is not None" + (
            "" if fields[rule.has].required else f" and {has} is not UNSET"
        )
        return f"{present} and not {var}.{self.python_name(fields[rule.lacks])}"

    def extra_exports(self) -> list[str]:
        return ["UNSET"]
