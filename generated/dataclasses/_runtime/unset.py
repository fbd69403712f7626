"""The absence marker of the standard-library targets (msgspec brings its own)."""

# Private names are shared between these files and used by the generated code.
# pyright: reportPrivateUsage=false, reportUnusedFunction=false, reportUnusedClass=false

from __future__ import annotations

import enum
from typing import Final


class _Unset(enum.Enum):
    """The type of `UNSET`, which marks a key that was absent from the payload (an enum,
    so that `value is not UNSET` narrows the type as `isinstance` would, but faster)."""

    UNSET = "UNSET"

    def __repr__(self) -> str:
        return "UNSET"

    def __bool__(self) -> bool:
        return False


UNSET: Final = _Unset.UNSET
"""Stands for a key that was absent; distinct from None, which stands for JSON null."""
