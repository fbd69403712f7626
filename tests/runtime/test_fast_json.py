"""The standard-library targets read JSON with orjson when it is installed. Whatever it
would read differently (integers past 64 bits, NaN, lone surrogate halves, bad input) is
left to json, so both readers give the same chunks and the same errors."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

from generated.dataclasses import chat as chunk_dataclasses
from generated.typeddicts import chat as chunk_typeddicts
from tests.helpers.support import FIXTURE_STREAMS, load_without, outcome

GENERATED = Path(__file__).resolve().parents[2] / "generated"
TRICKY = [
    '{"id":"c","model":"m","choices":[],"seed":123456789012345678901234567890}',
    '{"id":"c","model":"m","choices":[],"seed":18446744073709551615,"big":-9223372036854775808}',
    '{"id":"c","model":"m","choices":[{"index":-9223372036854775809,"delta":{}}]}',
    '{"id":"c","model":"m","choices":[],"x":-9999999999999999999}',
    '{"id":"c","model":"m","choices":[],"x":NaN,"y":-Infinity,"z":1E400}',
    '{"id":"c","model":"m","choices":[{"index":0,"delta":{"content":"\\ud83d"}}]}',
    '{"id":"c","model":"m","choices":[],"x":0.1,"y":-0.0,"z":1e-7,"w":[1.0,2]}',
    '{"id":"c","model":"m","choices":[],"x":1,"x":2}',
    '{"id":',
    '\ufeff{"id":"c","model":"m","choices":[]}',
    '{"error":{"message":"overloaded","code":529}}',
]


def _json_text(chat: ModuleType) -> ModuleType:
    """The runtime's JSON file of the package a chat module is in."""
    return sys.modules[f"{chat.__name__.rpartition('.')[0]}._runtime.json_text"]


@pytest.mark.parametrize("fast", [chunk_dataclasses, chunk_typeddicts], ids=["dc", "td"])
def test_orjson_and_json_read_every_payload_alike(fast: ModuleType) -> None:
    assert _json_text(fast)._fast_loads is not None, "orjson is in requirements.lock"
    target = Path(fast.__file__ or "").parent.name
    plain = load_without(GENERATED / target / "chat.py", "orjson")
    assert _json_text(plain)._fast_loads is None
    payloads = [text for stream in FIXTURE_STREAMS for _, text in stream.chunks] + TRICKY
    for text in payloads:
        for data in (text, text.encode("utf-8", "surrogatepass")):
            assert outcome(fast, data) == outcome(plain, data), data
    assert json.loads(fast.dumps(fast.loads(TRICKY[0])))["seed"] == 123456789012345678901234567890
