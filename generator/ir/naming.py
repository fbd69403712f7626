"""Python names for wire keys, by the rules of the two kinds of class the targets make
(dataclass-like and pydantic).

A wire key stays the Python name whenever it is a valid, unreserved identifier in that
target (`id`, `type`, `object` stay as they are). Otherwise it is sanitised and given a
trailing underscore, and the target keeps the wire name as an alias. Two keys that end
up with the same Python name stop generation; nothing is numbered.
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Callable, Iterable

from .errors import SpecError
from .model import Model

# Names a generated class body evaluates or its annotations use: a field of the same name
# would shadow them inside the class (a field `field` would break `field(...)` defaults).
_CLASS_BODY_NAMES = frozenset(
    {"str", "int", "float", "bool", "list", "dict", "None", "classmethod", "field", "UNSET"}
    | {"Any", "Annotated", "Literal", "TypeAlias", "Final", "Field", "Discriminator"}
)
DATACLASS_RESERVED = _CLASS_BODY_NAMES | {"extra", "from_dict", "to_dict"}
# Public attributes of pydantic 2.x BaseModel (fixed here so output never depends on
# the installed pydantic); every `model_` name is reserved by pydantic as well.
PYDANTIC_RESERVED = _CLASS_BODY_NAMES | {
    "construct", "copy", "dict", "from_orm", "json", "parse_file", "parse_obj",
    "parse_raw", "schema", "schema_json", "update_forward_refs", "validate",
}  # fmt: skip


def snake(name: str) -> str:
    """A PascalCase type name in snake_case: `ChatCompletionChunk` -> `chat_completion_chunk`."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def python_name(wire: str, reserved: frozenset[str] | set[str]) -> str:
    """The identifier for `wire`: itself when allowed, otherwise sanitised plus `_`."""
    name = re.sub(r"\W", "_", wire, flags=re.ASCII)
    name = name.lstrip("_")  # leading underscores are private (and mangled) in a class body
    if not name:
        name = "field"
    if name[0].isdigit():
        name = "field_" + name
    # `model_` only matters to pydantic, but one rule for both targets keeps them alike.
    clash = keyword.iskeyword(name) or name in reserved or name.startswith("model_")
    if clash or (name != wire and not name.endswith("_")):
        name += "_"
    return name


def checked(
    models: Iterable[Model],
    type_names: frozenset[str],
    where: Callable[[str, str], tuple[str, int | None]],
) -> list[Model]:
    """The models, once no two keys of one of them get the same Python name under either
    rule; `where(model, wire)` locates a field for the error."""
    out = []
    for model in models:
        taken: dict[tuple[str, str], str] = {}
        for field in model.fields:
            for rule, reserved in (
                ("dataclasses", DATACLASS_RESERVED),
                ("pydantic", PYDANTIC_RESERVED),
            ):
                name = python_name(field.wire, reserved | type_names)
                other = taken.get((rule, name))
                if other is not None:
                    file, line = where(model.name, field.wire)
                    raise SpecError(
                        f"{model.name}: keys {other!r} and {field.wire!r} both become the Python"
                        f" name {name!r}; rename one on the wire side or drop it",
                        file,
                        line,
                    )
                taken[(rule, name)] = field.wire
        out.append(model)
    return out
