"""spec/messages_stream_event.yaml against anthropic-sdk-python's own types, by
introspection: every pydantic model reachable from `RawMessageStreamEvent`, `Message` and
`ErrorResponse` (the `error` event) has a spec type with the same wire keys, the same
required/optional and nullable split, compatible types, the same union members (ours
plus the `Other…` member that keeps unknown types whole) and the same enum values (ours
may add a value only where the YAML says why in a comment on it). The mapping is total
both ways: an SDK model without a spec type fails, and so does a spec type no SDK model
maps to, unless listed below with the reason. A mismatch names the type and the key.

The SDK is the installed one (requirements.lock pins it); when an upgrade adds a field,
a block type or an enum value, this test says where the spec must follow."""

from __future__ import annotations

import datetime
import re
import types
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, Optional, Union, get_args, get_origin

import pydantic
import pytest
from anthropic.types import (
    Message,
    MessageDeltaUsage,
    RawContentBlockStartEvent,
    RawMessageStreamEvent,
    TextBlock,
    ThinkingBlock,
    Usage,
)
from anthropic.types.raw_message_delta_event import Delta
from anthropic.types.shared.error_response import ErrorResponse

from generator.ir.load import RawCore, RawEnum, RawField, RawType, load_spec
from generator.ir.model import EnumRef, ListOf, MapOf, ModelRef, Scalar, TypeExpr
from generator.ir.model import Union as SpecUnion
from generator.ir.typeexpr import parse_type
from tests.test_generator import REPO

# The SDK's names where ours differ: the events lose the SDK's `Raw` prefix, the message
# delta's inner object gets a name of its own, `error` events are its ErrorResponse.
RENAMED = {
    "RawMessageStartEvent": "MessageStartEvent",
    "RawMessageDeltaEvent": "MessageDeltaEvent",
    "RawMessageStopEvent": "MessageStopEvent",
    "RawContentBlockStartEvent": "ContentBlockStartEvent",
    "RawContentBlockDeltaEvent": "ContentBlockDeltaEvent",
    "RawContentBlockStopEvent": "ContentBlockStopEvent",
    "Delta": "MessageDelta",
    "InputJSONDelta": "InputJsonDelta",
    "ErrorResponse": "ErrorEvent",
}

# An SDK union read by one spec type, with why (the spec file says more).
COLLAPSED = {
    "ErrorObject": "nine SDK types that differ only in `type`: one type with an open enum,"
    " so that an error object without `type` still reads as the server's error",
}

# Members our unions have beyond the SDK's, with why.
EXTRA_MEMBERS = {
    ("MessageStreamEvent", "PingEvent"): "the SDK's stream skips `ping` before typing events",
    ("MessageStreamEvent", "ErrorEvent"): "the SDK's stream raises on `error` (ErrorResponse)",
}

# The SDK's roots, with the spec type each is.
ROOTS: tuple[tuple[Any, str], ...] = (
    (RawMessageStreamEvent, "MessageStreamEvent"),
    (Message, "Message"),
    (ErrorResponse, "ErrorEvent"),
)

SPEC_FILE = "spec/messages_stream_event.yaml"


def messages_core() -> RawCore:
    return next(core for core in load_spec(REPO).families if core.family == "messages")


CORE = messages_core()
TYPES: dict[str, RawType] = {t.name: t for t in CORE.types}
ENUMS: dict[str, RawEnum] = {e.name: e for e in CORE.enums}
UNIONS = {u.name: u for u in CORE.unions}
LINES = (REPO / SPEC_FILE).read_text(encoding="utf-8").splitlines()


def resolve(name: str) -> TypeExpr:
    if name in UNIONS:
        union = UNIONS[name]
        members = tuple(ModelRef(m) for m in union.members)
        return SpecUnion(members, union.discriminator, name=name)
    if name in TYPES:
        return ModelRef(name)
    if name in ENUMS:
        return EnumRef(name, ENUMS[name].open)
    raise KeyError(name)


def spec_type(text: str) -> TypeExpr:
    return parse_type(text, resolve)


