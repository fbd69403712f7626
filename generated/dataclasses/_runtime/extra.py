"""The read-only mapping of unknown keys the dataclasses target keeps on each object."""

# Private names are shared between these files and used by the generated code.
# pyright: reportPrivateUsage=false, reportUnusedFunction=false, reportUnusedClass=false

from __future__ import annotations

from typing import Any, Final, NoReturn


def _read_only(*args: Any, **kwargs: Any) -> NoReturn:
    raise TypeError("extra is read-only: assign a new mapping to change it")


class _Extra(dict[str, Any]):
    """The keys of an object that the spec does not describe. Read-only, so that one
    empty instance serves every object without any (most objects)."""

    __slots__ = ()
    __setitem__ = __delitem__ = __ior__ = _read_only
    clear = pop = popitem = setdefault = update = _read_only

    def __reduce__(self) -> tuple[type[_Extra], tuple[dict[str, Any]]]:
        return (_Extra, (dict(self),))  # copied and pickled as a plain dict's items


_NO_EXTRA: Final = _Extra()


def _no_extra() -> _Extra:
    return _NO_EXTRA
