"""The registry of targets: every kind of generated model module, by name. Rendering,
vendoring, tests and benchmarks all read this one table."""

from __future__ import annotations

from functools import cache

from ..linking import runtime_names
from .base import Target
from .dataclass_target import Dataclasses
from .msgspec_target import Msgspec
from .pydantic_target import Pydantic
from .typeddict_target import TypedDicts

TARGETS: dict[str, type[Target]] = {
    target.name: target for target in (Dataclasses, TypedDicts, Pydantic, Msgspec)
}
"""Every target, in the order files are generated and documented."""

TEMPLATE_NAMES = frozenset(
    {
        "ChatCompletionAccumulator",
        "ChunkAccumulator",
        "dumps",
        "iter_chunks",
        "loads",
        "loads_completion",
    }
)
"""What templates/_module.jinja defines in every module."""


@cache
def module_names() -> frozenset[str]:
    """Every top-level name of a generated module that is not a spec type: the runtime's
    definitions and imports, the templates' own names and each target's imports. No
    spec type may take one."""
    imported = {name for target in TARGETS.values() for name in target.imports}
    return runtime_names() | TEMPLATE_NAMES | imported


__all__ = ["TARGETS", "Target", "module_names"]
