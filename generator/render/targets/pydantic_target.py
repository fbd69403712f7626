"""The pydantic v2 target: strict models pydantic-core validates from JSON, with
aliases for wire keys that are not Python names; needs pydantic."""

from __future__ import annotations

from functools import cached_property
from typing import ClassVar

from ...ir.model import (
    EnumRef,
    Field,
    Model,
    ModelRef,
    Scalar,
    TypeExpr,
    Union,
    json_kind,
    union_tags,
)
from ...ir.naming import PYDANTIC_RESERVED
from .base import NUMBER_SCALARS, Target

_JSON_KINDS = {"string": "string", "int": "integer", "bool": "boolean", "list": "array"}
_JSON_KINDS |= {"object": "object"}
# Int first. (Float first reads a little faster, since a float refused by the int
# member costs an error object, but pydantic writes an int as a float there when it
# serialises a union of models in its lax mode, which it does for every model whose
# unknown keys are typed, as `_Model`'s are: 1 % on loads, measured.) An `any` value is
# checked to hold only finite numbers, as a float field is by `allow_inf_nan`.
_SCALARS = {**NUMBER_SCALARS, "float": "int | float", "any": "Annotated[Any, _FINITE]"}
_NUMBERS = {"integer": 1, "number": 2}
"""The number kinds, in the order a first-match union tries them."""


