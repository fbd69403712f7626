"""Render every target from templates/ (stage 3 of the pipeline).

The Jinja environment is strict (an undefined name is an error) and gets its values
from the intermediate model through a few named filters; the templates only lay code
out. Every spec string that reaches code goes through `pyrepr` or `docstring`.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, fields, replace
from functools import cache
from pathlib import Path
from typing import Any

import jinja2

from ..ir.model import Enum, Field, MergePlan, Model, ModelRef, NamedUnion, Spec, Spelling
from ..runtime.requests.dialects import _RequestDialect
from . import examples, strategies
from .families import FAMILIES
from .header import PROJECT_COMMAND, header
from .linking import RUNTIME_PACKAGE, Linked, copied, link, member_order, runtime_text
from .targets import TARGETS, Target


@dataclass(frozen=True)
class Rendered:
    """One output file: its path relative to the project root and its unformatted text."""

    path: str
    text: str
    python: bool
    """Whether it is Python to format (a runtime file is copied as it is)."""


@cache
def environment(templates: Path) -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(templates),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )
    env.filters["pyrepr"] = _pyrepr
    env.filters["docstring"] = docstring
    env.filters["comment"] = comment
    return env


def _pyrepr(value: object) -> str:
    # repr() of str/int/list/dict is valid Python source for the same value.
    return repr(value)


def docstring(paragraphs: str | Sequence[str], indent: int = 0) -> str:
    """A triple-quoted docstring, wrapped to the line length, safe for any text."""
    if isinstance(paragraphs, str):
        return _docstring((paragraphs,), indent)
    return _docstring(tuple(paragraphs), indent)


@cache
def _docstring(paragraphs: tuple[str, ...], indent: int) -> str:
    # Every target writes the docs of the same fields: each is wrapped once.
    width = 88 - indent
    lines = _wrapped(paragraphs, width)
    if len(lines) == 1 and len(lines[0]) + 6 > width:
        # The formatter puts the closing quotes of a one-line text on its line: then
        # they must fit there too.
        lines = _wrapped(paragraphs, width - 3)
    pad = " " * indent
    if len(lines) == 1 and len(lines[0]) + 6 <= width:
        return f'"""{lines[0]}"""'
    body = "\n".join((pad + line) if line else "" for line in lines)
    return f'"""{body.lstrip()}\n{pad}"""'


def _wrapped(paragraphs: Sequence[str], width: int) -> list[str]:
    """The lines of a docstring's text, the first after the opening quotes."""
    lines: list[str] = []
    for paragraph in paragraphs:
        if lines:
            lines.append("")
        lines.extend(
            textwrap.wrap(
                _escape_docstring(paragraph),
                width=width,
                initial_indent='"""' if not lines else "",
                break_long_words=False,
                break_on_hyphens=False,
            )
            or [""]
        )
    lines[0] = lines[0].removeprefix('"""')
    return lines


def _escape_docstring(text: str) -> str:
    text = text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    if text.endswith('"'):
        text = text[:-1] + '\\"'
    # Line breaks in a spec doc are folded; the wrapper decides where lines end.
    return " ".join(text.split())


def comment(paragraphs: str | Sequence[str], indent: int = 0) -> str:
    """The same text as `docstring`, as `#` comment lines (for where a docstring cannot go)."""
    if isinstance(paragraphs, str):
        paragraphs = [paragraphs]
    pad = " " * indent
    lines: list[str] = []
    for paragraph in paragraphs:
        if lines:
            lines.append(pad + "#")
        for line in textwrap.wrap(
            " ".join(paragraph.split()),
            width=86 - indent,
            break_long_words=False,
            break_on_hyphens=False,  # nor inside a URL
        ) or [""]:
            lines.append(f"{pad}# {line}")
    return "\n".join(lines).lstrip()


# --- doc text composed from the spec ------------------------------------------


