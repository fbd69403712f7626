"""Load and validate the spec files into located records (stage 1 of the pipeline).

Checks here are about the shape of each file: known keys, required docs, flag types.
Checks that need every file at once (unknown types, collisions, cycles) are in build.py.
Every error names the file and line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..runtime.merge import _RULES
from .errors import SpecError
from .requests import RequestDialect, check_unique, request_dialects
from .yamlfile import Keys, Located, load_yaml

CORE_FILE = "spec/chat_completion_chunk.yaml"
VENDOR_DIR = "spec/vendors"
FAMILY_FILES = {
    "chat": CORE_FILE,
    "messages": "spec/messages_stream_event.yaml",
    "responses": "spec/responses_stream_event.yaml",
}
"""The file of each protocol's event family; chat's is required, the others are read
when they exist. A vendor file holds chat's fields at its top level and another
family's in a section named after it."""

FAMILY_SECTIONS = tuple(family for family in FAMILY_FILES if family != "chat")
"""The families a vendor file may hold a section for, named after them (`messages:`)."""

TYPE_NAME = re.compile(r"^[A-Z][A-Za-z0-9]*$")
"""The name of a type, an enum or a named union: PascalCase."""
VENDOR_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
"""The name of a vendor, the stem of its file: lower_snake_case."""
WIRE_NAME = re.compile(r'[^"\\\x00-\x1f]+')
"""A field's wire key (matched whole): no quote, backslash or control character, which
msgspec cannot name a field with."""

# The keys of each kind of mapping in a spec file (docs/spec-format.md has a table of
# each); generator/ir/format_schema.py builds the spec's JSON Schema from them.
CORE_KEYS = Keys(
    frozenset(
        {"root", "completion", "request", "requests", "types", "enums", "meanings", "dialects"}
    ),
    frozenset({"root", "types"}),
)
"""The core file (chat's family file)."""
# Another protocol's meanings are read by its runtime reader, not from paths.
FAMILY_KEYS = Keys(
    frozenset({"family", "root", "completion", "request", "types", "enums", "unions"}),
    frozenset({"family", "root", "completion", "types"}),
)
"""Another family's file (`spec/messages_stream_event.yaml`); its module always has an
accumulator, of what its stream adds up to (`completion`)."""
SECTION_KEYS = Keys(frozenset({"source", "fields", "types", "enums", "relax"}))
"""A vendor's section for another family (`messages:`), and the chat part of its file."""
VENDOR_KEYS = Keys(
    frozenset({"vendor", "title", "source", "requests"})
    | SECTION_KEYS.allowed
    | frozenset(FAMILY_SECTIONS),
    frozenset({"vendor", "title", "source"}),
)
"""A vendor file."""
TYPE_KEYS = Keys(frozenset({"doc", "fields", "error_when", "fill"}), frozenset({"doc", "fields"}))
ERROR_WHEN_KEYS = Keys(frozenset({"has", "lacks", "doc"}), frozenset({"has", "lacks", "doc"}))
ENUM_KEYS = Keys(frozenset({"doc", "values", "open"}), frozenset({"doc", "values"}))
UNION_KEYS = Keys(
    frozenset({"doc", "discriminator", "members", "absent"}),
    frozenset({"doc", "discriminator", "members"}),
)
MEANING_KEYS = Keys(frozenset({"doc"}), frozenset({"doc"}))
"""A meaning of the vocabulary (the core file's `meanings:`)."""
DIALECT_KEYS = Keys(frozenset({"doc", "reasoning"}), frozenset({"doc", "reasoning"}))
"""A writer's dialect (the core file's `dialects:`)."""
DIALECT_REASONING_KEYS = Keys(frozenset({"key", "tags"}), frozenset({"key"}))
"""A dialect's `reasoning` when it is a mapping."""
MEANS_KEYS = Keys(
    frozenset({"meaning", "path", "precedence", "unit", "items"}), frozenset({"meaning"})
)
"""A `means:` entry when it is a mapping."""
FIELD_KEYS = Keys(
    frozenset(
        {
            "type",
            "doc",
            "required",
            "nullable",
            "default",
            "deprecated",
            "discriminator",
            "merge",
            "into",
            "repeats",
            "means",
            "client_only",
        }
    ),
    frozenset({"type", "doc"}),
)
"""A field of a type (under `types:`)."""
# A field a vendor adds to another type says who else sends it and where that is
# documented; the fields of a type are credited through the type's file.
VENDOR_FIELD_KEYS = Keys(FIELD_KEYS.allowed | {"also", "source"}, FIELD_KEYS.required)
"""A field a vendor adds to a type (under `fields:`)."""
RELAX_KEYS = Keys(
    frozenset({"required", "nullable", "also_type", "doc", "source", "means"}), frozenset({"doc"})
)
"""A relaxation of a core field (under `relax:`)."""
RELAXED = {"required": False, "nullable": True}
"""The one value a relaxation may give each flag: a vendor only loosens a field."""


