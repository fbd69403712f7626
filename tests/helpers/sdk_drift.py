"""A family's spec file against an SDK's pydantic models, by introspection: the comparison
that tests/runtime/messages/test_spec.py (anthropic-sdk-python) and
tests/runtime/responses/test_spec.py (openai-python) run, each with its own list of the
departures it allows. The SDKs declare their request params as TypedDicts: those are
compared the same way (tests/runtime/requests/test_messages.py), their keys and required
keys read by `sdk_fields`.

Every pydantic model reachable from the SDK's roots is compared with the spec type it
maps to: the same wire keys, the same required/optional and nullable split, compatible
types, the same union members (ours plus the `Other…` member that keeps unknown types
whole) and the same enum values (ours may add a value only where the YAML says why in a
comment on it). Each departure the spec makes on purpose is listed in the family's
`Allowed`, with why; a listed departure the spec no longer makes is reported too, so the
lists stay true. A mismatch names the type and the key."""

from __future__ import annotations

import datetime
import os
import re
import types
import typing
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import (
    Annotated,
    Any,
    Literal,
    NamedTuple,
    NotRequired,
    Required,
    Union,
    get_args,
    get_origin,
)

import pydantic
from typing_extensions import get_type_hints, is_typeddict

from generator.ir.load import RawEnum, RawField, RawType, RawUnion, load_spec
from generator.ir.model import EnumRef, ListOf, MapOf, ModelRef, Scalar, TypeExpr
from generator.ir.model import Union as SpecUnion
from generator.ir.typeexpr import parse_type
from tests.helpers.project import REPO

Key = tuple[str, str]
"""(spec type, wire key), or (spec union, member)."""


@dataclass(frozen=True)
class Allowed:
    """The departures from the SDK a family's spec makes on purpose, each with why."""

    renamed: Mapping[str, str] = field(default_factory=dict[str, str])
    """SDK model -> spec type, where the names differ. The SDK model is named by its
    class name, or by `module.Class` (the module's last part) where two share a name."""
    param_suffix: str = ""
    """A suffix of the SDK's TypedDict params that the spec's names drop, unless `renamed`
    names them otherwise (openai-python's `FunctionToolParam` is the spec's
    `FunctionTool`); empty where the spec keeps the SDK's names (anthropic-sdk-python's)."""
    collapsed: Mapping[str, str] = field(default_factory=dict[str, str])
    """A spec type that reads an SDK union whole, with why."""
    extra_members: Mapping[Key, str] = field(default_factory=dict[Key, str])
    """Members our unions have beyond the SDK's."""
    extra_keys: Mapping[Key, str] = field(default_factory=dict[Key, str])
    """Keys of a spec type that its SDK model lacks."""
    looser: Mapping[Key, str] = field(default_factory=dict[Key, str])
    """Keys the spec reads as optional or nullable where the SDK requires them or
    refuses null."""
    tighter: Mapping[Key, str] = field(default_factory=dict[Key, str])
    """Keys the spec requires (or refuses null for) where the SDK's TypedDict does not."""
    kept_as_json: Mapping[Key, str] = field(default_factory=dict[Key, str])
    """Keys whose SDK type (a model, a union of models) the spec keeps as a plain JSON
    value (its type mentions `any`); the SDK models under them are not compared."""
    extra_types: Mapping[str, str] = field(default_factory=dict[str, str])
    """Spec types no SDK model maps to (besides the `Other…` members and the extra
    members)."""
    other_members: Mapping[Key, str] = field(default_factory=dict[Key, str])
    """(spec union, SDK member's spec name, as `renamed` and `param_suffix` make it) ->
    why the union's `Other…` member reads that member of the SDK's union whole rather
    than a member of its own; its models are not compared (`Comparison.kept_whole`)."""
    flattened: Mapping[str, str] = field(default_factory=dict[str, str])
    """A spec type that reads every member of an SDK union, with why: it is compared
    with the member of its own name, and the others are kept whole (their own keys
    among its unknown keys; `Comparison.kept_whole`)."""
    merged: Mapping[str, str] = field(default_factory=dict[str, str])
    """SDK models (named as in `renamed`) that share a tag value with another, read as
    that one's spec type: only their keys are compared (each must be a key of the spec
    type), with why."""