def is_other(name: str) -> bool:
    """A union's catch-all member: its `type` is any string."""
    tag = next((f for f in TYPES[name].fields if f.wire == "type"), None)
    return tag is not None and tag.required and tag.type.strip() == "string"


def spec_name(model: type[pydantic.BaseModel]) -> str:
    return RENAMED.get(model.__name__, model.__name__)


# --- the SDK's annotations, normalised ----------------------------------------------


@dataclass(frozen=True)
class Sdk:
    """An SDK annotation as the wire sees it."""

    kind: str
    """str, int, float, bool, any, literal, open_literal (`Literal[...] | str`), list,
    map, model or union."""
    values: tuple[str, ...] = ()
    item: Sdk | None = None
    model: type[pydantic.BaseModel] | None = None
    options: tuple[Sdk, ...] = ()
    alias: str | None = None
    """The SDK's name for a union (its type alias), when it has one."""


def normalise(annotation: Any) -> tuple[Sdk, bool]:
    """The annotation without `None`, and whether `None` was one of its alternatives."""
    if get_origin(annotation) is Annotated:
        return normalise(get_args(annotation)[0])
    if get_origin(annotation) in (Union, types.UnionType):
        args = get_args(annotation)
        nullable = type(None) in args
        rest = [a for a in args if a is not type(None)]
        if len(rest) == 1:
            return normalise(rest[0])[0], nullable
        options = tuple(normalise(a)[0] for a in rest)
        literals = [o for o in options if o.kind == "literal"]
        if {o.kind for o in options} == {"literal", "str"}:
            values = tuple(v for o in literals for v in o.values)
            return Sdk("open_literal", values), nullable
        return Sdk("union", options=options), nullable
    if get_origin(annotation) is Literal:
        return Sdk("literal", tuple(str(v) for v in get_args(annotation))), False
    if get_origin(annotation) is list:
        return Sdk("list", item=normalise(get_args(annotation)[0])[0]), False
    if get_origin(annotation) is dict:
        return Sdk("map", item=normalise(get_args(annotation)[1])[0]), False
    if isinstance(annotation, type) and issubclass(annotation, pydantic.BaseModel):
        return Sdk("model", model=annotation), False
    scalars: dict[Any, str] = {
        str: "str",
        int: "int",
        float: "float",
        bool: "bool",
        object: "any",
        Any: "any",
        # pydantic reads and writes a datetime as ISO 8601 text.
        datetime.datetime: "str",
    }
    if annotation in scalars:
        return Sdk(scalars[annotation]), False
    raise TypeError(f"an SDK annotation this test does not know: {annotation!r}")


def reachable(roots: Iterable[Any]) -> dict[type[pydantic.BaseModel], None]:
    """Every SDK model the roots reach through fields, in order."""
    seen: dict[type[pydantic.BaseModel], None] = {}

    def walk(sdk: Sdk) -> None:
        if sdk.item is not None:
            walk(sdk.item)
        for option in sdk.options:
            walk(option)
        if sdk.model is not None and sdk.model not in seen:
            seen[sdk.model] = None
            for info in sdk.model.model_fields.values():
                walk(normalise(info.annotation)[0])

    for root in roots:
        walk(normalise(root)[0])
    return seen


# --- the comparison ------------------------------------------------------------------


