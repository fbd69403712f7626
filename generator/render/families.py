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
    """What the snapshot is before the stream said anything."""
    kept: tuple[tuple[str, str, str], ...] = ()
    """What the accumulator keeps beside the result, shown as attributes: (name, type,
    doc)."""

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
        snapshot_doc="an empty message before any event",
        kept=(
            (
                "misplaced",
                "list[Any]",
                "The deltas of another type than their block's (a server's bug"
                " anthropic-sdk-python drops), as JSON data, in order.",
            ),
        ),
    ),
    "responses": Family(
        "responses",
        "_family.jinja",
        "OpenAI's streamed Responses events",
        "ResponseCreatedEvent",
        "event",
        title="Responses",
        prefix="responses",
        result="response",
        accumulator="ResponseAccumulator",
        events_doc=(
            "An `error` event and a `response.failed` raise `StreamError`; the stream is"
            " `done` at a `response.completed` or `response.incomplete` that no"
            " `response.created` follows, or at `data: [DONE]` (OpenRouter), and reading"
            " goes on to the end of the source. Where `sequence_number`s skip, the stream's"
            " `gaps` say so."
        ),
        parts_doc=(
            'a "start" part with the response\'s id, model and time, then each output'
            " item's text, refusal, reasoning (its summary or its reasoning text, whichever"
            " comes), encrypted reasoning (once the item is done), tool-call arguments,"
            " citation or run of a tool the server ran (`block` is the item's"
            " `output_index`), what the `*.done` events add, the finish reason and the usage"
            ' in chat\'s terms, and an "error" part for a stream cut off before its terminal'
            " event."
        ),
        accumulator_doc=(
            "as openai-python's `ResponseStreamState` adds them (items by `output_index`,"
            " deltas appended to the part they address, `*.done` events authoritative, the"
            " final event's response the result unless its output is empty), losing"
            " nothing, and tolerant where openai-python raises: what changed between"
            " `added` and `done` (an item's id or `call_id`, the response's id) is kept in"
            " `drift`."
        ),
        snapshot_doc="an empty response before any event",
        kept=(
            (
                "drift",
                "list[tuple[str, Any, Any]]",
                "What changed that openai-python refuses to see change: `(what, before,"
                " after)` for an item's id or `call_id` between `added`, `done` and the"
                " final response, and for the response's id, in order.",
            ),
        ),
    ),
}