@dataclass(frozen=True)
class Where:
    file: str
    line: int | None

    def error(self, message: str) -> SpecError:
        return SpecError(message, self.file, self.line)


@dataclass(frozen=True)
class RawMeans:
    """What a field's value, or a value at `path` inside it, means."""

    meaning: str
    path: str
    """"" for the value itself; else keys and list filters, as `[type=text].text`."""
    precedence: int
    unit: float
    items: tuple[tuple[str, str], ...]
    """For tool calls and citations: (part, path in an item), as (`url`, `link`)."""
    where: Where


@dataclass(frozen=True)
class RawMeaning:
    """One meaning of the vocabulary."""

    name: str
    doc: str
    where: Where


@dataclass(frozen=True)
class RawDialect:
    """Where a writer puts reasoning: a key of the delta, with tags around it in text."""

    name: str
    doc: str
    reasoning: str
    tags: tuple[str, str] | None
    where: Where


@dataclass(frozen=True)
class RawField:
    wire: str
    type: str
    doc: str
    required: bool
    nullable: bool
    default: object | None
    deprecated: str | None
    discriminator: str | None
    source: str | None
    also: tuple[str, ...]
    merge: str | None
    into: str | None
    repeats: str | None
    means: tuple[RawMeans, ...]
    where: Where
    type_where: Where
    client_only: bool = False


@dataclass(frozen=True)
class RawRelax:
    """A vendor quirk that loosens a core field."""

    wire: str
    required: bool | None
    nullable: bool | None
    also_type: str | None
    doc: str
    source: str | None
    means: tuple[RawMeans, ...]
    where: Where


@dataclass(frozen=True)
class RawErrorWhen:
    has: str
    lacks: str
    doc: str


@dataclass(frozen=True)
class RawType:
    name: str
    doc: str
    fields: tuple[RawField, ...]
    error_when: RawErrorWhen | None
    fill: tuple[tuple[str, object, Where], ...]
    """Values the accumulator writes for keys no chunk supplied: (wire key, JSON value, where)."""
    where: Where


@dataclass(frozen=True)
class RawEnum:
    name: str
    doc: str
    values: tuple[tuple[str, str], ...]
    open: bool
    where: Where


@dataclass(frozen=True)
class RawUnion:
    """A named union of object types told apart by one key; the member whose key is a
    plain string takes every value no other member has."""

    name: str
    doc: str
    discriminator: str
    members: tuple[str, ...]
    where: Where
    absent: str | None = None
    """The member a value without the key reads as (`absent:`), if any."""
    absent_where: Where | None = None


@dataclass(frozen=True)
class RawVendor:
    name: str
    title: str
    source: str
    types: tuple[RawType, ...]
    enums: tuple[RawEnum, ...]
    fields: tuple[tuple[str, Where, tuple[RawField, ...]], ...]
    """(owning type, where the type is named, fields added to it)"""
    relax: tuple[tuple[str, Where, tuple[RawRelax, ...]], ...]
    where: Where
    sections: tuple[tuple[str, RawVendor], ...] = ()
    """What the vendor sends in another protocol's family: (family, its section)."""
    requests: tuple[RequestDialect, ...] = ()
    """How the vendor's backends read a chat request."""


