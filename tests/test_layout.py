"""The folders of generator/ are the pipeline: the command line on top, a few modules
beside it, and subpackages that import only from their own level or below, with no
cycle between modules."""

from __future__ import annotations

import ast
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "generator"

LEVELS = {"runtime": 0, "ir": 1, "render": 2, "captures": 2, "vendoring": 3, "gateway": 3}
"""Each subpackage's level: it may import from its own level or below."""
TOP = 4
"""The modules directly in generator/ (the command line, the pipeline) sit above all."""
MOST_AT_TOP = 8
INSTALLED_ONLY = {"_generated": 0}
"""Packages only an installed chunkspec has, at their level: `_generated` is generated/
(pyproject.toml), which imports nothing of the generator."""


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> set[str]:
    """The modules of this package that the module at `path` imports (relative imports:
    the package imports itself no other way)."""
    package = module_name(path).split(".") if path.name == "__init__.py" else None
    base = package if package is not None else module_name(path).split(".")[:-1]
    known = {module_name(p) for p in PACKAGE.rglob("*.py")}
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.ImportFrom) or node.level == 0:
            continue
        parts = base[: len(base) - (node.level - 1)] + (node.module or "").split(".")
        target = ".".join(p for p in parts if p)
        # `from . import examples`: each name may be a module of its own.
        named = {f"{target}.{a.name}".lstrip(".") for a in node.names}
        found |= named & known or {target}
    return found


def level(module: str) -> int:
    head, _, rest = module.partition(".")
    if head in INSTALLED_ONLY:
        return INSTALLED_ONLY[head]
    return LEVELS[head] if rest or head in LEVELS else TOP


def graph() -> dict[str, set[str]]:
    return {module_name(p): imports(p) for p in sorted(PACKAGE.rglob("*.py"))}


def test_at_most_eight_modules_sit_directly_in_the_package() -> None:
    top = sorted(p.name for p in PACKAGE.glob("*.py") if p.name != "_version.py")
    assert len(top) <= MOST_AT_TOP, top
    subpackages = {p.parent.name for p in PACKAGE.glob("*/__init__.py")}
    assert subpackages == set(LEVELS), "a subpackage without a level, or a level without one"


def test_a_subpackage_imports_only_from_its_level_or_below() -> None:
    upward = [
        f"{module} imports {other}"
        for module, imported in graph().items()
        for other in imported
        if level(other) > level(module)
    ]
    assert not upward, upward


def test_imports_form_no_cycle() -> None:
    try:
        TopologicalSorter(graph()).prepare()
    except CycleError as error:
        raise AssertionError(f"an import cycle: {' -> '.join(error.args[1])}") from None
