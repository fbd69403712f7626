"""Anthropic Messages events read typed in every target: every captured stream lossless,
unknown types kept whole, the stream layer's rules (names agree with payloads, errors,
completeness), and the chat module's `iter_events(..., protocol="messages")`."""

from __future__ import annotations

import asyncio
import importlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from generator.render.targets import TARGETS as REGISTRY
from tests.helpers.support import REPORT, assert_same_json, payloads

MESSAGES = Path(__file__).resolve().parents[2] / "fixtures" / "messages"
CAPTURES = sorted(MESSAGES.glob("*.sse"))
MODULES: dict[str, ModuleType] = {
    name: importlib.import_module(f"generated.{name}.messages") for name in REGISTRY
}
HUBS: dict[str, ModuleType] = {
    name: importlib.import_module(f"generated.{name}.chat") for name in REGISTRY
}


def as_data(module: ModuleType, event: Any) -> Any:
    return json.loads(module.dumps(event))


def test_there_are_captures_from_anthropic_and_from_other_servers() -> None:
    servers = {path.name.split("__")[0] for path in CAPTURES}
    assert "anthropic" in servers and len(servers - {"anthropic", "synthetic"}) >= 4


@pytest.mark.parametrize("target", sorted(MODULES))
def test_every_captured_event_reads_and_writes_back_the_same_json(target: str) -> None:
    module = MODULES[target]
    events = 0
    for capture in CAPTURES:
        texts = payloads(capture.read_bytes())
        for number, text in enumerate(texts, 1):
            where = f"{capture.name} event {number}"
            assert_same_json(as_data(module, module.loads(text)), json.loads(text), where)
        events += len(texts)
    REPORT[f"Messages captures, {target}"] = (
        f"{events} events of {len(CAPTURES)} streams read and written back unchanged"
    )


@pytest.mark.parametrize("target", sorted(MODULES))
def test_a_type_the_spec_does_not_list_is_kept_whole_at_every_level(target: str) -> None:
    module = MODULES[target]
    texts = {
        "event": '{"type":"future_event","n":12345678901234567890,"x":null}',
        "block": '{"type":"content_block_start","index":3,'
        '"content_block":{"type":"hologram","frames":[1,2],"alt":null}}',
        "delta": '{"type":"content_block_delta","index":0,"delta":{"type":"smell_delta","v":{}}}',
        "citation": '{"type":"content_block_delta","index":0,"delta":{"type":"citations_delta",'
        '"citation":{"type":"brain_location","lobe":"frontal"}}}',
    }
    for where, text in texts.items():
        event = module.loads(text)
        assert_same_json(as_data(module, event), json.loads(text), where)
    if target != "typeddicts":
        assert (
            type(module.loads(texts["event"]))
            .__name__.lstrip("_")
            .startswith("OtherMessageStreamEvent")
        )
        assert module.loads(texts["event"]).type == "future_event"
        block = module.loads(texts["block"]).content_block
        assert block.type == "hologram"
        assert isinstance(block, module.OtherContentBlock)


@pytest.mark.parametrize("target", sorted(MODULES))
def test_a_known_type_is_its_own_class_and_a_missing_type_is_an_error(target: str) -> None:
    module = MODULES[target]
    text = '{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"hi"}}'
    event = module.loads(text)
    if target != "typeddicts":
        assert isinstance(event, module.ContentBlockDeltaEvent)
        assert isinstance(event.delta, module.TextDelta) and event.delta.text == "hi"
    with pytest.raises(module.ChunkDecodeError) as raised:
        module.loads('{"index":1,"delta":{"type":"text_delta","text":"hi"}}')
    assert raised.value.path == "$.type"


MISMATCHED = (
    b"event: message_start\n"
    b'data: {"type":"message_start","message":{"id":"m","type":"message","role":"assistant",'
    b'"content":[],"model":"x","usage":{"input_tokens":1,"output_tokens":0}}}\n\n'
    b'data: {"type":"ping"}\nevent: content_block_start\n\n'
    b"event: message_stop\n"
    b'data: {"type":"message_stop"}\n\n'
)


