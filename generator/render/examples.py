"""Example payloads of every spec type, for the generated round-trip tests.

Four per type: `minimal` (required keys only), `maximal` (every key, first union
alternative, unknown keys at every level), `nulls` (every nullable key null, unknown
enum values) and `alternates` (every key, last union alternative). Each must come back
unchanged from decode then encode in every target.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..ir.model import EnumRef, ListOf, MapOf, Model, ModelRef, Scalar, Spec, TypeExpr, Union

VARIANTS = ("minimal", "maximal", "nulls", "alternates")

# Values chosen to catch lossy codecs: a big int beyond 2**53, a float that is not
# an int, non-ASCII text with an escaped-looking backslash, a key that is no identifier.
_SCALARS: dict[str, Any] = {
    "string": 'h\u00e9llo \u2713 "q" \\n',
    "int": 2**64 + 1,
    "float": -0.000125,
    "bool": True,
    "any": {"k": [1, 2.5, None, "v", {"deep": False}]},
}
_UNKNOWN_KEY = "x_unknown"
_UNKNOWN_VALUE = {"nested": [1, "two", None, 3.5]}
_UNKNOWN_ENUM = "zz_not_in_the_spec"


@dataclass(frozen=True)
class Example:
    type_name: str
    variant: str
    value: dict[str, Any]


def for_spec(spec: Spec) -> tuple[Example, ...]:
    maker = _Maker(spec)
    return tuple(
        Example(model.name, variant, maker.model(model, variant))
        for model in spec.models
        for variant in VARIANTS
    )


class _Maker:
    def __init__(self, spec: Spec) -> None:
        self.spec = spec

    def model(self, model: Model, variant: str) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for field in model.fields:
            if field.has_default:
                out[field.wire] = (
                    field.default if variant == "minimal" else self.value(field.type, variant)
                )
            elif field.required:
                out[field.wire] = self.value(field.type, variant)
            elif variant == "nulls":
                if field.nullable:
                    out[field.wire] = None
            elif variant != "minimal":
                out[field.wire] = self.value(field.type, variant)
        if variant in ("maximal", "alternates"):
            out[_UNKNOWN_KEY] = _UNKNOWN_VALUE
        return out

    def value(self, expr: TypeExpr, variant: str) -> Any:
        if isinstance(expr, Scalar):
            return _SCALARS[expr.kind]
        if isinstance(expr, EnumRef):
            if expr.open and variant in ("nulls", "alternates"):
                return _UNKNOWN_ENUM
            return self.spec.enum(expr.name).values[0].value
        if isinstance(expr, ListOf):
            return [self.value(expr.item, variant)]
        if isinstance(expr, MapOf):
            return {"key/with-slash": self.value(expr.value, variant)}
        if isinstance(expr, ModelRef):
            return self.model(self.spec.model(expr.name), variant)
        assert isinstance(expr, Union)
        option = expr.options[-1] if variant == "alternates" else expr.options[0]
        return self.value(option, variant)