@dataclass(frozen=True)
class RawCore:
    root: str
    completion: str | None
    """The type the chunks of a stream merge into."""
    types: tuple[RawType, ...]
    enums: tuple[RawEnum, ...]
    meanings: tuple[RawMeaning, ...]
    dialects: tuple[RawDialect, ...]
    where: Where
    family: str = "chat"
    unions: tuple[RawUnion, ...] = ()
    request: str | None = None
    """The request whose response the stream is (its body, as a client sends it)."""
    requests: tuple[RequestDialect, ...] = ()
    """How backends read a chat request (chat's file: OpenAI's)."""


@dataclass(frozen=True)
class RawSpec:
    core: RawCore
    vendors: tuple[RawVendor, ...]
    files: tuple[str, ...]
    families: tuple[RawCore, ...] = ()
    """The other protocols' event families, in the order of FAMILY_FILES."""

    @property
    def request_dialects(self) -> tuple[RequestDialect, ...]:
        """Every chat request dialect, OpenAI's first, then the vendors' by file."""
        return (*self.core.requests, *(d for v in self.vendors for d in v.requests))

    def family(self, name: str) -> RawSpec:
        """The spec of one family: its file, and each vendor's section for it."""
        if name == self.core.family:
            return self
        core = next(c for c in self.families if c.family == name)
        vendors = tuple(
            dict(v.sections).get(name) or replace(v, types=(), enums=(), fields=(), relax=())
            for v in self.vendors
        )
        serving = {v.name for v in self.vendors if name in dict(v.sections)}
        files = [f for f in self.files[1:] if Path(f).stem in serving]
        # Every module writes chat requests: the chat file's dialects go with it.
        core = replace(core, requests=self.core.requests)
        return RawSpec(core, vendors, (FAMILY_FILES[name], *files))


def load_spec(root: Path) -> RawSpec:
    """Read the core file, the other families' files that exist and every vendor file
    (sorted by name) under `root`."""
    core = _core(load_yaml(root / CORE_FILE, CORE_FILE), CORE_FILE)
    families = tuple(
        _core(load_yaml(root / file, file), file, family)
        for family, file in FAMILY_FILES.items()
        if family != "chat" and (root / file).exists()
    )
    vendor_files = sorted((root / VENDOR_DIR).glob("*.yaml"))
    for stray in sorted((root / VENDOR_DIR).glob("*.yml")):
        raise SpecError(
            "vendor files end in .yaml; this one would be ignored", f"{VENDOR_DIR}/{stray.name}"
        )
    vendors = []
    for path in vendor_files:
        display = f"{VENDOR_DIR}/{path.name}"
        vendors.append(_vendor(load_yaml(path, display), display, path.stem))
    files = (CORE_FILE, *(f"{VENDOR_DIR}/{p.name}" for p in vendor_files))
    raw = RawSpec(core, tuple(vendors), files, families)
    check_unique(raw.request_dialects)
    return raw


# --- shape checks -----------------------------------------------------------


def _at(mapping: Located, file: str, key: str | None = None) -> Where:
    line = mapping.key_lines.get(key, mapping.line) if key is not None else mapping.line
    return Where(file, line)


def _keys(mapping: Located, file: str, what: str, keys: Keys, where: Where | None = None) -> None:
    """Reject unknown keys; a missing one is reported at `where` (the line naming the thing)."""
    for key in mapping:
        if key not in keys.allowed:
            known = ", ".join(sorted(keys.allowed))
            raise _at(mapping, file, key).error(f"unknown key {key!r} in {what} (known: {known})")
    for key in sorted(keys.required):
        if key not in mapping:
            raise (where or _at(mapping, file)).error(f"{what} needs {key!r}")


def _mapping(value: Any, where: Where, what: str) -> Located:
    if not isinstance(value, Located):
        raise where.error(f"{what} must be a mapping")
    return value


def _text(mapping: Located, file: str, key: str, what: str) -> str:
    value = mapping[key]
    if not isinstance(value, str) or not value.strip():
        raise _at(mapping, file, key).error(f"{key!r} of {what} must be a non-empty string")
    return " ".join(value.split())