@pytest.mark.parametrize("target", sorted(MODULES))
def test_the_payload_names_an_event_and_a_disagreeing_name_is_kept(target: str) -> None:
    module = MODULES[target]
    stream = module.iter_events(MISMATCHED)
    types = [as_data(module, event)["type"] for event in stream]
    assert types == ["message_start", "ping", "message_stop"]
    assert [e.event for e in stream.mismatched] == ["content_block_start"]
    assert json.loads(stream.mismatched[0].data) == {"type": "ping"}
    assert stream.done


ERROR_AFTER_TEXT = (
    b"event: message_start\n"
    b'data: {"type":"message_start","message":{"id":"m","type":"message","role":"assistant",'
    b'"content":[],"model":"x","usage":{"input_tokens":1,"output_tokens":0}}}\n\n'
    b"event: error\n"
    b'data: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n'
)


@pytest.mark.parametrize("target", sorted(MODULES))
def test_an_error_event_is_the_servers_error(target: str) -> None:
    module = MODULES[target]
    stream = module.iter_events(ERROR_AFTER_TEXT)
    seen = []
    with pytest.raises(module.StreamError) as raised:
        for event in stream:
            seen.append(as_data(module, event)["type"])
    assert seen == ["message_start"]
    assert raised.value.type == "overloaded_error" and raised.value.message == "Overloaded"
    assert not stream.done


@pytest.mark.parametrize("target", sorted(MODULES))
def test_a_stream_is_done_at_message_stop_unless_another_message_starts(target: str) -> None:
    module = MODULES[target]
    start = MISMATCHED.split(b"\n\n")[0] + b"\n\n"
    stop = b'event: message_stop\ndata: {"type":"message_stop"}\n\n'
    complete = module.iter_events(start + stop)
    assert len(list(complete)) == 2 and complete.done
    restarted = module.iter_events(start + stop + start)
    assert len(list(restarted)) == 3 and not restarted.done
    cut = module.iter_events(start)
    assert len(list(cut)) == 1 and not cut.done


@pytest.mark.parametrize("target", sorted(MODULES))
def test_every_capture_reads_in_pieces_of_any_size_sync_and_async(target: str) -> None:
    module = MODULES[target]
    for capture in CAPTURES:
        body = capture.read_bytes()
        whole = [as_data(module, e) for e in _until_error(module.iter_events(body))]
        pieces = [body[i : i + 5] for i in range(0, len(body), 5)]
        assert [as_data(module, e) for e in _until_error(module.iter_events(pieces))] == whole

        async def read(pieces: list[bytes]) -> list[Any]:
            async def source() -> AsyncIterator[bytes]:
                for piece in pieces:
                    yield piece

            out = []
            try:
                async for event in module.aiter_events(source()):
                    out.append(as_data(module, event))
            except module.StreamError:
                pass
            return out

        assert asyncio.run(read(pieces)) == whole
        expected = [json.loads(t) for t in payloads(body)]
        # Each event in order; an error event ends the events.
        assert whole == expected[: len(whole)]


def _until_error(stream: Any) -> list[Any]:
    out = []
    try:
        for event in stream:
            out.append(event)
    except Exception as error:
        if type(error).__name__ != "StreamError":
            raise
    return out


@pytest.mark.parametrize("target", sorted(MODULES))
def test_the_chat_module_reads_messages_events_through_their_module(target: str) -> None:
    hub, module = HUBS[target], MODULES[target]
    body = (MESSAGES / "anthropic__thinking-signature-text.sse").read_bytes()
    through_hub = [as_data(module, e) for e in hub.iter_events(body, protocol="messages")]
    direct = [as_data(module, e) for e in module.iter_events(body)]
    assert through_hub == direct and len(direct) > 10
    assert hub.loads_message is not None if hasattr(hub, "loads_message") else True
    assert hub.MessageStartEvent is module.MessageStartEvent
    chat = (
        b'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m",'
        b'"choices":[]}\n\ndata: [DONE]\n\n'
    )
    assert len(list(hub.iter_events(chat))) == 1
    with pytest.raises(ValueError, match="protocol must be one of 'chat', 'messages'"):
        hub.iter_events(body, protocol="gopher")
