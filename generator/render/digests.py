"""What a generated module is made from, as digests.

A module is made from three kinds of input: the spec files it reads whole (the core spec
and the selected vendors' files), the spec as built for it (which also holds what every
other vendor's file adds to it: relaxations of core fields, merge rules, type names),
and the chunkspec code that renders it (its templates, the runtime files it copies, and
the generator modules they are rendered with). Each has a digest; a module's header
lists them, so `check --vendored` can say which one changed, and nothing else (a doc of
a vendor the module left out, another target's template) makes it stale.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, fields, is_dataclass
from functools import cache
from pathlib import Path

import jinja2
import jinja2.meta

from ..ir.model import Provenance, Spec
from .families import FAMILIES
from .targets import Target

PACKAGE = Path(__file__).resolve().parents[1]
SPEC_AS_BUILT = "spec as built"
CODE = "chunkspec code"
_TARGET_MODULE = re.compile(r"render/targets/\w+_target\.py")
MADE_FROM = "Made from (input, digest):"
DIGEST = "Digest: "
_PART = re.compile(r"#   (\S+(?: \S+)*) +([0-9a-f]{12})")
_PLACEHOLDER = re.compile(r"^#<runtime (.+)>$", re.MULTILINE)
"""A template's runtime placeholder: file names (`sse`, `chat/reader`), and perhaps an
expression (`{{ target.runtime | join(" ") }}`: the target's files, counted apart)."""
_EXPRESSION = re.compile(r"\{\{.*?\}\}")


@dataclass(frozen=True)
class Inputs:
    """The digest of each input of a module, in a fixed order, and their digest."""

    parts: tuple[tuple[str, str], ...]
    """(name, digest): spec files by path, then SPEC_AS_BUILT, then CODE."""

    @property
    def digest(self) -> str:
        return _sha(json.dumps(self.parts).encode())[:16]

    def lines(self) -> list[str]:
        """The header lines that record them (read back by `recorded`)."""
        width = max(len(name) for name, _ in self.parts) + 2
        return [
            MADE_FROM,
            *(f"  {name.ljust(width)}{digest}" for name, digest in self.parts),
            f"{DIGEST}{self.digest}",
        ]

    def changed(self, current: Inputs) -> list[tuple[str, str | None, str | None]]:
        """(name, recorded, current) of every input that differs from `current`."""
        old, new = dict(self.parts), dict(current.parts)
        names = [name for name, _ in self.parts]
        names += [name for name, _ in current.parts if name not in old]
        return [(n, old.get(n), new.get(n)) for n in names if old.get(n) != new.get(n)]


def inputs(
    root: Path, spec: Spec, targets: Iterable[Target], templates: Iterable[str] = ()
) -> Inputs:
    """The inputs of what the `targets` render of `spec` (their modules, and whatever
    the other `templates` named render for them)."""
    selected = spec.options.vendors
    files = [
        name
        for name in spec.files
        if not name.startswith("spec/vendors/") or selected is None or Path(name).stem in selected
    ]
    parts = [(name, file_digest(root / name)) for name in files]
    parts.append((SPEC_AS_BUILT, _spec_digest(spec)))
    parts.append((CODE, _code_digest(*code_inputs(root / "templates", targets, templates))))
    return Inputs(tuple(parts))


def recorded(text: str) -> tuple[Inputs, str] | None:
    """The inputs and digest a module's header records; None if it records none."""
    lines = text.splitlines()
    try:
        start = lines.index(f"# {MADE_FROM}") + 1
    except ValueError:
        return None
    parts: list[tuple[str, str]] = []
    for line in lines[start:]:
        if line.startswith(f"# {DIGEST}"):
            return Inputs(tuple(parts)), line.removeprefix(f"# {DIGEST}")
        match = _PART.fullmatch(line)
        if match is None:
            return None
        parts.append((match[1], match[2]))
    return None


def file_digest(path: Path) -> str:
    # Line ends normalised: a checkout on Windows makes the same digests.
    return _sha(path.read_bytes().replace(b"\r\n", b"\n"))[:12]


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# --- the spec as built ------------------------------------------------------------------


_SPEC_DIGESTS: dict[int, tuple[Spec, str]] = {}
"""By the id of a spec (held, so the id stays its own): a spec's digest is computed once,
though every module rendered from it lists it."""


def _spec_digest(spec: Spec) -> str:
    held = _SPEC_DIGESTS.get(id(spec))
    if held is None or held[0] is not spec:
        held = _SPEC_DIGESTS[id(spec)] = (spec, _sha(_canonical_spec(spec))[:12])
    return held[1]


def _canonical_spec(spec: Spec) -> bytes:
    """The intermediate model as JSON, without what does not reach the module: which
    spec files exist, and the vendors no type, field or note credits."""
    credited: set[str] = set()
    body = {
        f.name: _canonical(getattr(spec, f.name), credited)
        for f in fields(spec)
        if f.name not in ("files", "vendors")
    }
    body["vendors"] = [_canonical(v, credited) for v in spec.vendors if v.name in credited]
    return json.dumps(body, sort_keys=True).encode()


def _canonical(value: object, credited: set[str]) -> object:
    if isinstance(value, Provenance):
        credited.update(value.vendors)
    if is_dataclass(value) and not isinstance(value, type):
        return [
            type(value).__name__,
            *(_canonical(getattr(value, f.name), credited) for f in fields(value)),
        ]
    if isinstance(value, tuple | list):
        return [_canonical(item, credited) for item in value]
    if isinstance(value, frozenset | set):
        return sorted(json.dumps(_canonical(item, credited)) for item in value)
    if isinstance(value, dict):
        return {str(k): _canonical(v, credited) for k, v in value.items()}
    return value


# --- the code -------------------------------------------------------------------------


def code_inputs(
    templates: Path, targets: Iterable[Target], names: Iterable[str] = ()
) -> tuple[dict[str, str], set[str]]:
    """The code what the `targets` render is made from: the sources of their templates
    (and of the other templates `names`, and those they include) by name, and the
    generator modules and runtime files used, by path in the package. Another target's
    module or runtime file is not one of them."""
    targets = list(targets)
    # A target's template extends its family's layout, which it names as a variable.
    layouts = {FAMILIES[t.spec.family].layout for t in targets}
    used = _templates(templates, sorted({t.template for t in targets} | layouts | set(names)))
    runtime = {name for t in targets for name in t.runtime}
    runtime.update(n for t in targets for n in FAMILIES[t.spec.family].runtime.split())
    runtime.update(
        name
        for source in used.values()
        for line in _PLACEHOLDER.findall(source)
        for name in _EXPRESSION.sub(" ", line).split()
    )
    own = {PACKAGE / Path(*type(t).__module__.split(".")[1:]).with_suffix(".py") for t in targets}
    start = [
        PACKAGE / "vendoring" / "vendored.py",
        *own,
        *(PACKAGE / "runtime" / f"{n}.py" for n in runtime),
    ]
    code = _imported(start, own)
    return used, {path.relative_to(PACKAGE).as_posix() for path in code}


def _code_digest(templates: dict[str, str], code: set[str]) -> str:
    digest = hashlib.sha256()
    for name, source in sorted(templates.items()):
        digest.update(f"templates/{name}\0{source}\0".encode())
    for name in sorted(code):
        digest.update(name.encode() + b"\0" + _code_text(name) + b"\0")
    return digest.hexdigest()[:12]


@cache
def _code_text(name: str) -> bytes:
    """A file of the running generator, as digested (read once per process: it is the
    code running, which does not change under it)."""
    return (PACKAGE / name).read_bytes().replace(b"\r\n", b"\n")


def _templates(templates: Path, names: list[str]) -> dict[str, str]:
    """The sources of the templates named and of every template they include."""
    found: dict[str, str] = {}
    queue = list(names)
    while queue:
        name = queue.pop()
        if name not in found:
            found[name], included = _template(templates, name)
            queue.extend(included)
    return found


@cache
def _template(templates: Path, name: str) -> tuple[str, tuple[str, ...]]:
    """One template's source and the templates it includes (read once per process: every
    module's inputs read the shared layout)."""
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(templates))
    assert env.loader is not None
    source = env.loader.get_source(env, name)[0].replace("\r\n", "\n")
    included = jinja2.meta.find_referenced_templates(env.parse(source))
    return source, tuple(n for n in included if n)