def _flag(mapping: Located, file: str, key: str, default: bool) -> bool:
    value = mapping.get(key, default)
    if not isinstance(value, bool):
        raise _at(mapping, file, key).error(f"{key!r} must be true or false")
    return value


def _core(doc: Located, file: str, family: str = "chat") -> RawCore:
    if family != "chat":
        _keys(doc, file, "a family file", FAMILY_KEYS)
        if doc["family"] != family:
            raise _at(doc, file, "family").error(
                f"this file holds the {family!r} family; it says {doc['family']!r}"
            )
    else:
        _keys(doc, file, "the core spec", CORE_KEYS)
    root = _text(doc, file, "root", "the core spec")
    return RawCore(
        family=family,
        unions=_unions(doc, file),
        root=root,
        completion=(
            _text(doc, file, "completion", "the core spec") if "completion" in doc else None
        ),
        request=_text(doc, file, "request", "the core spec") if "request" in doc else None,
        requests=request_dialects(doc, file),
        types=_types(doc, file),
        enums=_enums(doc, file),
        meanings=_meanings(doc, file),
        dialects=_dialects(doc, file),
        where=_at(doc, file),
    )


def _dialects(doc: Located, file: str) -> tuple[RawDialect, ...]:
    if "dialects" not in doc:
        return ()
    section = _mapping(doc["dialects"], _at(doc, file, "dialects"), "'dialects'")
    out = []
    for name in section:
        where = _at(section, file, name)
        what = f"dialect {name}"
        body = _mapping(section[name], where, what)
        _keys(body, file, what, DIALECT_KEYS, where)
        reasoning = body["reasoning"]
        tags: tuple[str, str] | None = None
        if isinstance(reasoning, Located):
            here = _at(body, file, "reasoning")
            _keys(reasoning, file, f"'reasoning' of {what}", DIALECT_REASONING_KEYS, here)
            raw_tags = reasoning.get("tags")
            if raw_tags is not None:
                if not (
                    isinstance(raw_tags, list)
                    and len(raw_tags) == 2
                    and all(isinstance(t, str) and t for t in raw_tags)
                ):
                    raise _at(reasoning, file, "tags").error(
                        "'tags' is two non-empty strings, the open and the close tag"
                    )
                tags = (raw_tags[0], raw_tags[1])
            key = _text(reasoning, file, "key", what)
        elif isinstance(reasoning, str) and reasoning.strip():
            key = reasoning.strip()
        else:
            raise _at(body, file, "reasoning").error(
                f"'reasoning' of {what} is a key of the delta, or {{key: ..., tags: [...]}}"
            )
        out.append(RawDialect(name, _text(body, file, "doc", what), key, tags, where))
    return tuple(out)


def _meanings(doc: Located, file: str) -> tuple[RawMeaning, ...]:
    if "meanings" not in doc:
        return ()
    section = _mapping(doc["meanings"], _at(doc, file, "meanings"), "'meanings'")
    out = []
    for name in section:
        where = _at(section, file, name)
        body = _mapping(section[name], where, f"meaning {name}")
        _keys(body, file, f"meaning {name}", MEANING_KEYS, where)
        out.append(RawMeaning(name, _text(body, file, "doc", f"meaning {name}"), where))
    return tuple(out)


def _means(body: Located, file: str, what: str) -> tuple[RawMeans, ...]:
    """`means: NAME`, a mapping, or a list of either."""
    if "means" not in body:
        return ()
    value = body["means"]
    where = _at(body, file, "means")
    entries = value if isinstance(value, list) else [value]
    if not entries:
        raise where.error(f"'means' of {what} is an empty list")
    return tuple(_one_means(entry, file, where, what) for entry in entries)


