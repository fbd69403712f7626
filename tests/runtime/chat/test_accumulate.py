"""Accumulating a stream into a `chat.completion`, in every target.

Every captured stream adds up to what its deltas say; every hazard of pain.md group D
gives the behaviour stated there (or the documented choice, named in the test); the
merge table is pinned; and text is never concatenated in a loop.
"""

from __future__ import annotations

import copy
import enum
import gc
import itertools
import json
import types
from collections import defaultdict
from collections.abc import Iterable
from types import ModuleType
from typing import Any

import pytest

from tests.helpers.support import FIXTURE_STREAMS, TARGETS, Stream


@pytest.fixture(params=sorted(TARGETS))
def target(request: pytest.FixtureRequest) -> ModuleType:
    return TARGETS[request.param]


def chunk(*choices: dict[str, Any], **top: Any) -> dict[str, Any]:
    return {
        "id": "c1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": list(choices),
        **top,
    }


def choice(delta: dict[str, Any] | None = None, index: int = 0, **keys: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"index": index, "delta": delta or {}, "finish_reason": None}
    out.update(keys)
    return out


def deltas(*items: dict[str, Any]) -> list[dict[str, Any]]:
    """One chunk per delta, all for choice 0."""
    return [chunk(choice(item)) for item in items]


def tool(**keys: Any) -> dict[str, Any]:
    """A delta carrying one tool-call fragment."""
    return {"tool_calls": [keys]}


def accumulate(module: ModuleType, chunks: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """The completion the chunks add up to, as JSON data, read through `loads` and `dumps`."""
    accumulator = module.ChunkAccumulator()
    for payload in chunks:
        accumulator.add(module.loads(json.dumps(payload)))
    data: dict[str, Any] = json.loads(module.dumps(accumulator.result()))
    return data


def message(completion: dict[str, Any], index: int = 0) -> dict[str, Any]:
    found = [c for c in completion["choices"] if c["index"] == index]
    assert len(found) == 1, completion
    result: dict[str, Any] = found[0]["message"]
    return result


def calls(completion: dict[str, Any]) -> list[dict[str, Any]]:
    result: list[dict[str, Any]] = message(completion)["tool_calls"]
    return result


# --- every captured stream -------------------------------------------------------


def _is_error(payload: dict[str, Any]) -> bool:
    return payload.get("error") is not None and "choices" not in payload


class _Expected:
    """What a stream's deltas say, worked out from the raw JSON without the generated code."""

    def __init__(self, payloads: list[dict[str, Any]]) -> None:
        self.content: dict[int, list[Any]] = defaultdict(list)
        self.reasoning: dict[tuple[int, str], list[str]] = defaultdict(list)
        self.finish: dict[int, str] = {}
        self.calls: dict[tuple[int, int], dict[str, Any]] = {}
        self.usage: Any = None
        latest: dict[int, int] = {}
        for payload in payloads:
            if payload.get("usage") is not None:
                self.usage = payload["usage"]
            for item in payload.get("choices") or []:
                self._choice(item, latest)

    def _choice(self, item: dict[str, Any], latest: dict[int, int]) -> None:
        index = item["index"]
        if item.get("finish_reason") is not None:
            self.finish[index] = item["finish_reason"]
        delta = item.get("delta") or {}
        if delta.get("content") is not None:
            self.content[index].append(delta["content"])
        for key in ("reasoning_content", "reasoning"):
            if isinstance(delta.get(key), str):
                self.reasoning[(index, key)].append(delta[key])
        for call in delta.get("tool_calls") or []:
            position = call.get("index")
            if position is None:  # the documented rule for a fragment without an index
                known = [k for c, k in self.calls if c == index]
                same = self.calls.get((index, latest.get(index, 0)), {}).get("id")
                new = call.get("id") and call["id"] != same
                position = (max(known) + 1 if new else latest[index]) if known else 0
            latest[index] = position
            slot = self.calls.setdefault((index, position), {"args": []})
            function = call.get("function") or {}
            for key, value in (("id", call.get("id")), ("name", function.get("name"))):
                if value and key not in slot:
                    slot[key] = value  # the first non-empty one
            if isinstance(function.get("arguments"), str):
                slot["args"].append(function["arguments"])


def joined(parts: list[Any]) -> list[Any]:
    """Parts as a non-streamed response holds them (issue 31, item 13): adjacent text
    parts, and adjacent thinking parts, are one; empty ones are left out."""
    out: list[Any] = []
    for part in parts:
        key = {"text": "text", "thinking": "thinking"}.get(part["type"])
        if key is None or set(part) != {"type", key}:
            out.append(part)
            continue
        value = part[key] if key == "text" else joined(part[key])
        if not value:
            continue
        if out and out[-1]["type"] == part["type"] and set(out[-1]) == set(part):
            both = out[-1][key] + value
            out[-1] = {"type": part["type"], key: both if key == "text" else joined(both)}
        else:
            out.append({"type": part["type"], key: value})
    return out


@pytest.mark.parametrize("stream", FIXTURE_STREAMS, ids=lambda s: s.name)
def test_every_captured_stream_adds_up_to_its_deltas(stream: Stream) -> None:
    payloads = [json.loads(text) for _, text in stream.chunks]
    expected = _Expected([p for p in payloads if not _is_error(p)])
    texts = {}
    for name, module in TARGETS.items():
        accumulator = module.ChunkAccumulator()
        for _, text in stream.chunks:
            try:
                accumulator.add(module.loads(text))
            except module.ErrorReport:
                continue
        texts[name] = module.dumps(accumulator.result())
    # msgspec and pydantic spell some floats their own way: the same JSON value, not
    # the same text.
    exact = {texts[name] for name in ("dataclasses", "typeddicts")}
    values = {json.dumps(json.loads(text), sort_keys=True) for text in texts.values()}
    assert len(exact) == len(values) == 1, f"{stream.name}: targets disagree: {texts}"
    completion = json.loads(texts["dataclasses"])

    for index, pieces in expected.content.items():
        parts = [p for p in pieces if isinstance(p, list)]
        if parts:  # Mistral's content parts; an empty string among them adds nothing
            assert all(p == "" for p in pieces if isinstance(p, str))
            whole = joined([p for part in parts for p in part])
            assert message(completion, index)["content"] == whole
        else:
            assert message(completion, index)["content"] == "".join(pieces), index
    for (index, key), pieces in expected.reasoning.items():
        assert message(completion, index)[key] == "".join(pieces), (index, key)
    for index, reason in expected.finish.items():
        found = next(c for c in completion["choices"] if c["index"] == index)
        assert found["finish_reason"] == reason, index
    for (index, position), want in expected.calls.items():
        got = next(c for c in message(completion, index)["tool_calls"] if c["index"] == position)
        function = got["function"]
        if all(isinstance(a, str) for a in want["args"]):
            assert function["arguments"] == "".join(want["args"]), (index, position)
        assert got.get("id") == want.get("id") and function.get("name") == want.get("name")
    assert completion.get("usage") == expected.usage
    assert completion["object"] == "chat.completion"


def test_a_completion_without_streaming_round_trips(target: ModuleType) -> None:
    text = json.dumps(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 1741569952,
            "model": "gpt-4.1-2025-04-14",
            "choices": [
                {
                    "index": 0,
                    "message": {
                        "role": "assistant",
                        "content": None,
                        "refusal": None,
                        "tool_calls": [
                            {
                                "id": "call_1",
                                "type": "function",
                                "function": {"name": "f", "arguments": '{"a":1}'},
                            }
                        ],
                        "annotations": [],
                    },
                    "logprobs": None,
                    "finish_reason": "tool_calls",
                }
            ],
            "usage": {"prompt_tokens": 19, "completion_tokens": 10, "total_tokens": 29},
            "service_tier": "default",
            "system_fingerprint": None,
        },
        separators=(",", ":"),
    )
    assert json.loads(target.dumps(target.loads_completion(text))) == json.loads(text)


