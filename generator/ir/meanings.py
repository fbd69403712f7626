"""What each field means: the spellings of every meaning of the vocabulary, as paths
into the completion a stream adds up to (part of stage 2 of the pipeline).

The core file lists the meanings; a field says `means:` in its own file, with a path
into its value, a unit and a precedence where it needs them. Here each declaration is
checked against the types (the path exists, the value has the meaning's kind, no two
spellings tie) and placed: a chunk field is followed to the completion field it merges
into, and every place the completion holds that field is a spelling. The table is made
from the whole spec, whatever the vendor selection: a vendor left out still sends its
keys, which the meanings read as they read any JSON.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from ..runtime.parts import _CHOICE_MEANINGS, _COUNTS, _TEXTS, MEANINGS
from .load import RawMeans, RawSpec, Where
from .model import (
    Dialect,
    Enum,
    EnumRef,
    ListOf,
    MapOf,
    Meaning,
    Meanings,
    Model,
    ModelRef,
    Scalar,
    Spec,
    Spelling,
    Step,
    TypeExpr,
    alternatives,
)


@dataclass(frozen=True)
class _Types:
    models: dict[str, Model]
    enums: dict[str, Enum]


@dataclass(frozen=True)
class _Declared:
    owner: str
    wire: str
    means: RawMeans
    vendor: str | None


_STEP = re.compile(r"\[\*\]|\[([A-Za-z_][A-Za-z0-9_]*)=([^\]]+)\]|\.?([A-Za-z_][A-Za-z0-9_]*)")
_KINDS: dict[str, tuple[str, ...]] = {
    **dict.fromkeys((*_TEXTS, "finish_reason"), ("string",)),
    **dict.fromkeys(_COUNTS, ("int",)),
    "cost_usd": ("int", "float"),
    "reasoning_signature": ("string",),
    "reasoning_encrypted": ("string", "any"),
}
"""The JSON kinds a meaning's value may have (the meanings of `_ITEMS`: their parts')."""
_ITEMS: dict[str, dict[str, tuple[str, ...] | None]] = {
    "tool_calls": {"id": ("string",), "name": ("string",), "arguments": None},
    "server_tools": {
        "index": ("int",),
        "name": ("string",),
        "arguments": None,
        "output": None,
    },
    "citations": {"url": ("string",), "title": ("string",)},
}
"""The meanings read item by item, the parts of an item (`items:`) and the JSON kinds
each may have (None: text, or an object read as its JSON text)."""
_NEEDS_ITEMS = frozenset({"tool_calls", "server_tools"})
"""The meanings whose items are read only by their parts (a citation may be a URL)."""
_REPORTED = frozenset((*_COUNTS, "cost_usd"))
"""The meanings of a usage report: read from one report, never from a list of parts."""
_GATHERED = frozenset({"citations", "reasoning_signature", "reasoning_encrypted"})
"""Meanings gathered from every spelling, not taken from the best one."""


def build(raw: RawSpec, full: Spec) -> Meanings:
    """The meanings of the whole spec, checked."""
    vocabulary = _vocabulary(raw)
    declared = list(_declared(raw))
    known = {m.name for m in vocabulary}
    models = {m.name: m for m in full.models}
    enums = {e.name: e for e in full.enums}
    for d in declared:
        if d.means.meaning not in known:
            raise d.means.where.error(
                f"unknown meaning {d.means.meaning!r} (known: {', '.join(sorted(known))})"
            )
        _check_path(d, _Types(models, enums))
    _check_one_per_field(declared)
    _check_ties(declared)
    spellings = _placed(declared, full, models)
    in_chunks = _placed_in_chunks(declared, full, models)
    order = {name: i for i, name in enumerate(MEANINGS)}
    for placed in (spellings, in_chunks):
        placed.sort(key=lambda s: (order[s.meaning], -s.precedence, len(s.path)))
    return Meanings(vocabulary, tuple(spellings), tuple(in_chunks), _dialects(raw, in_chunks))


def _dialects(raw: RawSpec, in_chunks: list[Spelling]) -> tuple[Dialect, ...]:
    """The dialects, each checked: tags go only into the text's own key. (The key a
    dialect writes reasoning in need not be declared: a writer writes it all the same.)"""
    text = next((s for s in in_chunks if s.meaning == "text" and len(s.path) == 2), None)
    out = []
    for d in raw.core.dialects:
        if text is None:
            raise d.where.error("a dialect needs a text spelled as a key of the delta")
        is_text = d.reasoning == text.path[-1]
        if is_text != (d.tags is not None):
            raise d.where.error(
                f"dialect {d.name}: reasoning goes in the text's own key"
                f" ({text.path[-1]!r}) between tags, and anywhere else without them"
            )
        out.append(Dialect(d.name, d.doc, d.reasoning, d.tags))
    return tuple(out)


def _vocabulary(raw: RawSpec) -> tuple[Meaning, ...]:
    core = raw.core
    if not core.meanings:
        return ()
    names = [m.name for m in core.meanings]
    for meaning in core.meanings:
        if meaning.name not in MEANINGS:
            raise meaning.where.error(
                f"meaning {meaning.name!r} is not one the modules read"
                f" (they read: {', '.join(MEANINGS)})"
            )
    missing = [m for m in MEANINGS if m not in names]
    if missing:
        raise core.where.error(f"'meanings' lacks {', '.join(map(repr, missing))}")
    return tuple(Meaning(m.name, m.doc) for m in core.meanings)


def _declared(raw: RawSpec) -> Iterator[_Declared]:
    for type_ in raw.core.types:
        for f in type_.fields:
            yield from (_Declared(type_.name, f.wire, m, None) for m in f.means)
    for vendor in raw.vendors:
        for type_ in vendor.types:
            for f in type_.fields:
                yield from (_Declared(type_.name, f.wire, m, vendor.name) for m in f.means)
        for owner, _, fields in vendor.fields:
            for f in fields:
                yield from (_Declared(owner, f.wire, m, vendor.name) for m in f.means)
        for owner, _, relaxes in vendor.relax:
            for r in relaxes:
                yield from (_Declared(owner, r.wire, m, vendor.name) for m in r.means)


def steps(path: str, where: Where) -> tuple[Step, ...]:
    """The steps of a path such as `[type=thinking].thinking[type=text].text`."""
    out: list[Step] = []
    at = 0
    while at < len(path):
        match = _STEP.match(path, at)
        if match is None or (at > 0 and match.group(3) and path[at] != "."):
            raise where.error(
                f"bad path {path!r} at character {at + 1}: a path is keys (`.key`) and"
                " list filters (`[key=value]`, `[*]`)"
            )
        if match.group(0) == "[*]":
            out.append(None)
        elif match.group(1):
            out.append((match.group(1), match.group(2)))
        else:
            out.append(match.group(3))
        at = match.end()
    return tuple(out)


def _field_type(models: dict[str, Model], owner: str, wire: str) -> TypeExpr | None:
    model = models.get(owner)
    field = next((f for f in model.fields if f.wire == wire), None) if model else None
    return field.type if field else None


def _check_path(d: _Declared, types: _Types) -> None:
    where = d.means.where
    start = _field_type(types.models, d.owner, d.wire)
    assert start is not None, f"{d.owner}.{d.wire} was checked by the build"
    ends = _walk([start], steps(d.means.path, where), types, d, where)
    meaning = d.means.meaning
    parts = _ITEMS.get(meaning)
    if parts is not None:
        for part, subpath in d.means.items:
            if part not in parts:
                raise where.error(
                    f"'items' of {meaning} has no part {part!r} (its parts: {', '.join(parts)})"
                )
            reached = _walk(ends, steps(subpath, where), types, d, where)
            _leaf_kinds(reached, d, where, part, parts[part])
        if meaning in _NEEDS_ITEMS and not d.means.items:
            raise where.error(
                f"{meaning} needs 'items': the paths of {', '.join(parts)} in an item"
            )
        return
    if d.means.items:
        raise where.error(f"'items' is only for {', '.join(_ITEMS)}, not {meaning}")
    _leaf_kinds(ends, d, where, None, _KINDS.get(meaning))


def _walk(
    start: list[TypeExpr],
    path: tuple[Step, ...],
    types: _Types,
    d: _Declared,
    where: Where,
) -> list[TypeExpr]:
    """The types reached by `path` from any of `start`; an error when none is."""
    current = start
    for index, step in enumerate(path):
        following: list[TypeExpr] = []
        for option in (o for t in current for o in alternatives(t)):
            following += _step_types(option, step, types, where)
        if not following:
            at = shown(path[: index + 1])
            raise where.error(
                f"path {at!r} of {d.owner}.{d.wire} does not exist: no alternative of"
                f" its type has {shown((step,))!r} there"
            )
        current = following
    return current


def _step_types(option: TypeExpr, step: Step, types: _Types, where: Where) -> list[TypeExpr]:
    if isinstance(step, str):
        if isinstance(option, ModelRef):
            model = types.models[option.name]
            return [f.type for f in model.fields if f.wire == step]
        return [option.value] if isinstance(option, MapOf) else []
    if not isinstance(option, ListOf):
        return []
    if step is None:
        return [option.item]
    key, value = step
    reached: list[TypeExpr] = []
    for item in alternatives(option.item):
        if not isinstance(item, ModelRef):
            continue
        tag = next((f for f in types.models[item.name].fields if f.wire == key), None)
        if tag is None:
            continue
        _check_tag(tag.type, key, value, types, where)
        reached.append(item)
    return reached


def _check_tag(tag: TypeExpr, key: str, value: str, types: _Types, where: Where) -> None:
    """A filter's value must be one the key can have (a typo would match nothing)."""
    for option in alternatives(tag):
        if isinstance(option, EnumRef):
            values = [v.value for v in types.enums[option.name].values]
            if value in values:
                return
            raise where.error(
                f"[{key}={value}]: {value!r} is not a value of {option.name}"
                f" (its values: {', '.join(values)})"
            )
        if option == Scalar("string"):
            return
    raise where.error(f"a filter [{key}={value}] needs {key!r} to be a string or an enum")


