"""How the chunks of a stream add up to a completion: one merge plan per chunk type.

Starting from the chunk root, which merges into the completion root, every field of a
chunk type gets a rule (declared with `merge:`, else `merge` for an object and `last`
for anything else) and a key in the completion type it merges into. An object field
(`merge`) or a list merged by index (`by_index`) maps its own chunk type onto the type
of the completion field, and so on down. A vendor field that the completion type lacks
is added to it, and a vendor quirk that widens a chunk field widens the completion field
it merges into, so one YAML edit types a vendor field in the chunk and in the result.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from .load import Where
from .model import (
    EnumRef,
    Field,
    Fill,
    ListOf,
    MergeHow,
    MergePlan,
    MergeRule,
    Model,
    ModelRef,
    Scalar,
    TypeExpr,
    Union,
    alternatives,
    parts,
)

FieldWhere = dict[tuple[str, str], Where]
"""(type, wire key) -> where the field is declared; fields added to the completion join it."""


def plan(
    models: dict[str, Model],
    chunk_root: str,
    completion_root: str,
    field_where: FieldWhere,
    fill_where: Callable[[str, str], Where],
) -> tuple[dict[str, Model], tuple[MergePlan, ...]]:
    """The merge plans, and the models with the completion types completed."""
    models = dict(models)
    mapping = {chunk_root: completion_root}
    queue = [chunk_root]
    rules: dict[str, tuple[MergeRule, ...]] = {}
    while queue:
        source = queue.pop(0)
        rules[source] = _guarded(
            tuple(
                _rule(models, mapping, queue, source, field, field_where)
                for field in models[source].fields
            ),
            source,
            field_where,
        )
    for name in _reached(models, (chunk_root, completion_root)):
        model = models[name]
        if name not in rules and any(f.merge or f.into for f in model.fields):
            field = next(f for f in model.fields if f.merge or f.into)
            raise field_where[(name, field.wire)].error(
                f"{name} is not merged from any chunk, so {field.wire!r} takes no merge rule"
            )
        if model.fill and name not in mapping.values():
            raise fill_where(name, model.fill[0][0]).error(
                f"{name} is not merged into, so it takes no 'fill'"
            )
    plans = tuple(
        _plan(models, source, mapping[source], source_rules, fill_where)
        for source, source_rules in rules.items()
    )
    return models, plans


def _reached(models: dict[str, Model], roots: tuple[str, ...]) -> list[str]:
    """The types the roots use, in the order first reached (a narrowed build leaves out
    the types of vendors it does not select)."""
    seen = list(roots)
    for name in seen:
        for field in models[name].fields:
            for part in parts(field.type):
                if isinstance(part, ModelRef) and part.name not in seen:
                    seen.append(part.name)
    return seen


def _guarded(
    rules: tuple[MergeRule, ...], source: str, field_where: FieldWhere
) -> tuple[MergeRule, ...]:
    """The rules, checked for two keys merging into one, plus a `drop` rule for each key
    a field is renamed into: a chunk that also sends that key itself (Perplexity sends
    `message` beside `delta`) must not overwrite what the renamed field merged."""
    taken: dict[str, str] = {}
    for rule in rules:
        if rule.how == "drop":
            continue
        if rule.into in taken:
            raise field_where[(source, rule.wire)].error(
                f"{source}.{rule.wire} and {source}.{taken[rule.into]} both merge into"
                f" {rule.into!r}"
            )
        taken[rule.into] = rule.wire
    wires = {rule.wire for rule in rules}
    shadowed = sorted({r.into for r in rules if r.how != "drop" and r.into not in wires})
    return (*rules, *(MergeRule(key, "drop", "", None) for key in shadowed))


def rule_of(field: Field) -> MergeHow:
    """The declared rule, or the default: objects merge key by key, anything else is replaced."""
    if field.merge is not None:
        return field.merge
    objects = [o for o in alternatives(field.type) if isinstance(o, ModelRef)]
    # A union of object types says which one by a tag: a new value replaces the old.
    return "merge" if len(objects) == 1 else "last"


def _rule(
    models: dict[str, Model],
    mapping: dict[str, str],
    queue: list[str],
    source: str,
    field: Field,
    field_where: FieldWhere,
) -> MergeRule:
    how = rule_of(field)
    where = field_where[(source, field.wire)]
    _check_rule(how, field, models, where)
    if how == "drop":
        return MergeRule(field.wire, how, "", None)
    into = field.into or field.wire
    target_name = mapping[source]
    target = models[target_name]
    counterpart = next((f for f in target.fields if f.wire == into), None)
    if counterpart is None:
        if field.origin is None:
            raise where.error(
                f"{target_name} has no field {into!r} for {source}.{field.wire} to merge into;"
                " declare it there or set 'merge: drop'"
            )
        # A vendor field: the completion gains it as it is, optional.
        counterpart = replace(field, wire=into, required=False, default=None, merge=None, into=None)
        models[target_name] = replace(target, fields=(*target.fields, counterpart))
        target = models[target_name]
        field_where[(target_name, into)] = where
    inner = None
    mapped: TypeExpr | None = None
    if how in ("merge", "by_index"):
        inner = _object_of(field.type) if how == "merge" else _items_of(field.type)
        inner_target = (
            _object_of(counterpart.type) if how == "merge" else _items_of(counterpart.type)
        )
        assert inner is not None
        if inner_target is None:
            shape = "an object" if how == "merge" else "a list of objects"
            raise where.error(
                f"{source}.{field.wire} merges into {target_name}.{into}, which is not {shape}"
            )
        known = inner in mapping
        if mapping.setdefault(inner, inner_target) != inner_target:
            raise where.error(f"{inner} would merge into both {mapping[inner]} and {inner_target}")
        if not known:
            queue.append(inner)
        mapped = ModelRef(inner) if how == "merge" else ListOf(ModelRef(inner))
    widened = _widened(counterpart, field, mapped)
    if widened is None:
        raise where.error(
            f"{source}.{field.wire} and {target_name}.{into} have different types;"
            " a merged value must fit the field it goes to"
        )
    if widened != counterpart:
        fields = tuple(widened if f.wire == into else f for f in target.fields)
        models[target_name] = replace(target, fields=fields)
    return MergeRule(field.wire, how, into, inner)


def _widened(counterpart: Field, field: Field, mapped: TypeExpr | None) -> Field | None:
    """The completion field, widened by the vendor quirks of the chunk field that merges
    into it; None when the chunk field has alternatives no quirk explains.

    `mapped` is the chunk field's object (or list of objects) that merges into the
    completion field's own object type, so it needs no widening.
    """
    have = alternatives(counterpart.type)
    extra = tuple(o for o in alternatives(field.type) if o not in have and o != mapped)
    if not extra:
        return counterpart
    if not field.relaxations:
        return None
    return replace(
        counterpart,
        type=Union((*have, *extra)),
        relaxations=(*counterpart.relaxations, *field.relaxations),
    )


def _check_rule(how: MergeHow, field: Field, models: dict[str, Model], where: Where) -> None:
    options = alternatives(field.type)
    if how == "append" and not any(o == Scalar("string") or isinstance(o, ListOf) for o in options):
        raise where.error("'merge: append' needs a string or a list")
    if how == "append_unless_repeated" and Scalar("string") not in options:
        raise where.error("'merge: append_unless_repeated' needs a string")
    if how == "merge" and sum(isinstance(o, ModelRef) for o in options) != 1:
        raise where.error("'merge: merge' needs an object type (not a union of them)")
    if how == "by_index":
        item = _items_of(field.type)
        fields = models[item].fields if item else ()
        index = next((f for f in fields if f.wire == "index"), None)
        lists = [o for o in options if isinstance(o, ListOf)]
        if index is None or index.type != Scalar("int") or len(lists) != 1:
            raise where.error(
                "'merge: by_index' needs a list of objects with an int 'index' (and no other list)"
            )
    if field.into is not None and how == "drop":
        raise where.error("a dropped field goes nowhere, so it takes no 'into'")


def _plan(
    models: dict[str, Model],
    source: str,
    target_name: str,
    rules: tuple[MergeRule, ...],
    fill_where: Callable[[str, str], Where],
) -> MergePlan:
    target = models[target_name]
    fills = []
    for key, value in target.fill:
        field = next((f for f in target.fields if f.wire == key), None)
        where = fill_where(target_name, key)
        if field is None:
            raise where.error(f"fill names {key!r}, which is not a field of {target_name}")
        if value == {}:
            rule = next((r for r in rules if r.into == key and r.how == "merge"), None)
            if rule is None:
                raise where.error(f"fill {key!r}: {{}} is only for a field that chunks merge into")
            fills.append(Fill(key, None, rule.inner))
            continue
        if not _fits(value, field):
            raise where.error(f"fill {key!r}: {value!r} does not fit {target_name}.{key}")
        fills.append(Fill(key, value, None))
    return MergePlan(
        chunk_type=source,
        completion_type=target_name,
        rules=rules,
        not_null=tuple(f.wire for f in target.fields if not f.nullable),
        fills=tuple(fills),
    )


def _fits(value: object, field: Field) -> bool:
    if value is None:
        return field.nullable
    kinds = {
        bool: ("bool",),
        int: ("int", "float"),
        float: ("float",),
        str: ("string",),
    }[type(value)]
    for option in alternatives(field.type):
        if isinstance(option, Scalar) and option.kind in (*kinds, "any"):
            return True
        if isinstance(option, EnumRef) and isinstance(value, str):
            return True
    return False


def _object_of(expr: TypeExpr) -> str | None:
    return next((o.name for o in alternatives(expr) if isinstance(o, ModelRef)), None)


def _items_of(expr: TypeExpr) -> str | None:
    for option in alternatives(expr):
        if isinstance(option, ListOf) and isinstance(option.item, ModelRef):
            return option.item.name
    return None