def test_an_error_instead_of_a_completion_is_reported(target: ModuleType) -> None:
    with pytest.raises(target.ErrorReport) as caught:
        target.loads_completion('{"error":{"message":"busy","code":"overloaded"}}')
    assert caught.value.path == "$.error"


# --- pain.md group D ---------------------------------------------------------------


def test_d1_tool_calls_without_index(target: ModuleType) -> None:
    got = accumulate(
        target,
        deltas(
            tool(id="a", type="function", function={"name": "f", "arguments": '{"x":'}),
            tool(function={"arguments": "1}"}),
            tool(id="b", type="function", function={"name": "g", "arguments": "{}"}),
        ),
    )
    assert [(c["id"], c["function"]["name"], c["function"]["arguments"]) for c in calls(got)] == [
        ("a", "f", '{"x":1}'),
        ("b", "g", "{}"),
    ]


def test_d2_sparse_tool_indexes_and_interleaved_choices(target: ModuleType) -> None:
    got = accumulate(
        target,
        deltas(
            tool(index=1, id="c", type="function", function={"name": "f", "arguments": "{"}),
            tool(index=1, function={"arguments": "}"}),
        ),
    )
    assert [(c["index"], c["function"]["arguments"]) for c in calls(got)] == [(1, "{}")]

    got = accumulate(
        target,
        [
            chunk(choice({"role": "assistant", "content": "B1"}, index=1)),
            chunk(choice({"role": "assistant", "content": "A1"}, index=0)),
            chunk(choice({"content": "B2"}, index=1, finish_reason="stop")),
            chunk(choice({"content": "A2"}, index=0, finish_reason="length")),
        ],
    )
    assert [(c["index"], c["message"]["content"], c["finish_reason"]) for c in got["choices"]] == [
        (0, "A1A2", "length"),
        (1, "B1B2", "stop"),
    ]


