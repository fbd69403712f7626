"""The whole pipeline in order: load → build → render → format. Writing is the caller's."""

from __future__ import annotations

from pathlib import Path

from generator.build import build_spec
from generator.emit import Output, finish, spec_hash
from generator.load import load_spec
from generator.render import render_all
from generator.schema import render_schema


def generate(root: Path) -> list[Output]:
    """Every generated file, formatted, in memory; raises SpecError on a bad spec."""
    spec = build_spec(load_spec(root))
    digest = spec_hash(root, spec.files)
    outputs = [finish(rendered) for rendered in render_all(spec, digest, root / "templates")]
    outputs.append(render_schema(spec, digest))
    return outputs
