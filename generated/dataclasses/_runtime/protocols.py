"""The other protocols' modules of a generated package, as its chat module reaches them:
each imported when first asked for, so that a program that reads chat alone imports
none of them."""

# Private names are shared between these files and used by the generated code.
# pyright: reportPrivateUsage=false, reportUnusedClass=false

from __future__ import annotations

import importlib
from typing import Any


class _Protocols:
    """The modules of the other protocols beside a chat module, each named after its
    protocol (`messages`)."""

    __slots__ = ("_modules", "_package")

    def __init__(self, package: str | None, modules: tuple[str, ...]) -> None:
        self._package = package
        self._modules = modules

    def module(self, name: str) -> Any:
        """The module of protocol `name`'s events."""
        if name not in self._modules:
            known = ", ".join(map(repr, ["chat", *self._modules]))
            raise ValueError(f"protocol must be one of {known}, not {name!r}")
        return importlib.import_module(f".{name}", self._package)

    def owner(self, value: object, home: str) -> Any:
        """The module of another protocol whose type `value` is (a Messages event read
        through `iter_events`), if any: it, not the chat module `home`, writes that
        event whole."""
        module = type(value).__module__
        if module == home or module.rpartition(".")[2] not in self._modules:
            return None
        return importlib.import_module(module)

    def attribute(self, home: str, name: str) -> Any:
        """What another protocol's module exports (`MessageAccumulator`), asked of the
        chat module `home`; never a dunder, which Python's import asks every module for
        (`__path__`)."""
        if not name.startswith("__"):
            for protocol in self._modules:
                module = self.module(protocol)
                if name in module.__all__:
                    return getattr(module, name)
        raise AttributeError(f"module {home!r} has no attribute {name!r}")