def _one_means(entry: Any, file: str, where: Where, what: str) -> RawMeans:
    if isinstance(entry, str):
        return RawMeans(entry, "", 0, 1.0, (), where)
    body = _mapping(entry, where, f"'means' of {what}")
    here = _at(body, file)
    _keys(body, file, f"'means' of {what}", MEANS_KEYS, here)
    precedence = body.get("precedence", 0)
    if not isinstance(precedence, int) or isinstance(precedence, bool):
        raise _at(body, file, "precedence").error("'precedence' must be an integer")
    unit = body.get("unit", 1.0)
    if not isinstance(unit, (int, float)) or isinstance(unit, bool) or unit <= 0:
        raise _at(body, file, "unit").error(
            "'unit' must be a positive number: what one unit of the value is in the"
            " meaning's unit (1.0e-10 for ticks of 1e-10 USD)"
        )
    items: list[tuple[str, str]] = []
    if "items" in body:
        parts = _mapping(body["items"], _at(body, file, "items"), f"'items' of {what}")
        for part in parts:
            # A list gives a part's other spellings, the first found wins (a custom
            # tool call's `custom.name` beside a function's `function.name`).
            paths = parts[part] if isinstance(parts[part], list) else [parts[part]]
            for path in paths:
                if not isinstance(path, str) or not path.strip():
                    raise _at(parts, file, part).error(
                        f"the path of item part {part!r} is empty or not a string"
                    )
                items.append((str(part), path.strip()))
    path = body.get("path", "")
    if not isinstance(path, str):
        raise _at(body, file, "path").error("'path' must be a string, as `[type=text].text`")
    return RawMeans(
        meaning=_text(body, file, "meaning", f"'means' of {what}"),
        path=path.strip(),
        precedence=precedence,
        unit=float(unit),
        items=tuple(items),
        where=here,
    )


def _vendor(doc: Located, file: str, stem: str) -> RawVendor:
    _keys(doc, file, "a vendor file", VENDOR_KEYS)
    name = _text(doc, file, "vendor", "a vendor file")
    if not VENDOR_NAME.match(name):
        raise _at(doc, file, "vendor").error(f"vendor name {name!r} must be lower_snake_case")
    if name != stem:
        raise _at(doc, file, "vendor").error(
            f"vendor {name!r} must live in spec/vendors/{name}.yaml"
        )
    named = RawVendor(
        name=name,
        title=_text(doc, file, "title", "a vendor file"),
        source=_text(doc, file, "source", "a vendor file"),
        types=(),
        enums=(),
        fields=(),
        relax=(),
        where=_at(doc, file),
        requests=request_dialects(doc, file),
    )
    vendor = _vendor_section(doc, file, named)  # chat's, at the top level
    sections = []
    for family in sorted(set(FAMILY_SECTIONS) & set(doc)):
        where = _at(doc, file, family)
        section = _mapping(doc[family], where, f"the {family!r} section")
        _keys(section, file, f"the {family!r} section", SECTION_KEYS, where)
        sections.append((family, replace(_vendor_section(section, file, vendor), where=where)))
    return replace(vendor, sections=tuple(sections))


def _vendor_section(doc: Located, file: str, vendor: RawVendor) -> RawVendor:
    """A vendor's types, enums, fields and relaxations in one family."""
    fields = []
    for owner, owner_where, body in _owners(doc, file, "fields"):
        fields.append((owner, owner_where, _fields(body, file, owner, vendor=True)))
    relax = []
    for owner, owner_where, body in _owners(doc, file, "relax"):
        relax.append((owner, owner_where, tuple(_relax(body, file, owner, wire) for wire in body)))
    return replace(
        vendor,
        source=_text(doc, file, "source", "a vendor section") if "source" in doc else vendor.source,
        types=_types(doc, file),
        enums=_enums(doc, file),
        fields=tuple(fields),
        relax=tuple(relax),
    )