@dataclass
class Comparison:
    """The SDK's models compared with the spec's types, from some roots."""

    problems: list[str] = field(default_factory=list)
    visited: dict[type[pydantic.BaseModel], str] = field(default_factory=dict)
    """Each SDK model compared, with the spec type it was compared with."""
    enum_values: dict[str, set[str]] = field(default_factory=dict)
    """Each spec enum met, with the SDK values it stands for."""
    unions: set[str] = field(default_factory=set)
    """The spec unions met."""

    def run(self, roots: Iterable[tuple[Any, str]]) -> Comparison:
        queue: list[tuple[type[pydantic.BaseModel], str]] = []
        for annotation, name in roots:
            sdk, _ = normalise(annotation)
            if sdk.kind == "model":
                assert sdk.model is not None
                queue.append((sdk.model, name))
            else:
                queue += self.types(sdk, spec_type(name), f"root {name}")
        while queue:
            model, name = queue.pop(0)
            if model in self.visited:
                continue
            self.visited[model] = name
            queue += self.model(model, name)
        self.check_enums()
        return self

    def model(
        self, model: type[pydantic.BaseModel], name: str
    ) -> list[tuple[type[pydantic.BaseModel], str]]:
        if name not in TYPES:
            self.problems.append(f"{name}: no such spec type (the SDK's {model.__name__})")
            return []
        ours = {f.wire: f for f in TYPES[name].fields}
        theirs = {(info.alias or key): info for key, info in model.model_fields.items()}
        for key in sorted(theirs.keys() - ours.keys()):
            self.problems.append(f"{name}.{key}: in the SDK's {model.__name__}, not in the spec")
        for key in sorted(ours.keys() - theirs.keys()):
            self.problems.append(f"{name}.{key}: in the spec, not in the SDK's {model.__name__}")
        nested: list[tuple[type[pydantic.BaseModel], str]] = []
        for key in sorted(ours.keys() & theirs.keys()):
            nested += self.field(name, ours[key], theirs[key])
        return nested

    def field(
        self, name: str, ours: RawField, info: Any
    ) -> list[tuple[type[pydantic.BaseModel], str]]:
        where = f"{name}.{ours.wire}"
        sdk, nullable = normalise(info.annotation)
        required = bool(info.is_required())
        if ours.required != required:
            self.problems.append(
                f"{where}: required is {ours.required} in the spec, {required} in the SDK"
            )
        if ours.nullable != nullable:
            self.problems.append(
                f"{where}: nullable is {ours.nullable} in the spec, {nullable} in the SDK"
            )
        return self.types(sdk, spec_type(ours.type), where)

    def types(
        self, sdk: Sdk, ours: TypeExpr, where: str
    ) -> list[tuple[type[pydantic.BaseModel], str]]:
        """Compare one type; the SDK models to compare next, with their spec types."""
        kind = sdk.kind
        if kind in ("str", "int", "float", "bool", "any"):
            wanted = "string" if kind == "str" else kind
            if ours != Scalar(wanted):  # type: ignore[arg-type]
                self.problems.append(f"{where}: the SDK's {kind} is {show(ours)} in the spec")
            return []
        if kind == "literal":
            return self.enum(sdk, ours, where, closed_ok=True)
        if kind == "open_literal":
            if ours == Scalar("string"):
                return []
            return self.enum(sdk, ours, where, closed_ok=False)
        if kind in ("list", "map"):
            shape = ListOf if kind == "list" else MapOf
            if not isinstance(ours, shape):
                self.problems.append(f"{where}: the SDK's {kind} is {show(ours)} in the spec")
                return []
            assert sdk.item is not None
            inner = ours.item if isinstance(ours, ListOf) else ours.value
            return self.types(sdk.item, inner, f"{where}[]")
        if kind == "model":
            assert sdk.model is not None
            expected = spec_name(sdk.model)
            if ours != ModelRef(expected):
                self.problems.append(
                    f"{where}: the SDK's {sdk.model.__name__} is {show(ours)} in the spec,"
                    f" not {expected}"
                )
                return []
            return [(sdk.model, expected)]
        assert kind == "union"
        if all(o.kind == "model" for o in sdk.options):
            return self.union(sdk, ours, where)
        return self.mixed(sdk, ours, where)

    def enum(
        self, sdk: Sdk, ours: TypeExpr, where: str, *, closed_ok: bool
    ) -> list[tuple[type[pydantic.BaseModel], str]]:
        if not isinstance(ours, EnumRef):
            self.problems.append(
                f"{where}: the SDK's Literal{list(sdk.values)} is {show(ours)} in the spec"
            )
            return []
        if not closed_ok and not ours.open:
            self.problems.append(f"{where}: the SDK takes any string; {ours.name} is closed")
        self.enum_values.setdefault(ours.name, set()).update(sdk.values)
        missing = [v for v in sdk.values if v not in dict(ENUMS[ours.name].values)]
        if missing:
            self.problems.append(f"{where}: enum {ours.name} lacks the SDK's values {missing}")
        return []

    def union(
        self, sdk: Sdk, ours: TypeExpr, where: str
    ) -> list[tuple[type[pydantic.BaseModel], str]]:
        models = [o.model for o in sdk.options if o.model is not None]
        if isinstance(ours, ModelRef) and ours.name in COLLAPSED:
            return [(m, ours.name) for m in models]
        if not isinstance(ours, SpecUnion) or ours.name is None:
            names = ", ".join(m.__name__ for m in models)
            self.problems.append(
                f"{where}: the SDK's union of {names} is {show(ours)} in the spec,"
                " not a named union"
            )
            return []
        self.unions.add(ours.name)
        members = [o.name for o in ours.options if isinstance(o, ModelRef)]
        others = [m for m in members if is_other(m)]
        if len(others) != 1:
            self.problems.append(
                f"{where}: union {ours.name} needs exactly one Other member (a `type` of any"
                f" string) to keep unknown types whole; it has {others}"
            )
        expected = {spec_name(m) for m in models}
        extra = {m for m in members if m not in others} - expected
        for member in sorted(extra):
            if (ours.name, member) not in EXTRA_MEMBERS:
                self.problems.append(
                    f"{where}: union {ours.name} has {member}, which the SDK's union lacks"
                )
        for member in sorted(expected - set(members)):
            self.problems.append(
                f"{where}: union {ours.name} lacks {member}, a member of the SDK's union"
            )
        return [(m, spec_name(m)) for m in models if spec_name(m) in members]

    def mixed(
        self, sdk: Sdk, ours: TypeExpr, where: str
    ) -> list[tuple[type[pydantic.BaseModel], str]]:
        """A union of JSON kinds (an object or a list), alternative by alternative."""
        options = ours.options if isinstance(ours, SpecUnion) else (ours,)
        if len(options) != len(sdk.options):
            self.problems.append(
                f"{where}: the SDK's union has {len(sdk.options)} alternatives,"
                f" the spec's {show(ours)} {len(options)}"
            )
            return []
        nested: list[tuple[type[pydantic.BaseModel], str]] = []
        for theirs in sdk.options:
            kind = "list" if theirs.kind == "list" else "object"
            match = [o for o in options if (isinstance(o, ListOf)) == (kind == "list")]
            if len(match) != 1:
                self.problems.append(f"{where}: no one {kind} alternative in {show(ours)}")
                continue
            nested += self.types(theirs, match[0], where)
        return nested

    def check_enums(self) -> None:
        """An enum value the SDK lacks needs a comment on its line (or the line above)."""
        for name, sdk_values in sorted(self.enum_values.items()):
            for value, _ in ENUMS[name].values:
                if value not in sdk_values and not commented(ENUMS[name], value):
                    self.problems.append(
                        f"enum {name}: value {value!r} is not the SDK's; say why in a"
                        " comment on its line"
                    )


