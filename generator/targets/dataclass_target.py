"""The standard-library dataclasses target: slotted dataclasses read by a field table
with `from_dict` and written with `to_dict`; Python >= 3.11 only."""

from __future__ import annotations

from functools import cached_property
from typing import ClassVar

from ..ir import Field
from ..naming import DATACLASS_RESERVED
from .base import Target
from .tables import Tables


class Dataclasses(Target):
    name = "dataclasses"
    runtime = (
        "errors",
        "unset",
        "values",
        "objects",
        "extra",
        "dataclass_base",
        "sharing",
        "json_text",
    )
    reserved = DATACLASS_RESERVED
    # A per-stream value is compared with the last one read; a vocabulary value (a
    # token) comes from the module's bounded table.
    shares = ("stream", "vocabulary")
    imports: ClassVar[dict[str, tuple[str, str]]] = {
        "dataclass": ("dataclasses", "dataclass"),
        "field": ("dataclasses", "field"),
    }

    @cached_property
    def tables(self) -> Tables:
        return Tables(self.spec, lambda name: f"{name}.from_dict", self.python_name)

    def default(self, field: Field) -> str:
        if field.has_default:
            return f" = field(default_factory={self.default_factory(field)})"
        return "" if field.required else " = UNSET"

    def encode(self, field: Field) -> str:
        return self.tables.encoder(field, f"self.{self.python_name(field)}")

    def extra_exports(self) -> list[str]:
        return ["UNSET"]