@dataclass(frozen=True)
class Docs:
    """The paragraphs of generated docstrings, composed from spec text."""

    titles: dict[str, str]
    """Vendor name -> its title, as the docs credit vendors."""

    def credit(self, vendors: Sequence[str]) -> str:
        return ", ".join(self.titles[v] for v in vendors)

    def field(self, field: Field) -> list[str]:
        """Doc, deprecation, the vendors that send the field, and vendor quirks."""
        paragraphs = [field.doc]
        if field.deprecated:
            paragraphs.append(f"Deprecated: {field.deprecated}")
        if field.origin is not None:
            paragraphs.append(
                f"Sent by {self.credit(field.origin.vendors)}; see {field.origin.source}"
            )
        for note in field.relaxations:
            paragraphs.append(f"{self.credit(note.vendors)}: {note.doc} See {note.source}")
        return paragraphs

    def model(self, model: Model) -> list[str]:
        paragraphs = [model.doc]
        if model.origin is not None:
            paragraphs.append(
                f"Sent by {self.credit(model.origin.vendors)}; see {model.origin.source}"
            )
        if model.error_when is not None:
            paragraphs.append(model.error_when.doc)
        return paragraphs

    def union(self, named: NamedUnion) -> list[str]:
        members = [f"`{o.name}`" for o in named.union.options if isinstance(o, ModelRef)]
        paragraphs = [named.doc, f"One of {', '.join(members)}."]
        if named.union.other:
            paragraphs.append(
                f"A `{named.union.discriminator}` no other member has reads as"
                f" `{named.union.other}`, kept whole."
            )
        if named.union.absent:
            paragraphs.append(
                f"A value without `{named.union.discriminator}` reads as"
                f" `{named.union.absent}`, and is written back without it."
            )
        return paragraphs

    def enum(self, enum: Enum) -> list[str]:
        values = "; ".join(f"`{v.value}`: {v.doc.rstrip('.')}" for v in enum.values)
        tail = (
            "Values not listed here are accepted and kept."
            if enum.open
            else "No other value is accepted."
        )
        paragraphs = [enum.doc, f"{values}. {tail}"]
        if enum.origin is not None:
            paragraphs.append(f"Sent by {self.credit(enum.origin.vendors)}.")
        return paragraphs


def merge_tables(spec: Spec) -> list[MergePlan]:
    """The merge plans as the accumulator's table spells them: a rule that keeps the last
    value under the same key is what happens to any key not listed, so it is left out."""
    return [
        replace(plan, rules=tuple(r for r in plan.rules if (r.how, r.into) != ("last", r.wire)))
        for plan in spec.merging
    ]


def spelling_rows(spellings: tuple[Spelling, ...]) -> list[tuple[str, str]]:
    """Each spelling of a meaning as the module's table writes it, `_Spelling(...)`,
    with the field that declares it."""
    rows = []
    for s in spellings:
        args = [repr(s.meaning), repr(s.path)]
        if s.precedence:
            args.append(f"precedence={s.precedence!r}")
        if s.scale != 1.0:
            args.append(f"scale={s.scale!r}")
        if s.items:
            args.append(f"items={s.items!r}")
        rows.append((f"_Spelling({', '.join(args)})", s.field))
    return rows


def wire_defaults(model: Model) -> dict[str, object]:
    """The keys of a model that read as a default when missing or null, with the default."""
    return {f.wire: f.default for f in model.fields if f.has_default}


def layout_units(spec: Spec) -> list[Model | NamedUnion]:
    """The models in their order, each union the spec names right after the last of its
    members: where its alias and reader can be defined and used."""
    units: list[Model | NamedUnion] = []
    pending = list(spec.unions)
    seen: set[str] = set()
    for model in spec.models:
        units.append(model)
        seen.add(model.name)
        for named in list(pending):
            if all(o.name in seen for o in named.union.options if isinstance(o, ModelRef)):
                units.append(named)
                pending.remove(named)
    return units


PACKAGE_FOLDER = "generated"
"""Where the project's packages go: `generated/<target>/`."""


@dataclass(frozen=True)
class _UnionRoot:
    """What the layout asks of a root that is a union: its name, and no error rule."""

    name: str
    error_when: None = None
    fields: tuple[Field, ...] = ()