class Family:
    """One family's spec file, as loaded, with what it allows."""

    def __init__(self, name: str, file: str, allowed: Allowed) -> None:
        core = next(c for c in load_spec(REPO).families if c.family == name)
        self.file = file
        self.allowed = allowed
        self.types: dict[str, RawType] = {t.name: t for t in core.types}
        self.enums: dict[str, RawEnum] = {e.name: e for e in core.enums}
        self.unions: dict[str, RawUnion] = {u.name: u for u in core.unions}
        self.lines = (REPO / file).read_text(encoding="utf-8").splitlines()

    def resolve(self, name: str) -> TypeExpr:
        if name in self.unions:
            union = self.unions[name]
            members = tuple(ModelRef(m) for m in union.members)
            return SpecUnion(members, union.discriminator, name=name)
        if name in self.types:
            return ModelRef(name)
        if name in self.enums:
            return EnumRef(name, self.enums[name].open)
        raise KeyError(name)

    def spec_type(self, text: str) -> TypeExpr:
        return parse_type(text, self.resolve)

    def is_other(self, name: str) -> bool:
        """A union's catch-all member: its `type` is any string."""
        tag = next((f for f in self.types[name].fields if f.wire == "type"), None)
        return tag is not None and tag.required and tag.type.strip() == "string"

    def spec_name(self, model: type[Any]) -> str:
        qualified = f"{model.__module__.rsplit('.', 1)[-1]}.{model.__name__}"
        renamed = self.allowed.renamed
        plain = model.__name__
        suffix = self.allowed.param_suffix
        if suffix and is_typeddict(model) and plain.endswith(suffix):
            plain = plain.removesuffix(suffix)
        return renamed.get(qualified, renamed.get(model.__name__, plain))

    def merged(self, model: type[Any]) -> str | None:
        """How `allowed.merged` names the model, if it lists it."""
        qualified = f"{model.__module__.rsplit('.', 1)[-1]}.{model.__name__}"
        for name in (qualified, model.__name__):
            if name in self.allowed.merged:
                return name
        return None

    def commented(self, enum: RawEnum, value: str) -> bool:
        """Whether the value's line in the spec file, or the line above it, has a comment."""
        lines = self.lines
        start = (enum.where.line or 1) - 1
        indent = len(lines[start]) - len(lines[start].lstrip())
        pattern = re.compile(rf"""^\s+["']?{re.escape(value)}["']?\s*:""")
        for number in range(start + 1, len(lines)):
            line = lines[number]
            if line.strip() and len(line) - len(line.lstrip()) <= indent:
                return False
            if pattern.match(line):
                return "#" in line.split(":", 1)[1] or lines[number - 1].strip().startswith("#")
        return False


# --- the SDK's annotations, normalised ----------------------------------------------


@dataclass(frozen=True)
class Sdk:
    """An SDK annotation as the wire sees it."""

    kind: str
    """str, int, float, bool, any, literal, open_literal (`Literal[...] | str`), list,
    map, model or union."""
    values: tuple[str, ...] = ()
    item: Sdk | None = None
    model: type[Any] | None = None
    """A pydantic model, or a TypedDict (the SDK's request params)."""
    options: tuple[Sdk, ...] = ()


def _file(annotation: Any) -> bool:
    """A file the SDK reads and sends as base64 text (an image's or a PDF's `data`)."""
    return annotation is os.PathLike or get_origin(annotation) is typing.IO


_LISTS = ("list", "Iterable", "Sequence", "SequenceNotStr")
"""The origins, by name, of the SDKs' list annotations (openai-python's `SequenceNotStr`
is a Protocol of its own)."""


class SdkKey(NamedTuple):
    """One key of an SDK model, a pydantic field or a TypedDict key alike."""

    annotation: Any
    required: bool


