"""Copy the runtime (generator/runtime/) into a generated module: the definitions its
code uses, verbatim, and the imports they and the module's own code need.

A rendered module holds two kinds of placeholder line: `#<imports>` where the import
block goes, and `#<runtime NAME ...>` where the definitions of the runtime files NAME go.
The module's own code (everything else) names what it uses; the definitions it names,
and those they name in turn, are copied in their files' order; nothing unused is copied,
so no flag in a template says which helper a module needs.
"""

from __future__ import annotations

import ast
import builtins
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

RUNTIME = Path(__file__).resolve().parents[1] / "runtime"
_PLACEHOLDER = re.compile(r"^#<runtime ([a-z_/ ]+)>$", re.MULTILINE)
IMPORTS_PLACEHOLDER = "#<imports>"
_BUILTINS = frozenset(dir(builtins)) | {"__name__", "__file__"}
_TYPING = ("Annotated", "Any", "ClassVar", "Final", "Literal", "Required", "TypeAlias", "cast")
STANDARD_NAMES: dict[str, tuple[str, str]] = {
    **{name: ("typing", name) for name in _TYPING},
    **{name: ("collections.abc", name) for name in ("Callable", "Iterable", "Mapping")},
    "importlib": ("importlib", ""),
}
"""What a template's code may use from the standard library's typing vocabulary, and
`importlib` (a module made with others imports them when first asked for)."""
_THIRD_PARTY = frozenset({"msgspec", "pydantic", "pydantic_core", "typing_extensions"})


class InlineError(Exception):
    """A module names something neither it, the runtime nor an import defines."""


@dataclass(frozen=True)
class Definition:
    """One top-level statement of a runtime file, with its comments and docstring."""

    file: str
    text: str
    defines: frozenset[str]
    uses: frozenset[str]


@dataclass(frozen=True)
class RuntimeFile:
    name: str
    definitions: tuple[Definition, ...]
    imports: dict[str, tuple[str, str]]
    """Name -> (module, name there) of the file's imports, its siblings' left out."""


def runtime_file(name: str) -> RuntimeFile:
    return _runtime_file(name)


@cache
def _runtime_file(name: str) -> RuntimeFile:
    source = (RUNTIME / f"{name}.py").read_text(encoding="utf-8")
    tree = ast.parse(source)
    lines = source.splitlines()
    body = list(tree.body)
    if body and _is_docstring(body[0]):
        body = body[1:]
    imports: dict[str, tuple[str, str]] = {}
    definitions: list[Definition] = []
    start = 0
    for index, node in enumerate(body):
        if isinstance(node, ast.Import | ast.ImportFrom):
            sibling = isinstance(node, ast.ImportFrom) and node.level > 0
            for alias in node.names:
                module = node.module if isinstance(node, ast.ImportFrom) else alias.name
                assert module is not None
                if module != "__future__" and not sibling:
                    imports[alias.asname or alias.name] = (
                        module,
                        alias.name if isinstance(node, ast.ImportFrom) else "",
                    )
            start = node.end_lineno or node.lineno
            continue
        if _is_docstring(node):
            continue  # the docstring of the statement before, joined to it below
        end = node.end_lineno or node.lineno
        following = body[index + 1] if index + 1 < len(body) else None
        if following is not None and _is_docstring(following):
            end = following.end_lineno or following.lineno
        text = "\n".join(lines[start:end]).strip("\n")
        definitions.append(Definition(name, text, _defined(node), _used(node)))
        start = end
    return RuntimeFile(name, tuple(definitions), imports)


def _is_docstring(node: ast.stmt) -> bool:
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    )