def test_d3_identity_fields_repeated_on_every_delta_are_kept_once(target: ModuleType) -> None:
    parts = ['{"path":', ' "a.txt"', "}"]
    got = accumulate(
        target,
        deltas(
            *(
                {
                    "role": "assistant",
                    **tool(
                        index=0,
                        id="call_1",
                        type="function",
                        function={"name": "read_file", "arguments": part},
                    ),
                }
                for part in parts
            )
        ),
    )
    assert message(got)["role"] == "assistant"
    [call] = calls(got)
    assert (call["id"], call["type"], call["function"]["name"]) == (
        "call_1",
        "function",
        "read_file",
    )
    assert call["function"]["arguments"] == "".join(parts)

    detail = {"type": "reasoning.text", "format": "anthropic-claude-v1", "index": 0}
    got = accumulate(
        target,
        deltas(
            {"reasoning_details": [{**detail, "text": "Let"}]},
            {"reasoning_details": [{**detail, "text": " me"}]},
        ),
    )
    assert message(got)["reasoning_details"] == [{**detail, "text": "Let me"}]


@pytest.mark.parametrize(
    ("names", "expected"),
    [
        (["get_wea", "ther"], "get_weather"),
        (["get_weather", "get_weather"], "get_weather"),
        (["get_weather", None, None], "get_weather"),
        # Ambiguous, and pinned: a fragment equal to the whole name so far is a repeat.
        (["ab", "ab"], "ab"),
    ],
)
def test_d4_a_name_split_or_repeated(target: ModuleType, names: list[Any], expected: str) -> None:
    fragments = [tool(index=0, function={"name": name, "arguments": ""}) for name in names]
    [call] = calls(accumulate(target, deltas(*fragments)))
    assert call["function"]["name"] == expected


def test_d5_empty_id_and_name_on_continuations_do_not_overwrite(target: ModuleType) -> None:
    payloads = deltas(
        tool(index=0, id="call_a1", type="function", function={"name": "bash", "arguments": ""}),
        tool(index=0, id="", type="function", function={"name": "", "arguments": '{"command": '}),
        tool(index=0, id="", function={"arguments": '"ls"}'}),
    )
    [call] = calls(accumulate(target, payloads))
    assert (call["id"], call["function"]["name"]) == ("call_a1", "bash")
    assert call["function"]["arguments"] == '{"command": "ls"}'
    # Each chunk on its own keeps its "" (the round trip is lossless).
    assert json.loads(target.dumps(target.loads(json.dumps(payloads[1])))) == payloads[1]


def test_d6_arguments_whole_split_or_resent(target: ModuleType) -> None:
    def arguments(*pieces: str, finish_with_last: bool = False) -> str:
        payloads = [
            chunk(choice(tool(index=0, id="c", type="function", function={"arguments": p})))
            for p in pieces
        ]
        if finish_with_last:
            payloads[-1]["choices"][0]["finish_reason"] = "tool_calls"
        else:
            payloads.append(chunk(choice({}, finish_reason="tool_calls")))
        got = accumulate(target, payloads)
        assert got["choices"][0]["finish_reason"] == "tool_calls"
        result: str = calls(got)[0]["function"]["arguments"]
        return result

    assert arguments('{"city": "Paris"}') == '{"city": "Paris"}'  # (a) whole, then finish
    assert arguments('{"command":"before ', "{}", ' after"}') == '{"command":"before {} after"}'
    # (c) Documented choice: no snapshot heuristic, so a cumulative resend is concatenated.
    assert arguments('{"a"', '{"a":1', '{"a":1}') == '{"a"{"a":1{"a":1}'
    assert arguments('{"a":', "1}", finish_with_last=True) == '{"a":1}'  # (d)


def test_d7_arguments_absent_at_first_start_from_empty(target: ModuleType) -> None:
    got = accumulate(
        target,
        deltas(
            tool(index=0, id="c", type="function", function={"name": "f"}),
            tool(index=0, function={"arguments": '{"location": "Boston"}'}),
        ),
    )
    assert calls(got)[0]["function"]["arguments"] == '{"location": "Boston"}'
    got = accumulate(target, deltas(tool(index=0, id="c", function={"name": "f"})))
    assert calls(got)[0]["function"] == {"name": "f", "arguments": ""}
    assert calls(got)[0]["type"] == "function"
    # vLLM sends null arguments (and null id and type) where OpenAI sends nothing.
    nulls = tool(index=0, id=None, type=None, function={"name": "f", "arguments": None})
    got = accumulate(target, deltas({"role": None, **nulls}))
    assert message(got)["role"] == "assistant"
    assert calls(got) == [
        {"index": 0, "type": "function", "function": {"arguments": "", "name": "f"}}
    ]


