"""What is particular to the msgspec target: msgspec reads a chunk whose keys are all
known in one pass, anything else goes key by key, and both give what the other targets
give."""

from __future__ import annotations

import json

import pytest

from generated.dataclasses import chat as chunk_dataclasses
from generated.msgspec import chat as chunk_msgspec
from generated.msgspec._runtime.structs import _EXTRA
from tests.helpers.support import outcome

USAGE_CHUNK = (
    '{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],'
    '"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}'
)


def test_a_chunk_of_known_keys_is_read_by_msgspec_alone() -> None:
    for text in (
        USAGE_CHUNK,
        USAGE_CHUNK.replace('"choices":[]', '"choices":[{"index":0,"delta":{}}]'),
    ):
        chunk = chunk_msgspec.loads(text)
        assert type(chunk) is chunk_msgspec.ChatCompletionChunk, text  # no second reading
        assert json.loads(chunk_msgspec.dumps(chunk)) == json.loads(text)


def test_an_unknown_key_is_read_key_by_key_and_kept_read_only() -> None:
    chunk = chunk_msgspec.loads(USAGE_CHUNK.replace('"choices"', '"zz":[1],"choices"'))
    assert type(chunk) in chunk_msgspec._READ_KEY_BY_KEY
    assert dict(chunk.extra) == {"zz": [1]}
    with pytest.raises(TypeError):
        chunk.extra["x"] = 1  # type: ignore[index]
    assert json.loads(chunk_msgspec.dumps(chunk))["zz"] == [1]


@pytest.mark.parametrize(
    "text",
    [
        '{"id":"a","model":"m","choices":["\\udc00"]}',
        '{"id":"a","model":"m","choices":[{"index":0,"delta":{},"\\ud800":1}]}',
        '{"id":"a","model":"m","choices":[],"x":"\\ud83d"}',
    ],
)
def test_lone_surrogates_read_as_in_the_stdlib_targets(text: str) -> None:
    assert outcome(chunk_msgspec, text) == outcome(chunk_dataclasses, text)
    with pytest.raises(chunk_msgspec.ChunkDecodeError):
        chunk_msgspec.ChatCompletionChunk.from_dict("\ud800")


def test_what_an_object_read_key_by_key_keeps_goes_with_it() -> None:
    before = len(_EXTRA)
    chunk = chunk_msgspec.loads(
        USAGE_CHUNK.replace('"choices":[]', '"zz":1,"choices":[{"index":0,"delta":{"yy":2}}]')
    )
    delta = chunk.choices[0].delta
    assert isinstance(delta, chunk_msgspec.ChoiceDelta) and dict(delta.extra) == {"yy": 2}
    del delta
    assert len(_EXTRA) == before + 2
    del chunk
    assert len(_EXTRA) == before
