"""The generated target modules the benchmarks measure, by name (the registry's order)."""

from __future__ import annotations

import importlib
from types import ModuleType

from generator.targets import TARGETS as REGISTRY

TARGETS: dict[str, ModuleType] = {
    name: importlib.import_module(f"generated.chunk_{name}") for name in REGISTRY
}
