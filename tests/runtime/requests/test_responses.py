"""The Responses request (`POST /v1/responses` body, `request: ResponseCreateRequest` in
spec/responses_stream_event.yaml) in the four targets: real request bodies
(tests/fixtures/responses_requests/, sources in its SOURCES.md) go through
`loads_request` and `dumps` unchanged, each input item reads as the member its `type`
names, a message without `type` reads as the typed message (the union's `absent:`
member) and is written back without it, and what the spec does not type is kept whole."""

from __future__ import annotations

import copy
import importlib
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from generator.render.targets import TARGETS as REGISTRY
from tests.helpers.support import assert_same_json

REQUESTS = Path(__file__).resolve().parents[2] / "fixtures" / "responses_requests"
BODIES = sorted(REQUESTS.glob("*.json"))
MODULES: dict[str, ModuleType] = {
    name: importlib.import_module(f"generated.{name}.responses") for name in REGISTRY
}


def body(name: str) -> dict[str, Any]:
    value: dict[str, Any] = json.loads((REQUESTS / name).read_text(encoding="utf-8"))
    return value


def items(module: ModuleType, request: Any) -> list[Any]:
    """The input items of a read request, as the target holds them."""
    value = request["input"] if isinstance(request, dict) else request.input
    assert isinstance(value, list)
    return value


def kind(item: Any) -> str:
    """What an item was read as: its class, or (TypedDicts) the dict itself."""
    return type(item).__name__.removeprefix("_").removesuffix("Untagged").removesuffix("Read")


def round_trip(module: ModuleType, payload: Any) -> Any:
    request = module.loads_request(json.dumps(payload))
    assert_same_json(json.loads(module.dumps(request)), payload, where=module.__name__)
    return request


def test_the_bodies_are_there() -> None:
    assert len(BODIES) >= 7
    assert "SOURCES.md" in {p.name for p in REQUESTS.iterdir()}


@pytest.mark.parametrize("target", list(MODULES))
@pytest.mark.parametrize("path", BODIES, ids=lambda p: p.stem)
def test_a_real_request_body_comes_back_unchanged(target: str, path: Path) -> None:
    payload = json.loads(path.read_text(encoding="utf-8"))
    round_trip(MODULES[target], payload)


# The type each item of the multi-turn bodies is read as (the TypedDicts hold dicts).
EXPECTED = {
    "pydantic-ai__thinking-part-turn-2.json": [
        "EasyInputMessage",
        "ResponseReasoningItem",
        "EasyInputMessage",
        "EasyInputMessage",
    ],
    "pydantic-ai__tool-call-turn-2.json": [
        "EasyInputMessage",
        "EasyInputMessage",
        "ResponseFunctionToolCall",
        "FunctionCallOutput",
    ],
    "codex__turn-with-tools.json": [
        "EasyInputMessage",
        "EasyInputMessage",
        "EasyInputMessage",
        "ResponseReasoningItem",
        "ResponseFunctionToolCall",
        "FunctionCallOutput",
        "ResponseCustomToolCall",
        "ResponseCustomToolCallOutput",
    ],
}


@pytest.mark.parametrize("target", [t for t in MODULES if t != "typeddicts"])
@pytest.mark.parametrize("name", list(EXPECTED))
def test_each_input_item_reads_as_its_member(target: str, name: str) -> None:
    module = MODULES[target]
    request = round_trip(module, body(name))
    assert [kind(item) for item in items(module, request)] == EXPECTED[name]


@pytest.mark.parametrize("target", [t for t in MODULES if t != "typeddicts"])
def test_the_reasoning_items_encrypted_content_and_the_call_are_typed(target: str) -> None:
    module = MODULES[target]
    payload = body("pydantic-ai__thinking-part-turn-2.json")
    reasoning = items(module, module.loads_request(json.dumps(payload)))[1]
    assert reasoning.encrypted_content == payload["input"][1]["encrypted_content"]
    assert reasoning.summary[0].text.startswith("**Considering street crossing safety**")
    payload = body("pydantic-ai__tool-call-turn-2.json")
    request = module.loads_request(json.dumps(payload))
    call, output = items(module, request)[2:]
    assert (call.name, call.call_id) == ("get_capital", "call_61cRAI5gleGxCN89umufHn2a")
    assert (output.call_id, output.output) == (call.call_id, "Potato City")
    (tool,) = request.tools
    assert type(tool).__name__.lstrip("_").startswith("FunctionTool")
    assert tool.parameters["required"] == ["country"]


@pytest.mark.parametrize("target", list(MODULES))
def test_a_message_without_type_is_the_typed_message_and_stays_without_it(target: str) -> None:
    module = MODULES[target]
    message_json: dict[str, Any] = {"role": "user", "content": "hi"}
    payload = {"model": "m", "input": [message_json]}
    request = round_trip(module, payload)
    (message,) = items(module, request)
    if target == "typeddicts":
        assert "type" not in message
        return
    assert kind(message) == "EasyInputMessage"
    assert (message.role, message.content) == ("user", "hi")
    assert not message.type  # UNSET, or None in pydantic: not sent
    tagged = round_trip(module, {"input": [{**message_json, "type": "message"}]})
    assert items(module, tagged)[0].type == "message"


@pytest.mark.parametrize("target", list(MODULES))
def test_unknown_items_parts_tools_and_keys_are_kept_whole(target: str) -> None:
    module = MODULES[target]
    payload = copy.deepcopy(body("codex__turn-with-tools.json"))
    payload["input"] += [
        {"type": "hologram_call", "id": "h1", "frames": [1, 2], "nested": {"a": None}},
        {"id": "msg_earlier"},  # an item reference without its type: read as a message
        {"type": "item_reference", "id": "msg_earlier"},
        {
            "role": "user",
            "content": [
                {"type": "input_audio", "input_audio": {"data": "AAAA", "format": "wav"}},
                {"type": "input_text", "text": "x", "brand_new": [1, {"b": 2}]},
            ],
            "brand_new_message_key": True,
        },
    ]
    payload["brand_new_setting"] = {"deep": [1, 2.5, None]}
    payload["text"] = {"format": {"type": "json_schema", "name": "x", "schema": {}}}
    request = round_trip(module, payload)
    if target != "typeddicts":
        tail = [kind(item) for item in items(module, request)[-4:]]
        assert tail == [
            "OtherResponseInputItem",
            "EasyInputMessage",
            "ItemReference",
            "EasyInputMessage",
        ]
        assert [kind(tool) for tool in request.tools] == [
            "FunctionTool",
            "OtherResponseTool",
            "OtherResponseTool",
        ]


@pytest.mark.parametrize("target", list(MODULES))
def test_a_bad_item_is_refused_at_its_path(target: str) -> None:
    module = MODULES[target]
    for item, path in (
        ({"type": None, "role": "user", "content": "x"}, "$.input[0].type"),
        ({"type": "function_call", "call_id": 1}, "$.input[0].call_id"),
    ):
        with pytest.raises(module.ChunkDecodeError) as caught:
            module.loads_request(json.dumps({"input": [item]}))
        assert str(caught.value).startswith(path), (target, str(caught.value))
