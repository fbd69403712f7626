"""The TypedDicts target: the JSON data itself, checked by a field table and typed as
TypedDicts; needs `typing_extensions` (whose TypedDict pydantic can validate before
Python 3.12)."""

from __future__ import annotations

import keyword
from typing import ClassVar

from ...ir.model import Field, Model
from ...ir.naming import snake
from .base import Target


class TypedDicts(Target):
    name = "typeddicts"
    render_cost = 2
    runtime = ("errors", "unset", "values", "objects", "typed_dicts", "json_text")
    reserved = frozenset()
    typed = False
    imports: ClassVar[dict[str, tuple[str, str]]] = {
        "TypedDict": ("typing_extensions", "TypedDict"),
    }

    def python_name(self, field: Field) -> str:
        return field.wire  # a TypedDict's keys are the wire keys

    def model_reader(self, name: str) -> str:
        return self.validator(name)

    @staticmethod
    def validator(name: str) -> str:
        return f"validate_{snake(name)}"

    def annotation(self, field: Field) -> str:
        text = self.spelled(field.type) + (" | None" if field.nullable else "")
        return f"Required[{text}]" if field.required else text

    @staticmethod
    def functional(model: Model) -> bool:
        """Class syntax cannot hold keys that are not identifiers (or would be mangled)."""
        return any(
            not f.wire.isidentifier() or keyword.iskeyword(f.wire) or f.wire.startswith("__")
            for f in model.fields
        )

    def from_json(self, model: str, data: str) -> str:
        if model in self.union_names:
            return super().from_json(model, data)
        return f"{self.validator(model)}({data})"

    def to_json(self, value: str) -> str:
        return value

    def instance_class(self, model: str) -> str:
        return "dict"  # a TypedDict is no class at run time: its objects are dicts

    def test_decoder(self, model: str) -> str:
        return f"target.{self.validator(model)}"

    def test_encoded(self, value: str) -> str:
        return value

    def extra_exports(self) -> list[str]:
        return [self.validator(m.name) for m in self.spec.models]