def _unions(doc: Located, file: str) -> tuple[RawUnion, ...]:
    if "unions" not in doc:
        return ()
    section = _mapping(doc["unions"], _at(doc, file, "unions"), "'unions'")
    out = []
    for name in section:
        where = _at(section, file, name)
        if not TYPE_NAME.match(name):
            raise where.error(f"union name {name!r} must be PascalCase")
        body = _mapping(section[name], where, f"union {name}")
        _keys(body, file, f"union {name}", UNION_KEYS, where)
        members = body["members"]
        if (
            not isinstance(members, list)
            or len(members) < 2
            or not all(isinstance(m, str) and TYPE_NAME.match(m) for m in members)
        ):
            raise _at(body, file, "members").error(
                f"the members of {name} are a list of two or more type names"
            )
        out.append(
            RawUnion(
                name=name,
                doc=_text(body, file, "doc", f"union {name}"),
                discriminator=_text(body, file, "discriminator", f"union {name}"),
                members=tuple(members),
                where=where,
                absent=_text(body, file, "absent", f"union {name}") if "absent" in body else None,
                absent_where=_at(body, file, "absent") if "absent" in body else None,
            )
        )
    return tuple(out)


def _owners(doc: Located, file: str, key: str) -> list[tuple[str, Where, Located]]:
    if key not in doc:
        return []
    section = _mapping(doc[key], _at(doc, file, key), f"{key!r}")
    out = []
    for owner in section:
        where = _at(section, file, owner)
        out.append((owner, where, _mapping(section[owner], where, f"{key!r} of {owner}")))
    return out


def _types(doc: Located, file: str) -> tuple[RawType, ...]:
    if "types" not in doc:
        return ()
    section = _mapping(doc["types"], _at(doc, file, "types"), "'types'")
    out = []
    for name in section:
        where = _at(section, file, name)
        if not TYPE_NAME.match(name):
            raise where.error(f"type name {name!r} must be PascalCase")
        body = _mapping(section[name], where, f"type {name}")
        _keys(body, file, f"type {name}", TYPE_KEYS, where)
        fields_map = _mapping(body["fields"], _at(body, file, "fields"), f"fields of {name}")
        if not fields_map:
            raise _at(body, file, "fields").error(f"type {name} has no fields")
        out.append(
            RawType(
                name=name,
                doc=_text(body, file, "doc", f"type {name}"),
                fields=_fields(fields_map, file, name, vendor=False),
                error_when=_error_when(body, file, name),
                fill=_fill(body, file, name),
                where=where,
            )
        )
    return tuple(out)


def _error_when(body: Located, file: str, name: str) -> RawErrorWhen | None:
    if "error_when" not in body:
        return None
    rule = _mapping(body["error_when"], _at(body, file, "error_when"), f"error_when of {name}")
    _keys(rule, file, f"error_when of {name}", ERROR_WHEN_KEYS)
    return RawErrorWhen(
        has=_text(rule, file, "has", "error_when"),
        lacks=_text(rule, file, "lacks", "error_when"),
        doc=_text(rule, file, "doc", "error_when"),
    )


def _fill(body: Located, file: str, name: str) -> tuple[tuple[str, object, Where], ...]:
    if "fill" not in body:
        return ()
    section = _mapping(body["fill"], _at(body, file, "fill"), f"fill of {name}")
    out = []
    for wire in section:
        value = section[wire]
        where = _at(section, file, wire)
        if isinstance(value, Located):
            if value:
                raise where.error("a fill value is a JSON scalar, null or {} (an empty object)")
            value = {}
        elif value is not None and not isinstance(value, (str, int, float)):
            raise where.error("a fill value is a JSON scalar, null or {} (an empty object)")
        out.append((wire, value, where))
    return tuple(out)


# How the values of a field in successive chunks merge (see docs/spec-format.md): the
# rules the accumulator of generator/runtime/merge.py implements.
MERGE_RULES = tuple(sorted(_RULES))

# How the values of a field recur across chunks (see docs/spec-format.md).
REPEATS = ("stream", "vocabulary")


