"""Chunks kept after reading: repeated strings held once, unknown keys read-only and
shared when empty, and copies and pickles that keep every key."""

from __future__ import annotations

import copy
import json
import pickle
from types import ModuleType
from typing import Any

import pytest

from tests.helpers.support import TARGETS, runtime

CHUNK: dict[str, Any] = {
    "id": "chatcmpl-abc",
    "object": "chat.completion.chunk",
    "created": 1,
    "model": "gpt-4.1-mini",
    "service_tier": "default",
    "system_fingerprint": "fp_1",
    "choices": [
        {
            "index": 0,
            "delta": {"content": "hi", "zz_delta": [1, {"a": None}]},
            "logprobs": {
                "content": [
                    {
                        "token": "hi",
                        "bytes": [104, 105],
                        "logprob": -0.5,
                        "top_logprobs": [{"token": "hi", "bytes": None, "logprob": -0.5}],
                    }
                ],
                "refusal": None,
            },
            "finish_reason": None,
        }
    ],
    "zz_top": {"n": 1},
}


def _text(payload: dict[str, Any]) -> str:
    # json.loads builds new string objects on every call: any sharing is the target's.
    return json.dumps(payload)


@pytest.mark.parametrize("name", ["dataclasses", "msgspec"])
def test_values_the_spec_says_repeat_are_held_once(name: str) -> None:
    target = TARGETS[name]
    first, second = target.loads(_text(CHUNK)), target.loads(_text(CHUNK))
    for key in ("id", "model", "object", "service_tier", "system_fingerprint"):
        assert getattr(first, key) is getattr(second, key), key
    tokens = [c.choices[0].logprobs.content[0] for c in (first, second)]
    # A token (`repeats: vocabulary`) is kept once by the dataclasses only: msgspec would
    # pay a Python call per token object.
    assert (tokens[0].token is tokens[1].token) is (name == "dataclasses")
    assert (tokens[0].top_logprobs[0].token is tokens[1].top_logprobs[0].token) is (
        name == "dataclasses"
    )
    # A value that does not repeat is not kept once.
    assert first.choices[0].delta.content is not second.choices[0].delta.content
    assert json.loads(target.dumps(first)) == CHUNK


def test_dataclasses_share_one_read_only_empty_extra() -> None:
    target = TARGETS["dataclasses"]
    plain = {k: v for k, v in CHUNK.items() if k != "zz_top"}
    first, second = target.loads(_text(plain)), target.loads(_text(plain))
    assert first.extra == {} and first.extra is second.extra
    with pytest.raises(TypeError, match="read-only"):
        first.extra["x"] = 1
    kept = target.loads(_text(CHUNK))
    assert kept.extra == {"zz_top": {"n": 1}}
    with pytest.raises(TypeError, match="read-only"):
        kept.extra.update(x=1)
    # Assigning a new mapping is the way to change them, and dumps writes it.
    kept.extra = {**kept.extra, "added": True}
    assert json.loads(target.dumps(kept)) == {**CHUNK, "added": True}


@pytest.mark.parametrize("name", sorted(TARGETS))
@pytest.mark.parametrize(
    "duplicate",
    [copy.copy, copy.deepcopy, lambda chunk: pickle.loads(pickle.dumps(chunk))],
    ids=["copy", "deepcopy", "pickle"],
)
def test_copies_and_pickles_keep_every_key(name: str, duplicate: Any) -> None:
    target: ModuleType = TARGETS[name]
    chunk = target.loads(_text(CHUNK))
    twin = duplicate(chunk)
    del chunk  # the original's unknown keys must not be what the twin reads
    assert json.loads(target.dumps(twin)) == CHUNK


def test_the_table_of_tokens_stays_bounded() -> None:
    # Tokens are shared through a table; a server reading endless streams must not keep
    # every token it ever saw.
    target = TARGETS["dataclasses"]
    kept, most = runtime(target, "_KEPT"), runtime(target, "_KEEP_AT_MOST")
    for number in range(most + 10):
        payload = copy.deepcopy(CHUNK)
        payload["choices"][0]["logprobs"]["content"][0]["token"] = f"t{number}"
        target.loads(_text(payload))
    assert 0 < len(kept) <= most


@pytest.mark.parametrize("name", ["dataclasses", "msgspec"])
def test_interleaved_streams_keep_their_own_values(name: str) -> None:
    # A per-stream value is shared with the last chunk read; a gateway interleaving
    # streams shares less, and never mixes them up.
    target = TARGETS[name]
    ids = ["chatcmpl-a", "chatcmpl-b", "chatcmpl-a", "chatcmpl-a", "chatcmpl-b"]
    chunks = [target.loads(_text({**CHUNK, "id": one})) for one in ids]
    assert [c.id for c in chunks] == ids
    assert chunks[2].id is chunks[3].id