def test_d8_arguments_before_the_identity(target: ModuleType) -> None:
    got = accumulate(
        target,
        deltas(
            tool(index=0, function={"arguments": '{"a"'}),
            tool(index=0, id="c", type="function", function={"name": "f", "arguments": ":1}"}),
        ),
    )
    [call] = calls(got)
    assert (call["id"], call["function"]["name"], call["function"]["arguments"]) == (
        "c",
        "f",
        '{"a":1}',
    )
    # The same without indexes: the id that comes second names the call so far.
    got = accumulate(
        target,
        deltas(
            tool(function={"arguments": '{"a"'}),
            tool(id="c", type="function", function={"name": "f", "arguments": ":1}"}),
        ),
    )
    assert [(c["id"], c["function"]["arguments"]) for c in calls(got)] == [("c", '{"a":1}')]


def test_d9_text_split_inside_an_escape_or_a_surrogate_pair(target: ModuleType) -> None:
    first, second = '{"t":"\\ud83d', '\\ude00 ok"}'
    got = accumulate(
        target,
        deltas(
            tool(index=0, id="c", function={"name": "f", "arguments": first}),
            tool(index=0, function={"arguments": second}),
        ),
    )
    arguments = calls(got)[0]["function"]["arguments"]
    assert arguments == first + second
    assert json.loads(arguments) == {"t": "\N{GRINNING FACE} ok"}

    accumulator = target.ChunkAccumulator()
    for text in ('"\\ud83d"', '"\\ude00"'):
        payload = json.dumps(chunk(choice({"content": "x"}))).replace('"x"', text)
        accumulator.add(target.loads(payload))
        # A lone half in the snapshot is written as its escape, so the text encodes.
        target.dumps(accumulator.snapshot()).encode("utf-8")
    assert json.loads(target.dumps(accumulator.result()))["choices"][0]["message"]["content"] == (
        "\N{GRINNING FACE}"
    )


def test_d10_usage_wherever_it_arrives(target: ModuleType) -> None:
    full = {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}
    # (i) Usage on one chunk, then chunks without it.
    got = accumulate(
        target, [chunk(choice({"content": "a"}), usage=full), *deltas({"content": "b"})]
    )
    assert got["usage"] == full
    # (ii) Null, then empty usage on the finish chunk, then the real usage in a tail chunk.
    got = accumulate(
        target,
        [
            chunk(choice({"content": "a"}), usage=None),
            chunk(choice({}, finish_reason="stop"), usage={}),
            chunk(usage=full),
        ],
    )
    assert got["usage"] == full
    # (iii) Cumulative usage on every chunk: the last one, not a sum.
    got = accumulate(
        target,
        [
            chunk(choice({"content": str(n)}), usage={**full, "completion_tokens": n})
            for n in (1, 2, 3)
        ],
    )
    assert got["usage"]["completion_tokens"] == 3
    # (iv) Groq's usage inside x_groq stays typed and readable in the completion.
    got = accumulate(
        target, [chunk(choice({}, finish_reason="stop"), x_groq={"id": "req_1", "usage": full})]
    )
    assert got["x_groq"] == {"id": "req_1", "usage": full}
    assert "usage" not in got  # documented: no normalised usage is made up
    # (v) The usage chunk after the finish chunk still counts: done means end of stream.
    got = accumulate(
        target, [chunk(choice({"content": "a"}, finish_reason="stop")), chunk(usage=full)]
    )
    assert got["usage"] == full


def test_d11_several_finish_reasons_and_content_after_one(target: ModuleType) -> None:
    usage = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
    got = accumulate(
        target,
        [
            chunk(choice(tool(index=0, id="c", type="function", function={"name": "f"}))),
            chunk(choice({}, finish_reason="tool_calls")),
            chunk(choice({}, finish_reason="tool_calls"), usage=usage),
        ],
    )
    assert got["choices"][0]["finish_reason"] == "tool_calls"  # (a) not "tool_callstool_calls"
    assert len(calls(got)) == 1 and got["usage"] == usage
    got = accumulate(target, [chunk(choice({"content": "last words"}, finish_reason="stop"))])
    assert message(got)["content"] == "last words"  # (b)
    # (c) Documented choice: the raw "stop" after tool calls is kept as sent.
    got = accumulate(
        target,
        [
            chunk(choice(tool(index=0, id="c", type="function", function={"name": "f"}))),
            chunk(choice({}, finish_reason="stop")),
        ],
    )
    assert got["choices"][0]["finish_reason"] == "stop" and calls(got)
    # (d) Content after the finish reason is appended, without an exception.
    got = accumulate(
        target,
        [chunk(choice({"content": "a"}, finish_reason="stop")), *deltas({"content": "b"})],
    )
    assert message(got)["content"] == "ab" and got["choices"][0]["finish_reason"] == "stop"


