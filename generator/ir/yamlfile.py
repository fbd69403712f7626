"""Read a YAML spec file into plain values that remember their line numbers.

PyYAML silently keeps the last of two equal keys; a spec must never lose a field that
way, so duplicate keys are an error here. Every mapping comes back as a `Located`
dict that knows the line of itself and of each of its keys.

Files are parsed by libyaml, PyYAML's C parser (fifteen times as fast), where PyYAML has
it. A file that fails is read again with PyYAML's own parser, and the error is the one
that gives: the same message with or without libyaml.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from .errors import SpecError


class Located(dict[str, Any]):
    """A YAML mapping with the 1-based line of the mapping and of each key."""

    line: int
    key_lines: dict[str, int]


@dataclass(frozen=True)
class Keys:
    """The keys one kind of mapping may hold, and those it must hold: what the loader
    checks (load.py, requests.py) and the spec's JSON Schema says (format_schema.py)."""

    allowed: frozenset[str]
    required: frozenset[str] = frozenset()


class _Constructor(yaml.constructor.SafeConstructor):
    """SafeConstructor that rejects duplicate keys and non-string keys, and records lines."""

    file: str = "<spec>"

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> Located:  # type: ignore[override]
        self.flatten_mapping(node)
        mapping = Located()
        mapping.line = node.start_mark.line + 1
        mapping.key_lines = {}
        for key_node, value_node in node.value:
            key = self.construct_object(key_node, deep=True)
            line = key_node.start_mark.line + 1
            if not isinstance(key, str):
                raise SpecError(
                    f"key {key_node.value!r} must be a string (quote it: YAML reads it as"
                    f" {type(key).__name__})",
                    self.file,
                    line,
                )
            if key in mapping:
                first = mapping.key_lines[key]
                raise SpecError(
                    f"duplicate key {key!r} (first defined on line {first})", self.file, line
                )
            mapping[key] = self.construct_object(value_node, deep=True)
            mapping.key_lines[key] = line
        return mapping


_Constructor.add_constructor(  # type: ignore[type-var]  # a constructor for loaders
    yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG,
    _Constructor.construct_mapping,
)


class _Loader(yaml.SafeLoader, _Constructor):
    """PyYAML's own parser, with the checks above."""


class _FastLoader(yaml.CSafeLoader, _Constructor):
    """libyaml's parser, with the checks above."""


def load_yaml(path: Path, display: str) -> Located:
    """Parse one spec file; `display` is the name used in error messages."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SpecError(f"cannot read: {exc}", display) from exc
    try:
        document = _parsed(_FastLoader if yaml.__with_libyaml__ else _Loader, text, display)
    except (yaml.YAMLError, SpecError):
        document = None  # said again below, as PyYAML's own parser says it
    if document is None:
        document = _checked(text, display)
    if not isinstance(document, Located):
        raise SpecError("the file must hold a mapping at the top level", display, 1)
    return document


def _checked(text: str, display: str) -> object:
    """The file read with PyYAML's own parser, its errors as spec errors."""
    try:
        return _parsed(_Loader, text, display)
    except yaml.MarkedYAMLError as exc:
        line = exc.problem_mark.line + 1 if exc.problem_mark is not None else None
        raise SpecError(f"YAML error: {exc.problem}", display, line) from exc
    except yaml.YAMLError as exc:
        raise SpecError(f"YAML error: {exc}", display) from exc


def _parsed(loader_class: type[_Loader | _FastLoader], text: str, display: str) -> object:
    loader = loader_class(text)
    loader.file = display
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()
