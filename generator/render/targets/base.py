"""What a target is: the object that owns everything one kind of generated model
module decides (its template, runtime files, Python names, annotations, defaults and
JSON conversion). The intermediate model knows no target; templates ask the target."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from functools import cached_property
from typing import ClassVar

from ...ir.meanings import reader_keys
from ...ir.model import (
    EnumRef,
    Field,
    ListOf,
    MapOf,
    Model,
    ModelRef,
    Scalar,
    Spec,
    TypeExpr,
    alternatives,
)
from ...ir.naming import python_name, snake
from ..families import FAMILIES
from .tables import Tables, union_reader

STDLIB_SCALARS = {"string": "str", "int": "int", "float": "float", "bool": "bool", "any": "Any"}
# pydantic and msgspec turn an int read into a `float` field into a float, and `1` would
# come back as `1.0`; `int | float` keeps whichever the wire had.
NUMBER_SCALARS = {**STDLIB_SCALARS, "float": "int | float"}


@dataclass(frozen=True)
class Shared:
    """The fields whose values a target shares between objects, by Python name: a
    `stream` value is compared with the one the last object was read with (slot n of the
    model's table for the n-th name), a `vocabulary` value is looked up in the module's
    bounded table of values."""

    stream: tuple[str, ...]
    vocabulary: tuple[str, ...]

    def __bool__(self) -> bool:
        return bool(self.stream or self.vocabulary)


class Target:
    """One target. Subclasses set the class attributes and override what differs."""

    name: ClassVar[str]
    runtime: ClassVar[tuple[str, ...]]
    """The runtime files (generator/runtime/) copied before the models, in order."""
    reserved: ClassVar[frozenset[str]]
    """Names a field may not take as its Python name (keywords are never allowed)."""
    shares: ClassVar[tuple[str, ...]] = ()
    """The kinds of `repeats` (stream, vocabulary) whose values objects share."""
    exact_text: ClassVar[bool] = True
    """Whether `dumps` writes the very same text as json (msgspec and pydantic spell
    some floats their own way: the same JSON value)."""
    imports: ClassVar[dict[str, tuple[str, str]]] = {}
    """Names the template's code uses beyond those of the runtime: name -> (module,
    name there; "" for a module)."""
    dumps_doc: ClassVar[str] = ""
    """A paragraph `dumps` adds to its docstring."""
    native_text: ClassVar[bool] = False
    """Whether `dumps` writes JSON text itself, not through the chunk's JSON data."""
    string_writers: ClassVar[str] = "_json_string,"
    """How `dumps` may write a text: the module's string writers, its own first."""
    typed: ClassVar[bool] = True
    """Whether a chunk is an object of the module's own classes (not JSON data)."""
    extra_attribute: ClassVar[str] = "extra"
    """The attribute of an object that holds the keys the spec does not describe."""
    unset: ClassVar[str] = "UNSET"
    """What an absent key reads as."""
    render_cost: ClassVar[int] = 1
    """How long its package takes to render, against the other targets' (as measured):
    `make generate` gives the longest to its workers first, so that they end together."""

    def __init__(self, spec: Spec) -> None:
        self.spec = spec

    @cached_property
    def tables(self) -> Tables:
        """The field tables and decoders, for the targets that read JSON themselves."""
        return Tables(self.spec, self.model_reader, self.python_name)

    def model_reader(self, name: str) -> str:
        """The expression of the function that reads a model from JSON data."""
        return f"{name}.from_dict"

    @property
    def template(self) -> str:
        return f"{self.name}.py.jinja"

    # --- names and annotations ----------------------------------------------------

    def python_name(self, field: Field) -> str:
        return python_name(field.wire, self.reserved | self.spec.type_names)

    def spelled(self, expr: TypeExpr) -> str:
        """The annotation of a type, without the nullable or unset parts of a field."""
        if isinstance(expr, Scalar):
            return STDLIB_SCALARS[expr.kind]
        if isinstance(expr, ListOf):
            return f"list[{self.spelled(expr.item)}]"
        if isinstance(expr, MapOf):
            return f"dict[str, {self.spelled(expr.value)}]"
        if isinstance(expr, ModelRef):
            return expr.name
        if isinstance(expr, EnumRef):
            return f"{expr.name} | str" if expr.open else expr.name
        return " | ".join(self.spelled(option) for option in expr.options)

    def annotation(self, field: Field) -> str:
        """The annotation of a field: its type, the unset marker when the key may be
        absent, `| None` when it may be null."""
        text = self.spelled(field.type)
        if not field.required and not field.has_default:
            text += " | _Unset"
        return text + " | None" if field.nullable else text

    def default_factory(self, field: Field) -> str:
        """The callable that makes a field's default; the spec only allows `[]`. It is the
        list type itself (`list[Choice]`), so type checkers know the items' type."""
        assert field.default == [] and isinstance(field.type, ListOf)
        return self.spelled(field.type)

    def share_hook(self, model: Model) -> str:
        """The method that shares a model's values (`shared`): run on every object."""
        return "__post_init__"

    def shared(self, model: Model) -> Shared:
        def names(how: str) -> tuple[str, ...]:
            if how not in self.shares:
                return ()
            return tuple(self.python_name(f) for f in model.fields if f.repeats == how)

        return Shared(stream=names("stream"), vocabulary=names("vocabulary"))

    @property
    def readings(self) -> str:
        """The module's table of what the meanings reader reads in a chunk."""
        return "_OBJECT_READINGS" if self.typed else "_DATA_READINGS"

    def attribute_names(self) -> dict[str, dict[str, str]]:
        """The attribute of each key the module's runtime reads or sets on a chunk
        object, by where it sits: the meanings reader's keys (see
        `ir.meanings.reader_keys`) and those `TokenFrames` sets. A key the module does
        not declare is left out, and read from `extra`."""
        keys = {
            where: list(found) for where, found in reader_keys(self.spec.meanings.in_chunks).items()
        }
        frames = {
            "": ("choices", "usage"),
            "choices": ("index", "delta", "finish_reason"),
            "choices.delta": ("role", *self.token_keys()),
        }
        for where, set_here in frames.items():
            known = keys.setdefault(where, [])
            known += [key for key in set_here if key not in known]
        models = {m.name: m for m in self.spec.models}
        names: dict[str, dict[str, str]] = {}
        for where, wanted in keys.items():
            model = _model_at(models, self.spec.root, where)
            fields = {f.wire: f for f in model.fields} if model else {}
            names[where] = {k: self.python_name(fields[k]) for k in wanted if k in fields}
        return names

    def token_keys(self) -> tuple[str, ...]:
        """The keys of a delta whose text a stream appends to (the fields `TokenFrames`
        may frame): the declared ones in spec order, then the dialects' keys the delta
        does not declare (`unknown_token_keys`)."""
        delta = self.delta_model()
        if delta is None:
            return ()
        plan = next((p for p in self.spec.merging if p.chunk_type == delta.name), None)
        appended = {r.wire for r in plan.rules if r.how == "append"} if plan else set()
        declared = tuple(
            f.wire
            for f in delta.fields
            if f.wire in appended
            and any(isinstance(o, Scalar) and o.kind == "string" for o in alternatives(f.type))
        )
        return declared + self.unknown_token_keys()

    def unknown_token_keys(self) -> tuple[str, ...]:
        """The keys a dialect writes reasoning in that the delta does not declare (a
        module without the vendors that declare them): the module reads, re-spells
        and writes them among a delta's unknown keys, so `TokenFrames` frames them
        there too. None in the strict profile, which keeps no unknown key."""
        delta = self.delta_model()
        if delta is None or self.spec.options.strict:
            return ()
        declared = {f.wire for f in delta.fields}
        keys = [d.reasoning for d in self.spec.meanings.dialects if d.tags is None]
        return tuple(dict.fromkeys(key for key in keys if key not in declared))

    def delta_model(self) -> Model | None:
        """The type of a choice's `delta`, where `TokenFrames` sets its text."""
        models = {m.name: m for m in self.spec.models}
        return _model_at(models, self.spec.root, "choices.delta")

    # --- JSON conversion ------------------------------------------------------------

    def from_json(self, model: str, data: str) -> str:
        """An expression: the decoded JSON value `data` read as `model` (or as a union
        the spec names)."""
        if model in self.union_names:
            return f"{self.union_reader(model)}({data})"
        return f"{model}.from_dict({data})"

    @property
    def union_names(self) -> frozenset[str]:
        return frozenset(named.name for named in self.spec.unions)

    @staticmethod
    def union_reader(name: str) -> str:
        """The module's reader of a union the spec names: `_CONTENT_BLOCK_READER`."""
        return union_reader(name)

    def reads_union(self, name: str) -> bool:
        """Whether the module defines a reader of the named union (the field tables
        read each union through its reader)."""
        return True

    def union_reader_type(self, name: str) -> str:
        return f"Callable[[Any], {name}]"

    def union_reading(self, name: str) -> str:
        """The expression that makes that reader."""
        return self.tables.union_decoder(self.spec.union(name))

    def from_text(self, model: str, text: str) -> str:
        """An expression: the JSON text `text` read as `model`."""
        return self.from_json(model, f"_json({text})")

    def to_json(self, value: str) -> str:
        """An expression: the JSON data of an object `value`."""
        return f"{value}.to_dict()"

    def to_text(self, value: str) -> str:
        """An expression: the compact JSON text of an object `value`."""
        return f"_wire_text({self.to_json(value)})"

    def instance_class(self, model: str) -> str:
        """An expression: the class every object of `model` is an instance of."""
        return model

    def instance_classes(self, name: str) -> str:
        """An expression: the set of the classes the objects of `name` (a model, or a
        union the spec names: its members') are instances of."""
        named = {u.name: u.union for u in self.spec.unions}
        models = [name]
        if name in named:
            models = [o.name for o in named[name].options if isinstance(o, ModelRef)]
        classes = dict.fromkeys(self.instance_class(m) for m in models)
        return "frozenset({" + ", ".join(classes) + "})"

    def test_decoder(self, model: str) -> str:
        """The public decoder of a model's JSON data, in the generated tests (the module
        is imported as `target`)."""
        return f"target.{model}.from_dict"

    def test_encoded(self, value: str) -> str:
        """The JSON data of a decoded `value`, by the public API, in the generated tests."""
        return f"{value}.to_dict()"

    # --- what the templates name ----------------------------------------------------

    def exports(self, protocols: Collection[str] = ()) -> list[str]:
        """The sorted `__all__` of the module; `protocols` are the other protocols'
        modules made with it, which its `iter_events` reads."""
        names = ["StreamDecodeError", "ChunkDecodeError", "ErrorReport", "loads", "dumps"]
        names += ["ChunkStream", "AsyncChunkStream", "ServerSentEvent", "StreamError"]
        names += ["EventTooLargeError", "EventlessStreamWarning", "RawEvent", "SkippedEvent"]
        names += ["iter_chunks", "aiter_chunks"]
        names += [
            "MAX_DEPTH",
            "MAX_EVENT_SIZE",
            "KEPT_EVENTS",
            "KEPT_DATA",
            "KEPT_NAME",
            "MORE_NAMES",
            "SSE_DONE",
            "SSE_KEEP_ALIVE",
        ]
        names += ["sse_chunk", "sse_error", "TokenFrames", "TokenFramesError"]
        names += ["iter_sse", "aiter_sse"]
        if protocols:
            names += ["iter_events", "aiter_events", "write_parts", "awrite_parts"]
            names += ["ChatLossWarning"]
        if self.spec.completion is not None:
            names += ["ChatCompletionAccumulator", "ChunkAccumulator", "loads_completion"]
            names += ["iter_parts", "aiter_parts"]
            names += ["to_dialect"]
            names += ["Summary", "ChoiceSummary", "UsageSummary", "ToolCallSummary"]
            names += ["Citation", "ReasoningItem", "Part", "ToolCallPart", "ServerToolSummary"]
            names += ["Identity"]
        if self.spec.request is not None:
            names += ["loads_request"]
        names += ["to_request", "assistant_message", "RequestLossWarning"]
        names += [m.name for m in self.spec.models] + [e.name for e in self.spec.enums]
        names += self.extra_exports()
        # The order ruff's RUF022 checks: CONSTANTS, then Classes, then functions.
        return sorted(names, key=lambda n: (0 if n.isupper() else 1 if n[0].isupper() else 2, n))

    def family_exports(self) -> list[str]:
        """The sorted `__all__` of a module of another protocol's events."""
        family = FAMILIES[self.spec.family]
        names = ["StreamDecodeError", "ChunkDecodeError", "StreamError", "loads", "dumps"]
        names += [f"loads_{family.result}"]
        names += ["iter_events", "aiter_events", "iter_parts", "aiter_parts"]
        names += ["write_parts", "awrite_parts", family.accumulator, "Part", "Summary"]
        names += [f"{family.title}LossWarning"]
        if self.spec.request is not None:
            names += ["loads_request"]
        names += ["to_request", "assistant_message", "RequestLossWarning"]
        if self.spec.family == "responses":
            names += ["tool_names"]
        names += [m.name for m in self.spec.models] + [e.name for e in self.spec.enums]
        names += [u.name for u in self.spec.unions] + self.extra_exports()
        return sorted(names, key=lambda n: (0 if n.isupper() else 1 if n[0].isupper() else 2, n))

    def extra_exports(self) -> list[str]:
        return []

    @staticmethod
    def constant(model: Model, what: str) -> str:
        """The name of a module-level table of a model: `_CHOICE_DELTA_FIELDS`."""
        return f"_{snake(model.name).upper()}_{what}"


def _model_at(models: dict[str, Model], root: str, where: str) -> Model | None:
    """The object type at a dotted path of keys from the root (lists passed through)."""
    model: Model | None = models[root]
    for key in filter(None, where.split(".")):
        fields = {f.wire: f for f in model.fields} if model else {}
        field = fields.get(key)
        model = None
        for option in alternatives(field.type) if field else ():
            inner = option.item if isinstance(option, ListOf) else option
            if isinstance(inner, ModelRef):
                model = models[inner.name]
    return model