def _leaf_kinds(
    ends: list[TypeExpr],
    d: _Declared,
    where: Where,
    part: str | None,
    wanted: tuple[str, ...] | None,
) -> None:
    """The value (or an item's `part`) has one of the `wanted` kinds (None: any)."""
    if wanted is None:
        return  # arguments: text or an object; a citation item: a URL or an object
    kinds = {_kind(o) for t in ends for o in alternatives(t)}
    if not kinds & set(wanted):
        what = f"part {part!r} of {d.means.meaning}" if part else d.means.meaning
        found = ", ".join(sorted(kinds))
        raise where.error(
            f"{what} is {' or '.join(wanted)}, but {d.owner}.{d.wire}"
            f"{' at ' + repr(d.means.path) if d.means.path else ''} holds {found}"
        )


def _kind(expr: TypeExpr) -> str:
    if isinstance(expr, Scalar):
        return expr.kind
    if isinstance(expr, EnumRef):
        return "string"
    if isinstance(expr, ListOf):
        return "list"
    return "object"


def shown(path: tuple[Step, ...], every: str = "[*]") -> str:
    """A path as the spec writes one (`reasoning_details[type=reasoning.text].text`);
    `every` spells a step into every item of a list."""
    out = ""
    for step in path:
        if step is None:
            out += every
        elif isinstance(step, tuple):
            out += f"[{step[0]}={step[1]}]"
        else:
            out += ("." if out else "") + step
    return out