def test_d12_an_id_that_changes_keeps_the_first_non_empty(target: ModuleType) -> None:
    got = accumulate(
        target,
        [
            chunk(id="", created=0, model="", choices=[]),  # an Azure filter chunk
            chunk(choice({"content": "a"}), id="chat.id.1", created=7),
            chunk(choice({"content": "b"}), id="chat.id.2", created=8),
        ],
    )
    assert (got["id"], got["created"], got["model"]) == ("chat.id.1", 7, "m")


def test_d13_reasoning_fields_accumulate_under_their_own_names(target: ModuleType) -> None:
    for key in ("reasoning_content", "reasoning"):
        got = accumulate(
            target,
            deltas({"role": "assistant", key: "Let"}, {key: " me"}, {"content": "Hi"}),
        )
        assert message(got) == {"role": "assistant", "content": "Hi", key: "Let me"}


def test_d14_vendor_data_per_chunk(target: ModuleType) -> None:
    timing = {"ttft_ms": 12.5, "total_time_ms": 40.0}
    got = accumulate(
        target,
        [
            chunk(choice({"content": "a"}), nvext={"completion_token_ids": [1]}),
            chunk(choice({"content": "b"}), nvext={"completion_token_ids": [2]}),
            chunk(choice({}), nvext={"completion_token_ids": [3], "timing": timing}),
        ],
    )
    assert got["nvext"] == {"completion_token_ids": [1, 2, 3], "timing": timing}
    token = {"token": "a", "bytes": [97], "logprob": -0.1, "top_logprobs": []}
    got = accumulate(
        target,
        [
            chunk(choice({"content": "a"}, logprobs={"content": [token]}, stop_reason=None)),
            chunk(choice({"content": "a"}, logprobs={"content": [token]}, stop_reason="</s>")),
            chunk(choice({}, stop_reason=None)),
        ],
    )
    assert got["choices"][0]["logprobs"] == {"content": [token, token]}
    assert got["choices"][0]["stop_reason"] == "</s>"  # the last value that is not null
    # Documented choice: items are appended as sent, so a chunk a server sends twice
    # (Dynamo before #13150) counts twice; nothing tells a repeat from a new token.
    got = accumulate(target, [chunk(nvext={"completion_token_ids": [42]})] * 2)
    assert got["nvext"] == {"completion_token_ids": [42, 42]}


def test_d14_the_merge_rules_are_the_spec_s(target: ModuleType) -> None:
    """The policy table for the core fields, pinned: a change to the spec shows up here."""
    plans = target._PLANS
    top = plans["ChatCompletionChunk"].rules
    assert {key: top[key] for key in ("id", "choices", "created", "model", "object")} == {
        "id": ("first", "id", ""),
        "choices": ("by_index", "choices", "Choice"),
        "created": ("first", "created", ""),
        "model": ("first", "model", ""),
        "object": ("drop", "", ""),
    }
    assert (top["usage"], top["obfuscation"]) == (
        ("merge", "usage", "CompletionUsage"),
        ("drop", "", ""),
    )
    delta = plans["ChoiceDelta"].rules
    assert {k: delta[k][0] for k in ("role", "content", "refusal", "tool_calls")} == {
        "role": "first",
        "content": "append",
        "refusal": "append",
        "tool_calls": "by_index",
    }
    assert delta["reasoning_content"] == ("append", "reasoning_content", "")
    assert plans["Choice"].rules["delta"] == ("merge", "message", "ChoiceDelta")
    assert plans["Choice"].rules["message"] == ("drop", "", "")  # see the Perplexity test
    function = plans["ChoiceDeltaToolCallFunction"].rules
    assert function == {
        "arguments": ("append", "arguments", ""),
        "name": ("append_unless_repeated", "name", ""),
    }


def test_d15_two_identical_calls_stay_two(target: ModuleType) -> None:
    same = {"name": "roll_die", "arguments": "{}"}
    got = accumulate(
        target,
        deltas(
            tool(index=0, id="a", type="function", function=same),
            tool(index=1, id="b", type="function", function=same),
        ),
    )
    assert [c["function"] for c in calls(got)] == [same, same]


# --- the other stream shapes the issue names -------------------------------------------


def test_azure_filter_chunks_and_a_delta_less_choice(target: ModuleType) -> None:
    verdict = {"hate": {"filtered": False, "severity": "safe"}}
    got = accumulate(
        target,
        [
            chunk(
                id="",
                created=0,
                model="",
                prompt_filter_results=[{"prompt_index": 0, "content_filter_results": verdict}],
            ),
            chunk(choice({"role": "assistant", "content": "Hi"}), id="chatcmpl-1"),
            chunk({"index": 0, "finish_reason": None, "content_filter_results": verdict}),
            chunk(choice({}, finish_reason="stop"), id="chatcmpl-1"),
        ],
    )
    assert got["id"] == "chatcmpl-1" and message(got)["content"] == "Hi"
    assert got["prompt_filter_results"][0]["content_filter_results"] == verdict
    assert got["choices"][0]["content_filter_results"] == verdict


