"""One contract for the three protocols (chat, Messages, Responses), in every target: the
same accumulator (add, snapshot, end, result, summary, and the same TypeError for what
is not a chunk or an event of its module), the same writer (`_EventWriter`), one
cut-off error and one decode error, under the names the modules export."""

from __future__ import annotations

import importlib
import json
import re
from pathlib import Path
from types import ModuleType
from typing import Any, Final

import pytest

from generator.render.families import FAMILIES
from generator.render.targets import TARGETS
from tests.helpers.support import runtime

FIXTURES: Final = Path(__file__).resolve().parents[1] / "fixtures"
PROTOCOLS: Final = ("chat", "messages", "responses")
ACCUMULATORS: Final = {
    "chat": "ChatCompletionAccumulator",
    "messages": "MessageAccumulator",
    "responses": "ResponseAccumulator",
}
EMPTY: Final = {
    "chat": {"choices": [], "object": "chat.completion"},
    "messages": {"type": "message", "role": "assistant", "content": []},
    "responses": {"object": "response", "output": []},
}
"""What each accumulator's snapshot is before anything was added, as JSON."""
TAKES: Final = {
    "chat": "ChatCompletionChunk",
    "messages": "MessageStreamEvent",
    "responses": "ResponseStreamEvent",
}
"""What each typed accumulator's error says it takes (the TypedDicts' take a dict)."""
REFUSED: Final = re.compile(
    r"(?P<accumulator>\w+)\.add takes an? (?P<noun>chunk|event) of its module "
    r"\(a (?P<takes>\w+), as loads and iter_(?P=noun)s give\), not a (?P<given>\w+): "
    r"an? (?P=noun)'s JSON text becomes one by loads\(text\)"
)
"""The one `TypeError` every accumulator's `add` raises for what it does not take."""


def module(protocol: str, target: str) -> ModuleType:
    return importlib.import_module(f"generated.{target}.{protocol}")


def chat_body() -> bytes:
    path = FIXTURES / "chat" / "streams" / "deepseek__reasoner-reasoning-then-tool-call.jsonl"
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return "".join(f"data: {line}\n\n" for line in [*lines, "[DONE]"]).encode()


BODIES: Final = {
    "chat": chat_body(),
    "messages": (FIXTURES / "messages" / "anthropic__sdk-text-then-tool-use.sse").read_bytes(),
    "responses": (FIXTURES / "responses" / "azure__function-call.sse").read_bytes(),
}
"""A real stream of each protocol."""


def events_of(protocol: str, target: str) -> list[Any]:
    """The typed chunks or events of the protocol's stream."""
    mod = module(protocol, target)
    read = mod.iter_chunks if protocol == "chat" else mod.iter_events
    return list(read([BODIES[protocol]]))


