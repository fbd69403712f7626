"""The registry of targets: every kind of generated model module, by name. Rendering,
vendoring, tests and benchmarks all read this one table."""

from __future__ import annotations

from generator.targets.base import Shared, Target
from generator.targets.dataclass_target import Dataclasses
from generator.targets.msgspec_target import Msgspec
from generator.targets.pydantic_target import Pydantic
from generator.targets.typeddict_target import TypedDicts

TARGETS: dict[str, type[Target]] = {
    target.name: target for target in (Dataclasses, TypedDicts, Pydantic, Msgspec)
}
"""Every target, in the order files are generated and documented."""

__all__ = ["TARGETS", "Shared", "Target"]