def show(expr: TypeExpr) -> str:
    if isinstance(expr, Scalar):
        return expr.kind
    if isinstance(expr, (ModelRef, EnumRef)):
        return expr.name
    if isinstance(expr, ListOf):
        return f"list[{show(expr.item)}]"
    if isinstance(expr, MapOf):
        return f"map[{show(expr.value)}]"
    return expr.name or " | ".join(show(o) for o in expr.options)


def commented(enum: RawEnum, value: str) -> bool:
    """Whether the value's line in the spec file, or the line above it, has a comment."""
    start = (enum.where.line or 1) - 1
    indent = len(LINES[start]) - len(LINES[start].lstrip())
    pattern = re.compile(rf"""^\s+["']?{re.escape(value)}["']?\s*:""")
    for number in range(start + 1, len(LINES)):
        line = LINES[number]
        if line.strip() and len(line) - len(line.lstrip()) <= indent:
            return False
        if pattern.match(line):
            return "#" in line.split(":", 1)[1] or LINES[number - 1].strip().startswith("#")
    return False


COMPARISON = Comparison().run(ROOTS)


# --- the tests ------------------------------------------------------------------------


def test_every_sdk_model_matches_its_spec_type() -> None:
    assert not COMPARISON.problems, "\n".join(COMPARISON.problems)