def sdk_fields(model: type[Any]) -> dict[str, SdkKey]:
    """Wire key -> (annotation, required) of a pydantic model (its fields, by alias) or a
    TypedDict (the SDKs' request params). A TypedDict's key is required when it says
    `Required[...]`, or when its class is total and the key does not say
    `NotRequired[...]`."""
    if is_typeddict(model):
        # Not `__required_keys__`: under `from __future__ import annotations` (as
        # openai-python's modules are) a TypedDict cannot see `Required[...]` in a string.
        out: dict[str, SdkKey] = {}
        total = bool(model.__total__)
        for key, hint in get_type_hints(model, include_extras=True).items():
            marker: Any = get_origin(hint)
            required = marker is Required or (total and marker is not NotRequired)
            out[key] = SdkKey(
                get_args(hint)[0] if marker in (Required, NotRequired) else hint, required
            )
        return out
    fields: dict[str, pydantic.fields.FieldInfo] = model.model_fields
    return {
        (info.alias or key): SdkKey(info.annotation, info.is_required())
        for key, info in fields.items()
    }


def normalise(annotation: Any) -> tuple[Sdk, bool]:
    """The annotation without `None`, and whether `None` was one of its alternatives."""
    if get_origin(annotation) in (Annotated, Required, NotRequired):
        return normalise(get_args(annotation)[0])
    if get_origin(annotation) in (Union, types.UnionType):
        args = get_args(annotation)
        nullable = type(None) in args
        rest = [a for a in args if a is not type(None) and not _file(a)]
        if len(rest) == 1:
            return normalise(rest[0])[0], nullable
        options = tuple(normalise(a)[0] for a in rest)
        # A union inside a union (an Annotated one the SDK names) is one union.
        options = tuple(o for option in options for o in (option.options or (option,)))
        literals = [o for o in options if o.kind == "literal"]
        if {o.kind for o in options} == {"literal", "str"}:
            values = tuple(v for o in literals for v in o.values)
            return Sdk("open_literal", values), nullable
        return Sdk("union", options=options), nullable
    if get_origin(annotation) is Literal:
        return Sdk("literal", tuple(str(v) for v in get_args(annotation))), False
    if getattr(get_origin(annotation), "__name__", None) in _LISTS:
        return Sdk("list", item=normalise(get_args(annotation)[0])[0]), False
    if get_origin(annotation) is dict:
        return Sdk("map", item=normalise(get_args(annotation)[1])[0]), False
    if is_typeddict(annotation):
        return Sdk("model", model=annotation), False
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


def reachable(roots: Iterable[Any]) -> dict[type[Any], None]:
    """Every SDK model the roots (annotations) reach through fields, in order."""
    return reached(normalise(root)[0] for root in roots)


def reached(roots: Iterable[Sdk]) -> dict[type[Any], None]:
    """Every SDK model the normalised roots reach through fields, in order."""
    seen: dict[type[Any], None] = {}

    def walk(sdk: Sdk) -> None:
        if sdk.item is not None:
            walk(sdk.item)
        for option in sdk.options:
            walk(option)
        if sdk.model is not None and sdk.model not in seen:
            seen[sdk.model] = None
            for info in sdk_fields(sdk.model).values():
                walk(normalise(info.annotation)[0])

    for root in roots:
        walk(root)
    return seen


_SDK_KINDS = {
    "str": "string",
    "literal": "string",
    "open_literal": "string",
    "int": "int",
    "float": "float",
    "bool": "bool",
    "list": "list",
}


def _kind(expr: TypeExpr) -> str:
    """The JSON kind of a spec type that is one alternative of a union."""
    if isinstance(expr, Scalar):
        return expr.kind
    if isinstance(expr, EnumRef):
        return "string"
    return "list" if isinstance(expr, ListOf) else "object"


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


def mentions_any(expr: TypeExpr) -> bool:
    if isinstance(expr, Scalar):
        return expr.kind == "any"
    if isinstance(expr, ListOf):
        return mentions_any(expr.item)
    if isinstance(expr, MapOf):
        return mentions_any(expr.value)
    if isinstance(expr, SpecUnion):
        return any(mentions_any(o) for o in expr.options)
    return False


# --- the comparison ------------------------------------------------------------------


Queue = list[tuple[type[Any], str]]


