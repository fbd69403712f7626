"""The whole pipeline in order: load → build → render → format. Writing is the caller's."""

from __future__ import annotations

from pathlib import Path

from .ir.build import build_specs
from .ir.format_schema import SCHEMA_PATH, render_format_schema
from .ir.load import load_spec
from .ir.model import Options
from .render.emit import Output, finish
from .render.header import PROJECT_COMMAND
from .render.schema import render_schema
from .render.targets import module_names
from .render.templating import render_all
from .render.vendor_docs import render_vendor_docs


def generate(
    root: Path, options: Options | None = None, command: str = PROJECT_COMMAND
) -> list[Output]:
    """Every generated file of the project, formatted, in memory; raises SpecError on a
    bad spec. The vendor reference always covers the whole spec."""
    raw = load_spec(root)
    # The selection, OpenAI's own spec (for the differential tests) and the whole spec
    # (for the vendor reference), each built once.
    spec, openai, whole = build_specs(
        raw,
        options or Options(),
        Options(vendors=(), profile="strict"),
        Options(),
        reserved=module_names(),
    )
    chosen = options or Options()
    families = [
        build_specs(raw.family(other.family), chosen, reserved=module_names())[0]
        for other in raw.families
        if chosen.speaks(other.family)
    ]
    rendered = render_all(spec, openai, root, command, families)
    outputs = finish(rendered)
    outputs.append(render_schema(spec))
    every_family = [
        build_specs(raw.family(other.family), Options(), reserved=module_names())[0]
        for other in raw.families
    ]
    outputs.append(render_vendor_docs(whole, every_family))
    # What editors complete a spec file with: the format's schema, from the loader's tables.
    outputs.append(Output(SCHEMA_PATH, render_format_schema()))
    return outputs
