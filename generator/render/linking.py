"""Link a rendered module to the runtime: the imports it needs, and the runtime files a
generated package copies.

A package per target holds one module per protocol (`chat.py`, `messages.py`,
`responses.py`), an `__init__.py` of the public names, and `_runtime/`: the files of
generator/runtime/ the modules use, copied as they are, under their own names. A
rendered module holds two kinds of placeholder line: `#<imports>`, where its import
block goes, and `#<runtime NAME ...>`, which names the runtime files its code may use
(the line itself goes). Every name the module's code loads and does not define is
imported from the listed file that defines it, from the module it is made with (chat's,
for another protocol's module), or from the standard or target library; the files
copied are those imported, and every file they import in turn.
"""

from __future__ import annotations

import ast
import builtins
import keyword
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path

RUNTIME = Path(__file__).resolve().parents[1] / "runtime"
RUNTIME_PACKAGE = "_runtime"
"""The folder of a generated package that holds the runtime's files."""
_PLACEHOLDER = re.compile(r"^#<runtime ([a-z_/ ]+)>\n?", re.MULTILINE)
IMPORTS_PLACEHOLDER = "#<imports>"
_BUILTINS = frozenset(dir(builtins)) | {"__name__", "__file__", "__package__"}
_TYPING = ("Annotated", "Any", "ClassVar", "Final", "Literal", "Required", "TypeAlias", "cast")
STANDARD_NAMES: dict[str, tuple[str, str]] = {
    **{name: ("typing", name) for name in _TYPING},
    **{name: ("collections.abc", name) for name in ("Callable", "Iterable", "Mapping")},
}
"""What a template's code may use from the standard library's typing vocabulary."""
_THIRD_PARTY = frozenset({"msgspec", "pydantic", "pydantic_core", "typing_extensions"})


class LinkError(Exception):
    """Two runtime files a module may use define the same name."""


@dataclass(frozen=True)
class RuntimeFile:
    """What linking needs of one runtime file: the names it defines, the sibling files
    it imports, and its text."""

    name: str
    """As a placeholder names it: `sse`, `chat/reader`."""
    defines: frozenset[str]
    siblings: frozenset[str]
    imports: Mapping[str, tuple[str, str]]
    """Name -> (module, name there; "" for a module) of its other imports: what the
    module's code may import too, from where the file does."""
    text: str

    @property
    def module(self) -> str:
        """Its module, relative to a generated module: `._runtime.chat.reader`."""
        return f".{RUNTIME_PACKAGE}.{self.name.replace('/', '.')}"


@cache
def runtime_file(name: str) -> RuntimeFile:
    text = (RUNTIME / f"{name}.py").read_text(encoding="utf-8")
    tree = ast.parse(text)
    defines: set[str] = set()
    siblings: set[str] = set()
    imports: dict[str, tuple[str, str]] = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.level > 0:
            siblings.update(_sibling(name, node))
        elif isinstance(node, ast.ImportFrom) and node.module not in (None, "__future__"):
            imports |= {a.asname or a.name: (str(node.module), a.name) for a in node.names}
        elif isinstance(node, ast.Import):
            imports |= {a.asname or a.name: (a.name, "") for a in node.names}
        defines |= _defined(node)
    return RuntimeFile(name, frozenset(defines), frozenset(siblings), imports, text)


def _sibling(name: str, node: ast.ImportFrom) -> set[str]:
    """The runtime files a relative import names (`from ..parts import X`, or
    `from . import reader`), as placeholders name them."""
    base = name.split("/")[: -node.level]
    if node.module is not None:
        return {"/".join([*base, *node.module.split(".")])}
    return {"/".join([*base, alias.name]) for alias in node.names}