def _check_one_per_field(declared: list[_Declared]) -> None:
    """A value has one meaning, and a meaning one spelling per path of a field."""
    seen: dict[tuple[str, str, str], _Declared] = {}
    for d in declared:
        key = (d.owner, d.wire, d.means.path)
        first = seen.setdefault(key, d)
        if first is d:
            continue
        at = f"{first.means.where.file}:{first.means.where.line}"
        if first.means.meaning == d.means.meaning:
            raise d.means.where.error(
                f"{d.owner}.{d.wire} already means {d.means.meaning} there ({at})"
            )
        raise d.means.where.error(
            f"{d.owner}.{d.wire} cannot mean both {first.means.meaning} ({at}) and"
            f" {d.means.meaning}{' at ' + repr(d.means.path) if d.means.path else ''}"
        )


def _placed(declared: list[_Declared], full: Spec, models: dict[str, Model]) -> list[Spelling]:
    """Every spelling: each declaration at every place the completion holds its field."""
    if full.completion is None:
        if declared:
            raise declared[0].means.where.error("meanings need a 'completion' type")
        return []
    into: dict[tuple[str, str], tuple[str, str]] = {}
    for plan in full.merging:
        for rule in plan.rules:
            if rule.into:
                into[(plan.chunk_type, rule.wire)] = (plan.completion_type, rule.into)
    at: dict[tuple[str, str], list[_Declared]] = {}
    for d in declared:
        key = into.get((d.owner, d.wire), (d.owner, d.wire))
        at.setdefault(key, []).append(d)
    placed: list[Spelling] = []
    reached: set[int] = set()
    for owner, wire, prefix in _places(full.completion, models):
        for d in at.get((owner, wire), []):
            reached.add(id(d))
            if d.means.meaning in _REPORTED and _in_a_list(prefix):
                continue  # a breakdown (Groq's usage by model), not the report
            placed.append(_spelling(d, (*prefix, wire)))
    for d in declared:
        if id(d) not in reached:
            raise d.means.where.error(
                f"{d.owner}.{d.wire} is not part of the completion a stream adds up to"
            )
    return placed


