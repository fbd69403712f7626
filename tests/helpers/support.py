"""What the hand-written and the generated tests share: the captured streams, a
type-strict JSON comparison and the round-trip counts printed at the end of a run."""

from __future__ import annotations

import importlib.util
import json
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from generator.render.targets import TARGETS as REGISTRY

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "chat" / "streams"

TARGETS: dict[str, ModuleType] = {
    name: importlib.import_module(f"generated.{name}.chat") for name in REGISTRY
}
"""Every generated target module, by name, in the registry's order."""

ROUND_TRIPS: Counter[str] = Counter()
"""Chunks round-tripped per target in this run, reported by conftest.py."""
DEPENDENCIES: dict[str, tuple[str, ...]] = {
    "dataclasses": (),
    "typeddicts": ("typing_extensions",),
    "pydantic": (
        "pydantic",
        "pydantic_core",
        "typing_extensions",
        "annotated_types",
        "typing_inspection",
    ),
    "msgspec": ("msgspec",),
}
"""What each target's module may find installed: its one dependency first, then what that
dependency requires (the standalone and vendored-tools tests hold a venv to exactly this)."""

REPORT: dict[str, str] = {}
"""Lines for the end of the test run, by topic: what the corpus and fuzzing tests ran."""
EXAMPLES_RUN: Counter[str] = Counter()
"""Examples each property test ran, by test."""


@dataclass(frozen=True)
class Stream:
    """One captured stream: a chunk JSON per line, with the line number of each."""

    name: str
    chunks: tuple[tuple[int, str], ...]


def load_streams() -> tuple[Stream, ...]:
    streams = []
    for path in sorted(FIXTURES.glob("*.jsonl")):
        lines = path.read_text(encoding="utf-8").splitlines()
        chunks = tuple((number, text) for number, text in enumerate(lines, 1) if text.strip())
        streams.append(Stream(path.stem, chunks))
    return tuple(streams)


FIXTURE_STREAMS = load_streams()


def count_round_trip(target: str, chunks: int) -> None:
    ROUND_TRIPS[target] += chunks


def count_examples(test: str) -> None:
    EXAMPLES_RUN[test] += 1


def normalised(payload: Any, defaults: dict[str, Any]) -> Any:
    """The payload as a lossless decoder must give it back: missing or null keys that
    have a default read as that default (for the chunk: `choices`)."""
    if not isinstance(payload, dict):
        return payload
    out = dict(payload)
    for key, default in defaults.items():
        if out.get(key) is None:
            out[key] = json.loads(json.dumps(default))
    return out


def assert_same_json(actual: Any, expected: Any, where: str = "", path: str = "$") -> None:
    """Equal as JSON and type for type: 1 is not 1.0 or True, null is not absent."""
    prefix = f"{where}: " if where else ""
    assert type(actual) is type(expected), f"{prefix}{path}: {actual!r} is not {expected!r}"
    if isinstance(expected, dict):
        assert list(actual) == list(expected) or set(actual) == set(
            expected
        ), f"{prefix}{path}: keys {sorted(actual)} != {sorted(expected)}"
        for key in expected:
            assert_same_json(actual[key], expected[key], where, f"{path}.{key}")
    elif isinstance(expected, list):
        assert len(actual) == len(
            expected
        ), f"{prefix}{path}: {len(actual)} items, expected {len(expected)}"
        for index, (a, e) in enumerate(zip(actual, expected, strict=True)):
            assert_same_json(a, e, where, f"{path}[{index}]")
    else:
        assert actual == expected, f"{prefix}{path}: {actual!r} != {expected!r}"


def load_module(path: Path, tag: str = "") -> ModuleType:
    """Import a module from a file, or a package from its folder, under a name unique to
    it; a module of a package (a generated `chat.py`) is imported with its package."""
    if path.is_dir():
        return _load_package(path, tag)
    if path.name != "__init__.py" and (path.parent / "__init__.py").is_file():
        package = _load_package(path.parent, tag)
        return importlib.import_module(f"{package.__name__}.{path.stem}")
    name = f"loaded_{path.stem}_{abs(hash(str(path)))}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses resolve their module through sys.modules
    spec.loader.exec_module(module)
    return module


def _load_package(folder: Path, tag: str) -> ModuleType:
    """A package from its folder, once per folder and `tag`."""
    name = f"loaded_{folder.name}{tag}_{abs(hash(str(folder)))}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(
        name, folder / "__init__.py", submodule_search_locations=[str(folder)]
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def runtime(module: ModuleType, name: str) -> Any:
    """A name of the runtime a generated module runs on (`_summary_of_parts`): the
    module's own, else the definition in its package's `_runtime/`."""
    if hasattr(module, name):
        return getattr(module, name)
    prefix = f"{module.__name__.rpartition('.')[0]}._runtime."
    found = [
        vars(loaded)[name]
        for key, loaded in list(sys.modules.items())
        if key.startswith(prefix) and name in vars(loaded)
    ]
    if found:  # a name one file defines and others import: the same object
        return found[0]
    raise AttributeError(f"neither {module.__name__} nor its runtime has {name!r}")


def load_without(path: Path, absent: str) -> ModuleType:
    """Import a module from a file as if the package `absent` were not installed."""
    saved = sys.modules.get(absent)
    sys.modules[absent] = None  # type: ignore[assignment]  # makes `import absent` fail
    try:
        return load_module(path, f"_without_{absent}")
    finally:
        if saved is None:
            del sys.modules[absent]
        else:
            sys.modules[absent] = saved


def outcome(module: ModuleType, data: str | bytes) -> str:
    """What a target makes of a payload: "ok" and the text it writes back, or the error."""
    try:
        text: str = module.dumps(module.loads(data))
    except module.ChunkDecodeError as exc:
        return f"error {exc}"
    return "ok " + text


def payloads(body: bytes) -> list[str]:
    """The data of each event of a server-sent-event body, as a plain reading of the
    format gives it: its `data:` lines joined (a `[DONE]` is the caller's to leave out)."""
    out = []
    for block in body.decode("utf-8").replace("\r\n", "\n").split("\n\n"):
        data = [
            line[5:].removeprefix(" ") for line in block.split("\n") if line.startswith("data:")
        ]
        if data:
            out.append("\n".join(data))
    return out