def _fields(section: Located, file: str, owner: str, *, vendor: bool) -> tuple[RawField, ...]:
    out = []
    for wire in section:
        where = _at(section, file, wire)
        what = f"field {owner}.{wire}"
        if not wire:
            raise where.error(f"empty field name in {owner}")
        if not WIRE_NAME.fullmatch(wire):
            raise where.error(
                f"field name {wire!r} has a quote, a backslash or a control character,"
                " which msgspec cannot name a field with"
            )
        body = _mapping(section[wire], where, what)
        _keys(body, file, what, VENDOR_FIELD_KEYS if vendor else FIELD_KEYS, where)
        deprecated = body.get("deprecated")
        if deprecated is not None and not (isinstance(deprecated, str) and deprecated.strip()):
            raise _at(body, file, "deprecated").error(
                "'deprecated' must say why, as a non-empty string"
            )
        also = body.get("also", [])
        if not isinstance(also, list) or not all(isinstance(v, str) for v in also):
            raise _at(body, file, "also").error("'also' must be a list of vendor names")
        if len(set(also)) != len(also):
            raise _at(body, file, "also").error("'also' names a vendor twice")
        out.append(
            RawField(
                wire=wire,
                type=_text(body, file, "type", what),
                doc=_text(body, file, "doc", what),
                required=_flag(body, file, "required", False),
                nullable=_flag(body, file, "nullable", False),
                default=body.get("default"),
                deprecated=" ".join(deprecated.split()) if isinstance(deprecated, str) else None,
                discriminator=(
                    _text(body, file, "discriminator", what) if "discriminator" in body else None
                ),
                source=_text(body, file, "source", what) if "source" in body else None,
                also=tuple(also),
                merge=_choice(body, file, "merge", MERGE_RULES, "merge rule"),
                into=_text(body, file, "into", what) if "into" in body else None,
                repeats=_choice(body, file, "repeats", REPEATS, "kind of repeat"),
                means=_means(body, file, what),
                where=where,
                type_where=_at(body, file, "type"),
                client_only=_flag(body, file, "client_only", False),
            )
        )
    return tuple(out)


def _choice(body: Located, file: str, key: str, known: tuple[str, ...], what: str) -> str | None:
    if key not in body:
        return None
    value = body[key]
    if value not in known:
        raise _at(body, file, key).error(f"unknown {what} {value!r} (known: {', '.join(known)})")
    return str(value)


def _relax(section: Located, file: str, owner: str, wire: str) -> RawRelax:
    where = _at(section, file, wire)
    what = f"relaxation of {owner}.{wire}"
    body = _mapping(section[wire], where, what)
    _keys(body, file, what, RELAX_KEYS, where)
    required = body.get("required")
    nullable = body.get("nullable")
    if required not in (None, RELAXED["required"]):
        raise _at(body, file, "required").error("a vendor can only relax 'required' to false")
    if nullable not in (None, RELAXED["nullable"]):
        raise _at(body, file, "nullable").error("a vendor can only relax 'nullable' to true")
    also_type = _text(body, file, "also_type", what) if "also_type" in body else None
    if required is None and nullable is None and also_type is None:
        raise where.error(f"{what} changes nothing (set required, nullable or also_type)")
    return RawRelax(
        wire=wire,
        required=required,
        nullable=nullable,
        also_type=also_type,
        doc=_text(body, file, "doc", what),
        source=_text(body, file, "source", what) if "source" in body else None,
        means=_means(body, file, what),
        where=where,
    )


def _enums(doc: Located, file: str) -> tuple[RawEnum, ...]:
    if "enums" not in doc:
        return ()
    section = _mapping(doc["enums"], _at(doc, file, "enums"), "'enums'")
    out = []
    for name in section:
        where = _at(section, file, name)
        if not TYPE_NAME.match(name):
            raise where.error(f"enum name {name!r} must be PascalCase")
        body = _mapping(section[name], where, f"enum {name}")
        _keys(body, file, f"enum {name}", ENUM_KEYS, where)
        values = _mapping(body["values"], _at(body, file, "values"), f"values of {name}")
        if not values:
            raise _at(body, file, "values").error(f"enum {name} has no values")
        pairs = []
        for value in values:
            doc_text = values[value]
            if not isinstance(doc_text, str) or not doc_text.strip():
                raise _at(values, file, value).error(
                    f"value {value!r} of {name} needs a doc string"
                )
            pairs.append((value, " ".join(doc_text.split())))
        out.append(
            RawEnum(
                name=name,
                doc=_text(body, file, "doc", f"enum {name}"),
                values=tuple(pairs),
                open=_flag(body, file, "open", True),
                where=where,
            )
        )
    return tuple(out)
