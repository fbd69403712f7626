"""The decode and encode functions a standard-library target needs, one per distinct type.

The spec's types are turned into a flat, ordered list of `Codec` records that the
templates lay out; each field then names the function that decodes (and, for
the targets with `to_dict`, encodes) its value. Nothing is emitted that no field uses.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from generator.ir import (
    EnumRef,
    ListOf,
    MapOf,
    ModelRef,
    Scalar,
    Spec,
    TypeExpr,
    Union,
    json_kind,
    parts,
)
from generator.spelling import annotation

# JSON kind checks on a decoded value; int before float so an int stays an int.
_KIND_ORDER = ("bool", "int", "float", "string", "list", "object")
_CHECKS = {
    "bool": "value is True or value is False",
    "int": "type(value) is int",
    "float": "type(value) is float or type(value) is int",
    "string": "type(value) is str",
    "list": "type(value) is list",
    "object": "type(value) is dict",
}
_PY_TYPES = {"list": "list", "object": "dict"}
_WORDS = {
    "bool": "a boolean",
    "int": "an integer",
    "float": "a number",
    "string": "a string",
    "list": "a list",
    "object": "an object",
}


@dataclass(frozen=True)
class Option:
    """One alternative of a union: how to recognise it and how to decode or encode it."""

    check: str
    function: str | None
    """None when the value is taken as it is."""


@dataclass(frozen=True)
class Codec:
    """A module-level function that decodes or encodes one type."""

    name: str
    kind: str
    """scalar | enum | list | map | union | tagged"""
    annotation: str
    check: str = ""
    expected: str = ""
    item: str | None = None
    """Function applied to each item of a list or value of a map; None keeps them as they are."""
    options: tuple[Option, ...] = ()
    key: str = ""
    tags: tuple[tuple[str, str], ...] = ()
    values: tuple[str, ...] = ()
    passthrough: bool = False
    """An encoder union with alternatives that are JSON already: they are returned as is."""


@dataclass(frozen=True)
class Codecs:
    decoders: tuple[Codec, ...]
    encoders: tuple[Codec, ...]
    decoder_of: Callable[[TypeExpr], str]
    encoder_of: Callable[[TypeExpr], str | None]


def stdlib_codecs(spec: Spec, target: str, model_decoder: Callable[[str], str]) -> Codecs:
    """Codecs for `target`; `model_decoder(name)` is how that target decodes a named type."""
    builder = _Builder(spec, target, model_decoder)
    for model in spec.models:
        for field in model.fields:
            builder.decoder(field.type)
            if target in ("dataclasses", "msgspec"):  # the targets with `to_dict`
                builder.encoder(field.type)
    return Codecs(
        decoders=tuple(builder.decoders.values()),
        encoders=tuple(builder.encoders.values()),
        decoder_of=builder.decoder,
        encoder_of=builder.encoder,
    )


def _slug(expr: TypeExpr) -> str:
    """A function-name part that differs for different types (`list_of_int_or_str_` is
    `list[int | string]`, `list_int_or_str` is `list[int] | string`)."""
    if isinstance(expr, Scalar):
        return {"string": "str"}.get(expr.kind, expr.kind)
    if isinstance(expr, (EnumRef, ModelRef)):
        return expr.name
    if isinstance(expr, (ListOf, MapOf)):
        inner = expr.item if isinstance(expr, ListOf) else expr.value
        prefix = "list" if isinstance(expr, ListOf) else "map"
        return (
            f"{prefix}_of_{_slug(inner)}_"
            if isinstance(inner, Union)
            else f"{prefix}_{_slug(inner)}"
        )
    return "_or_".join(_slug(option) for option in expr.options)


def _has_model(expr: TypeExpr) -> bool:
    return any(isinstance(p, ModelRef) for p in parts(expr))


class _Builder:
    def __init__(self, spec: Spec, target: str, model_decoder: Callable[[str], str]) -> None:
        self.spec = spec
        self.target = target
        self.model_decoder = model_decoder
        self.decoders: dict[str, Codec] = {}
        self.encoders: dict[str, Codec] = {}
        self.sources: dict[str, TypeExpr] = {}

    def describe(self, expr: TypeExpr) -> str:
        if isinstance(expr, EnumRef) and not expr.open:
            values = ", ".join(repr(v.value) for v in self.spec.enum(expr.name).values)
            return f"one of {values}"
        if isinstance(expr, Union):
            return " or ".join(self.describe(option) for option in expr.options)
        return _WORDS[json_kind(expr)]

    def decoder(self, expr: TypeExpr) -> str:
        """The name of the function that decodes `expr`, emitting it on first use."""
        if isinstance(expr, ModelRef):
            return self.model_decoder(expr.name)
        if isinstance(expr, EnumRef) and expr.open:
            # Any string is accepted; a list of them keeps its own function for its type.
            return self.decoder(Scalar("string"))
        name = f"_decode_{_slug(expr)}"
        if name not in self.decoders:
            self.decoders[name] = self.decode_codec(name, expr)
            self.sources[name] = expr
        elif self.sources[name] != expr:
            raise AssertionError(f"{name} would decode both {self.sources[name]} and {expr}")
        return name

    def item_decoder(self, expr: TypeExpr) -> str | None:
        return None if isinstance(expr, Scalar) and expr.kind == "any" else self.decoder(expr)

    def decode_codec(self, name: str, expr: TypeExpr) -> Codec:
        spelled = annotation(expr, self.target)
        if isinstance(expr, Scalar):
            kind = expr.kind
            return Codec(name, "scalar", spelled, _CHECKS.get(kind, ""), _WORDS.get(kind, ""))
        if isinstance(expr, EnumRef):
            values = tuple(v.value for v in self.spec.enum(expr.name).values)
            return Codec(name, "enum", spelled, expected=self.describe(expr), values=values)
        if isinstance(expr, ListOf):
            return Codec(name, "list", spelled, item=self.item_decoder(expr.item))
        if isinstance(expr, MapOf):
            return Codec(name, "map", spelled, item=self.item_decoder(expr.value))
        if isinstance(expr, Union) and expr.discriminator is not None:
            tags = []
            for option in expr.options:
                assert isinstance(option, ModelRef)
                tag_field = next(
                    f for f in self.spec.model(option.name).fields if f.wire == expr.discriminator
                )
                assert isinstance(tag_field.type, EnumRef)
                for value in self.spec.enum(tag_field.type.name).values:
                    tags.append((value.value, self.decoder(option)))
            expected = "one of " + ", ".join(repr(tag) for tag, _ in tags)
            return Codec(
                name, "tagged", spelled, expected, key=expr.discriminator, tags=tuple(tags)
            )
        assert isinstance(expr, ModelRef | Union)
        options = sorted(
            expr.options if isinstance(expr, Union) else (expr,),
            key=lambda o: _KIND_ORDER.index(json_kind(o)),
        )
        return Codec(
            name,
            "union",
            spelled,
            expected=self.describe(expr),
            options=tuple(Option(_CHECKS[json_kind(o)], self.option_decoder(o)) for o in options),
        )

    def option_decoder(self, expr: TypeExpr) -> str | None:
        # A plain scalar or open enum needs nothing once its kind is checked.
        if isinstance(expr, Scalar) or (isinstance(expr, EnumRef) and expr.open):
            return None
        return self.decoder(expr)

    def encoder(self, expr: TypeExpr) -> str | None:
        """The function that turns a decoded value back into JSON data; None when it already is."""
        if not _has_model(expr):
            return None
        if isinstance(expr, ModelRef):
            return f"{expr.name}.to_dict"
        name = f"_encode_{_slug(expr)}"
        self.sources.setdefault(name, expr)
        if self.sources[name] != expr:
            raise AssertionError(f"{name} would encode both {self.sources[name]} and {expr}")
        if name in self.encoders:
            return name
        spelled = annotation(expr, self.target)
        if isinstance(expr, ListOf):
            codec = Codec(name, "list", spelled, item=self.encoder(expr.item))
        elif isinstance(expr, MapOf):
            codec = Codec(name, "map", spelled, item=self.encoder(expr.value))
        else:
            assert isinstance(expr, Union)
            options = []
            for option in expr.options:
                function = self.encoder(option)
                if function is not None:
                    # isinstance, so that type checkers narrow the value.
                    kind = (
                        option.name
                        if isinstance(option, ModelRef)
                        else _PY_TYPES[json_kind(option)]
                    )
                    check = f"isinstance(value, {kind})"
                    options.append(Option(check, function))
            passthrough = len(options) < len(expr.options)
            codec = Codec(name, "union", spelled, options=tuple(options), passthrough=passthrough)
        self.encoders[name] = codec
        return name
