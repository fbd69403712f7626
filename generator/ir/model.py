"""The typed intermediate model every target is rendered from.

Everything here is frozen and ordered: templates iterate tuples, never dicts or sets,
so output does not depend on hashing. It knows no target: each target decides its
Python names, annotations and code from it (generator/targets/).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Literal, TypeAlias

from .requests import RequestDialect

ScalarKind: TypeAlias = Literal["string", "int", "float", "bool", "any"]


@dataclass(frozen=True)
class Scalar:
    """A JSON scalar (or, for `any`, any JSON value kept as decoded)."""

    kind: ScalarKind


@dataclass(frozen=True)
class ListOf:
    """A JSON array whose items all have one type."""

    item: TypeExpr


@dataclass(frozen=True)
class MapOf:
    """A JSON object with arbitrary string keys whose values all have one type."""

    value: TypeExpr


@dataclass(frozen=True)
class ModelRef:
    """A named object type of the spec."""

    name: str


@dataclass(frozen=True)
class EnumRef:
    """A named string enum of the spec."""

    name: str
    open: bool


@dataclass(frozen=True)
class Union:
    """Alternatives told apart by their JSON kind, or among objects by a discriminator key."""

    options: tuple[TypeExpr, ...]
    discriminator: str | None = None
    other: str | None = None
    """Of a discriminated union, the member that takes every value of the key no other
    member has (its key is a plain string): an open union keeps what it does not know."""
    name: str | None = None
    """The name the spec gives the union (`unions:`), if any."""
    absent: str | None = None
    """Of a named discriminated union, the member a value without the key reads as
    (`absent:`): its key is optional, so it is written back only when it was sent."""


TypeExpr: TypeAlias = Scalar | ListOf | MapOf | ModelRef | EnumRef | Union


def parts(expr: TypeExpr) -> list[TypeExpr]:
    """A type and every type nested in it (list items, map values, union alternatives)."""
    if isinstance(expr, ListOf):
        return [expr, *parts(expr.item)]
    if isinstance(expr, MapOf):
        return [expr, *parts(expr.value)]
    if isinstance(expr, Union):
        return [expr, *(p for option in expr.options for p in parts(option))]
    return [expr]


def alternatives(expr: TypeExpr) -> tuple[TypeExpr, ...]:
    """The alternatives of a union, or the type itself."""
    return expr.options if isinstance(expr, Union) else (expr,)


def json_kind(expr: TypeExpr) -> str:
    """The JSON kind of a type's values: a scalar kind, `list`, `object`, or `union`."""
    if isinstance(expr, Scalar):
        return expr.kind
    if isinstance(expr, EnumRef):
        return "string"
    if isinstance(expr, ListOf):
        return "list"
    if isinstance(expr, (MapOf, ModelRef)):
        return "object"
    return "union"


@dataclass(frozen=True)
class Provenance:
    """Who adds or changes a field and where that is documented."""

    vendors: tuple[str, ...]
    source: str | None
    doc: str | None = None


@dataclass(frozen=True)
class Field:
    """One key of an object type."""

    wire: str
    type: TypeExpr
    required: bool
    nullable: bool
    default: object | None
    doc: str
    deprecated: str | None
    origin: Provenance | None
    """The vendors that add this field; None for a core field."""
    relaxations: tuple[Provenance, ...]
    """Vendor quirks that loosened a core field (optional, or another type)."""
    merge: str | None = None
    """How values in successive chunks merge, as the spec declares it (None: the default)."""
    into: str | None = None
    """The key of the merged object it goes to, when not its own wire name."""
    repeats: str | None = None
    """How a string's values recur across chunks: `stream` (the same value on every chunk
    of a stream) or `vocabulary` (one of a small set, such as a token)."""
    client_only: bool = False
    """A key of a request that only describes the client (Codex's `client_metadata`):
    `to_request` drops it, said as such, for a request of another protocol."""

    @property
    def has_default(self) -> bool:
        return self.default is not None


@dataclass(frozen=True)
class ErrorWhen:
    """A payload with key `has` and without key `lacks` is an error report, not this type."""

    has: str
    lacks: str
    doc: str


@dataclass(frozen=True)
class Model:
    """An object type: its fields in spec order (core first, then vendors by name)."""

    name: str
    doc: str
    fields: tuple[Field, ...]
    origin: Provenance | None
    error_when: ErrorWhen | None = None
    fill: tuple[tuple[str, object], ...] = ()
    """Values the accumulator writes for keys no chunk supplied (JSON scalars, null or {})."""


@dataclass(frozen=True)
class EnumValue:
    value: str
    doc: str


@dataclass(frozen=True)
class Enum:
    """A named set of string values; open enums also accept values not listed."""

    name: str
    doc: str
    values: tuple[EnumValue, ...]
    open: bool
    origin: Provenance | None


@dataclass(frozen=True)
class NamedUnion:
    """A union the spec names (`unions:`): the annotation users write for its values."""

    name: str
    doc: str
    union: Union


@dataclass(frozen=True)
class Vendor:
    name: str
    title: str
    source: str
    file: str


MergeHow: TypeAlias = str
"""A merge rule: a name of `_RULES` in generator/runtime/merge.py (load.py checks)."""


@dataclass(frozen=True)
class MergeRule:
    """How one key of a chunk object merges into the completion object."""

    wire: str
    how: MergeHow
    into: str
    """The key in the completion object ("" when dropped)."""
    inner: str | None
    """For `merge` and `by_index`: the chunk type of the value, merged by its own plan."""


@dataclass(frozen=True)
class Fill:
    """A value the accumulator writes for a key that no chunk supplied."""

    key: str
    value: object
    """A JSON scalar or null; unused when `inner` is set."""
    inner: str | None
    """An empty object merged as this chunk type (so its own fills apply)."""


