"""Render every target from templates/ (stage 3 of the pipeline).

The Jinja environment is strict (an undefined name is an error) and gets its values
from the intermediate model through a few named filters; the templates only lay code
out. Every spec string that reaches code goes through `pyrepr` or `docstring`.
"""

from __future__ import annotations

import keyword
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import jinja2

from generator import examples, spelling, strategies
from generator.codecs import Codecs, stdlib_codecs
from generator.ir import Enum, EnumRef, Field, MergePlan, Model, ModelRef, Scalar, Spec
from generator.msgspec_layout import MsgspecLayout
from generator.naming import snake

MODULE_TARGETS = ("dataclasses", "typeddicts", "pydantic", "msgspec")
EXACT_TEXT_TARGETS = ("dataclasses", "typeddicts")
"""The targets whose `dumps` writes the very same text; msgspec and pydantic spell some
floats their own way (the same JSON value)."""


@dataclass(frozen=True)
class Rendered:
    """One output file: its path relative to the project root and its unformatted text."""

    path: str
    text: str
    python: bool


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
        paragraphs = [paragraphs]
    width = 88 - indent
    lines: list[str] = []
    for paragraph in paragraphs:
        if lines:
            lines.append("")
        lines.extend(
            textwrap.wrap(
                _escape_docstring(paragraph),
                width=width,
                break_long_words=False,
                break_on_hyphens=False,
            )
            or [""]
        )
    pad = " " * indent
    if len(lines) == 1 and len(lines[0]) + 6 <= width:
        return f'"""{lines[0]}"""'
    body = "\n".join((pad + line) if line else "" for line in lines)
    return f'"""{body.lstrip()}\n{pad}"""'


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
            " ".join(paragraph.split()), width=86 - indent, break_long_words=False
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


# --- per-target helpers exposed to templates ----------------------------------


def keys_constant(model: Model) -> str:
    return f"_{snake(model.name).upper()}_KEYS"


def fields_constant(model: Model) -> str:
    return f"_{snake(model.name).upper()}_FIELDS"


def required_constant(model: Model) -> str:
    return f"_{snake(model.name).upper()}_REQUIRED"


def order_constant(model: Model) -> str:
    return f"_{snake(model.name).upper()}_ORDER"


def checked_name(model: Model) -> str:
    return f"_checked_{snake(model.name)}"


def null_policy(field: Field) -> str:
    """What the fast reader does with a null in this field."""
    if field.has_default:
        return "_EMPTY"
    return "_KEEP" if field.nullable else "_REJECT"


def exact_type(field: Field) -> str:
    """The Python type of a value its decoder returns unchanged (so the fast reader need
    not call it), or None."""
    expr = field.type
    if isinstance(expr, EnumRef) and expr.open:
        return "str"
    if isinstance(expr, Scalar) and expr.kind != "any":
        return {"string": "str"}.get(expr.kind, expr.kind)
    return "None"


def validator_name(name: str) -> str:
    return f"validate_{snake(name)}"


def functional_typeddict(model: Model) -> bool:
    """Class syntax cannot hold keys that are not identifiers (or would be name-mangled)."""
    return any(
        not f.wire.isidentifier() or keyword.iskeyword(f.wire) or f.wire.startswith("__")
        for f in model.fields
    )


def reader(field: Field) -> str:
    """The helper that reads a field's key from a decoded object."""
    if field.has_default:
        return "_defaulted"
    base = "_required" if field.required else "_optional"
    return base + ("_nullable" if field.nullable else "")


def encode_expr(field: Field, encoder: str | None) -> str:
    """The expression `to_dict` writes for a field of a dataclass."""
    value = f"self.{field.names.dataclasses}"
    if encoder is None:
        return value
    call = f"{value}.to_dict()" if isinstance(field.type, ModelRef) else f"{encoder}({value})"
    return f"None if {value} is None else {call}" if field.nullable else call


def error_value(model: Model) -> str:
    """Where a pydantic model holds the value of its `error_when` key."""
    assert model.error_when is not None
    for field in model.fields:
        if field.wire == model.error_when.has:
            return f"self.{field.names.pydantic}"
    return f"(self.__pydantic_extra__ or {{}}).get({model.error_when.has!r})"


def exports(spec: Spec, target: str) -> list[str]:
    """The sorted `__all__` of a target module."""
    names = ["ChunkDecodeError", "ErrorReport", "loads", "dumps"]
    names += ["ChunkStream", "ServerSentEvent", "StreamError", "iter_chunks"]
    if spec.completion is not None:
        names += ["ChunkAccumulator", "loads_completion"]
    names += [m.name for m in spec.models] + [e.name for e in spec.enums]
    if target in ("dataclasses", "msgspec"):
        names.append("UNSET")
    if target == "typeddicts":
        names += [validator_name(m.name) for m in spec.models]
    # The order ruff's RUF022 checks: CONSTANTS, then Classes, then functions.
    return sorted(names, key=lambda n: (0 if n.isupper() else 1 if n[0].isupper() else 2, n))