def cut(body: bytes) -> bytes:
    """The first half of a stream's events: a stream cut off before its end."""
    events = [e for e in body.replace(b"\r\n", b"\n").split(b"\n\n") if e.strip()]
    return b"".join(e + b"\n\n" for e in events[: len(events) // 2])


each = pytest.mark.parametrize("target", list(TARGETS))
each_protocol = pytest.mark.parametrize("protocol", PROTOCOLS)


@each
@each_protocol
def test_every_accumulator_has_the_one_shape(protocol: str, target: str) -> None:
    mod, chat = module(protocol, target), module("chat", target)
    accumulator_class = getattr(mod, ACCUMULATORS[protocol])
    assert ACCUMULATORS[protocol] in mod.__all__
    assert issubclass(accumulator_class, runtime(chat, "_StreamAccumulator"))
    for method in ("add", "snapshot", "end", "result", "summary"):
        own = getattr(accumulator_class, method)
        assert own is not getattr(
            runtime(chat, "_StreamAccumulator"), method
        ), f"{method} is abstract"
    accumulator = accumulator_class()
    empty = accumulator.snapshot()
    assert empty is not None and json.loads(mod.dumps(empty)) == EMPTY[protocol]
    assert type(accumulator.summary()) is chat.Summary
    for event in events_of(protocol, target):
        accumulator.add(event)
        # Valid mid-stream: a tool's input in pieces too (Messages: no JSON object yet).
        assert accumulator.snapshot() is not None
    accumulator.end()
    accumulator.end()  # saying it twice says it once
    result = json.loads(mod.dumps(accumulator.result()))
    assert json.loads(mod.dumps(accumulator.result())) == result, "result() twice: the same"
    if protocol != "responses":  # Responses' result is its final event's response
        assert json.loads(mod.dumps(accumulator.snapshot())) == result
    [choice] = accumulator.summary().choices
    assert choice.finish_reason in ("tool_calls", "stop"), "read to the end"
    assert choice.tool_calls or choice.text


@each
@each_protocol
def test_every_accumulator_refuses_what_it_does_not_take_the_same_way(
    protocol: str, target: str
) -> None:
    mod = module(protocol, target)
    accumulator = getattr(mod, ACCUMULATORS[protocol])()
    typed = target != "typeddicts"
    refused: list[Any] = [5, "text", None, b"{}", ["a", "list"]]
    others = [p for p in PROTOCOLS if p != protocol]
    if typed:  # a dict is an event of the TypedDicts modules, another protocol's too
        refused += [{"type": "ping"}, *(events_of(other, target)[0] for other in others)]
    for value in refused:
        with pytest.raises(TypeError) as caught:
            accumulator.add(value)
        said = REFUSED.fullmatch(str(caught.value).split(", its JSON object")[0])
        assert said is not None, str(caught.value)
        assert said["accumulator"] == ACCUMULATORS[protocol]
        assert said["noun"] == ("chunk" if protocol == "chat" else "event")
        assert said["given"] == type(value).__name__
        assert said["takes"] == (TAKES[protocol] if typed else "dict")
        assert ("loads(json.dumps(data))" in str(caught.value)) is typed
    assert json.loads(mod.dumps(accumulator.snapshot())) == EMPTY[protocol], "nothing added"


@each
@pytest.mark.parametrize("protocol", ["messages", "responses"])
def test_the_accumulators_of_json_data_refuse_what_is_no_dict(protocol: str, target: str) -> None:
    adding = runtime(module(protocol, target), "_EventAccumulator")
    accumulator = getattr(module(protocol, target), ACCUMULATORS[protocol])()
    assert isinstance(accumulator, adding)
    with pytest.raises(TypeError, match=r"add takes an event as JSON data \(a dict\), not a int"):
        accumulator._adding.add(5)


@each
def test_chunk_accumulator_is_chat_completion_accumulator(target: str) -> None:
    chat = module("chat", target)
    assert chat.ChunkAccumulator is chat.ChatCompletionAccumulator
    assert {"ChunkAccumulator", "ChatCompletionAccumulator"} <= set(chat.__all__)
    assert chat.ChatCompletionAccumulator.__name__ == "ChatCompletionAccumulator"


@each
@each_protocol
def test_every_module_raises_stream_decode_error_under_both_names(
    protocol: str, target: str
) -> None:
    mod, chat = module(protocol, target), module("chat", target)
    assert mod.ChunkDecodeError is mod.StreamDecodeError is chat.StreamDecodeError
    assert {"StreamDecodeError", "ChunkDecodeError"} <= set(mod.__all__)
    with pytest.raises(mod.StreamDecodeError) as caught:
        mod.loads("{")
    assert type(caught.value).__name__ == "StreamDecodeError"
    assert "StreamDecodeError" in (mod.loads.__doc__ or "")
    assert "ChunkDecodeError" not in (mod.loads.__doc__ or "")


@each
@each_protocol
def test_every_writer_is_an_event_writer(protocol: str, target: str) -> None:
    chat = module("chat", target)
    writer: Any
    if protocol == "chat":
        writer = runtime(chat, "_ChatWriter")(
            chat._dialect_named("reasoning_content", chat._DIALECTS)
        )
    else:
        family = module(protocol, target)
        writer = runtime(family, f"_{FAMILIES[protocol].camel}Writer")()
    assert isinstance(writer, runtime(chat, "_EventWriter"))
    start = chat.Part("start", None, "", None, identity=chat.Identity("id-1", "m", 1))
    opened = writer.write(start)
    assert isinstance(opened, list) and all(isinstance(e, bytes) for e in opened)
    text = writer.write(chat.Part("text", 0, "Hi", None))
    assert isinstance(text, list) and all(isinstance(e, bytes) for e in text)
    failed = writer.fail({"type": "overloaded_error", "message": "Overloaded"})
    assert isinstance(failed, list) and failed and b"Overloaded" in failed[-1]
    assert writer.fail(RuntimeError("again")) == [] and writer.end() == [], "ended once"
    assert writer.write(chat.Part("text", 0, "late", None)) == []
    assert sum(writer.dropped.values()) == 1, "a part after the end is counted"


@each
@each_protocol
def test_a_stream_cut_off_ends_with_the_one_cut_off_error(protocol: str, target: str) -> None:
    chat = module("chat", target)
    parts = list(chat.iter_parts([cut(BODIES[protocol])], protocol=protocol))
    last = parts[-1]
    assert last.kind == "error" and last.error == runtime(chat, "_cut_off_error")(protocol)
    assert last.error["type"] == "incomplete_stream" and last.text == last.error["message"]
    for gone in ("_INCOMPLETE_STREAM", "_MESSAGES_INCOMPLETE", "_RESPONSES_CUT_OFF"):
        assert not hasattr(module(protocol, target), gone), "one definition"
    ended = b"".join(chat.write_parts(iter(parts), protocol="chat"))
    assert ended.endswith(chat.sse_error(runtime(chat, "_cut_off_error")(protocol)))
