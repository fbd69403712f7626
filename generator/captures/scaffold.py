"""`new-vendor NAME`: a commented starting point for a vendor file."""

from __future__ import annotations

import re
from pathlib import Path

from ..ir.errors import SpecError
from ..ir.format_schema import modeline
from ..ir.load import VENDOR_DIR

TEMPLATE = """\
{modeline}
# {name}: one line on what this backend is.
# Declare only what the vendor documents or a captured stream shows, and say where
# (`source`). Format: docs/spec-format.md; walk-through: docs/extending.md.
# Then run `make generate`: the field is typed, documented and round-trip tested.
vendor: {name}
title: {name}  # the name the docs credit, such as "vLLM"
source: https://example.com/where-{name}-documents-its-stream  # replace

# Fields the vendor adds to existing types (core types, or another vendor's).
# Every such field is optional; say `nullable: true` if the vendor sends null.
# fields:
#   ChatCompletionChunk:
#     {name}_request_id:
#       type: string
#       doc: The id {name} gives the request, for its support team.
#   ChoiceDelta:
#     {name}_hint:
#       type: {type_name}Hint
#       nullable: true
#       doc: A structured hint streamed beside the content.

# Named types and enums of its own (names start with the vendor's, in PascalCase).
# types:
#   {type_name}Hint:
#     doc: What the hint holds.
#     fields:
#       kind:
#         type: string
#         required: true
#         doc: The kind of hint.

# Where the vendor's chunks break OpenAI's schema: loosen a core field.
# relax:
#   ChoiceDeltaToolCall:
#     index:
#       required: false
#       source: https://example.com/issue
#       doc: Tool-call deltas come without `index`.
"""


def new_vendor(root: Path, name: str, text: str | None = None) -> Path:
    """Write spec/vendors/NAME.yaml (the commented template, or `text`); refuses a bad
    name or an existing file."""
    if not re.fullmatch(r"[a-z][a-z0-9_]*", name):
        raise SpecError(f"vendor name {name!r} must be lower_snake_case", "new-vendor")
    if name in ("all", "none"):
        raise SpecError(f"{name!r} is a word of --vendors, not a usable vendor name", "new-vendor")
    if not (root / VENDOR_DIR).is_dir():
        raise SpecError("no such folder: is --root the project root?", VENDOR_DIR)
    path = root / VENDOR_DIR / f"{name}.yaml"
    if path.exists():
        raise SpecError("already exists; edit it instead", f"{VENDOR_DIR}/{name}.yaml")
    type_name = "".join(part.capitalize() for part in name.split("_"))
    if text is None:
        text = TEMPLATE.format(
            name=name, type_name=type_name, modeline=modeline(f"{VENDOR_DIR}/{name}.yaml")
        )
    path.write_text(text, encoding="utf-8")
    return path