@dataclass
class Comparison:
    """The SDK's models compared with one family's spec types, from some roots."""

    family: Family
    problems: list[str] = field(default_factory=list[str])
    visited: dict[type[Any], str] = field(default_factory=dict[type[Any], str])
    """Each SDK model compared, with the spec type it was compared with."""
    enum_values: dict[str, set[str]] = field(default_factory=dict[str, set[str]])
    """Each spec enum met, with the SDK values it stands for."""
    unions: set[str] = field(default_factory=set[str])
    """The spec unions met."""
    kept: dict[type[Any], str] = field(default_factory=dict[type[Any], str])
    """Each SDK model under a key kept as JSON, with the key (`Type.key`)."""
    kept_whole: dict[type[Any], str] = field(default_factory=dict[type[Any], str])
    """Each SDK model of a union member read whole, and the models under it, with where:
    by the spec union's `Other…` member (`other_members`), or among the unknown keys of
    a flattened type (`flattened`)."""
    merging: bool = False
    """Comparing a merged model: where the spec's union has more kinds than the SDK's
    type, the alternative of the SDK's kind is compared."""
    used: set[Key] = field(default_factory=set[Key])
    """The allowed departures the comparison met."""

    def run(self, roots: Iterable[tuple[Any, str]]) -> Comparison:
        queue: Queue = []
        for annotation, name in roots:
            sdk, _ = normalise(annotation)
            if sdk.kind == "model":
                assert sdk.model is not None
                queue.append((sdk.model, name))
            else:
                queue += self.types(sdk, self.family.spec_type(name), f"root {name}")
        while queue:
            model, name = queue.pop(0)
            if model in self.visited:
                continue
            self.visited[model] = name
            queue += self.model(model, name)
        self.check_enums()
        return self

    def model(self, model: type[Any], name: str) -> Queue:
        if name not in self.family.types:
            self.problems.append(f"{name}: no such spec type (the SDK's {model.__name__})")
            return []
        extra = self.family.allowed.extra_keys
        ours = {f.wire: f for f in self.family.types[name].fields}
        theirs = sdk_fields(model)
        merged = self.family.merged(model)
        if merged is not None:
            # Read as the spec type of another model with its tag: keys only.
            self.used.add((merged, ""))
            for key in sorted(theirs.keys() - ours.keys()):
                self.problems.append(
                    f"{name}.{key}: in the SDK's {model.__name__}, not in the spec"
                )
            # The models under its keys are compared still, where the spec has them.
            problems = list(self.problems)
            merged_nested: Queue = []
            self.merging = True
            for key in sorted(ours.keys() & theirs.keys()):
                merged_nested += self.field(name, ours[key], theirs[key])
            self.merging = False
            self.problems[:] = problems
            return merged_nested
        for key in sorted(theirs.keys() - ours.keys()):
            self.problems.append(f"{name}.{key}: in the SDK's {model.__name__}, not in the spec")
        for key in sorted(ours.keys() - theirs.keys()):
            if (name, key) in extra:
                self.used.add((name, key))
            else:
                self.problems.append(
                    f"{name}.{key}: in the spec, not in the SDK's {model.__name__}"
                )
        nested: Queue = []
        for key in sorted(ours.keys() & theirs.keys()):
            nested += self.field(name, ours[key], theirs[key])
        return nested

    def field(self, name: str, ours: RawField, info: SdkKey) -> Queue:
        where = f"{name}.{ours.wire}"
        key = (name, ours.wire)
        looser = key in self.family.allowed.looser
        tighter = key in self.family.allowed.tighter
        required = info.required
        sdk, nullable = normalise(info.annotation)
        if ours.required != required:
            if (looser and required and not ours.required) or (tighter and ours.required):
                self.used.add(key)
            else:
                self.problems.append(
                    f"{where}: required is {ours.required} in the spec, {required} in the SDK"
                )
        if ours.nullable != nullable:
            if (looser and ours.nullable and not nullable) or (tighter and nullable):
                self.used.add(key)
            else:
                self.problems.append(
                    f"{where}: nullable is {ours.nullable} in the spec, {nullable} in the SDK"
                )
        spec = self.family.spec_type(ours.type)
        if key in self.family.allowed.kept_as_json:
            return self.kept_as_json(key, sdk, spec, where)
        return self.types(sdk, spec, where)

    def kept_as_json(self, key: Key, sdk: Sdk, spec: TypeExpr, where: str) -> Queue:
        """A key whose SDK models the spec keeps as a plain JSON value."""
        models = reached([sdk])
        if not models:
            self.problems.append(f"{where}: kept as JSON, but the SDK's type holds no model")
        elif not mentions_any(spec):
            self.problems.append(f"{where}: kept as JSON, but the spec's {show(spec)} is typed")
        else:
            self.used.add(key)
            for model in models:
                self.kept.setdefault(model, where)
        return []

    def types(self, sdk: Sdk, ours: TypeExpr, where: str) -> Queue:
        """Compare one type; the SDK models to compare next, with their spec types."""
        kind = sdk.kind
        if self.merging and isinstance(ours, SpecUnion) and ours.name is None and kind != "union":
            match = [o for o in ours.options if _kind(o) == _SDK_KINDS.get(kind, "object")]
            ours = match[0] if len(match) == 1 else ours
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
            expected = self.family.spec_name(sdk.model)
            if isinstance(ours, SpecUnion) and ours.name and ModelRef(expected) in ours.options:
                # A named union with the SDK's model as a member takes it (and more).
                self.unions.add(ours.name)
                return [(sdk.model, expected)]
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

    def enum(self, sdk: Sdk, ours: TypeExpr, where: str, *, closed_ok: bool) -> Queue:
        if not isinstance(ours, EnumRef):
            self.problems.append(
                f"{where}: the SDK's Literal{list(sdk.values)} is {show(ours)} in the spec"
            )
            return []
        if not closed_ok and not ours.open:
            self.problems.append(f"{where}: the SDK takes any string; {ours.name} is closed")
        self.enum_values.setdefault(ours.name, set()).update(sdk.values)
        declared = dict(self.family.enums[ours.name].values)
        missing = [v for v in sdk.values if v not in declared]
        if missing:
            self.problems.append(f"{where}: enum {ours.name} lacks the SDK's values {missing}")
        return []

    def union(self, sdk: Sdk, ours: TypeExpr, where: str) -> Queue:
        models = self.twinned([o.model for o in sdk.options if o.model is not None], where)
        allowed = self.family.allowed
        if isinstance(ours, ModelRef) and ours.name in allowed.collapsed:
            return [(m, ours.name) for m in models]
        if isinstance(ours, ModelRef) and ours.name in allowed.flattened:
            own = [m for m in models if self.family.spec_name(m) == ours.name]
            if len(own) != 1:
                self.problems.append(f"{where}: no member of the SDK's union is {ours.name}")
                return []
            self.used.add((ours.name, ""))
            for model in reached([Sdk("model", model=m) for m in models if m is not own[0]]):
                self.kept_whole.setdefault(model, f"{where} (flattened into {ours.name})")
            return [(own[0], ours.name)]
        if not isinstance(ours, SpecUnion) or ours.name is None:
            names = ", ".join(m.__name__ for m in models)
            self.problems.append(
                f"{where}: the SDK's union of {names} is {show(ours)} in the spec,"
                " not a named union"
            )
            return []
        self.unions.add(ours.name)
        members = [o.name for o in ours.options if isinstance(o, ModelRef)]
        others = [m for m in members if self.family.is_other(m)]
        if len(others) != 1:
            self.problems.append(
                f"{where}: union {ours.name} needs exactly one Other member (a `type` of any"
                f" string) to keep unknown types whole; it has {others}"
            )
        expected = {self.family.spec_name(m) for m in models}
        extra = {m for m in members if m not in others} - expected
        for member in sorted(extra):
            if (ours.name, member) in allowed.extra_members:
                self.used.add((ours.name, member))
            else:
                self.problems.append(
                    f"{where}: union {ours.name} has {member}, which the SDK's union lacks"
                )
        for member in sorted(expected - set(members)):
            if (ours.name, member) in allowed.other_members:
                self.used.add((ours.name, member))
                for model in reached(
                    [Sdk("model", model=m) for m in models if self.family.spec_name(m) == member]
                ):
                    self.kept_whole.setdefault(model, f"{where} ({ours.name}'s other member)")
                continue
            self.problems.append(
                f"{where}: union {ours.name} lacks {member}, a member of the SDK's union"
            )
        return [
            (m, self.family.spec_name(m)) for m in models if self.family.spec_name(m) in members
        ]

    def twinned(self, models: list[type[Any]], where: str) -> list[type[Any]]:
        """The members of an SDK union of request params (TypedDicts), without the
        response models (pydantic) the SDK also takes there so that a response's blocks
        can be sent back as they are: each must write the same `type` as a param of the
        union, which the spec compares instead."""
        params = [m for m in models if is_typeddict(m)]
        if not params:
            return models
        tags = {value for m in params for value in self._tags(m)}
        for model in models:
            if not is_typeddict(model) and not set(self._tags(model)) <= tags:
                self.problems.append(
                    f"{where}: the SDK's {model.__name__} has no param of its `type` in the union"
                )
        return params

    @staticmethod
    def _tags(model: type[Any]) -> tuple[str, ...]:
        tag = sdk_fields(model).get("type")
        return normalise(tag.annotation)[0].values if tag else ()

    def mixed(self, sdk: Sdk, ours: TypeExpr, where: str) -> Queue:
        """A union of JSON kinds, alternative by alternative."""
        options = ours.options if isinstance(ours, SpecUnion) else (ours,)
        objects = [o for o in sdk.options if _SDK_KINDS.get(o.kind, "object") == "object"]
        collapsed = [
            o
            for o in options
            if isinstance(o, ModelRef) and o.name in self.family.allowed.collapsed
        ]
        if len(objects) > 1 and len(collapsed) == 1:
            # One spec type reads the SDK's object alternatives, all of them.
            rest = tuple(o for o in sdk.options if o not in objects)
            sdk = Sdk("union", options=(*rest, Sdk("union", options=tuple(objects))))
        if len(options) != len(sdk.options):
            self.problems.append(
                f"{where}: the SDK's union has {len(sdk.options)} alternatives,"
                f" the spec's {show(ours)} {len(options)}"
            )
            return []
        nested: Queue = []
        for theirs in sdk.options:
            kind = _SDK_KINDS.get(theirs.kind, "object")
            match = [o for o in options if _kind(o) == kind]
            if len(match) != 1:
                self.problems.append(f"{where}: no one {kind} alternative in {show(ours)}")
                continue
            nested += self.types(theirs, match[0], where)
        return nested

    def check_enums(self) -> None:
        """An enum value the SDK lacks needs a comment on its line (or the line above)."""
        for name, sdk_values in sorted(self.enum_values.items()):
            enum = self.family.enums[name]
            for value, _ in enum.values:
                if value not in sdk_values and not self.family.commented(enum, value):
                    self.problems.append(
                        f"enum {name}: value {value!r} is not the SDK's; say why in a"
                        " comment on its line"
                    )

    def unused(self) -> list[str]:
        """The allowed departures the spec does not make (any more)."""
        allowed = self.family.allowed
        listed = [*allowed.extra_members, *allowed.extra_keys, *allowed.looser]
        listed += [*allowed.kept_as_json, *allowed.tighter, *allowed.other_members]
        listed += [(name, "") for name in (*allowed.flattened, *allowed.merged)]
        return [f"{a}.{b}" for a, b in listed if (a, b) not in self.used]


def uncompared(comparison: Comparison, roots: Iterable[Any]) -> list[type[Any]]:
    """The SDK models the roots reach that were neither compared nor kept (as JSON, or
    whole)."""
    return [
        model
        for model in reachable(roots)
        if model not in comparison.visited
        and model not in comparison.kept
        and model not in comparison.kept_whole
    ]


def stray_types(comparison: Comparison) -> list[str]:
    """Spec types that no SDK model maps to and that are neither an `Other…` member, an
    extra member nor an allowed extra type."""
    family = comparison.family
    compared = set(comparison.visited.values())
    extra = {member for _, member in family.allowed.extra_members}
    return [
        name
        for name in family.types
        if name not in compared
        and name not in extra
        and name not in family.allowed.extra_types
        and not family.is_other(name)
    ]