def _defined(node: ast.stmt) -> frozenset[str]:
    """The module-level names a top-level statement binds."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return frozenset({node.name})
    names: set[str] = set()
    targets: list[ast.AST] = []
    if isinstance(node, ast.Assign):
        targets = list(node.targets)
    elif isinstance(node, ast.AnnAssign):
        targets = [node.target]
    elif isinstance(node, ast.Try):
        for inner in ast.walk(node):
            if isinstance(inner, ast.Import | ast.ImportFrom):
                names.update(alias.asname or alias.name for alias in inner.names)
            elif isinstance(inner, ast.Name) and isinstance(inner.ctx, ast.Store):
                names.add(inner.id)
    for target in targets:
        names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
    return frozenset(names)


def _used(node: ast.AST) -> frozenset[str]:
    """The global names a statement reads: names loaded that no enclosing function or
    comprehension binds (a local `field` is not dataclasses' `field`)."""
    used: set[str] = set()
    _collect(node, frozenset(), used)
    return frozenset(used)


def _collect(node: ast.AST, local: frozenset[str], used: set[str]) -> None:
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
        bound = {a.arg for a in ast.walk(node.args) if isinstance(a, ast.arg)}
        scope = [*node.body] if isinstance(node.body, list) else [node.body]
        for inner in scope:
            bound.update(_bound_in(inner))
        for default in [*node.args.defaults, *node.args.kw_defaults]:
            if default is not None:
                _collect(default, local, used)
        if not isinstance(node, ast.Lambda):
            for decorator in node.decorator_list:
                _collect(decorator, local, used)
            if node.returns is not None:
                _collect(node.returns, local, used)
            for arg in ast.walk(node.args):
                if isinstance(arg, ast.arg) and arg.annotation is not None:
                    _collect(arg.annotation, local, used)
        for inner in scope:
            _collect(inner, local | bound, used)
        return
    if isinstance(node, ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp):
        bound = {
            n.id
            for generator in node.generators
            for n in ast.walk(generator.target)
            if isinstance(n, ast.Name)
        }
        for child in ast.iter_child_nodes(node):
            _collect(child, local | bound, used)
        return
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in local:
        used.add(node.id)
    for child in ast.iter_child_nodes(node):
        _collect(child, local, used)


def _bound_in(node: ast.AST) -> set[str]:
    """The names a function body binds: assigned, caught, or defined in it."""
    bound: set[str] = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            bound.add(n.id)
        elif isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(n.name)
        elif isinstance(n, ast.ExceptHandler):
            bound.add(n.name or "")
    return bound


def _exported(tree: ast.Module) -> set[str]:
    """The names in the module's `__all__`: used by the module's users."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            return {
                e.value
                for e in ast.walk(node.value)
                if isinstance(e, ast.Constant) and isinstance(e.value, str)
            }
    return set()


@dataclass(frozen=True)
class Hub:
    """A sibling module whose definitions a module imports instead of copying them: the
    chat module, for a module of another protocol's events made with it."""

    module: str
    names: frozenset[str]


def inline(
    text: str, extra_imports: dict[str, tuple[str, str]] | None = None, hub: Hub | None = None
) -> str:
    """The rendered module `text` with its placeholders filled; raises InlineError. What
    `hub` defines is imported from it (relatively: the two live in one package)."""
    return inlined(text, extra_imports, hub)[0]


def inlined(
    text: str, extra_imports: dict[str, tuple[str, str]] | None = None, hub: Hub | None = None
) -> tuple[str, frozenset[str]]:
    """`inline`, and every name the finished module defines (what a module made with it
    as its hub imports, known without parsing it again)."""
    files = [runtime_file(n) for found in _PLACEHOLDER.findall(text) for n in found.split()]
    own = ast.parse(text)
    defined = set().union(*(_defined(node) for node in own.body))
    # The module's own code is laid out by templates, whose local names (`out`, `value`)
    # are none of the runtime's or an import's: every name it loads counts as used.
    # The runtime's own definitions are read scope by scope (`Definition.uses`).
    loaded = _loaded(own)
    wanted = (loaded | _exported(own)) - defined
    available: dict[str, list[Definition]] = {}
    for definition in (d for f in files for d in f.definitions):
        for name in definition.defines:
            same = available.setdefault(name, [])
            if same and same[0].file != definition.file:
                raise InlineError(
                    f"runtime files {same[0].file} and {definition.file} both define {name}"
                )
            same.append(definition)
    shared = hub.names - defined if hub else frozenset()
    kept: set[Definition] = set()
    pending = [name for name in wanted if name in available and name not in shared]
    while pending:
        for definition in available[pending.pop()]:
            if definition not in kept:
                kept.add(definition)
                wanted |= definition.uses
                pending += [n for n in definition.uses if n in available and n not in shared]
    defined |= {name for d in kept for name in d.defines}
    imports = {
        **STANDARD_NAMES,
        **{k: v for f in files for k, v in f.imports.items()},
        **(extra_imports or {}),
    }
    if hub:
        imports |= {name: (f".{hub.module}", name) for name in shared}
    # A name neither defined nor imported is the module's mistake: Python and the
    # linters report it, as they would in hand-written code.
    needed = {n: imports[n] for n in wanted - defined - _BUILTINS if n in imports}

    def fill(match: re.Match[str]) -> str:
        chosen = [
            d.text
            for name in match.group(1).split()
            for d in runtime_file(name).definitions
            if d in kept
        ]
        return "\n\n\n".join(chosen)

    text = _PLACEHOLDER.sub(fill, text)
    return text.replace(IMPORTS_PLACEHOLDER, import_block(needed), 1), frozenset(defined)


def _loaded(tree: ast.AST) -> set[str]:
    """Every name the tree loads: what `ast.walk` finds, three times as fast (a generated
    module is a few hundred thousand nodes; this walk was a tenth of `make generate`)."""
    out: set[str] = set()
    stack = [tree]
    while stack:
        node = stack.pop()
        if type(node) is ast.Name:  # no name holds another
            if type(node.ctx) is ast.Load:
                out.add(node.id)
            continue
        for key in node._fields:
            value = getattr(node, key, None)
            if type(value) is list:
                stack += [item for item in value if isinstance(item, ast.AST)]
            elif isinstance(value, ast.AST):
                stack.append(value)
    return out


def import_block(needed: dict[str, tuple[str, str]]) -> str:
    """The import statements of `needed` (name -> (module, name there)), sorted as
    isort sorts them: standard library, then third party; plain imports first."""
    sections: list[str] = []
    for section in ("standard", "third party", "local"):
        plain: set[str] = set()
        froms: dict[str, set[str]] = {}
        for name, (module, original) in needed.items():
            if _section(module) != section:
                continue
            if not original:
                plain.add(module)
            else:
                froms.setdefault(module, set()).add(
                    original if original == name else f"{original} as {name}"
                )
        lines = [f"import {m}" for m in sorted(plain)]
        for module, names in sorted(froms.items()):
            # isort gives each `x as y` a statement of its own, after the plain names.
            plain_names = sorted((n for n in names if " as " not in n), key=_member_order)
            if plain_names:
                lines.append(f"from {module} import {', '.join(plain_names)}")
            lines += [f"from {module} import {n}" for n in sorted(names) if " as " in n]
        if lines:
            sections.append("\n".join(lines))
    return "\n\n".join(sections)


def _section(module: str) -> str:
    """isort's section of a module: standard library, third party, or local (relative)."""
    if module.startswith("."):
        return "local"
    return "third party" if module.split(".")[0] in _THIRD_PARTY else "standard"


def _member_order(name: str) -> tuple[int, str, str]:
    """isort's order of imported names: CONSTANTS, then Classes, then functions, each
    in the order of their names ignoring case."""
    if name.isupper() and len(name) > 1:
        return (0, name.lower(), name)
    return (1 if name[0].isupper() else 2, name.lower(), name)


def runtime_names() -> frozenset[str]:
    """Every name a runtime file defines or imports, and the standard names a template
    may use: what a generated module may hold at its top level."""
    names = set(STANDARD_NAMES)
    for name in _runtime_files():
        found = runtime_file(name)
        names.update(found.imports, *(d.defines for d in found.definitions))
    return frozenset(names)


def _runtime_files() -> list[str]:
    """The name of every runtime file, as a placeholder names it (`messages/reader`)."""
    return sorted(
        path.relative_to(RUNTIME).with_suffix("").as_posix()
        for path in RUNTIME.rglob("*.py")
        if path.stem != "__init__"
    )


def sections() -> dict[str, str]:
    """Every runtime definition's text, by `file.name`: what a module copies verbatim
    (the golden records show each as a one-line marker)."""
    out: dict[str, str] = {}
    for name in _runtime_files():
        for definition in runtime_file(name).definitions:
            out[f"{name.replace('/', '.')}.{min(definition.defines)}"] = definition.text
    return out