def merge_tables(spec: Spec) -> list[MergePlan]:
    """The merge plans as the accumulator's table spells them: a rule that keeps the last
    value under the same key is what happens to any key not listed, so it is left out."""
    return [
        replace(plan, rules=tuple(r for r in plan.rules if (r.how, r.into) != ("last", r.wire)))
        for plan in spec.merging
    ]


# The kinds of `repeats` each target shares one copy of. TypedDicts hold the JSON as read
# and pydantic would pay a validator call per value. A msgspec struct is read in C, where
# a Python `__post_init__` on every logprob token costs more than the copy saves
# (measured: logprob chunks read 25 % slower), so only per-stream values are shared.
_SHARES: dict[str, tuple[str, ...]] = {
    "dataclasses": ("stream", "vocabulary"),
    "msgspec": ("stream",),
    "typeddicts": (),
    "pydantic": (),
}


@dataclass(frozen=True)
class Shared:
    """The fields whose values a target shares between objects, by Python name: a
    `stream` value is compared with the one the last object was read with (slot n of the
    model's table for the n-th name), a `vocabulary` value is looked up in the module's
    bounded table of values."""

    stream: tuple[str, ...]
    vocabulary: tuple[str, ...]

    def __bool__(self) -> bool:
        return bool(self.stream or self.vocabulary)


def shared(model: Model, target: str) -> Shared:
    def names(how: str) -> tuple[str, ...]:
        return tuple(f.names.dataclasses for f in model.fields if f.repeats == how)

    kinds = _SHARES[target]
    return Shared(
        stream=names("stream") if "stream" in kinds else (),
        vocabulary=names("vocabulary") if "vocabulary" in kinds else (),
    )


def wire_defaults(model: Model) -> dict[str, object]:
    """The keys of a model that read as a default when missing or null, with the default."""
    return {f.wire: f.default for f in model.fields if f.has_default}


def last_constant(model: Model) -> str:
    return f"_{snake(model.name).upper()}_LAST"


def aliased(model: Model, spec: Spec) -> list[str]:
    """The pydantic names of a model's fields whose wire key is another string, where an
    unknown key may equal the name (the strict profile has no unknown keys)."""
    if spec.options.strict:
        return []
    return [f.names.pydantic for f in model.fields if f.names.pydantic != f.wire]


# How the accumulator reads a chunk as JSON data, and decodes the merged JSON data.
_CHUNK_TO_JSON: dict[str, Callable[[str], str]] = {
    "dataclasses": lambda chunk: f"{chunk}.to_dict()",
    "msgspec": lambda chunk: f"{chunk}.to_dict()",
    "typeddicts": lambda chunk: chunk,
    "pydantic": lambda chunk: f"{chunk}.model_dump(by_alias=True, exclude_unset=True)",
}
_COMPLETION_FROM_JSON: dict[str, Callable[[Spec, str], str]] = {
    "dataclasses": lambda spec, data: f"{spec.completion}.from_dict({data})",
    "msgspec": lambda spec, data: f"{spec.completion}.from_dict({data})",
    "typeddicts": lambda spec, data: f"{validator_name(spec.completion or '')}({data})",
    "pydantic": lambda spec, data: f"_validate_value({spec.completion}, {data})",
}


PROJECT_COMMAND = "make generate"


def header(spec: Spec, spec_hash: str, target: str, command: str = PROJECT_COMMAND) -> list[str]:
    """The comment lines at the top of a generated file."""
    sources = [f"Sources: {spec.files[0]}", *(f"         {name}" for name in spec.files[1:])]
    vendors = "all" if spec.options.vendors is None else ", ".join(spec.options.vendors) or "none"
    return [
        "Code generated by chunkspec. DO NOT EDIT.",
        *sources,
        f"Spec hash: {spec_hash} (spec, templates and generator).",
        f"Target: {target}. Vendors: {vendors}. Profile: {spec.options.profile}.",
        f"Regenerate with: {command}",
    ]


