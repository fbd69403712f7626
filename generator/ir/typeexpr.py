"""Parse the type strings of the spec: `string`, `list[Choice]`, `map[int]`, `int | string`."""

from __future__ import annotations

from collections.abc import Callable

from .model import ListOf, MapOf, Scalar, ScalarKind, TypeExpr, Union

SCALARS: tuple[ScalarKind, ...] = ("string", "int", "float", "bool", "any")

# A named type resolves to a ModelRef or an EnumRef once every file is read.
Resolve = Callable[[str], TypeExpr]


class TypeSyntaxError(ValueError):
    """The type string is not well formed, or names an unknown type."""


def parse_type(text: str, resolve: Resolve) -> TypeExpr:
    """Parse one type string; `resolve` turns a name into a reference or raises KeyError."""
    parser = _Parser(text, resolve)
    result = parser.union()
    parser.skip_space()
    if parser.pos != len(text):
        raise TypeSyntaxError(f"unexpected {text[parser.pos:]!r} in type {text!r}")
    return result


class _Parser:
    def __init__(self, text: str, resolve: Resolve) -> None:
        self.text = text
        self.pos = 0
        self.resolve = resolve

    def skip_space(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] == " ":
            self.pos += 1

    def eat(self, token: str) -> bool:
        self.skip_space()
        if self.text.startswith(token, self.pos):
            self.pos += len(token)
            return True
        return False

    def union(self) -> TypeExpr:
        options = [self.single()]
        while self.eat("|"):
            options.append(self.single())
        if len(options) == 1:
            return options[0]
        flat: list[TypeExpr] = []
        for option in options:
            if option in flat:
                raise TypeSyntaxError(f"{_show(option)} appears twice in type {self.text!r}")
            flat.append(option)
        return Union(tuple(flat))

    def single(self) -> TypeExpr:
        name = self.name()
        if name in ("list", "map"):
            if not self.eat("["):
                raise TypeSyntaxError(f"{name} needs an item type, as in {name}[string]")
            inner = self.union()
            if not self.eat("]"):
                raise TypeSyntaxError(f"missing ']' in type {self.text!r}")
            return ListOf(inner) if name == "list" else MapOf(inner)
        for kind in SCALARS:
            if name == kind:
                return Scalar(kind)
        try:
            return self.resolve(name)
        except KeyError:
            raise TypeSyntaxError(f"unknown type {name!r}") from None

    def name(self) -> str:
        self.skip_space()
        start = self.pos
        while self.pos < len(self.text) and (
            self.text[self.pos].isalnum() or self.text[self.pos] == "_"
        ):
            self.pos += 1
        if start == self.pos:
            found = self.text[self.pos : self.pos + 1] or "end of text"
            raise TypeSyntaxError(f"expected a type name in {self.text!r}, found {found!r}")
        return self.text[start : self.pos]


def _show(expr: TypeExpr) -> str:
    return type(expr).__name__ if not isinstance(expr, Scalar) else expr.kind