class Pydantic(Target):
    name = "pydantic"
    runtime = ("errors", "models", "json_text")
    reserved = PYDANTIC_RESERVED
    exact_text = False
    extra_attribute = "__pydantic_extra__"
    string_writers = "_pydantic_string, _json_string"
    native_text = True
    unset = "None"  # an absent key reads as its default
    imports: ClassVar[dict[str, tuple[str, str]]] = {
        name: ("pydantic", name)
        for name in (
            "AfterValidator",
            "BaseModel",
            "ConfigDict",
            "Discriminator",
            "Field",
            "Tag",
            "TypeAdapter",
        )
    }
    dumps_doc = (
        "This is `model_dump_json(exclude_unset=True)`: the same JSON value as the other"
        " targets give, with some floats spelled the way pydantic spells them (`0.00001`"
        " for `1e-05`)."
    )

    def spelled(self, expr: TypeExpr) -> str:
        if isinstance(expr, Scalar):
            return _SCALARS[expr.kind]
        if isinstance(expr, EnumRef) and expr.open:
            return f"Annotated[{expr.name} | str, _OPEN_ENUM]"
        if not isinstance(expr, Union):
            return super().spelled(expr)
        options = " | ".join(self.spelled(option) for option in expr.options)
        if expr.discriminator is not None and (expr.other is not None or expr.absent):
            # An open union: a callable discriminator sends a value whose key names no
            # member to the other member (and one without the key to the `absent` one).
            tags = union_tags(self.spec)
            known = tuple(
                tags[o.name][1] for o in expr.options if isinstance(o, ModelRef) and o.name in tags
            )
            if expr.absent:
                absent = tags[expr.absent][1]
                is_open = expr.other is not None
                return (
                    f"Annotated[{self._labelled(expr)}, Discriminator(_open_tag("
                    f"{expr.discriminator!r}, {known!r}, absent={absent!r}, open={is_open}))]"
                )
            return (
                f"Annotated[{self._labelled(expr)},"
                f" Discriminator(_open_tag({expr.discriminator!r}, {known!r}))]"
            )
        if expr.discriminator is not None:
            return f"Annotated[{options}, Discriminator({expr.discriminator!r})]"
        # The alternatives take disjoint JSON kinds, so pydantic can pick one without
        # calling Python. Each is labelled with its kind, which names it in an error
        # ("expected object, integer, number, got string"). Numbers alone are a smart
        # union, float first (as _SCALARS). Beside other kinds, the union takes the first
        # alternative that accepts a value (_FIRST_MATCH): the others in spec order, the
        # first being the common one, then int before float, since a float alternative
        # accepts integers too.
        choices = self._kind_choices(expr)
        if all(kind in _NUMBERS for kind, _ in choices):
            return self._tagged(sorted(choices, key=lambda choice: choice[0] == "integer"))
        first_match = sorted(choices, key=lambda choice: _NUMBERS.get(choice[0], 0))
        return f"Annotated[{self._tagged(first_match)}, _FIRST_MATCH]"

    def _labelled(self, expr: Union) -> str:
        """The members of a union read by `_open_tag`, each labelled with its tag."""
        tags = union_tags(self.spec)
        return " | ".join(
            (
                f"Annotated[{self.spelled(o)}, Tag({tags[o.name][1]!r})]"
                if o.name in tags
                else f"Annotated[{self.spelled(o)}, Tag(_OTHER_MEMBER)]"
            )
            for o in expr.options
            if isinstance(o, ModelRef)
        )

    @staticmethod
    def _tagged(choices: list[tuple[str, str]]) -> str:
        return " | ".join(f'Annotated[{spelled}, Tag("~{kind}")]' for kind, spelled in choices)

    def _kind_choices(self, union: Union) -> list[tuple[str, str]]:
        """(JSON kind, annotation) of each alternative, in spec order; a float
        alternative takes integers too (as ints) unless an int alternative does."""
        has_int = Scalar("int") in union.options
        choices = []
        for option in union.options:
            if option == Scalar("float"):
                choices.append(("number", "float"))
                if not has_int:
                    choices.append(("integer", "int"))
            else:
                choices.append((_JSON_KINDS[json_kind(option)], self.spelled(option)))
        return choices

    def aliased(self, model: Model) -> list[str]:
        """The Python names of a model's fields whose wire key is another string, where an
        unknown key may equal the name (the strict profile has no unknown keys)."""
        if self.spec.options.strict:
            return []
        return [self.python_name(f) for f in model.fields if self.python_name(f) != f.wire]

    def declaration(self, field: Field) -> str:
        """The annotation and default of a field, as `annotation = default`.

        A key that may be absent defaults to None and is told apart from null by
        `model_fields_set`; where null itself is not allowed a validator rejects it. In
        the lenient profile a field whose Python name is not its wire key records that
        its wire key was read (`_ALIAS_READ`, for `model_post_init`).
        """
        base = self.spelled(field.type)
        aliased = self.python_name(field) != field.wire
        alias = f"alias={field.wire!r}" if aliased else ""
        if field.has_default:
            args = ", ".join(
                a for a in (f"default_factory={self.default_factory(field)}", alias) if a
            )
            text, default = f"Annotated[{base}, _NULL_AS_EMPTY]", f"Field({args})"
        elif field.required:
            text = f"{base} | None" if field.nullable else base
            default = f"Field({alias})" if alias else ""
        else:
            text = f"{base} | None" if field.nullable else f"Annotated[{base} | None, _NOT_NULL]"
            default = f"Field(default=None, {alias})" if alias else "None"
        if aliased and not self.spec.options.strict:
            text = f"Annotated[{text}, _ALIAS_READ]"
        return f"{text} = {default}" if default else text

    def error_value(self, model: Model) -> str:
        """Where a model holds the value of its `error_when` key."""
        assert model.error_when is not None
        for field in model.fields:
            if field.wire == model.error_when.has:
                return f"self.{self.python_name(field)}"
        return f"(self.__pydantic_extra__ or {{}}).get({model.error_when.has!r})"

    def defaulted(self, model: Model) -> list[str]:
        return [self.python_name(f) for f in model.fields if f.has_default]

    @cached_property
    def union_tags(self) -> tuple[tuple[str, str], ...]:
        """The (key, value) pairs that tell the members of discriminated unions apart."""
        return tuple(sorted(set(union_tags(self.spec).values())))

    @cached_property
    def any_aliased(self) -> bool:
        """Whether some field of the module is read by a wire key that is not its name."""
        return any(self.aliased(model) for model in self.spec.models)

    def _validated(self, model: str) -> str:
        """What validates a model: its class, or a union's type adapter."""
        return self.union_reader(model) if model in self.union_names else model

    def _report(self, model: str) -> str:
        if model in self.union_names:
            return ""
        rule = self.spec.model(model).error_when
        return f", report={(rule.has, rule.lacks)!r}" if rule else ""

    def reads_union(self, name: str) -> bool:
        # Models validate their fields themselves: only the root needs an adapter.
        return name == self.spec.root

    def union_reader_type(self, name: str) -> str:
        return f"TypeAdapter[{name}]"

    def union_reading(self, name: str) -> str:
        return f"TypeAdapter[{name}]({name})"

    def from_text(self, model: str, text: str) -> str:
        aliased = ", aliased=True" if self.any_aliased else ""
        validated = self._validated(model)
        return f"_validate({validated}, {text}, _UNION_TAGS{self._report(model)}{aliased})"

    def from_json(self, model: str, data: str) -> str:
        validated = self._validated(model)
        return f"_validate_value({validated}, {data}, _UNION_TAGS{self._report(model)})"

    def to_json(self, value: str) -> str:
        return f"{value}.model_dump(by_alias=True, exclude_unset=True)"

    def to_text(self, value: str) -> str:
        return f"_model_text({value})"

    def test_decoder(self, model: str) -> str:
        return f"lambda value: target.{model}.model_validate_json(json.dumps(value), by_name=False)"

    def test_encoded(self, value: str) -> str:
        dumped = f"{value}.model_dump(by_alias=True, exclude_unset=True)"
        return f"json.loads(json.dumps({dumped}))"
