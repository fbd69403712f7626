"""`chunkspec inspect`: where captured chunks depart from OpenAI's own definition (the
strict profile), and what in spec/vendors/ explains each departure.

Each chunk is walked along the whole spec (every vendor, lenient profile) and compared,
key by key, with OpenAI's spec (no vendor, strict profile). A key OpenAI does not have
is a vendor's field, or unknown to the spec; a value OpenAI would refuse (null, another
kind, a value outside its enum, a missing key) is explained by the relaxations vendors
declare on that field, or by the lenient profile itself (it reads any key absent or
null, and its enums are open). Findings
are grouped by path, with array indices left out: `$.choices[].delta.reasoning_content`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..ir.load import RawRelax, RawSpec
from ..ir.model import (
    EnumRef,
    Field,
    ListOf,
    MapOf,
    Model,
    ModelRef,
    Provenance,
    Spec,
    TypeExpr,
    Union,
    alternatives,
    json_kind,
)
from .capture import Capture

UNKNOWN = "unknown to the spec"


@dataclass
class Finding:
    """One kind of departure at one path, over a whole capture."""

    path: str
    what: str
    explained: str
    """Who explains it (vendor title, file and source), or UNKNOWN."""
    owner: str
    """The spec type the key belongs to (for an unknown key: where to declare it)."""
    key: str
    count: int = 0
    first: int = 0
    """The number of the first chunk (event or line) it occurs in."""
    values: list[tuple[int, Any]] = field(default_factory=list)
    """(chunk number, value) of every occurrence (kept for drafting)."""
    means: str = ""
    """What the key means, as its spec says (`reasoning`, `cached_prompt_tokens`), if
    anything."""

    @property
    def unknown(self) -> bool:
        return self.explained == UNKNOWN


@dataclass
class Report:
    capture: Capture
    findings: list[Finding]

    @property
    def unknown(self) -> list[Finding]:
        return [f for f in self.findings if f.unknown]


class Inspector:
    def __init__(self, raw: RawSpec, whole: Spec, openai: Spec) -> None:
        self.whole = whole
        self.openai = openai
        self.models = {m.name: m for m in whole.models}
        self.strict = {m.name: m for m in openai.models}
        self.titles = {v.name: (v.title, v.file) for v in whole.vendors}
        self.sources = {v.name: v.source for v in whole.vendors}
        self.meanings: dict[tuple[str, str], str] = {}
        """(type, wire key) -> what it means, as `reasoning` or `text, reasoning`."""
        for spelling in whole.meanings.in_chunks:
            owner, _, wire = spelling.field.partition(".")
            known = self.meanings.get((owner, wire), "")
            if spelling.meaning not in known.split(", "):
                self.meanings[(owner, wire)] = ", ".join(filter(None, (known, spelling.meaning)))
        self.relaxed: dict[tuple[str, str], list[tuple[str, RawRelax]]] = {}
        """(type, wire key) -> every vendor's relaxation of that field."""
        for vendor in raw.vendors:
            for owner, _, relaxes in vendor.relax:
                for relax in relaxes:
                    self.relaxed.setdefault((owner, relax.wire), []).append((vendor.name, relax))

    def report(self, capture: Capture) -> Report:
        found: dict[tuple[str, str], Finding] = {}
        for number, chunk in capture.chunks:
            for finding, value in self._object(chunk, self.whole.root, "$"):
                key = (finding.path, finding.what)
                seen = found.setdefault(key, finding)
                seen.means = self.meanings.get((finding.owner, finding.key), "")
                seen.count += 1
                seen.first = seen.first or number
                seen.values.append((number, value))
        return Report(capture, sorted(found.values(), key=lambda f: (f.first, f.path)))

    # --- the walk ---------------------------------------------------------------------

    def _object(self, value: dict[str, Any], name: str, path: str) -> Iterable[tuple[Finding, Any]]:
        model = self.models[name]
        strict = self.strict.get(name)
        fields = {f.wire: f for f in model.fields}
        for key, item in value.items():
            where = f"{path}.{key}"
            spec_field = fields.get(key)
            if spec_field is None:
                yield Finding(where, "key", UNKNOWN, name, key), item
                continue
            if strict is not None:
                yield from self._against_openai(strict, spec_field, item, where, name)
            else:  # a vendor's own type: OpenAI has nothing to say, the spec does
                yield from self._against_spec(spec_field, item, where, name)
            yield from self._value(item, spec_field.type, where)
        for wanted in (strict or model).fields:
            if wanted.required and wanted.wire not in value:
                relaxed = fields[wanted.wire]
                where = f"{path}.{wanted.wire}"
                yield self._departure(where, "missing", relaxed, name, not relaxed.required), None

    def _against_spec(
        self, spec_field: Field, item: Any, where: str, owner: str
    ) -> Iterable[tuple[Finding, Any]]:
        """A value a field of a vendor's type refuses: unknown to the spec."""
        if item is None:
            problem = None if spec_field.nullable else "null"
        else:
            problem = self._refused(item, spec_field.type, self.whole)
        if problem is not None:
            yield Finding(where, problem, UNKNOWN, owner, spec_field.wire), item

    def _against_openai(
        self, strict: Model, spec_field: Field, item: Any, where: str, owner: str
    ) -> Iterable[tuple[Finding, Any]]:
        openai_field = next((f for f in strict.fields if f.wire == spec_field.wire), None)
        if openai_field is None:  # a vendor's key: its value is the spec's to judge
            credit = self._credit(spec_field.origin)
            yield Finding(where, "key", credit, owner, spec_field.wire), item
            yield from self._against_spec(spec_field, item, where, owner)
            return
        if item is None:
            if not openai_field.nullable:
                yield self._departure(where, "null", spec_field, owner, spec_field.nullable), item
            return
        problem = self._refused(item, openai_field.type, self.openai)
        if problem is not None:
            accepted = self._refused(item, spec_field.type, self.whole) is None
            yield self._departure(where, problem, spec_field, owner, accepted), item

    @staticmethod
    def _refused(item: Any, expected: TypeExpr, spec: Spec) -> str | None:
        """Why a type of `spec` refuses a value at the surface (deeper, the walk goes on)."""
        options = alternatives(expected)
        kind = value_kind(item)
        # A JSON number without a fraction is still a number where a float is wanted.
        fits = (kind, "any", "float") if kind == "int" else (kind, "any")
        if any(json_kind(option) in fits for option in options):
            for option in options:
                if isinstance(option, EnumRef) and isinstance(item, str) and not option.open:
                    values = [v.value for v in spec.enum(option.name).values]
                    if item not in values:
                        return f"value {item!r} (not one of OpenAI's {option.name})"
            return None
        whose = "the spec" if spec.options.vendors is None else "OpenAI"
        return f"{kind} ({whose} has {' | '.join(json_kind(o) for o in options)})"

    def _value(self, item: Any, type_: TypeExpr, where: str) -> Iterable[tuple[Finding, Any]]:
        for option in alternatives(type_):
            if isinstance(option, ModelRef) and isinstance(item, dict):
                yield from self._object(item, self._tagged(type_, item) or option.name, where)
                return
            if isinstance(option, ListOf) and isinstance(item, list):
                for element in item:
                    yield from self._value(element, option.item, f"{where}[]")
                return
            if isinstance(option, MapOf) and isinstance(item, dict):
                for element in item.values():
                    yield from self._value(element, option.value, f"{where}.*")
                return

    def _tagged(self, type_: TypeExpr, item: dict[str, Any]) -> str | None:
        """The model a discriminated union picks for `item`: the one whose tag field's
        one enum value is the item's tag."""
        if not isinstance(type_, Union) or type_.discriminator is None:
            return None
        tag = item.get(type_.discriminator)
        for option in type_.options:
            assert isinstance(option, ModelRef)
            tag_field = next(
                f for f in self.models[option.name].fields if f.wire == type_.discriminator
            )
            assert isinstance(tag_field.type, EnumRef)
            if [v.value for v in self.whole.enum(tag_field.type.name).values] == [tag]:
                return option.name
        return None

    # --- attribution ------------------------------------------------------------------

    def _departure(
        self, where: str, what: str, spec_field: Field, owner: str, accepted: bool
    ) -> Finding:
        """A value OpenAI refuses: explained by the vendors' relaxations of the field
        that allow it, or by the lenient profile (it reads any key absent or null, and
        its enums are open), if the spec accepts it; unknown to the spec if it refuses it."""
        if not accepted:
            return Finding(where, what, UNKNOWN, owner, spec_field.wire)
        credits = [
            self._credit(Provenance((vendor,), relax.source or self.sources[vendor], relax.doc))
            for vendor, relax in self.relaxed.get((owner, spec_field.wire), [])
            if _allows(relax, what)
        ]
        explained = "; ".join(credits) or _LENIENT.get(what, _LENIENT["value"])
        return Finding(where, what, explained, owner, spec_field.wire)

    def _credit(self, origin: Provenance | None) -> str:
        if origin is None:
            return "the core spec"
        vendor = origin.vendors[0]
        title, file = self.titles[vendor]
        others = [self.titles[v][0] for v in origin.vendors[1:]]
        also = f" (also {', '.join(others)})" if others else ""
        return f"{title}{also}, {file}: {origin.source}"


