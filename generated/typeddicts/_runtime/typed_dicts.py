"""The reading of the TypedDicts target: the JSON object itself, checked, rebuilt with
its known keys in spec order."""

# Private names are shared between these files and used by the generated code.
# pyright: reportPrivateUsage=false, reportUnusedFunction=false, reportUnusedClass=false

from __future__ import annotations

from typing import Any

from .errors import StreamDecodeError, _reject_error_report
from .objects import _problem, _read, _Retry, _Shape


def _checked(data: Any, shape: _Shape) -> dict[str, Any]:
    """The object `data` checked by its type's table: known keys in spec order (a
    missing defaulted key as its default), then the other keys in arrival order (in a
    strict shape, an other key is an error); an error report raises `ErrorReport`."""
    if shape.report is not None:
        _reject_error_report(data, shape.report)
    try:
        known, other = _read(data, shape)
    except (_Retry, StreamDecodeError):
        raise _problem(data, shape) from None
    if other:
        known.update(other)
    return known
