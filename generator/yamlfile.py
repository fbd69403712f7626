"""Read a YAML spec file into plain values that remember their line numbers.

PyYAML silently keeps the last of two equal keys; a spec must never lose a field that
way, so duplicate keys are an error here. Every mapping comes back as a `Located`
dict that knows the line of itself and of each of its keys.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from .errors import SpecError


class Located(dict[str, Any]):
    """A YAML mapping with the 1-based line of the mapping and of each key."""

    line: int
    key_lines: dict[str, int]


class _Loader(yaml.SafeLoader):
    """SafeLoader that rejects duplicate keys and non-string keys, and records lines."""

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


_Loader.add_constructor(
    yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG,
    _Loader.construct_mapping,
)


def load_yaml(path: Path, display: str) -> Located:
    """Parse one spec file; `display` is the name used in error messages."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SpecError(f"cannot read: {exc}", display) from exc
    loader = _Loader(text)
    loader.file = display
    try:
        document = loader.get_single_data()
    except yaml.MarkedYAMLError as exc:
        line = exc.problem_mark.line + 1 if exc.problem_mark is not None else None
        raise SpecError(f"YAML error: {exc.problem}", display, line) from exc
    except yaml.YAMLError as exc:
        raise SpecError(f"YAML error: {exc}", display) from exc
    finally:
        loader.dispose()
    if not isinstance(document, Located):
        raise SpecError("the file must hold a mapping at the top level", display, 1)
    return document