_LENIENT = {
    "missing": "the lenient profile (it reads any key absent)",
    "null": "the lenient profile (it reads any key as null)",
    "value": "the lenient profile (its enums are open)",
}
"""How the lenient profile explains a departure no vendor's relaxation does."""


def _allows(relax: RawRelax, what: str) -> bool:
    """Whether a relaxation is what lets a field depart from OpenAI in this way."""
    if what == "missing":
        return relax.required is False
    if what == "null":
        return relax.nullable is True
    if what.startswith("value "):  # a string outside OpenAI's enum
        return False
    return relax.also_type is not None  # another kind of value


def value_kind(value: Any) -> str:
    """The JSON kind of a decoded value, as the spec's scalars name them."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "list"
    return "object"


# --- output ---------------------------------------------------------------------------


def table(reports: list[Report]) -> str:
    """The reports, for people: a summary line and an aligned table per capture."""
    out: list[str] = []
    for report in reports:
        capture = report.capture
        done = "" if capture.done is None else (", [DONE] seen" if capture.done else ", no [DONE]")
        out.append(
            f"{capture.name}: {len(capture.chunks)} chunks ({capture.kind}){done},"
            f" {len(capture.errors)} error events, {len(capture.other_events)} other events"
        )
        rows = [("path", "what", "count", "first", "means", "explained by")]
        rows += [
            (f.path, f.what, str(f.count), str(f.first), f.means or "-", f.explained)
            for f in report.findings
        ]
        if len(rows) == 1:
            out.append("  nothing departs from OpenAI's definition")
            continue
        widths = [max(len(row[i]) for row in rows) for i in range(5)]
        for row in rows:
            cells = [
                row[0].ljust(widths[0]),
                row[1].ljust(widths[1]),
                row[2].rjust(widths[2]),
                row[3].rjust(widths[3]),
                row[4].ljust(widths[4]),
                row[5],
            ]
            out.append("  " + "  ".join(cells).rstrip())
        unknown = len(report.unknown)
        out.append(
            f"  {unknown} unknown to the spec" if unknown else "  every key is known to the spec"
        )
    return "\n".join(out) + "\n"


def as_json(reports: list[Report]) -> str:
    """The reports, for machines."""
    document = [
        {
            "capture": r.capture.name,
            "format": r.capture.kind,
            "chunks": len(r.capture.chunks),
            "done": r.capture.done,
            "error_events": r.capture.errors,
            "other_events": r.capture.other_events,
            "departures": [
                {
                    "path": f.path,
                    "what": f.what,
                    "count": f.count,
                    "first": f.first,
                    "explained_by": None if f.unknown else f.explained,
                    "known": not f.unknown,
                    "means": f.means.split(", ") if f.means else [],
                }
                for f in r.findings
            ],
        }
        for r in reports
    ]
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
