"""The generated target modules the benchmarks measure, by name."""

from __future__ import annotations

from types import ModuleType

from generated import chunk_dataclasses, chunk_msgspec, chunk_pydantic, chunk_typeddicts

TARGETS: dict[str, ModuleType] = {
    "dataclasses": chunk_dataclasses,
    "typeddicts": chunk_typeddicts,
    "pydantic": chunk_pydantic,
    "msgspec": chunk_msgspec,
}