def _imported(start: list[Path], targets: set[Path]) -> set[Path]:
    """The modules of this package that `start` imports, transitively, the target
    modules not in `targets` left out (the registry imports them all)."""
    seen: set[Path] = set()
    queue = list(start)
    while queue:
        path = queue.pop()
        relative = path.relative_to(PACKAGE).as_posix()
        if path in seen or (_TARGET_MODULE.fullmatch(relative) and path not in targets):
            continue
        seen.add(path)
        queue.extend(_relative_imports(path))
    return seen


@cache
def _relative_imports(path: Path) -> tuple[Path, ...]:
    """The modules of this package that the module at `path` imports (parsed once per
    process: every module's inputs walk the same files)."""
    return tuple(_walk_relative_imports(path))


_RELATIVE_IMPORT = re.compile(
    r"^[ \t]*from[ \t]+(\.+)([\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n]*)", re.MULTILINE
)
"""A relative import statement (the package's code is formatted: one per line, or its
names in parentheses): its dots, its module and its names. A scan, not a parse: every
`make generate` reads the whole package this way."""


def _walk_relative_imports(path: Path) -> Iterator[Path]:
    for dots, module, names in _RELATIVE_IMPORT.findall(path.read_text(encoding="utf-8")):
        base = path.parent
        for _ in range(len(dots) - 1):
            base = base.parent
        for part in module.split(".") if module else []:
            base = base / part
        if base.with_suffix(".py").is_file():
            yield base.with_suffix(".py")
            continue
        if (base / "__init__.py").is_file():
            yield base / "__init__.py"
        # `from . import examples`: the names may be modules themselves.
        for name in re.findall(r"\b(\w+)(?:\s+as\s+\w+)?\s*(?:,|\)|$)", names.strip("()")):
            if (base / f"{name}.py").is_file():
                yield base / f"{name}.py"
