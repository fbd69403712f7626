"""Turn the loaded spec files into the intermediate model (stage 2 of the pipeline).

Here the decisions are made once for every target: which vendor adds which field,
how a vendor quirk loosens a core field, the order of types and fields, and the
Python name of every field in every target.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import replace

from . import meanings, merging, naming
from .errors import SpecError
from .load import RawEnum, RawField, RawRelax, RawSpec, RawType, Where
from .model import (
    Enum,
    EnumRef,
    EnumValue,
    ErrorWhen,
    Field,
    ListOf,
    MapOf,
    MergePlan,
    Model,
    ModelRef,
    NamedUnion,
    Options,
    Provenance,
    Scalar,
    Spec,
    TypeExpr,
    Union,
    Vendor,
    alternatives,
    json_kind,
    parts,
)
from .typeexpr import TypeSyntaxError, parse_type


def build_spec(raw: RawSpec, options: Options | None = None, *, reserved: Collection[str]) -> Spec:
    """Validate the spec as a whole and build its intermediate model, narrowed to the
    selected vendors and profile (the whole spec is always checked first). No type may
    take a name of `reserved`: the names a generated module holds besides the spec's
    (rendering knows them: `render.targets.module_names()`)."""
    return build_specs(raw, options or Options(), reserved=reserved)[0]


def build_specs(raw: RawSpec, *selections: Options, reserved: Collection[str]) -> list[Spec]:
    """The intermediate model of each selection: the whole spec is built (and so checked)
    once, and each other selection once."""
    full = _Builder(raw, Options(), reserved).build()
    if raw.core.family == "chat":
        # Another family's meanings are read by its runtime reader, not from paths.
        full = replace(full, meanings=meanings.build(raw, full))
    built = {Options(): full}
    for options in selections:
        if options not in built:
            built[options] = _narrowed(raw, options, full, reserved)
    return [built[options] for options in selections]


def _narrowed(raw: RawSpec, options: Options, full: Spec, reserved: Collection[str]) -> Spec:
    unknown = sorted(set(options.vendors or ()) - {v.name for v in raw.vendors})
    if unknown:
        known = ", ".join(v.name for v in raw.vendors)
        raise SpecError(
            f"unknown vendor {', '.join(map(repr, unknown))} (known: {known})", "--vendors"
        )
    narrowed = replace(_Builder(raw, options, reserved).build(), meanings=full.meanings)
    if options.strict:
        return narrowed
    # Merge rules need no types: the fields of a vendor left out are unknown keys, and
    # still merge as its file says (reasoning_content is appended, not replaced).
    return replace(narrowed, merging=full.merging)


class _Builder:
    def __init__(self, raw: RawSpec, options: Options, reserved: Collection[str]) -> None:
        self.raw = raw
        self.options = options
        self.reserved = reserved
        self.vendor_names = tuple(v.name for v in raw.vendors)
        # name -> (raw definition, vendor or None for core)
        self.types: dict[str, tuple[RawType, str | None]] = {}
        self.enums: dict[str, tuple[RawEnum, str | None]] = {}
        self.field_where: dict[tuple[str, str], Where] = {}
        self.relax_where: dict[tuple[str, str], Where] = {}
        self.unions = {u.name: u for u in raw.core.unions}
        self.built_unions: dict[str, Union] = {}

    # --- declarations ---------------------------------------------------------

    def declare(self) -> None:
        sources: list[tuple[str | None, Iterable[RawType], Iterable[RawEnum]]] = [
            (None, self.raw.core.types, self.raw.core.enums)
        ]
        sources += [(v.name, v.types, v.enums) for v in self.raw.vendors]
        seen: dict[str, Where] = {u.name: u.where for u in self.raw.core.unions}
        for vendor, types, enums in sources:
            declarations: list[RawType | RawEnum] = [*types, *enums]
            for decl in declarations:
                if decl.name in seen:
                    first = seen[decl.name]
                    raise decl.where.error(
                        f"type {decl.name!r} is already defined at {first.file}:{first.line}"
                    )
                if decl.name in self.reserved:
                    raise decl.where.error(
                        f"type {decl.name!r} would shadow a name the generated modules use"
                    )
                seen[decl.name] = decl.where
                if isinstance(decl, RawType):
                    self.types[decl.name] = (decl, vendor)
                else:
                    self.enums[decl.name] = (decl, vendor)

    def resolve(self, name: str) -> TypeExpr:
        if name in self.unions:
            return self.named_union(name)
        if name in self.types:
            return ModelRef(name)
        if name in self.enums:
            return EnumRef(name, self.enums[name][0].open and not self.options.strict)
        raise KeyError(name)

    def parse(self, text: str, where: Where) -> TypeExpr:
        try:
            return parse_type(text, self.resolve)
        except TypeSyntaxError as exc:
            raise where.error(str(exc)) from None

    # --- fields -------------------------------------------------------------------

    def named_union(self, name: str) -> Union:
        if name not in self.built_unions:
            raw = self.unions[name]
            members = Union(tuple(self.parse(m, raw.where) for m in raw.members))
            absent = None
            if raw.absent is not None:
                assert raw.absent_where is not None
                absent = (raw.absent, raw.absent_where)
            union = self.discriminated(members, raw.discriminator, raw.where, absent)
            self.built_unions[name] = replace(union, name=name)
        return self.built_unions[name]

    def build(self) -> Spec:
        self.declare()
        core = self.raw.core
        for role, name in (
            ("root", core.root),
            ("completion", core.completion),
            ("request", core.request),
        ):
            if name is not None and name not in self.types and name not in self.unions:
                raise core.where.error(f"{role} type {name!r} is not defined")
        named = tuple(NamedUnion(u.name, u.doc, self.named_union(u.name)) for u in core.unions)
        fields: dict[str, list[tuple[RawField, Provenance | None]]] = {}
        for name, (decl, _) in self.types.items():
            # A field of a vendor's own type is credited through its type.
            fields[name] = [(f, None) for f in decl.fields]
        self.add_vendor_fields(fields)
        relaxations = self.collect_relaxations(fields)
        models = {name: self.model(name, entries, relaxations) for name, entries in fields.items()}
        self.check_tags(models)
        plans: tuple[MergePlan, ...] = ()
        # Chat merges by the spec's rules; another family's accumulator is its runtime's.
        if core.completion is not None and core.family == "chat":
            models, plans = merging.plan(
                models,
                core.root,
                core.completion,
                self.field_where,
                self.where_fill,
            )
        if not self.options.strict:
            # After the merge plans: they keep the nullability the spec declares, so the
            # accumulator writes the same completion whatever a module accepts.
            models = _read_leniently(models, named)
        # A root that is a union is its members.
        last = [core.root]
        if core.root in self.built_unions:
            last = [o.name for o in self.built_unions[core.root].options if isinstance(o, ModelRef)]
        requests = (core.request,) if core.request is not None else ()
        completion = (core.completion,) if core.completion is not None else ()
        order = self.order((*requests, *completion, *last), models)
        enums_used = _enums_used(order)
        for name, (enum_decl, _) in self.enums.items():
            if name not in enums_used and self.options == Options():
                raise enum_decl.where.error(f"enum {name!r} is defined but no field uses it")
        return Spec(
            root=core.root,
            models=tuple(naming.checked(order, self.types_and_enums(), self.locate)),
            enums=tuple(self.enum(name) for name in self.enums if name in enums_used),
            vendors=tuple(self.vendor(v.name) for v in self.raw.vendors),
            files=self.raw.files,
            options=self.options,
            completion=core.completion,
            request=core.request,
            # Without their lines: a line moved by a comment changes no module.
            request_dialects=tuple(replace(d, line=None) for d in self.raw.request_dialects),
            merging=plans,
            type_names=self.types_and_enums() | frozenset(self.unions),
            family=core.family,
            unions=named,
        )

    def where_fill(self, name: str, key: str) -> Where:
        return next(where for wire, _, where in self.types[name][0].fill if wire == key)

    def locate(self, model: str, wire: str) -> tuple[str, int | None]:
        where = self.field_where[(model, wire)]
        return where.file, where.line

    def types_and_enums(self) -> frozenset[str]:
        return frozenset(self.types) | frozenset(self.enums)

    def provenance(
        self, vendor: str | None, source: str | None, also: tuple[str, ...]
    ) -> Provenance | None:
        if vendor is None:
            return None
        return Provenance(vendors=(vendor, *also), source=source or self.vendor_source(vendor))

    def vendor_source(self, vendor: str) -> str:
        return next(v.source for v in self.raw.vendors if v.name == vendor)

    def add_vendor_fields(
        self, fields: dict[str, list[tuple[RawField, Provenance | None]]]
    ) -> None:
        owners: dict[tuple[str, str], tuple[Where, str | None]] = {}
        for name, entries in fields.items():
            for f, origin in entries:
                owners[(name, f.wire)] = (
                    f.where,
                    origin.vendors[0] if origin else self.types[name][1],
                )
        for vendor in self.raw.vendors:
            for owner, owner_where, added in vendor.fields:
                if owner not in fields:
                    raise owner_where.error(
                        f"vendor {vendor.name!r} adds fields to unknown type {owner!r}"
                    )
                for f in added:
                    for other in f.also:
                        if other not in self.vendor_names:
                            raise f.where.error(
                                f"'also' names {other!r}, which has no file in spec/vendors"
                            )
                        if other == vendor.name:
                            raise f.where.error(f"'also' lists {other!r}, the vendor of this file")
                    if f.required and self.types[owner][1] != vendor.name:
                        raise f.where.error(
                            f"{owner}.{f.wire} cannot be required: payloads of other backends lack it"
                        )
                    key = (owner, f.wire)
                    if key in owners:
                        first, by = owners[key]
                        whose = "the core field" if by is None else f"the field of vendor {by!r}"
                        hint = (
                            ""
                            if by is None
                            else f"; declare it once and list {vendor.name!r} under 'also'"
                        )
                        raise f.where.error(
                            f"{owner}.{f.wire} collides with {whose} at {first.file}:{first.line}{hint}"
                        )
                    owners[key] = (f.where, vendor.name)
                    origin = self.provenance(vendor.name, f.source, f.also)
                    if origin is not None and self.options.keeps(origin.vendors):
                        fields[owner].append((f, origin))

    def collect_relaxations(
        self, fields: dict[str, list[tuple[RawField, Provenance | None]]]
    ) -> dict[tuple[str, str], list[tuple[RawRelax, str]]]:
        found: dict[tuple[str, str], list[tuple[RawRelax, str]]] = {}
        for vendor in self.raw.vendors:
            for owner, owner_where, relaxes in vendor.relax:
                if owner not in fields or self.types[owner][1] is not None:
                    raise owner_where.error(
                        f"vendor {vendor.name!r} relaxes {owner!r}, which is not a core type"
                    )
                core_wires = {f.wire for f, origin in fields[owner] if origin is None}
                for relax in relaxes:
                    if relax.wire not in core_wires:
                        raise relax.where.error(
                            f"{owner}.{relax.wire} is not a core field, so it cannot be relaxed"
                        )
                    found.setdefault((owner, relax.wire), []).append((relax, vendor.name))
        # The strict profile checks chunks against OpenAI's own spec: no vendor quirk.
        return {} if self.options.strict else found

    def model(
        self,
        name: str,
        entries: list[tuple[RawField, Provenance | None]],
        relaxations: dict[tuple[str, str], list[tuple[RawRelax, str]]],
    ) -> Model:
        decl, vendor = self.types[name]
        built = []
        for raw, origin in entries:
            self.field_where[(name, raw.wire)] = raw.where
            type_ = core_type = self.parse(raw.type, raw.type_where)
            required, nullable = raw.required, raw.nullable
            notes = []
            for relax, by in relaxations.get((name, raw.wire), []):
                if relax.required is False and not raw.required:
                    raise relax.where.error(
                        f"{name}.{raw.wire} is already optional in the core spec"
                    )
                if relax.nullable is True and raw.nullable:
                    raise relax.where.error(
                        f"{name}.{raw.wire} is already nullable in the core spec"
                    )
                required = required and relax.required is not False
                nullable = nullable or relax.nullable is True
                if relax.also_type is not None:
                    extra = self.parse(relax.also_type, relax.where)
                    if not self.options.keeps((by,)):
                        # Still accepted, but as plain JSON: the vendor's types are left out.
                        extra = _untyped(extra)
                    type_ = _widen(core_type, type_, extra, relax.where)
                    _check_union_kinds(type_, relax.where)
                self.relax_where.setdefault((name, raw.wire), relax.where)
                notes.append(Provenance((by,), relax.source or self.vendor_source(by), relax.doc))
            if raw.discriminator is not None:
                type_ = self.discriminated(type_, raw.discriminator, raw.where)
            default = raw.default
            if self.options.strict and default is not None:
                # OpenAI requires the key; only the lenient profile normalises it.
                required, default = True, None
            elif not self.options.strict and (origin is not None or (vendor and not required)):
                # A vendor's keys are kept when null, whatever its docs say.
                nullable = True
            built.append(
                Field(
                    wire=raw.wire,
                    type=type_,
                    required=required,
                    nullable=nullable,
                    default=default,
                    doc=raw.doc,
                    deprecated=raw.deprecated,
                    origin=origin,
                    relaxations=tuple(notes),
                    merge=raw.merge,
                    into=raw.into,
                    repeats=raw.repeats,
                    client_only=raw.client_only,
                )
            )
            if raw.client_only and name != self.raw.core.request:
                raise raw.where.error(
                    f"{name}.{raw.wire} says it is client-only, which only a field of"
                    " the request type can be"
                )
            if raw.repeats and not (
                isinstance(core_type, EnumRef) or core_type == Scalar("string")
            ):
                raise raw.where.error(
                    f"{name}.{raw.wire} says it repeats, which only a string field can"
                )
            if not notes:
                _check_union_kinds(type_, raw.where)
            _check_default(built[-1], raw.where)
        error_when = None
        if decl.error_when is not None:
            rule = decl.error_when
            error_when = ErrorWhen(rule.has, rule.lacks, rule.doc)
        return Model(
            name=name,
            doc=decl.doc,
            fields=tuple(built),
            origin=self.provenance(vendor, None, ()),
            error_when=error_when,
            fill=tuple((key, value) for key, value, _ in decl.fill),
        )

    def discriminated(
        self,
        type_: TypeExpr,
        key: str,
        where: Where,
        absent: tuple[str, Where] | None = None,
    ) -> Union:
        """The union `type_` told apart by `key`; `absent`: the member a value without
        the key reads as (its name, and where the spec names it)."""
        if not isinstance(type_, Union) or not all(isinstance(o, ModelRef) for o in type_.options):
            raise where.error("'discriminator' needs a union of object types")
        if naming.python_name(key, naming.PYDANTIC_RESERVED) != key:
            raise where.error(
                f"discriminator {key!r} must be a plain identifier (it is not renamed)"
            )
        if absent is not None:
            self.check_absent(type_, key, *absent)
        seen: dict[str, str] = {}
        other = None
        for option in type_.options:
            assert isinstance(option, ModelRef)
            decl = self.types[option.name][0]
            tag = next((f for f in decl.fields if f.wire == key), None)
            tag_type = self.parse(tag.type, tag.type_where) if tag else None
            if tag is not None and tag.required and tag_type == Scalar("string"):
                if other is not None:
                    raise where.error(
                        f"{other} and {option.name} both take any {key!r}; one member may"
                    )
                other = option.name
                continue
            reads_absent = absent is not None and absent[0] == option.name
            if (
                tag is None
                or not (tag.required or reads_absent)
                or not isinstance(tag_type, EnumRef)
                or tag_type.open
            ):
                raise where.error(
                    f"{option.name} needs a required field {key!r} whose enum has 'open: false'"
                    " to be told apart"
                )
            values = self.enums[tag_type.name][0].values
            if len(values) != 1:
                raise where.error(
                    f"{option.name}.{key} must have exactly one value to tell it apart"
                    " (msgspec tags each struct with one)"
                )
            for value, _ in values:
                if value in seen:
                    raise where.error(
                        f"{option.name} and {seen[value]} share the {key!r} value {value!r}"
                    )
                seen[value] = option.name
        absent_name = absent[0] if absent is not None else None
        if other is not None and self.options.strict:
            # The strict profile refuses what the spec does not list.
            options = tuple(o for o in type_.options if o != ModelRef(other))
            return Union(options, key, absent=absent_name)
        return Union(type_.options, key, other, absent=absent_name)

    def check_absent(self, union: Union, key: str, name: str, where: Where) -> None:
        """The `absent` member of a union told apart by `key`: a member with a tag of its
        own, which it may leave out."""
        if ModelRef(name) not in union.options:
            raise where.error(f"'absent' names {name}, which is not a member of the union")
        tag = next((f for f in self.types[name][0].fields if f.wire == key), None)
        if tag is not None and self.parse(tag.type, tag.type_where) == Scalar("string"):
            raise where.error(
                f"'absent' names {name}, which takes any {key!r}; name a member with a"
                f" {key!r} of its own"
            )
        if tag is not None and tag.required:
            raise where.error(
                f"{name} reads a value without {key!r}, so its {key!r} cannot be required"
            )

    def check_tags(self, models: dict[str, Model]) -> None:
        """A key that tells union alternatives apart must stay as declared: no vendor may
        make it optional, nullable or of another type."""
        for model in models.values():
            for field in model.fields:
                union = field.type
                if not isinstance(union, Union) or union.discriminator is None:
                    continue
                for option in union.options:
                    assert isinstance(option, ModelRef)
                    tag = next(
                        f for f in models[option.name].fields if f.wire == union.discriminator
                    )
                    if tag.relaxations:
                        where = self.relax_where[(option.name, tag.wire)]
                        raise where.error(
                            f"{option.name}.{tag.wire} tells the alternatives of"
                            f" {model.name}.{field.wire} apart and cannot be relaxed"
                        )

    # --- ordering -----------------------------------------------------------------

    def order(self, roots: tuple[str, ...], models: dict[str, Model]) -> list[Model]:
        """Dependency order (leaves first, the last root last), spec order breaking ties;
        rejects cycles and orphans."""
        done: list[str] = []
        visiting: list[str] = []

        def visit(name: str) -> None:
            if name in done:
                return
            if name in visiting:
                cycle = " -> ".join([*visiting[visiting.index(name) :], name])
                raise self.types[name][0].where.error(f"type cycle: {cycle}")
            visiting.append(name)
            for field in models[name].fields:
                for ref in _model_refs(field.type):
                    visit(ref)
            visiting.pop()
            done.append(name)

        for root in roots:
            visit(root)
        for name, (decl, _) in self.types.items():
            # A narrowed build drops the types that only left-out fields or quirks use.
            if name not in done and self.options == Options():
                reached_from = " or ".join(repr(root) for root in dict.fromkeys(roots))
                raise decl.where.error(
                    f"type {name!r} is defined but never reached from {reached_from}"
                )
        return [models[name] for name in done]

    def enum(self, name: str) -> Enum:
        decl, vendor = self.enums[name]
        return Enum(
            name=name,
            doc=decl.doc,
            values=tuple(EnumValue(v, d) for v, d in decl.values),
            open=decl.open and not self.options.strict,
            origin=self.provenance(vendor, None, ()),
        )

    def vendor(self, name: str) -> Vendor:
        raw = next(v for v in self.raw.vendors if v.name == name)
        return Vendor(name=raw.name, title=raw.title, source=raw.source, file=raw.where.file)


def _read_leniently(
    models: dict[str, Model], named: tuple[NamedUnion, ...] = ()
) -> dict[str, Model]:
    """The models of the lenient profile: a value of the declared kind is read whatever
    keys it leaves out or sends as null, as openai-python and the Vercel AI SDK read
    them (servers no vendor file describes leave out `model`, send a null count). Every
    field becomes optional and nullable but two kinds, which read both already or cannot:
    a list with a default (a missing or null list reads as `[]`), and a key that tells
    the alternatives of a union apart (without it a value is of no declared type)."""
    tags = _union_tag_keys(models.values()) | {
        (option.name, u.union.discriminator)
        for u in named
        for option in u.union.options
        if isinstance(option, ModelRef) and u.union.discriminator is not None
    }
    return {
        name: replace(
            model,
            fields=tuple(
                (
                    field
                    if field.has_default or (name, field.wire) in tags
                    else replace(field, required=False, nullable=True)
                )
                for field in model.fields
            ),
        )
        for name, model in models.items()
    }


def _union_tag_keys(models: Iterable[Model]) -> frozenset[tuple[str, str]]:
    """(type, wire key) of every key that tells the alternatives of a union apart."""
    return frozenset(
        (option.name, union.discriminator)
        for model in models
        for field in model.fields
        for union in parts(field.type)
        if isinstance(union, Union) and union.discriminator is not None
        for option in union.options
        if isinstance(option, ModelRef)
    )


def _untyped(expr: TypeExpr) -> TypeExpr:
    """The same JSON shape with every named type replaced by plain JSON."""
    if isinstance(expr, ModelRef):
        return MapOf(Scalar("any"))
    if isinstance(expr, EnumRef):
        return Scalar("string")
    if isinstance(expr, ListOf):
        return ListOf(_untyped(expr.item))
    if isinstance(expr, MapOf):
        return MapOf(_untyped(expr.value))
    if isinstance(expr, Union):
        return Union(tuple(_untyped(option) for option in expr.options), expr.discriminator)
    return expr


def _widen(core: TypeExpr, current: TypeExpr, extra: TypeExpr, where: Where) -> Union:
    """`current` plus the alternatives of `extra`; two vendors may add the same one."""
    options = list(alternatives(current))
    for option in alternatives(extra):
        if option in alternatives(core):
            raise where.error("also_type adds a type the core field already has")
        if option not in options:
            options.append(option)
    return Union(tuple(options))


def _check_default(field: Field, where: Where) -> None:
    """A default normalises a missing or null list to `[]`; nothing else is supported."""
    if field.default is None:
        return
    if field.required or field.nullable:
        raise where.error("a field with a default can be neither required nor nullable")
    if field.default != [] or not isinstance(field.type, ListOf):
        raise where.error(f"default {field.default!r} is not supported: only [] on a list")


def _check_union_kinds(expr: TypeExpr, where: Where) -> None:
    """Alternatives must differ in JSON kind; objects may share it only with a discriminator."""
    if isinstance(expr, (ListOf, MapOf)):
        _check_union_kinds(expr.item if isinstance(expr, ListOf) else expr.value, where)
    if not isinstance(expr, Union):
        return
    kinds: set[str] = set()
    for option in expr.options:
        if isinstance(option, Union):
            named = f"union {option.name!r}" if option.name else "a union"
            raise where.error(
                f"{named} cannot be one alternative of another type; list its members"
                " in a union of their own, or give the alternatives another kind"
            )
        _check_union_kinds(option, where)
        kind = json_kind(option)
        if kind == "any":
            raise where.error("'any' cannot be part of a union: it already accepts every value")
        if kind in kinds and not (kind == "object" and expr.discriminator):
            raise where.error(
                f"two alternatives of the union are both JSON {kind}s; only object types with a"
                " 'discriminator' can share a kind"
            )
        kinds.add(kind)


def _model_refs(expr: TypeExpr) -> list[str]:
    return [p.name for p in parts(expr) if isinstance(p, ModelRef)]


def _enums_used(models: Iterable[Model]) -> set[str]:
    return {
        p.name for m in models for f in m.fields for p in parts(f.type) if isinstance(p, EnumRef)
    }