def test_the_moderation_chunk(target: ModuleType) -> None:
    body = {
        "type": "moderation_result",
        "model": "omni-moderation-latest",
        "flagged": False,
        "categories": {"violence": False},
        "category_scores": {"violence": 0.01},
        "category_applied_input_types": {"violence": ["text"]},
    }
    results = {"type": "moderation_results", "model": "omni-moderation-latest", "results": [body]}
    failed = {"type": "error", "code": "timeout", "message": "moderation timed out"}
    got = accumulate(
        target,
        [*deltas({"content": "ok"}), chunk(moderation={"input": results, "output": failed})],
    )
    assert got["moderation"] == {"input": results, "output": failed}


def test_refusal_and_logprobs_are_appended(target: ModuleType) -> None:
    def token(text: str) -> dict[str, Any]:
        return {"token": text, "bytes": None, "logprob": -1.0, "top_logprobs": []}

    got = accumulate(
        target,
        [
            chunk(choice({"refusal": "I can't"}, logprobs={"refusal": [token("I can't")]})),
            chunk(choice({"refusal": " help."}, logprobs={"refusal": [token(" help.")]})),
        ],
    )
    assert message(got)["refusal"] == "I can't help."
    assert message(got)["content"] is None
    assert got["choices"][0]["logprobs"] == {"refusal": [token("I can't"), token(" help.")]}


def test_keys_the_spec_does_not_describe_survive(target: ModuleType) -> None:
    items = [{"id": "r1", "encrypted_content": "opaque"}]
    got = accumulate(
        target,
        [
            chunk(choice({"content": "a", "reasoning_items": items}), surprise={"x": 1}),
            chunk(choice({"content": "b", "reasoning_items": None}), surprise={"x": 2}),
        ],
    )
    # Documented choice: a key the spec does not describe keeps its last value that is
    # not null (declare it in a vendor file to append it instead).
    assert message(got)["reasoning_items"] == items and got["surprise"] == {"x": 2}


def test_b1_an_empty_finish_reason_means_not_finished(target: ModuleType) -> None:
    call = tool(index=0, id="c", type="function", function={"name": "f", "arguments": "{}"})
    got = accumulate(
        target,
        [
            chunk(choice({"content": "a"}, finish_reason="")),
            chunk(choice(call, finish_reason="")),
            chunk(choice({}, finish_reason="tool_calls")),
            chunk(choice({}, finish_reason="")),
        ],
    )
    assert got["choices"][0]["finish_reason"] == "tool_calls"
    assert calls(got)[0]["function"] == {"arguments": "{}", "name": "f"}


@pytest.mark.parametrize("role", ["", None, "assistant"])
def test_b4_an_empty_null_or_repeated_role(target: ModuleType, role: str | None) -> None:
    got = accumulate(target, deltas({"role": role, "content": "a"}, {"role": role}))
    assert message(got)["role"] == "assistant"


def test_b5_custom_tool_calls(target: ModuleType) -> None:
    got = accumulate(
        target,
        deltas(
            tool(index=0, id="call_c1", type="custom", custom={"name": "apply_patch", "input": ""}),
            tool(index=0, custom={"input": "*** Begin Patch"}),
            tool(index=0, type="", custom={"input": "\n*** End Patch"}),
        ),
    )
    assert calls(got) == [
        {
            "index": 0,
            "id": "call_c1",
            "type": "custom",
            "custom": {"input": "*** Begin Patch\n*** End Patch", "name": "apply_patch"},
        }
    ]


def test_a_message_sent_beside_the_delta_does_not_overwrite_it(target: ModuleType) -> None:
    """Perplexity repeats the fragment as `message` beside `delta` (open-webui#9927)."""
    payloads = [
        chunk(choice({"content": "Hel"}, message={"role": "assistant", "content": "Hel"})),
        chunk(choice({"content": "lo"}, message={"role": "assistant", "content": "lo"})),
        chunk(choice({"content": " world"})),
    ]
    assert message(accumulate(target, payloads))["content"] == "Hello world"


def test_the_partial_completion_survives_a_stream_error(target: ModuleType) -> None:
    lines = [f"data: {json.dumps(p)}\n\n" for p in deltas({"content": "Hel"}, {"content": "lo"})]
    lines.append('data: {"error":{"message":"Upstream overloaded","code":529}}\n\n')
    accumulator = target.ChunkAccumulator()
    with pytest.raises(target.StreamError) as caught:
        for item in target.iter_chunks(lines):
            accumulator.add(item)
    assert (caught.value.message, caught.value.code) == ("Upstream overloaded", 529)
    assert json.loads(target.dumps(accumulator.snapshot()))["choices"][0]["message"] == {
        "role": "assistant",
        "content": "Hello",
    }


