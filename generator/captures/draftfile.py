"""A drafted vendor file as entries (fields, types, relaxations and the mappings that
hold them), written as YAML and repaired until the project generates with it.

A draft must always generate. When the generator refuses it, the entry at the line it
names is changed to something that generates and marked `# REVIEW` with its message: a
field drops a `means:` the message is about; a field of a chunk type takes `merge:
drop` (kept in the chunk, not merged into the completion: a `message` sent beside
`delta` would merge into the key `delta` merges into); anything else is left out, as a
comment, and its key stays unknown to the spec, kept like any unknown key. An entry
left out leaves out the mapping that held only it, and what named it fails next and is
left out in turn; an error that names no line of the draft changes its last entry still
kept. Each entry changes at most three times, so the repairs end.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace

import yaml

from ..ir.errors import SpecError

REVIEW = "# REVIEW"


@dataclass
class Declared:
    """A field to declare: its type and what was seen of it."""

    type: str
    nullable: bool
    doc: str
    merge: str | None = None
    means: str | None = None
    """A guess at what it means, as a `means:` value."""


@dataclass
class Entry:
    """One mapping of the draft: its own lines (a field's made from `declared`), the
    entries under it, and why it is left out, if it is."""

    head: list[str] = field(default_factory=list)
    entries: list[Entry] = field(default_factory=list)
    declared: Declared | None = None
    key: str = ""
    indent: str = ""
    merges: bool = False
    """Whether it is a field of a chunk type the accumulator merges, where `merge:
    drop` is a choice."""
    notes: list[str] = field(default_factory=list)
    """What the repairs changed, for review."""
    left_out: str | None = None
    drafted: Declared | None = None
    """`declared` as drafted, shown when the entry is left out (what the repairs tried
    did not help)."""

    def __post_init__(self) -> None:
        self.drafted = replace(self.declared) if self.declared else None

    def own(self) -> list[tuple[str, str]]:
        """Its own lines, each with the key it says (`means`, `merge`) or ""."""
        if self.declared is None:
            return [(line, "") for line in self.head]
        d, i = self.declared, self.indent
        lines = [(f"{i}{yaml_key(self.key)}:", "")]
        lines += [(f"{i}  {REVIEW}: {note}", "") for note in self.notes]
        lines.append((f"{i}  type: {d.type}", ""))
        if d.nullable:
            lines.append((f"{i}  nullable: true", ""))
        if d.merge == "drop":
            lines.append((f"{i}  merge: drop", "merge"))
        elif d.merge:
            lines.append((f"{i}  merge: {d.merge}  {REVIEW}: its values grow the text", "merge"))
        if d.means:
            lines.append((f"{i}  means: {d.means}  {REVIEW}: what it means", "means"))
        lines.append((f"{i}  doc: {json.dumps(d.doc)}  {REVIEW}: say what it holds", ""))
        return lines

    def kept(self) -> bool:
        """Whether it is written as YAML: not left out, and not a mapping emptied of
        every entry (which YAML would read as null)."""
        if self.left_out is not None:
            return False
        return not self.entries or any(entry.kept() for entry in self.entries)

    def plain(self) -> Iterator[str]:
        """Its lines and those of every entry under it, as YAML."""
        yield from (line for line, _ in self.own())
        for entry in self.entries:
            yield from entry.plain()


def yaml_key(key: str) -> str:
    """A key as YAML reads it back as that string: quoted unless it is a plain name
    YAML takes as text (`on`, `null` and `1` are read as other types)."""
    plain = key.isidentifier() and yaml.safe_load(key) == key
    return key if plain else json.dumps(key)


@dataclass
class Draft:
    """The vendor file: comment and top-level lines, then the sections."""

    file: str
    """Its path as the generator names it in errors (`spec/vendors/NAME.yaml`)."""
    header: list[str]
    sections: list[Entry]

    def rendered(self) -> list[tuple[str, Entry | None, str]]:
        """Every line, with the entry it belongs to and the key it says."""
        out: list[tuple[str, Entry | None, str]] = [(line, None, "") for line in self.header]
        for section in self.sections:
            _render(section, out)
        return out

    def text(self) -> str:
        return "\n".join(line for line, _, _ in self.rendered()).rstrip("\n") + "\n"

    def repair(self, error: SpecError) -> None:
        """Change the entry `error` is about so that it may generate; re-raises the
        error when no entry is left to change (the project fails without the draft)."""
        entry, says = self._at(error)
        if entry is None:
            entry = next(reversed(list(_leaves(self.sections))), None)
            if entry is None:
                raise error
        declared = entry.declared
        if declared is not None and says == "means" and declared.means:
            declared.means = None
            entry.notes.append(f"no `means:`, since the generator says: {error.message}")
        elif declared is not None and entry.merges and declared.merge != "drop":
            declared.merge = "drop"
            entry.notes.append(
                "`merge: drop` (kept in the chunk, not merged into the completion), since"
                f" the generator says: {error.message}"
            )
        else:
            entry.left_out = error.message
            entry.declared, entry.notes = entry.drafted, []

    def _at(self, error: SpecError) -> tuple[Entry | None, str]:
        """The kept entry at the line of the draft the error names, and the key it says."""
        lines = self.rendered()
        if error.file != self.file or error.line is None or not 0 < error.line <= len(lines):
            return None, ""
        _, entry, says = lines[error.line - 1]
        if entry is None or not entry.kept():
            return None, ""
        return entry, says


def _render(
    entry: Entry, out: list[tuple[str, Entry | None, str]], commented: bool = False
) -> None:
    """Its lines into `out`: as YAML when kept, else as comments after a `# REVIEW`
    that says why (each entry left out with its own reason)."""
    lines = entry.own() if entry.left_out is None else [(line, "") for line in entry.plain()]
    blank = next((i for i, (line, _) in enumerate(lines) if line), len(lines))
    out += [("", entry, "")] * blank
    if entry.left_out is not None:
        why = f"since the generator says: {entry.left_out}"
    elif not commented and not entry.kept():
        why = "as every entry in it is"
    else:
        why = ""
    if why:
        out.append((f"{entry.indent}{REVIEW}: left out, {why}", entry, ""))
    if why or commented:
        out += [(f"# {line}", entry, "") for line, _ in lines[blank:]]
    else:
        out += [(line, entry, says) for line, says in lines[blank:]]
    if entry.left_out is None:
        for inner in entry.entries:
            _render(inner, out, commented or not entry.kept())


def _leaves(entries: list[Entry]) -> Iterator[Entry]:
    """The kept entries that hold no others, in the order they are written."""
    for entry in entries:
        if entry.kept():
            yield from _leaves(entry.entries) if entry.entries else (entry,)


def generating(draft: Draft, generates: Callable[[str], None]) -> str:
    """The draft's text once `generates` (which raises SpecError) accepts it."""
    limit = 3 * sum(1 for _ in _all(draft.sections)) + 1
    for _ in range(limit):
        text = draft.text()
        try:
            generates(text)
            return text
        except SpecError as error:
            draft.repair(error)
    raise SpecError("the draft still does not generate; edit it by hand", draft.file)


def _all(entries: list[Entry]) -> Iterator[Entry]:
    for entry in entries:
        yield entry
        yield from _all(entry.entries)
