"""The protocols' event families as rendering lays them out: each family's module
name, layout template, the runtime its module runs on, and the words its docs use."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Family:
    """How a protocol's event family is laid out: its module's name and layout, and the
    words its docs use. A family other than chat's names its runtime: the files of
    `runtime/<folder>/`, whose names carry `prefix` (`_<Prefix>Events`,
    `_<prefix>_parts_of`, `_write_<prefix>`, `_<Prefix>Accumulator`)."""

    module: str
    """The module's name before `_<target>`."""
    layout: str
    about: str
    example: str
    """A type the docs name to show how to read one."""
    noun: str
    title: str = ""
    """The protocol's name in prose: `Messages`."""
    prefix: str = ""
    """The runtime folder, and the prefix of its names: `messages`."""
    result: str = ""
    """What the stream adds up to, in prose (`message`): `loads_<result>` reads one."""
    accumulator: str = ""
    """The public accumulator's name."""
    events_doc: str = ""
    """What `iter_events` says of the family's events, after what every family shares."""
    parts_doc: str = ""
    """What `iter_parts` gives, in stream order."""
    accumulator_doc: str = ""
    """How the accumulator adds events up, after its first words."""
    snapshot_doc: str = ""
    """When the snapshot is None."""

    @property
    def runtime(self) -> str:
        """The runtime files of the family, as a placeholder names them (chat's module
        names its own)."""
        if not self.prefix:
            return ""
        return " ".join(f"{self.prefix}/{f}" for f in ("events", "reader", "accumulate", "writer"))

    @property
    def camel(self) -> str:
        return self.prefix.capitalize()


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
        "_family.jinja",
        "Anthropic's streamed Messages events",
        "MessageStartEvent",
        "event",
        title="Messages",
        prefix="messages",
        result="message",
        accumulator="MessageAccumulator",
        events_doc=(
            "An `error` event raises `StreamError`; the stream is `done` at a `message_stop` that no `message_start` follows (one"
            " body may hold several messages), and reading goes on to the end of the source."
        ),
        parts_doc=(
            "a \"start\" part with the message's id and model, then each block's text,"
            " reasoning, signature, redacted reasoning, tool-call input or citation (`block`"
            " is the block's index), the finish reason and the usage in chat's terms, and an"
            ' "error" part for a stream cut off before `message_stop`.'
        ),
        accumulator_doc=(
            "as anthropic-sdk-python adds them (blocks by index, texts and signatures joined,"
            " a tool's input read from its pieces when its block stops), losing nothing:"
            " unknown keys, blocks and events are kept."
        ),
        snapshot_doc="None before `message_start`",
    ),
}
