"""The generated msgspec modules the gateway runs on: the checkout's `generated/`, or the
copy an installed chunkspec carries as `chunkspec._generated` (pyproject.toml)."""

from __future__ import annotations

from typing import TYPE_CHECKING

# One name for both places: in a checkout this package is `generator.gateway` and the
# modules are the top-level `generated`; installed, both live under `chunkspec`.
if TYPE_CHECKING or not __package__ or not __package__.startswith("chunkspec."):
    from generated.msgspec import chat, messages, responses
else:  # pragma: no cover - the installed package (tests/vendoring/test_install.py runs it)
    from .._generated.msgspec import (
        chat,  # type: ignore[no-redef]
        messages,  # type: ignore[no-redef]
        responses,  # type: ignore[no-redef]
    )

__all__ = ["chat", "messages", "responses"]