def _context(
    spec: Spec, spec_hash: str, target: str, command: str = PROJECT_COMMAND
) -> dict[str, Any]:
    docs = Docs({v.name: v.title for v in spec.vendors})
    helpers: dict[str, Callable[..., Any]] = {
        "annotation": lambda f: spelling.field_annotation(f, target),
        "pydantic_field": lambda f: spelling.pydantic_field(f, track_alias=not spec.options.strict),
        "aliased": lambda m: aliased(m, spec),
        "error_value": error_value,
        "defaulted": lambda m: [f.names.pydantic for f in m.fields if f.has_default],
        "field_doc": docs.field,
        "model_doc": docs.model,
        "enum_doc": docs.enum,
        "keys_constant": keys_constant,
        "fields_constant": fields_constant,
        "required_constant": required_constant,
        "checked_name": checked_name,
        "order_constant": order_constant,
        "null_policy": null_policy,
        "exact_type": exact_type,
        "validator_name": validator_name,
        "functional_typeddict": functional_typeddict,
        "reader": reader,
        "default_factory": lambda f: spelling.default_factory(f, target),
        "shared": lambda m: shared(m, target),
        "last_constant": last_constant,
        "python_name": lambda f: getattr(
            f.names, "pydantic" if target == "pydantic" else "dataclasses"
        ),
    }
    context: dict[str, Any] = {
        "spec": spec,
        "target": target,
        "header": header(spec, spec_hash, target, command),
        "strict": spec.options.strict,
        "root": spec.model(spec.root),
        "completion": spec.model(spec.completion) if spec.completion else None,
        "plans": merge_tables(spec),
        "chunk_to_json": _CHUNK_TO_JSON[target],
        "completion_from_json": lambda arg: _COMPLETION_FROM_JSON[target](spec, arg),
        "exports": exports(spec, target),
        "uses_discriminator": any(
            spelling.uses_discriminator(f.type) for m in spec.models for f in m.fields
        ),
        "uses_default": any(f.has_default for m in spec.models for f in m.fields),
        "uses_vocabulary": any(shared(m, target).vocabulary for m in spec.models),
        "uses_alias_check": any(aliased(m, spec) for m in spec.models),
        "error_rules": any(m.error_when for m in spec.models),
        "uses_kind_union": any(
            spelling.uses_kind_union(f.type) for m in spec.models for f in m.fields
        ),
        "union_tags": spelling.union_tags(spec),
        "uses_not_null": any(
            not f.required and not f.nullable and not f.has_default
            for m in spec.models
            for f in m.fields
        ),
        **helpers,
    }
    if target == "msgspec":
        layout = MsgspecLayout(spec)
        context["tag_of"] = layout.tag_of
        context["struct_fields"] = layout.fields
        context["tag_fields"] = layout.tag_fields
        context["struct_bases"] = layout.bases
        context["struct_default"] = layout.default
        context["error_check"] = layout.error_check
        context["read_class"] = lambda model: f"_{model.name}Read"
    if target != "pydantic":
        model_decoder = validator_name if target == "typeddicts" else (lambda n: f"{n}.from_dict")
        codecs: Codecs = stdlib_codecs(spec, target, model_decoder)
        fields = [f for m in spec.models for f in m.fields]
        context["codecs"] = codecs
        context["readers"] = sorted({reader(f) for f in fields})
        context["decoder"] = lambda f: codecs.decoder_of(f.type)
        context["encode"] = lambda f: encode_expr(f, codecs.encoder_of(f.type))
    return context


def render_module(spec: Spec, spec_hash: str, templates: Path, target: str, command: str) -> str:
    """One target module on its own (for vendoring into another repository)."""
    context = _context(spec, spec_hash, target, command)
    return environment(templates).get_template(f"{target}.py.jinja").render(context)


def render_all(
    spec: Spec, openai: Spec, spec_hash: str, templates: Path, command: str = PROJECT_COMMAND
) -> list[Rendered]:
    """Every generated Python file of the project, in a fixed order. `openai` is OpenAI's
    own spec (the strict profile, no vendor), whose strategies feed the differential tests."""
    env = environment(templates)
    out = []
    for target in MODULE_TARGETS:
        context = _context(spec, spec_hash, target, command)
        text = env.get_template(f"{target}.py.jinja").render(context)
        out.append(Rendered(f"generated/chunk_{target}.py", text, python=True))
        test = env.get_template("test_roundtrip.py.jinja").render(context)
        out.append(Rendered(f"tests/generated/test_roundtrip_{target}.py", test, python=True))
    examples_context = {
        "header": header(spec, spec_hash, "all", command),
        "examples": examples.for_spec(spec),
        "root_defaults": wire_defaults(spec.model(spec.root)),
    }
    text = env.get_template("examples.py.jinja").render(examples_context)
    out.append(Rendered("tests/generated/examples.py", text, python=True))
    properties = {
        "header": header(spec, spec_hash, "all", command),
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
        "header": header(spec, spec_hash, "all", command),
        "targets": sorted(MODULE_TARGETS),
        "exact_text": sorted(EXACT_TEXT_TARGETS),
    }
    agree = env.get_template("test_targets_agree.py.jinja").render(agree_context)
    out.append(Rendered("tests/generated/test_targets_agree.py", agree, python=True))
    packages = {
        "generated/__init__.py": "Generated chunk models; each module also works copied on its own.",
        "tests/generated/__init__.py": "Generated round-trip tests.",
    }
    init = env.get_template("package_init.py.jinja")
    for path, doc in packages.items():
        text = init.render({"header": header(spec, spec_hash, "package", command), "doc": doc})
        out.append(Rendered(path, text, python=True))
    return out
