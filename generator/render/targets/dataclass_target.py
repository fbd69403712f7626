"""The standard-library dataclasses target: dataclasses read by a field table
with `from_dict` and written with `to_dict`; Python >= 3.11 only."""

from __future__ import annotations

from typing import ClassVar

from ...ir.model import Field, Model
from ...ir.naming import DATACLASS_RESERVED
from .base import Target

_SLOTTED_AT_MOST = 12
"""The most fields a slotted class declares (see `Dataclasses.wide`)."""


class Dataclasses(Target):
    name = "dataclasses"
    render_cost = 3
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

    def wide(self, model: Model) -> bool:
        """Whether a class holds only the keys an object has (`_WideObject`), rather
        than a slot for every field (`_Object`).

        A dict costs about 200 bytes more than a few slots, and saves storing, and
        checking on every write, every declared field: a trade only the classes that
        every vendor widens win (the chunk declares 31 fields, a choice 14, a delta 20;
        openai-python's narrow types 2 to 6)."""
        return len(model.fields) > _SLOTTED_AT_MOST

    def share_hook(self, model: Model) -> str:
        """A wide class shares in `_share`, which only `_made` calls: objects read from a
        stream share their values, and a chunk a server builds to write (and drop) does
        not pay for it in `__init__`."""
        return "_share" if self.wide(model) else "__post_init__"

    def decorator(self, model: Model) -> str:
        return (
            "@_sparse\n@dataclass(kw_only=True)"
            if self.wide(model)
            else "@dataclass(slots=True, kw_only=True)"
        )

    def base(self, model: Model) -> str:
        return "_WideObject" if self.wide(model) else "_Object"

    def default(self, field: Field) -> str:
        if field.has_default:
            return f" = field(default_factory={self.default_factory(field)})"
        return "" if field.required else " = UNSET"

    def encode(self, field: Field) -> str:
        return self.tables.encoder(field, f"self.{self.python_name(field)}")

    def writers(self, model: Model) -> dict[str, str]:
        """A wide class's `_writers`: the runtime function that writes each field whose
        value holds objects, by Python name (a slotted class spells them in its
        `to_dict`)."""
        return {
            self.python_name(f): writer
            for f in model.fields
            if (writer := self.tables.writer(f)) is not None
        }

    def extra_exports(self) -> list[str]:
        return ["UNSET"]