def test_a_snapshot_at_every_chunk_changes_nothing(target: ModuleType) -> None:
    payloads = deltas({"role": "assistant", "content": "a"}, {"content": "b"}, {"content": "c"})
    accumulator = target.ChunkAccumulator()
    seen = []
    for payload in payloads:
        accumulator.add(target.loads(json.dumps(payload)))
        seen.append(json.loads(target.dumps(accumulator.snapshot()))["choices"][0]["message"])
    assert [m["content"] for m in seen] == ["a", "ab", "abc"]
    assert json.loads(target.dumps(accumulator.result())) == accumulate(target, payloads)
    assert accumulator.chunks == 3


def test_text_is_gathered_in_pieces_and_joined_once(target: ModuleType) -> None:
    """Linear cost by construction: each piece goes into a list, and the list is joined
    when the completion is read (then kept as one piece); no text grows by `+`."""
    accumulator = target.ChunkAccumulator()
    pieces = [str(n % 10) for n in range(2_000)]
    for piece in pieces:
        call = {"index": 0, "function": {"arguments": piece}}
        delta = {"content": piece, "reasoning_content": piece, "tool_calls": [call]}
        accumulator.add(target.loads(json.dumps(chunk(choice(delta)))))
    merged = accumulator._merged["choices"][0]["message"]
    held = [merged["content"], merged["reasoning_content"]]
    held.append(merged["tool_calls"][0]["function"]["arguments"])
    assert [list(h) for h in held] == [pieces] * 3
    got = json.loads(target.dumps(accumulator.result()))["choices"][0]["message"]
    text = "".join(pieces)
    assert got["content"] == got["reasoning_content"] == text
    assert got["tool_calls"][0]["function"]["arguments"] == text
    assert [list(h) for h in held] == [[text]] * 3


# --- nothing sent is dropped (issue 22) --------------------------------------------


def test_a_fragment_without_index_continues_the_call_of_its_id(target: ModuleType) -> None:
    got = accumulate(
        target,
        deltas(
            tool(id="a", type="function", function={"name": "f", "arguments": '{"x":'}),
            tool(id="b", type="function", function={"name": "g", "arguments": '{"y":'}),
            tool(id="a", function={"arguments": "1}"}),  # a, though b is the latest
            tool(id="b", function={"arguments": "2}"}),
        ),
    )
    assert [(c["id"], c["function"]["arguments"]) for c in calls(got)] == [
        ("a", '{"x":1}'),
        ("b", '{"y":2}'),
    ]


def test_content_that_switches_between_text_and_parts_keeps_both(target: ModuleType) -> None:
    thinking = {"type": "thinking", "thinking": [{"type": "text", "text": "hmm"}]}
    text = {"type": "text", "text": "Hi"}
    # Mistral: thinking parts, then the answer as parts, then a last "\n" as text.
    got = accumulate(
        target, deltas({"content": [thinking]}, {"content": [text]}, {"content": "\n"})
    )
    assert message(got)["content"] == [thinking, {"type": "text", "text": "Hi\n"}]
    # Text first, then parts: the text is the first part.
    got = accumulate(target, deltas({"content": "Hel"}, {"content": "lo"}, {"content": [thinking]}))
    assert message(got)["content"] == [{"type": "text", "text": "Hello"}, thinking]


def test_arguments_sent_as_an_object_then_as_text_keep_both(target: ModuleType) -> None:
    got = accumulate(
        target,
        deltas(
            tool(index=0, id="c", type="function", function={"name": "f", "arguments": {"a": 1}}),
            tool(index=0, function={"arguments": ', "b": 2'}),
        ),
    )
    assert calls(got)[0]["function"]["arguments"] == '{"a":1}, "b": 2'


def reachable_containers(value: object) -> dict[int, object]:
    """Every dict and list with something in it that `value` holds, through any object
    (not classes, modules or enum members, which every value shares)."""
    found: dict[int, object] = {}
    seen: set[int] = set()
    stack = [value]
    while stack:
        item = stack.pop()
        if id(item) in seen or isinstance(item, type | types.ModuleType | enum.Enum):
            continue
        seen.add(id(item))
        if isinstance(item, dict | list) and item:
            found[id(item)] = item
        stack.extend(gc.get_referents(item))
    return found


def test_snapshots_share_nothing_mutable_with_the_chunks_or_each_other(
    target: ModuleType,
) -> None:
    payloads = [
        chunk(choice({"content": "a", "zz": {"n": [1]}, "parts": [{"p": 1}]}), top={"x": [1]}),
        chunk(choice({"content": "b", "tool_calls": [{"index": 0, "id": "t", "zz": [{}]}]})),
    ]
    chunks = [target.loads(json.dumps(payload)) for payload in payloads]
    accumulator = target.ChunkAccumulator()
    accumulator.add(chunks[0])
    made = [accumulator.snapshot()]
    accumulator.add(chunks[1])
    made += [accumulator.snapshot(), accumulator.result(), accumulator.result()]
    held = [reachable_containers(value) for value in [*chunks, *made]]
    for one, other in itertools.combinations(held, 2):
        shared = one.keys() & other.keys()
        assert not shared, [one[i] for i in shared]
    assert json.loads(target.dumps(made[0]))["top"] == {"x": [1]}