def _defined(node: ast.stmt) -> frozenset[str]:
    """The module-level names a top-level statement binds."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return frozenset({node.name})
    if isinstance(node, ast.Import | ast.ImportFrom):
        return frozenset()  # what a file imports, the file that defines it gives
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


@dataclass(frozen=True)
class Linked:
    """A module with its imports written: its text, what it defines, and the runtime
    files it imports."""

    text: str
    defines: frozenset[str]
    uses: frozenset[str]


def link(
    text: str,
    extra_imports: Mapping[str, tuple[str, str]] | None = None,
    made_with: tuple[str, frozenset[str]] | None = None,
) -> Linked:
    """The rendered module `text` with its import block written and its runtime
    placeholders removed. `made_with` is (module, names) of the module it is made with,
    whose names it imports from it when no runtime file it lists defines them."""
    listed = [runtime_file(n) for found in _PLACEHOLDER.findall(text) for n in found.split()]
    text = _PLACEHOLDER.sub("", text)
    defined = frozenset(_top_level(text))
    wanted = (_loaded(text) | _exported(text)) - defined - _BUILTINS
    where: dict[str, RuntimeFile] = {}
    for found in listed:
        for name in found.defines & wanted:
            if name in where and where[name] is not found:
                raise LinkError(
                    f"runtime files {where[name].name} and {found.name} both define {name}"
                )
            where[name] = found
    imports = {
        **STANDARD_NAMES,
        **{k: v for found in listed for k, v in found.imports.items()},
        **(extra_imports or {}),
    }
    needed = {name: imports[name] for name in wanted if name in imports}
    needed |= {name: (found.module, name) for name, found in where.items()}
    if made_with is not None:
        module, names = made_with
        needed |= {n: (f".{module}", n) for n in wanted & names if n not in needed}
    # A name neither defined nor imported is the module's mistake: Python and the
    # linters report it, as they would in hand-written code.
    text = text.replace(IMPORTS_PLACEHOLDER, import_block(needed), 1)
    return Linked(text, defined, frozenset(found.name for found in where.values()))


# A template writes code whose names are read here without parsing it (parsing a few
# megabytes of generated code took half of `make generate`); the formatter parses every
# module after, and fails on one that is not Python. A name is an identifier outside
# strings and comments and not after a dot, nor a name declared or assigned at the start
# of an indented line (a field `warnings: list[Warning]`, a class attribute `_named = ...`,
# a keyword argument on a line of its own); an f-string's fields count as code. What
# templates write keeps to that: a keyword argument or a local name is never also the
# name of a runtime definition it does not use (it would be imported unused, which the
# linters of `make lint` report).
_STRING_BODY = (
    r'"""(?:\\[\s\S]|[^\\])*?"""|\'\'\'(?:\\[\s\S]|[^\\])*?\'\'\''
    r'|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\''
)
_TOKENS = re.compile(
    rf"(?m)(?P<f>(?<![\w])[fF][rR]?(?:{_STRING_BODY}))"
    rf"|(?<![\w])[rRbBuU]{{0,2}}(?:{_STRING_BODY})"
    r"|#[^\n]*"
    r"|^[ \t]+[A-Za-z_]\w*(?=[ \t]*(?::(?![:=])|=(?!=)))"  # declared or assigned: bound
    r"|(?<![.\w])(?P<name>[A-Za-z_]\w*)"
)
_FIELD = re.compile(r"\{([^{}]*)\}")
_DEFINITION = re.compile(r"^(?:(?:async )?def |class )?([A-Za-z_]\w*)\b(?=[^\n]*?[(:=])", re.M)
_KEYWORDS = frozenset(keyword.kwlist) | frozenset(keyword.softkwlist)


def _loaded(text: str) -> set[str]:
    """Every name the code of `text` reads or binds (see above)."""
    names: set[str] = set()
    for match in _TOKENS.finditer(text):
        name = match.group("name")
        if name is not None:
            names.add(name)
        elif match.group("f") is not None:
            for field in _FIELD.findall(match.group("f")):
                names |= _loaded(field)
    return names - _KEYWORDS


def _top_level(text: str) -> set[str]:
    """The names the module binds at its top level: each line at column 0 that defines
    a function or class, or assigns a name (`X = ...`, `X: T = ...`)."""
    found = set()
    for match in _DEFINITION.finditer(text):
        line = text[match.start() : text.find("\n", match.start())]
        if line.startswith(("def ", "async def ", "class ")) or re.match(
            r"[A-Za-z_]\w*\s*(?::[^=]*)?=(?!=)", line
        ):
            found.add(match.group(1))
    return found - _KEYWORDS


def _exported(text: str) -> set[str]:
    """The names in the module's `__all__`: used by the module's users."""
    start = text.find("\n__all__ = [")
    if start < 0:
        return set()
    return set(re.findall(r"[\"\']([^\"\']+)[\"\']", text[start : text.index("]", start)]))


def copied(used: Iterable[str]) -> list[str]:
    """The runtime files a package copies for modules that import `used`: those, every
    file they import in turn, and the `__init__` of each folder on their way; sorted."""
    files: set[str] = set()
    pending = list(used)
    while pending:
        name = pending.pop()
        if name not in files:
            files.add(name)
            pending += runtime_file(name).siblings
    folders = {"/".join(n.split("/")[:i]) for n in files for i in range(n.count("/") + 1)}
    inits = {f"{folder}/__init__" if folder else "__init__" for folder in folders}
    return sorted(files | inits)


def runtime_text(name: str) -> str:
    """A runtime file's text, as a package copies it (a folder's `__init__` too)."""
    return runtime_file(name).text


def import_block(needed: Mapping[str, tuple[str, str]]) -> str:
    """The import statements of `needed` (name -> (module, name there)), sorted as
    isort sorts them: standard library, third party, then local; plain imports first."""
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
        for module, names in sorted(froms.items(), key=lambda item: _module_order(item[0])):
            # isort gives each `x as y` a statement of its own, after the plain names.
            plain_names = sorted((n for n in names if " as " not in n), key=member_order)
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


def _module_order(module: str) -> tuple[int, str]:
    """isort's order of modules: `.` before `._runtime` (fewer dots first, then by name)."""
    return (-(len(module) - len(module.lstrip("."))), module.lstrip(".").lower())


def member_order(name: str) -> tuple[int, str, str]:
    """isort's order of imported names: CONSTANTS, then Classes, then functions, each
    in the order of their names ignoring case."""
    if name.isupper() and len(name) > 1:
        return (0, name.lower(), name)
    return (1 if name[0].isupper() else 2, name.lower(), name)


def runtime_names() -> frozenset[str]:
    """Every name a runtime file defines, and the standard names a template may use:
    what a generated module may import, which no spec type may take."""
    names = set(STANDARD_NAMES)
    for name in runtime_files():
        names |= runtime_file(name).defines
    return frozenset(names)


def runtime_files() -> list[str]:
    """The name of every runtime file but the folders' `__init__`, as a placeholder
    names it (`messages/reader`)."""
    return sorted(
        path.relative_to(RUNTIME).with_suffix("").as_posix()
        for path in RUNTIME.rglob("*.py")
        if path.stem != "__init__"
    )
