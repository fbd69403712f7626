"""What the msgspec target lays out beyond the helpers the stdlib targets share: struct
options, the fields a struct declares (a discriminated union's tag is msgspec's, not a
field), field defaults and renames, and the check that sends a possible error report
to the key-by-key reading."""

from __future__ import annotations

from generator import spelling
from generator.ir import Field, Model, Spec


class MsgspecLayout:
    """What the msgspec target needs beyond the stdlib helpers: struct options, the
    fields a struct declares (a union's tag is msgspec's, not a field) and defaults."""

    def __init__(self, spec: Spec) -> None:
        self.spec = spec
        self.tags = spelling.msgspec_tags(spec)

    def tag_of(self, model: Model) -> dict[str, str]:
        key_value = self.tags.get(model.name)
        return dict([key_value]) if key_value else {}

    def fields(self, model: Model) -> list[Field]:
        return [f for f in model.fields if f.wire not in self.tag_of(model)]

    def tag_fields(self, model: Model) -> list[tuple[Field, str]]:
        """The fields msgspec holds as the struct's tag, with the tag value: each becomes a
        read-only property, so the API matches the other targets."""
        tags = self.tag_of(model)
        return [(f, tags[f.wire]) for f in model.fields if f.wire in tags]

    def bases(self, model: Model) -> str:
        # gc=False: the structs hold JSON data, which has no cycles; tracked, every chunk
        # read feeds the garbage collector (half the reading speed with many chunks alive).
        options = ["msgspec.Struct", "kw_only=True", "forbid_unknown_fields=True", "gc=False"]
        for key, value in self.tag_of(model).items():
            options += [f"tag_field={key!r}", f"tag={value!r}"]
        return ", ".join(options)

    @staticmethod
    def default(field: Field) -> str:
        name = field.names.dataclasses
        rename = [f"name={field.wire!r}"] if name != field.wire else []
        if field.has_default:
            factory = f"default_factory={spelling.default_factory(field, 'msgspec')}"
            return f" = msgspec.field({', '.join([factory, *rename])})"
        if not field.required:
            return (
                f" = msgspec.field({', '.join(['default=UNSET', *rename])})"
                if rename
                else " = UNSET"
            )
        return f" = msgspec.field({rename[0]})" if rename else ""

    @staticmethod
    def error_check(model: Model, var: str) -> str:
        """A check that a payload msgspec read may be an error report after all."""
        rule = model.error_when
        if rule is None:
            return ""
        fields = {f.wire: f for f in model.fields}
        if rule.has not in fields or rule.lacks not in fields:
            return ""
        has = f"{var}.{fields[rule.has].names.dataclasses}"
        present = f"{has} is not None" + (
            "" if fields[rule.has].required else f" and {has} is not UNSET"
        )
        return f"{present} and not {var}.{fields[rule.lacks].names.dataclasses}"