@dataclass(frozen=True)
class MergePlan:
    """How the objects of one chunk type add up to one object of the completion."""

    chunk_type: str
    completion_type: str
    rules: tuple[MergeRule, ...]
    not_null: tuple[str, ...]
    """Keys of the completion type that cannot be null: a null sent for one is not kept."""
    fills: tuple[Fill, ...]


Step: TypeAlias = str | tuple[str, str] | None
"""A key; a (key, value) filter on the items of a list; None for every item."""


@dataclass(frozen=True)
class Meaning:
    name: str
    doc: str


@dataclass(frozen=True)
class Spelling:
    """One place a meaning is spelled."""

    meaning: str
    path: tuple[Step, ...]
    """From a choice of the completion for a choice's meanings, else from the completion."""
    precedence: int
    scale: float
    items: tuple[tuple[str, tuple[Step, ...]], ...]
    field: str
    """The field that declares it, as `ChoiceDelta.reasoning_content`."""
    vendor: str | None


@dataclass(frozen=True)
class Dialect:
    """Where a writer puts reasoning: under `reasoning` in the object that holds the
    text (the delta), between `tags` when it is the text's own key."""

    name: str
    doc: str
    reasoning: str
    tags: tuple[str, str] | None


@dataclass(frozen=True)
class Meanings:
    """The vocabulary, and where each meaning is spelled: in the completion a stream
    adds up to, and in a chunk."""

    vocabulary: tuple[Meaning, ...] = ()
    spellings: tuple[Spelling, ...] = ()
    in_chunks: tuple[Spelling, ...] = ()
    dialects: tuple[Dialect, ...] = ()


Profile: TypeAlias = Literal["lenient", "strict"]


@dataclass(frozen=True)
class Options:
    """What to render from the spec.

    `vendors`: the vendors whose fields are typed (None: all). Vendor quirks (`relax`)
    apply whatever the selection, so every real stream still parses.
    `profile`: `lenient` keeps unknown keys and enum values; `strict` rejects them and
    applies no vendor quirk, for servers checking the chunks they emit.
    """

    vendors: tuple[str, ...] | None = None
    profile: Profile = "lenient"
    protocols: tuple[str, ...] | None = None
    """The protocols whose modules are made (None: every one the spec has); chat's is
    always made, since the others import what they share from it."""

    @property
    def strict(self) -> bool:
        return self.profile == "strict"

    def keeps(self, vendors: tuple[str, ...]) -> bool:
        return self.vendors is None or any(v in self.vendors for v in vendors)

    def speaks(self, protocol: str) -> bool:
        """Whether the module of `protocol` is made."""
        return protocol == "chat" or self.protocols is None or protocol in self.protocols


@dataclass(frozen=True)
class Spec:
    """The whole spec: models in dependency order (leaves first, the root last)."""

    root: str
    models: tuple[Model, ...]
    enums: tuple[Enum, ...]
    vendors: tuple[Vendor, ...]
    files: tuple[str, ...]
    """Spec files it was built from, relative to the project root."""
    options: Options = Options()
    completion: str | None = None
    """The type the chunks of a stream merge into (None: no accumulator is generated)."""
    request: str | None = None
    """The request body a client sends for the stream (None: the spec types none)."""
    request_dialects: tuple[RequestDialect, ...] = ()
    """How each chat backend reads a request, OpenAI's first."""
    merging: tuple[MergePlan, ...] = ()
    """One plan per chunk type that merges, the root's first."""
    type_names: frozenset[str] = frozenset()
    """Every type and enum name the spec declares, selected or not: no field's Python
    name is one of them, whatever the selection."""
    meanings: Meanings = Meanings()
    """What the fields mean, from the whole spec whatever the selection."""
    family: str = "chat"
    """The protocol whose events it describes: `chat`, or `messages` (Anthropic)."""
    unions: tuple[NamedUnion, ...] = ()
    """The unions the spec names, in spec order; the root may be one of them."""

    def model(self, name: str) -> Model:
        return self._models[name]

    def enum(self, name: str) -> Enum:
        return self._enums[name]

    # Looked up tens of thousands of times while rendering: indexed once per spec.
    @cached_property
    def _models(self) -> dict[str, Model]:
        return {model.name: model for model in self.models}

    @cached_property
    def _enums(self) -> dict[str, Enum]:
        return {enum.name: enum for enum in self.enums}

    @cached_property
    def union_tags(self) -> dict[str, tuple[str, str]]:
        """`union_tags(self)`, computed once."""
        return _union_tags(self)

    def union(self, name: str) -> Union:
        for named in self.unions:
            if named.name == name:
                return named.union
        raise KeyError(name)


def union_tags(spec: Spec) -> dict[str, tuple[str, str]]:
    """Model name -> (key, value) of the types a discriminated union tells apart: each
    member has exactly one value of the discriminator key (the build checks it)."""
    return spec.union_tags


def _union_tags(spec: Spec) -> dict[str, tuple[str, str]]:
    tags: dict[str, tuple[str, str]] = {}
    unions = [p for m in spec.models for f in m.fields for p in parts(f.type)]
    unions += [named.union for named in spec.unions]
    for union in unions:
        if isinstance(union, Union) and union.discriminator is not None:
            for option in union.options:
                assert isinstance(option, ModelRef)
                if option.name == union.other:
                    continue
                member = spec.model(option.name)
                tag = next(f for f in member.fields if f.wire == union.discriminator)
                assert isinstance(tag.type, EnumRef)
                [value] = [v.value for v in spec.enum(tag.type.name).values]
                tags[option.name] = (union.discriminator, value)
    return tags
