"""The whole pipeline in order: load → build → render → format. Writing is the caller's."""

from __future__ import annotations

from pathlib import Path

from generator.build import build_specs
from generator.emit import Output, finish, spec_hash
from generator.ir import Options
from generator.load import load_spec
from generator.render import PROJECT_COMMAND, render_all
from generator.schema import render_schema
from generator.vendor_docs import render_vendor_docs


def generate(
    root: Path, options: Options | None = None, command: str = PROJECT_COMMAND
) -> list[Output]:
    """Every generated file of the project, formatted, in memory; raises SpecError on a
    bad spec. The vendor reference always covers the whole spec."""
    raw = load_spec(root)
    # The selection, OpenAI's own spec (for the differential tests) and the whole spec
    # (for the vendor reference), each built once.
    spec, openai, whole = build_specs(
        raw, options or Options(), Options(vendors=(), profile="strict"), Options()
    )
    digest = spec_hash(root, spec.files)
    rendered = render_all(spec, openai, digest, root / "templates", command)
    outputs = [finish(one) for one in rendered]
    outputs.append(render_schema(spec, digest))
    outputs.append(render_vendor_docs(whole, digest))
    return outputs