def render_module(
    spec: Spec,
    root: Path,
    target: Target,
    command: str,
    made_with: tuple[str, frozenset[str]] | None = None,
    protocols: Sequence[str] = (),
) -> Linked:
    """One module of a package: the template laid out, linked to the runtime (and to
    the module it is made with, chat's, for another protocol's: `made_with`).
    `protocols` are the other protocols' modules beside it."""
    templates = root / "templates"
    family = FAMILIES[spec.family]
    context: dict[str, Any] = {
        "spec": spec,
        "target": target,
        "family": family,
        "layout": family.layout,
        "about": family.about,
        "example": family.example,
        "noun": family.noun,
        "hub": made_with[0] if made_with else "",
        "units": layout_units(spec),
        "protocols": tuple(protocols),
        "docs": Docs({v.name: v.title for v in spec.vendors}),
        "header": header(spec, target.name, command),
        "strict": spec.options.strict,
        "root": (
            _UnionRoot(spec.root) if spec.root in target.union_names else spec.model(spec.root)
        ),
        "completion": spec.model(spec.completion) if spec.completion else None,
        "request": spec.model(spec.request) if spec.request else None,
        "plans": merge_tables(spec),
        "spellings": spelling_rows(spec.meanings.spellings),
        "chunk_spellings": spelling_rows(spec.meanings.in_chunks),
        "request_dialects": [request_dialect_code(d.rules) for d in spec.request_dialects],
        "client_only_keys": sorted(
            f.wire
            for f in (spec.model(spec.request).fields if spec.request else ())
            if f.client_only
        ),
        "request_dialect_names": ", ".join(f"`{d.rules.name!r}`" for d in spec.request_dialects),
        "protocol_title": _PROTOCOL_TITLES[spec.family],
        "dialect_names": ", ".join(f"`{d.name!r}`" for d in spec.meanings.dialects) or "none",
        "default_dialect": next((d.name for d in spec.meanings.dialects), ""),
    }
    text = environment(templates).get_template(target.template).render(context)
    return link(text, target.imports, made_with)


def render_package(
    spec: Spec,
    families: Sequence[Spec],
    root: Path,
    target: Target,
    command: str,
    folder: str,
) -> list[Rendered]:
    """The package of one target at `folder` ("": paths inside it): the chat module, a
    module of each other protocol in `families` (made with chat's), the `__init__` of the
    public names, `py.typed`, and the runtime files the modules use, copied as they are."""

    def at(name: str) -> str:
        return f"{folder}/{name}" if folder else name

    protocols = [other.family for other in families]
    chat = render_module(spec, root, target, command, protocols=protocols)
    out = [Rendered(at("chat.py"), chat.text, python=True)]
    used = set(chat.uses)
    for other in families:
        made = render_module(other, root, type(target)(other), command, ("chat", chat.defines))
        out.append(Rendered(at(f"{other.family}.py"), made.text, python=True))
        used |= made.uses
    exports = target.exports(protocols)
    context = {
        "header": header(spec, target.name, command),
        "doc": _package_doc(target.name, protocols),
        "protocols": protocols,
        "exports": exports,
        "imported": sorted(exports, key=member_order),
    }
    init = environment(root / "templates").get_template("package_api.py.jinja").render(context)
    out.append(Rendered(at("__init__.py"), init, python=True))
    out.append(Rendered(at("py.typed"), "", python=False))
    out += [
        Rendered(at(f"{RUNTIME_PACKAGE}/{name}.py"), runtime_text(name), python=False)
        for name in copied(used)
    ]
    return out


def _package_doc(target: str, protocols: Sequence[str]) -> list[str]:
    """The paragraphs of a package's docstring."""
    others = " and ".join(f"`{name}`" for name in protocols)
    return [
        f"Streamed chat completions{', ' + others.replace('`', '') if protocols else ''}"
        f" as {target} models. These are the public names of the chat module (`chat`)"
        + (
            f"; those of the modules {others} are read from them when first asked for, so"
            " that a program that reads chat alone never imports them."
            if protocols
            else "."
        ),
        "`_runtime/` holds chunkspec's runtime: the files of its generator/runtime/,"
        " copied as they are, private to this package.",
    ]


def render_all(
    spec: Spec,
    openai: Spec,
    root: Path,
    command: str = PROJECT_COMMAND,
    families: Sequence[Spec] = (),
) -> list[Rendered]:
    """Every generated Python file of the project, in a fixed order: each target's
    (`render_target`), then the tests' shared files (`render_shared`)."""
    out = []
    for target_class in TARGETS.values():
        out += render_target(spec, families, root, target_class(spec), command)
    return out + render_shared(spec, openai, root, command)


