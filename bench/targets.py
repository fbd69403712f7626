"""The generated target modules the benchmarks measure, by name (the registry's order), and
the variants they measure beside them: the standard library only, and no vendor."""

from __future__ import annotations

import importlib
import importlib.util
import subprocess
import sys
import tempfile
from pathlib import Path
from types import ModuleType

from generator.render.targets import TARGETS as REGISTRY

ROOT = Path(__file__).resolve().parent.parent
GENERATED = ROOT / "generated"

TARGETS: dict[str, ModuleType] = {
    name: importlib.import_module(f"generated.{name}.chat") for name in REGISTRY
}


def load(name: str, folder: Path) -> ModuleType:
    """Import the generated package at `folder` as `name`, and return its chat module.
    It is registered first: pydantic resolves a model's annotations through sys.modules."""
    spec = importlib.util.spec_from_file_location(
        name, folder / "__init__.py", submodule_search_locations=[str(folder)]
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return importlib.import_module(f"{name}.chat")


def without_orjson(target: str) -> ModuleType:
    """A second copy of a target's chat module that finds no orjson: the standard library
    only."""
    saved = sys.modules.get("orjson")
    sys.modules["orjson"] = None  # type: ignore[assignment]  # makes `import orjson` fail
    try:
        return load(f"stdlib_{target}", GENERATED / target)
    finally:
        if saved is None:
            del sys.modules["orjson"]  # not imported yet: later imports find it as usual
        else:
            sys.modules["orjson"] = saved


STDLIB_ONLY = {
    "dataclasses": without_orjson("dataclasses"),
    "typeddicts": without_orjson("typeddicts"),
}


def vendorless(target: str) -> ModuleType:
    """`target` generated with no vendor (`python -m generator vendor --vendors none`): the
    core chunk only, as openai-python types it. Written to a temporary directory, never to
    generated/, and imported from there; its chat module needs no file once imported."""
    with tempfile.TemporaryDirectory(prefix="chunkspec-bench-") as tmp:
        path = Path(tmp) / f"chunk_{target}_none"
        command = [sys.executable, "-m", "generator", "vendor", "--target", target]
        command += ["--vendors", "none", "--out", str(path)]
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(command[1:])} failed:\n{done.stderr}")
        return load(f"chunk_{target}_none", path)
