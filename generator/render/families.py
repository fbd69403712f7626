"""The protocols' event families as rendering lays them out: each family's module
name, layout template and the words its docs use."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Family:
    """How a protocol's event family is laid out: its module's name and layout, and the
    words its docs use."""

    module: str
    """The module's name before `_<target>`."""
    layout: str
    about: str
    example: str
    """A type the docs name to show how to read one."""
    noun: str


FAMILIES = {
    "chat": Family(
        "chunk",
        "_module.jinja",
        "the streamed chat-completion chunk",
        "ChatCompletionChunk",
        "chunk",
    ),
    "messages": Family(
        "messages",
        "_messages.jinja",
        "Anthropic's streamed Messages events",
        "MessageStartEvent",
        "event",
    ),
}
