"""OpenAI Responses events read typed in every target: every event of every captured
stream (tests/fixtures/responses/, from OpenAI and other servers) lossless, unknown
event, item, part, annotation and caller types kept whole, and what real servers send
beyond the SDK's types (a float `created_at`, no `sequence_number`, the nested error)."""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from generator.render.targets import TARGETS as REGISTRY
from tests.helpers.support import REPORT, assert_same_json, payloads

RESPONSES = Path(__file__).resolve().parents[2] / "fixtures" / "responses"
CAPTURES = sorted(RESPONSES.glob("*.sse"))
MODULES: dict[str, ModuleType] = {
    name: importlib.import_module(f"generated.{name}.responses") for name in REGISTRY
}


def as_data(module: ModuleType, value: Any) -> Any:
    return json.loads(module.dumps(value))


def events(capture: Path) -> list[str]:
    """The payloads of a capture's events (OpenRouter ends with `[DONE]`, no event)."""
    return [text for text in payloads(capture.read_bytes()) if text != "[DONE]"]


def test_there_are_captures_from_openai_and_from_other_servers() -> None:
    servers = {path.name.split("__")[0] for path in CAPTURES}
    assert "openai" in servers and len(servers - {"openai"}) >= 6


@pytest.mark.parametrize("target", sorted(MODULES))
def test_every_captured_event_reads_and_writes_back_the_same_json(target: str) -> None:
    module = MODULES[target]
    count = 0
    for capture in CAPTURES:
        texts = events(capture)
        for number, text in enumerate(texts, 1):
            where = f"{capture.name} event {number}"
            assert_same_json(as_data(module, module.loads(text)), json.loads(text), where)
        count += len(texts)
    assert count > 6000
    REPORT[f"Responses captures, {target}"] = (
        f"{count} events of {len(CAPTURES)} streams read and written back unchanged"
    )


def _final_responses() -> list[tuple[str, str]]:
    """The response of each capture's last `response.*` lifecycle event, as JSON text."""
    out = []
    for capture in CAPTURES:
        final = [
            json.loads(text)["response"]
            for text in events(capture)
            if '"response"' in text and isinstance(json.loads(text).get("response"), dict)
        ]
        if final:
            out.append((capture.name, json.dumps(final[-1])))
    return out


@pytest.mark.parametrize("target", sorted(MODULES))
def test_a_whole_response_reads_with_loads_response(target: str) -> None:
    module = MODULES[target]
    finals = _final_responses()
    assert len(finals) == len(CAPTURES)
    for where, text in finals:
        assert_same_json(as_data(module, module.loads_response(text)), json.loads(text), where)


UNKNOWN = {
    "event": '{"type":"response.hologram.delta","sequence_number":7,"n":12345678901234567890,'
    '"x":null}',
    "item": '{"type":"response.output_item.added","output_index":0,"sequence_number":1,'
    '"item":{"type":"hologram_call","id":"hg_1","frames":[1,2],"alt":null}}',
    "part": '{"type":"response.content_part.added","item_id":"msg_1","output_index":0,'
    '"content_index":0,"sequence_number":2,"part":{"type":"smell","v":{}}}',
    "message content": '{"type":"response.output_item.done","output_index":0,'
    '"sequence_number":3,"item":{"type":"message","id":"msg_1","role":"assistant",'
    '"status":"completed","content":[{"type":"smell","v":1}]}}',
    "annotation": '{"type":"response.output_text.annotation.added","item_id":"msg_1",'
    '"output_index":0,"content_index":0,"annotation_index":0,"sequence_number":4,'
    '"annotation":{"type":"brain_location","lobe":"frontal"}}',
    "caller": '{"type":"response.output_item.done","output_index":1,"sequence_number":5,'
    '"item":{"type":"function_call","call_id":"c","name":"f","arguments":"{}",'
    '"caller":{"type":"daemon","pid":1}}}',
}


@pytest.mark.parametrize("target", sorted(MODULES))
def test_a_type_the_spec_does_not_list_is_kept_whole_at_every_level(target: str) -> None:
    module = MODULES[target]
    for where, text in UNKNOWN.items():
        assert_same_json(as_data(module, module.loads(text)), json.loads(text), where)
    if target == "typeddicts":
        return
    event = module.loads(UNKNOWN["event"])
    assert isinstance(event, module.OtherResponseStreamEvent)
    assert event.type == "response.hologram.delta"
    item = module.loads(UNKNOWN["item"]).item
    assert isinstance(item, module.OtherResponseOutputItem) and item.type == "hologram_call"
    assert isinstance(module.loads(UNKNOWN["part"]).part, module.OtherResponseContentPart)
    content = module.loads(UNKNOWN["message content"]).item.content[0]
    assert isinstance(content, module.OtherResponseOutputMessageContent)
    annotation = module.loads(UNKNOWN["annotation"]).annotation
    assert isinstance(annotation, module.OtherAnnotation)
    assert isinstance(module.loads(UNKNOWN["caller"]).item.caller, module.OtherToolCaller)


@pytest.mark.parametrize("target", sorted(MODULES))
def test_a_known_type_is_its_own_class_and_a_missing_type_is_an_error(target: str) -> None:
    module = MODULES[target]
    text = (
        '{"type":"response.output_text.delta","item_id":"msg_1","output_index":0,'
        '"content_index":0,"delta":"Hi","logprobs":[],"sequence_number":4,"obfuscation":"xy"}'
    )
    event = module.loads(text)
    if target != "typeddicts":
        assert isinstance(event, module.ResponseTextDeltaEvent)
        assert (event.delta, event.obfuscation) == ("Hi", "xy")
    with pytest.raises(module.ChunkDecodeError) as raised:
        module.loads('{"item_id":"msg_1","delta":"Hi"}')
    assert raised.value.path == "$.type"


CREATED = (
    '{"type":"response.created","response":{"id":"resp_1","object":"response",'
    '"created_at":1788749437.0,"status":"in_progress","model":"m","output":[],'
    '"tools":[],"tool_choice":"auto","parallel_tool_calls":true}}'
)


@pytest.mark.parametrize("target", sorted(MODULES))
def test_a_float_created_at_and_no_sequence_number_are_read(target: str) -> None:
    """SGLang's float `created_at`, and OpenAI's streams from before May 2025, which
    number no event."""
    module = MODULES[target]
    event = module.loads(CREATED)
    written = as_data(module, event)
    assert written == json.loads(CREATED)
    assert isinstance(written["response"]["created_at"], float)
    assert "sequence_number" not in written
    if target != "typeddicts":
        assert event.response.created_at == 1788749437.0
        assert not event.sequence_number  # UNSET, or None in pydantic


ERRORS = {
    "nested": '{"type":"error","sequence_number":2,"error":{"type":"insufficient_quota",'
    '"code":"insufficient_quota","message":"You exceeded your current quota.","param":null}}',
    "flat": '{"type":"error","sequence_number":2,"code":"insufficient_quota",'
    '"message":"You exceeded your current quota.","param":null}',
}


@pytest.mark.parametrize("target", sorted(MODULES))
def test_an_error_event_reads_nested_as_the_api_sends_it_and_flat_as_documented(
    target: str,
) -> None:
    module = MODULES[target]
    for where, text in ERRORS.items():
        event = module.loads(text)
        assert_same_json(as_data(module, event), json.loads(text), where)
        if target == "typeddicts":
            continue
        assert isinstance(event, module.ResponseErrorEvent)
        message = event.error.message if where == "nested" else event.message
        assert message == "You exceeded your current quota."