def test_every_sdk_model_reachable_has_a_spec_type() -> None:
    """The mapping is total: no SDK model the roots reach is left out of the comparison."""
    missing = [
        f"{model.__module__}.{model.__name__}"
        for model in reachable(annotation for annotation, _ in ROOTS)
        if model not in COMPARISON.visited
    ]
    assert not missing, f"SDK models the spec has no type for: {missing}"
    assert len(COMPARISON.visited) >= 70


def test_every_spec_type_stands_for_an_sdk_model_or_keeps_unknowns() -> None:
    """And the other way: a spec type is an SDK model, an `Other…` member, or listed."""
    compared = set(COMPARISON.visited.values())
    extra = {member for _, member in EXTRA_MEMBERS}
    left = [
        name for name in TYPES if name not in compared and name not in extra and not is_other(name)
    ]
    assert not left, f"spec types no SDK model maps to: {left}"
    assert set(UNIONS) == COMPARISON.unions, "every named union is one of the SDK's"


def test_every_union_is_open() -> None:
    for union in UNIONS.values():
        others = [m for m in union.members if is_other(m)]
        assert len(others) == 1 and others[0].startswith("Other"), union.name


# --- the comparison fails where the SDK grows -----------------------------------------


class UsageWithANewCount(Usage):
    """What an SDK release that adds a count to Usage would declare."""

    brand_new_tokens: Optional[int] = None  # noqa: UP045 (the SDK's own spelling)


class ThinkingBlockWithoutSignature(ThinkingBlock):
    signature: Optional[str] = None  # type: ignore[assignment]  # noqa: UP045


class HologramBlock(pydantic.BaseModel):
    frames: list[int]
    type: Literal["hologram"]


class StartOfANewBlock(RawContentBlockStartEvent):
    content_block: Annotated[  # type: ignore[assignment]
        Union[TextBlock, HologramBlock],  # noqa: UP007
        pydantic.Discriminator("type"),
    ]


class DeltaWithANewStopReason(Delta):
    stop_reason: Optional[Literal["end_turn", "daydreaming"]] = None  # type: ignore[assignment]  # noqa: UP045


class UsageWithAnInputCountAsText(MessageDeltaUsage):
    input_tokens: Optional[str] = None  # type: ignore[assignment]  # noqa: UP045


@pytest.mark.parametrize(
    ("model", "spec", "expected"),
    [
        (UsageWithANewCount, "Usage", "Usage.brand_new_tokens: in the SDK's"),
        (ThinkingBlockWithoutSignature, "ThinkingBlock", "ThinkingBlock.signature: required"),
        (StartOfANewBlock, "ContentBlockStartEvent", "union ContentBlock lacks HologramBlock"),
        (DeltaWithANewStopReason, "MessageDelta", "enum StopReason lacks the SDK's values"),
        (UsageWithAnInputCountAsText, "MessageDeltaUsage", "the SDK's str is int"),
    ],
)
def test_a_change_in_the_sdk_fails_naming_the_type_and_key(
    model: type[pydantic.BaseModel], spec: str, expected: str
) -> None:
    problems = Comparison().run([(model, spec)]).problems
    assert any(expected in problem for problem in problems), problems


def test_a_new_sdk_model_is_caught_by_the_totality_check() -> None:
    """HologramBlock has no spec type: the comparison never reaches it."""
    comparison = Comparison().run([(StartOfANewBlock, "ContentBlockStartEvent")])
    assert HologramBlock in reachable([StartOfANewBlock])
    assert HologramBlock not in comparison.visited


def test_an_enum_value_the_sdk_lacks_needs_a_comment() -> None:
    comparison = Comparison()
    comparison.enum_values["StopReason"] = {"end_turn"}
    comparison.check_enums()
    assert any("value 'max_tokens' is not the SDK's" in p for p in comparison.problems)