def _placed_in_chunks(
    declared: list[_Declared], full: Spec, models: dict[str, Model]
) -> list[Spelling]:
    """Every spelling in a chunk: each declaration at every place a chunk holds its
    field (a field only the completion has is in none)."""
    at: dict[tuple[str, str], list[_Declared]] = {}
    for d in declared:
        at.setdefault((d.owner, d.wire), []).append(d)
    return [
        _spelling(d, (*prefix, wire))
        for owner, wire, prefix in _places(full.root, models)
        for d in at.get((owner, wire), [])
        if not (d.means.meaning in _REPORTED and _in_a_list(prefix))
    ]


def reader_keys(in_chunks: tuple[Spelling, ...]) -> dict[str, tuple[str, ...]]:
    """The keys a reader of chunks looks up: on the chunk (""), a choice ("choices") and
    an object of a choice that holds texts ("choices.delta"). They are the first key of
    each spelling's path at each of these, with the choices and a choice's index."""
    keys: dict[str, list[str]] = {"": ["choices"], "choices": ["index"]}
    for s in in_chunks:
        path = ("choices", None, *s.path) if s.meaning in _CHOICE_MEANINGS else s.path
        levels = [("", 0)]
        if path[:2] == ("choices", None):
            levels.append(("choices", 2))
            if len(path) > 3 and isinstance(path[2], str):
                levels.append((f"choices.{path[2]}", 3))
        for where, at in levels:
            key = path[at] if at < len(path) else None
            if isinstance(key, str) and key not in keys.setdefault(where, []):
                keys[where].append(key)
    return {where: tuple(found) for where, found in keys.items()}


def _in_a_list(prefix: tuple[Step, ...]) -> bool:
    """Whether a place is in a list other than the choices."""
    inner = prefix[2:] if prefix[:2] == ("choices", None) else prefix
    return any(not isinstance(step, str) for step in inner)


def _places(root: str, models: dict[str, Model]) -> Iterator[tuple[str, str, tuple[Step, ...]]]:
    """(type, key, path to the object) of every field the completion can hold."""
    todo: list[tuple[str, tuple[Step, ...], frozenset[str]]] = [(root, (), frozenset())]
    while todo:
        name, prefix, above = todo.pop(0)
        for field in models[name].fields:
            yield name, field.wire, prefix
            for option in alternatives(field.type):
                inner, path = option, (*prefix, field.wire)
                if isinstance(inner, ListOf):
                    inner, path = inner.item, (*path, None)
                for model in alternatives(inner):
                    if isinstance(model, ModelRef) and model.name not in above:
                        todo.append((model.name, path, above | {name}))


def _spelling(d: _Declared, to_field: tuple[Step, ...]) -> Spelling:
    where = d.means.where
    path = (*to_field, *steps(d.means.path, where))
    if d.means.meaning in _CHOICE_MEANINGS:
        if path[:2] != ("choices", None):
            raise where.error(
                f"{d.means.meaning} is a meaning of a choice, but {d.owner}.{d.wire} is"
                " not inside one"
            )
        path = path[2:]
    return Spelling(
        meaning=d.means.meaning,
        path=path,
        precedence=d.means.precedence,
        scale=d.means.unit,
        items=tuple((part, steps(sub, where)) for part, sub in d.means.items),
        field=f"{d.owner}.{d.wire}",
        vendor=d.vendor,
    )


def _check_ties(declared: list[_Declared]) -> None:
    """Two fields spelling one meaning at one precedence could carry the same text
    twice, and then which wins is a guess: the spec must say."""
    seen: dict[tuple[str, int], _Declared] = {}
    for d in declared:
        if d.means.meaning in _GATHERED:
            continue
        first = seen.setdefault((d.means.meaning, d.means.precedence), d)
        if (first.owner, first.wire) != (d.owner, d.wire):
            where = first.means.where
            raise d.means.where.error(
                f"{d.owner}.{d.wire} and {first.owner}.{first.wire} (at {where.file}:"
                f"{where.line}) both spell {d.means.meaning} at precedence"
                f" {d.means.precedence}; give one a higher 'precedence' (the one to read"
                " when both are sent)"
            )
