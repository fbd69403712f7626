"""`chunkspec new-vendor NAME --from CAPTURE...`: a vendor file drafted from captures.

Every key the spec does not know is declared on the spec type it was seen in, with a
type inferred from every value seen: int, or float once any value is; nullable once one
is null; lists of what they hold; an object becomes a new named type, its fields
inferred the same way (an object never seen with a key is `map[any]`). Its doc says
where and how often the key was seen. A string on a type whose text merges by appending
(a delta) that changes from chunk to chunk gets `merge: append`. What a person must
confirm is marked `# REVIEW`. The order is the spec's and the captures', so the same
captures always give the same draft; draftfile.py repairs it until it generates.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..ir.format_schema import modeline
from ..ir.load import VENDOR_DIR
from ..ir.model import Spec
from .draftfile import REVIEW, Declared, Draft, Entry
from .inspection import Finding, Report, value_kind


@dataclass
class _Draft:
    vendor: str
    prefix: str
    taken: set[str]
    types: dict[str, tuple[str, dict[str, Declared]]] = field(default_factory=dict)
    """New named types: name -> (doc, fields)."""
    guessed: dict[str, int] = field(default_factory=dict)
    """The precedence of the last `means:` guessed for each meaning."""

    def infer(self, key: str, values: list[Any], owner: str) -> tuple[str, bool]:
        """The type string of a field that took `values`, and whether it is nullable."""
        present = [v for v in values if v is not None]
        nullable = len(present) < len(values)
        kinds = {value_kind(v) for v in present}
        if not kinds:
            return "any", nullable
        if kinds <= {"int", "float"}:
            return ("int" if kinds == {"int"} else "float"), nullable
        if len(kinds) > 1:
            return "any", nullable
        kind = kinds.pop()
        if kind == "list":
            items = [item for value in present for item in value]
            item_type, item_null = self.infer(key, items, owner) if items else ("any", False)
            return f"list[{item_type}]" if not item_null else "list[any]", nullable
        if kind == "object" and any(present):
            return self.new_type(key, present, owner), nullable
        if kind == "object":  # never a key in it: no type of its own to declare
            return "map[any]", nullable
        return kind, nullable

    def new_type(self, key: str, objects: list[dict[str, Any]], owner: str) -> str:
        name = self.prefix + "".join(part.capitalize() for part in key.split("_") if part)
        base, n = name, 2
        while name in self.taken:
            name, n = f"{base}{n}", n + 1
        self.taken.add(name)
        seen: dict[str, list[Any]] = {}
        for value in objects:
            for inner, item in value.items():
                seen.setdefault(inner, []).append(item)
        fields = {}
        for inner, items in seen.items():
            type_, nullable = self.infer(inner, items, name)
            doc = f"Seen in {len(items)} of {len(objects)} `{key}` objects."
            fields[inner] = Declared(type_, nullable, doc)
        doc = f"The `{key}` object of {owner}, as {self.vendor} sends it."
        self.types[name] = (doc, fields)
        return name


def draft(name: str, title: str, spec: Spec, reports: list[Report]) -> Draft:
    """spec/vendors/NAME.yaml for what `reports` found unknown (`draftfile.generating`
    repairs it until the project generates with it)."""
    prefix = "".join(part.capitalize() for part in name.split("_"))
    state = _Draft(title, prefix, set(spec.type_names))
    total = sum(len(r.capture.chunks) for r in reports)
    owners: dict[str, dict[str, Declared]] = {}
    unknown = [f for r in reports for f in r.unknown]
    order = {m.name: i for i, m in enumerate(spec.models)}
    # The chunk first, then the types inside it.
    relax: dict[str, dict[str, list[str]]] = {}
    unfit: list[str] = []
    for finding in sorted(unknown, key=lambda f: (-order[f.owner], f.first)):
        if finding.what != "key" and spec.model(finding.owner).origin is not None:
            # Only core types are relaxed: a vendor's own type is that vendor's to fix.
            unfit.append(f"{finding.path}: {finding.what}, which {finding.owner} refuses")
            continue
        if finding.what != "key":  # a value the spec refuses: loosen the field
            relax.setdefault(finding.owner, {}).setdefault(finding.key, []).extend(
                _loosened(state, finding, total)
            )
            continue
        fields = owners.setdefault(finding.owner, {})
        if finding.key not in fields:
            fields[finding.key] = _declared(state, spec, finding, reports)
    known = sorted(
        {
            (f.path, f.explained)
            for r in reports
            for f in r.findings
            if f.what == "key" and not f.unknown
        }
    )
    # A type before the types inside it (they were named first).
    types = dict(reversed(state.types.items()))
    merging = {plan.chunk_type for plan in spec.merging}
    return Draft(
        f"{VENDOR_DIR}/{name}.yaml",
        _header(name, title, known, unfit),
        [
            *_fields_section(owners, merging),
            *_types_section(types),
            *_relax_section(relax),
        ],
    )


def _declared(state: _Draft, spec: Spec, finding: Finding, reports: list[Report]) -> Declared:
    """The declaration of an unknown key, from its values in every capture."""
    same = [
        (r, f)
        for r in reports
        for f in r.unknown
        if (f.owner, f.key) == (finding.owner, finding.key)
    ]
    values = [value for _, f in same for _, value in f.values]
    type_, nullable = state.infer(finding.key, values, finding.owner)
    names = ", ".join(dict.fromkeys(Path(r.capture.name).name for r, _ in same))
    total = sum(len(r.capture.chunks) for r in reports)
    doc = f"Seen {_times(len(values))} at {finding.path} in the {total} chunks of {names}."
    merge = "append" if type_ == "string" and _grows(spec, finding.owner, values) else None
    return Declared(type_, nullable, doc, merge, _guessed_means(state, spec, finding, type_, merge))


# What a key's name and values suggest it means: (words in the name, words it must not
# have, the value's kinds, the meaning). Only a guess, marked for review; a key that
# matches none means nothing.
_GUESSES = (
    (("reason", "think", "thought"), (), ("string",), "reasoning"),
    (("cache",), ("miss", "write", "creat"), ("int",), "cached_prompt_tokens"),
    (("reasoning",), (), ("int",), "reasoning_tokens"),
    (("cost",), (), ("int", "float"), "cost_usd"),
)


def _guessed_means(
    state: _Draft, spec: Spec, finding: Finding, type_: str, merge: str | None
) -> str | None:
    """A `means:` for a key whose name and values look like a known meaning, where that
    meaning is spelled: reasoning text on the type that holds the text (appended), a
    count or a cost on a usage type. Its precedence is below every spelling the spec
    has (and below the draft's other guesses), so it never takes the place of one."""
    spelled = spec.meanings.in_chunks
    name = finding.key.lower()
    for words, unless, kinds, meaning in _GUESSES:
        if type_ not in kinds or not any(w in name for w in words):
            continue
        if any(w in name for w in unless):
            continue
        kin = "text" if meaning == "reasoning" else "prompt_tokens"
        owners = {s.field.partition(".")[0] for s in spelled if s.meaning == kin}
        if finding.owner not in owners or (meaning == "reasoning" and merge != "append"):
            continue
        used = [s.precedence for s in spelled if s.meaning == meaning] or [0]
        lowest = state.guessed.get(meaning, min(used)) - 5
        state.guessed[meaning] = lowest
        return f"{{meaning: {meaning}, precedence: {lowest}}}"
    return None


def _times(n: int) -> str:
    return "once" if n == 1 else f"{n} times"


def _loosened(state: _Draft, finding: Finding, total: int) -> list[str]:
    """The lines of a relaxation that lets the field take what `finding` saw."""
    seen = f"{finding.count} of {total} chunks, first in chunk {finding.first}"
    if finding.what == "missing":
        lines = ["required: false"]
    elif finding.what == "null":
        lines = ["nullable: true"]
    else:
        values = [value for _, value in finding.values]
        lines = [f"also_type: {state.infer(finding.key, values, finding.owner)[0]}"]
    doc = f"Seen {finding.what} at {finding.path} in {seen}."
    return [*lines, f"doc: {json.dumps(doc)}  {REVIEW}: say why the vendor does this"]


def _relax_section(relax: dict[str, dict[str, list[str]]]) -> list[Entry]:
    if not relax:
        return []
    owners = []
    for owner, keys in relax.items():
        entries = []
        for key, body in keys.items():
            docs = [line for line in body if line.startswith("doc: ")]
            lines = [
                f"      {line}" for line in dict.fromkeys(body) if not line.startswith("doc: ")
            ]
            head = [f"    {key}:", *lines, f"      {docs[0]}"]
            entries.append(Entry(head=head, indent="    "))
        owners.append(Entry(head=[f"  {owner}:"], entries=entries, indent="  "))
    return [Entry(head=["", "relax:"], entries=owners)]


def _grows(spec: Spec, owner: str, values: list[Any]) -> bool:
    """Whether a string on `owner` looks like streamed text: the owner's own text merges
    by appending (a delta), and the values differ from chunk to chunk."""
    plan = next((p for p in spec.merging if p.chunk_type == owner), None)
    appends = plan is not None and any(rule.how == "append" for rule in plan.rules)
    return appends and len(set(values)) > 1


def _header(name: str, title: str, known: Iterable[tuple[str, str]], unfit: list[str]) -> list[str]:
    lines = [
        modeline(f"{VENDOR_DIR}/{name}.yaml"),
        f"# {name}: drafted by `chunkspec new-vendor {name} --from` from captured streams.",
        f"# Review every line marked {REVIEW}, then run `make generate`.",
    ]
    for path, explained in known:
        lines.append(f"# Seen, and declared already: {path} by {explained}")
    for problem in dict.fromkeys(unfit):
        lines.append(f"# {REVIEW}: seen {problem}: change that vendor's file")
    return [
        *lines,
        f"vendor: {name}",
        f"title: {json.dumps(title)}  {REVIEW}: the name the docs credit",
        f"source: https://example.com/{name}  {REVIEW}: where {title} documents its stream",
        "",
    ]


def _fields_section(owners: dict[str, dict[str, Declared]], merging: set[str]) -> list[Entry]:
    if not owners:
        return []
    entries = [
        Entry(
            head=[f"  {owner}:"],
            entries=_fields(fields, "    ", merges=owner in merging),
            indent="  ",
        )
        for owner, fields in owners.items()
    ]
    return [Entry(head=["fields:"], entries=entries)]


def _types_section(types: dict[str, tuple[str, dict[str, Declared]]]) -> list[Entry]:
    if not types:
        return []
    entries = [
        Entry(
            head=[f"  {name}:", f"    doc: {json.dumps(doc)}  {REVIEW}", "    fields:"],
            entries=_fields(fields, "      ", merges=False),
            indent="  ",
        )
        for name, (doc, fields) in types.items()
    ]
    return [Entry(head=["", "types:"], entries=entries)]


def _fields(fields: dict[str, Declared], indent: str, *, merges: bool) -> list[Entry]:
    return [
        Entry(declared=declared, key=key, indent=indent, merges=merges)
        for key, declared in fields.items()
    ]