def render_target(
    spec: Spec, families: Sequence[Spec], root: Path, target: Target, command: str
) -> list[Rendered]:
    """A target's files: its package (`render_package`), its round-trip tests, and the
    old names of its modules. `families` are the other protocols' specs."""
    env = environment(root / "templates")
    out = render_package(spec, families, root, target, command, f"{PACKAGE_FOLDER}/{target.name}")
    context = {"spec": spec, "target": target, "header": header(spec, target.name, command)}
    test = env.get_template("test_roundtrip.py.jinja").render(context)
    out.append(Rendered(f"tests/generated/test_roundtrip_{target.name}.py", test, python=True))
    for protocol in ["chat", *(other.family for other in families)]:
        alias = env.get_template("old_module.py.jinja").render(
            {**context, "target": target.name, "protocol": protocol}
        )
        stem = f"{FAMILIES[protocol].module}_{target.name}"
        out.append(Rendered(f"{PACKAGE_FOLDER}/{stem}.py", alias, python=True))
    return out


def render_shared(spec: Spec, openai: Spec, root: Path, command: str) -> list[Rendered]:
    """The files every target's tests share, and the packages' `__init__`. `openai` is
    OpenAI's own spec (the strict profile, no vendor), whose strategies feed the
    differential tests."""
    env = environment(root / "templates")
    out = []
    examples_context = {
        "header": header(spec, "all", command),
        "examples": examples.for_spec(spec),
        "root_defaults": wire_defaults(spec.model(spec.root)),
    }
    text = env.get_template("examples.py.jinja").render(examples_context)
    out.append(Rendered("tests/generated/examples.py", text, python=True))
    properties = {
        "header": header(spec, "all", command),
        "families": [
            (strategies.for_spec(spec), "the spec allows"),
            (strategies.for_spec(openai, prefix="openai_"), "of OpenAI's own spec"),
        ],
        "root_strategy": strategies.strategy_name(spec.root),
        "completion": spec.completion,
        "completion_strategy": strategies.strategy_name(spec.completion or ""),
        "completion_defaults": (
            wire_defaults(spec.model(spec.completion)) if spec.completion else {}
        ),
    }
    for name in ("strategies", "test_properties"):
        text = env.get_template(f"{name}.py.jinja").render(properties)
        out.append(Rendered(f"tests/generated/{name}.py", text, python=True))
    agree_context = {
        "header": header(spec, "all", command),
        "targets": sorted(TARGETS),
        "exact_text": sorted(name for name, t in TARGETS.items() if t.exact_text),
    }
    agree = env.get_template("test_targets_agree.py.jinja").render(agree_context)
    out.append(Rendered("tests/generated/test_targets_agree.py", agree, python=True))
    packages = {
        f"{PACKAGE_FOLDER}/__init__.py": (
            "Generated packages, one per target (`generated.msgspec`, `generated.pydantic`,"
            " `generated.dataclasses`, `generated.typeddicts`), each with a module per"
            " protocol; a package works copied on its own. The modules `chunk_<target>`,"
            " `messages_<target>` and `responses_<target>` are the old names of its modules,"
            " kept for one release (CHANGELOG.md)."
        ),
        "tests/generated/__init__.py": "Generated round-trip tests.",
    }
    init = env.get_template("package_init.py.jinja")
    for path, doc in packages.items():
        text = init.render({"header": header(spec, "package", command), "doc": doc})
        out.append(Rendered(path, text, python=True))
    return out


_PROTOCOL_TITLES = {"chat": "chat-completions", "messages": "Messages", "responses": "Responses"}


def request_dialect_code(rules: _RequestDialect) -> str:
    """A dialect as the constructor call a module holds: its name, then only the rules
    that differ from the defaults."""
    default = _RequestDialect(rules.name)
    said = [
        f"{f.name}={getattr(rules, f.name)!r}"
        for f in fields(rules)
        if f.name != "name" and getattr(rules, f.name) != getattr(default, f.name)
    ]
    return f"_RequestDialect({', '.join([repr(rules.name), *said])})"