def test_a_value_nested_hundreds_deep_is_copied_into_snapshots(target: ModuleType) -> None:
    deep: Any = 1
    for _ in range(target.MAX_DEPTH - 1):  # the deepest loads reads, with the chunk's {
        deep = [deep]
    payload = chunk(choice({"content": "a"}), zz=deep)
    accumulator = target.ChunkAccumulator()
    accumulator.add(target.loads(json.dumps(payload)))
    assert json.loads(target.dumps(accumulator.snapshot()))["zz"] == deep


def nested(value: Any, *path: str | int) -> Any:
    """The value at `path` in a chunk, as a user reaches it: a key of a dict, an item of
    a list, an attribute of an object, or a key the object keeps in its `extra`."""
    for step in path:
        if isinstance(value, dict | list):
            value = value[step]  # type: ignore[index]
        elif isinstance(step, str) and hasattr(value, step):
            value = getattr(value, step)
        else:
            extra = value.model_extra if hasattr(value, "model_extra") else value.extra
            value = extra[step]
    return value


def test_changing_a_chunk_after_add_changes_no_snapshot_or_summary(target: ModuleType) -> None:
    """`add` takes what it keeps: the nested lists and dicts of a chunk changed in place
    afterwards (a content list of parts, a tool call's arguments object, the logprobs
    list and a token's bytes, unknown keys' values) show in no snapshot or summary."""

    def token(text: str) -> dict[str, Any]:
        return {"token": text, "logprob": -1.0, "bytes": list(text.encode())}

    function = {"name": "f", "arguments": {"q": "a"}}
    call = {"index": 0, "id": "t", "type": "function", "function": function}
    delta = {"content": [{"type": "text", "text": "Hi"}], "tool_calls": [call], "zz": {"n": [1]}}
    logprobs = {"content": [{**token("Hi"), "top_logprobs": [token("Hi")]}]}
    chunks = [
        target.loads(json.dumps(chunk(choice(delta, logprobs=logprobs), surprise={"x": [1]}))),
        target.loads(json.dumps(chunk(choice({"content": [{"type": "text", "text": "!"}]})))),
    ]
    accumulator = target.ChunkAccumulator()
    accumulator.add(chunks[0])
    accumulator.add(chunks[1])
    snapshot, summary = target.dumps(accumulator.snapshot()), accumulator.summary()
    assert summary.choices[0].text == "Hi!"
    assert summary.choices[0].tool_calls[0].arguments == '{"q":"a"}'
    written = [target.dumps(c) for c in chunks]

    for one in chunks:
        parts = nested(one, "choices", 0, "delta", "content")
        parts.append(copy.copy(parts[0]))
        if isinstance(parts[0], dict):
            parts[0]["text"] = "changed"
    nested(chunks[0], "choices", 0, "delta", "tool_calls", 0, "function", "arguments")["q"] = "b"
    tokens = nested(chunks[0], "choices", 0, "logprobs", "content")
    nested(tokens[0], "bytes").append(0)
    nested(tokens[0], "top_logprobs").append(copy.copy(nested(tokens[0], "top_logprobs", 0)))
    tokens.append(copy.copy(tokens[0]))
    nested(chunks[0], "choices", 0, "delta", "zz")["n"].append(2)
    nested(chunks[0], "surprise")["x"].append(2)
    assert [target.dumps(c) for c in chunks] != written  # the chunks did change

    assert target.dumps(accumulator.snapshot()) == snapshot
    assert accumulator.summary() == summary


def test_add_refuses_what_is_not_a_chunk_of_its_module(target: ModuleType) -> None:
    """A dict is a chunk of the TypedDicts module only; in the others `add` says what it
    takes instead of failing on a method a dict lacks."""
    data = chunk(choice({"content": "Hi"}))
    refused: list[Any] = ["Hi", ["a", "list"], None, b"{}", 5]
    if target is not TARGETS["typeddicts"]:
        refused += [data, types.MappingProxyType(data)]
    accumulator = target.ChunkAccumulator()
    for value in refused:
        with pytest.raises(TypeError, match="add takes a chunk of its module") as caught:
            accumulator.add(value)
        assert f"not a {type(value).__name__}: " in str(caught.value)
        assert "loads(text)" in str(caught.value)
    assert ("loads(json.dumps(data))" in str(caught.value)) is (target is not TARGETS["typeddicts"])
    accumulator.add(target.loads(json.dumps(data)))
    assert accumulator.chunks == 1, "nothing refused was counted"
    assert (
        json.loads(target.dumps(accumulator.result()))["choices"][0]["message"]["content"] == "Hi"
    )
