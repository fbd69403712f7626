"""A stream written in any dialect reads back to the same summary (issue 31): random
streams that mix every spelling the spec declares (reasoning in each of its fields and
in Mistral's parts, reports in several places, repeated choice indexes, function and
custom tool calls, parts of unknown types, an empty or absent finish reason), and
Harmony markup with and without arguments, in all four targets."""

from __future__ import annotations

import json
from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers.support import TARGETS, count_examples
from tests.runtime.chat.test_meanings import DIALECTS, body, read_back, summary_of

MODULES = list(TARGETS.values())
# No "<" in texts: a text that holds a tag is written broken in the think_tags dialect
# (tests/runtime/chat/test_meanings_regressions.py, item 14), which is a change of text by design.
TEXT = st.text(st.sampled_from('ab \n2é😀"\\'), max_size=6)
INDEX = st.sampled_from([0, 0, 1])


def text_part(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


OTHER_PART = st.sampled_from([{"type": "reference", "reference_ids": [1]}, {"type": "x", "y": 1}])


@st.composite
def tool_call(draw: st.DrawFn) -> dict[str, Any]:
    index = draw(st.sampled_from([0, 1]))
    if draw(st.booleans()):
        return {"index": index, "id": f"c{index}", "type": "function",
                "function": {"name": f"f{index}", "arguments": draw(TEXT)}}  # fmt: skip
    return {"index": index, "id": f"x{index}", "type": "custom",
            "custom": {"name": "patch", "input": draw(TEXT)}}  # fmt: skip


@st.composite
def delta(draw: st.DrawFn) -> dict[str, Any]:
    """A delta; its reasoning spelled in any of its fields at once, with one text, as
    servers that send two spellings do (OpenRouter, MLX): which of two different texts
    wins is the precedence's choice, and a writer in tags has no precedence to keep."""
    out: dict[str, Any] = {}
    reasoning = draw(TEXT)
    spellings = draw(st.sets(st.sampled_from(
        ["reasoning", "reasoning_content", "details", "summary", "thinking", "thinking+"]
    ), max_size=2))  # fmt: skip
    for key in ("reasoning", "reasoning_content"):
        if key in spellings:
            out[key] = reasoning
    for kind, key in (("details", "text"), ("summary", "summary")):
        if kind in spellings:  # indexed in stream order by `numbered`
            out["reasoning_details"] = [{"type": f"reasoning.{key}", key: reasoning}]
    parts: list[Any] = []
    if {"thinking", "thinking+"} & spellings:
        thinking = {"type": "thinking", "thinking": [text_part(reasoning)]}
        parts.append({**thinking, "closed": True} if "thinking+" in spellings else thinking)
    content = draw(st.sampled_from(["none", "text", "parts", "null"]))
    if content == "parts" or parts:
        parts += draw(st.lists(st.one_of(TEXT.map(text_part), OTHER_PART), max_size=2))
        out["content"] = parts
    elif content == "text":
        out["content"] = draw(TEXT)
    elif content == "null":
        out["content"] = None
    if draw(st.booleans()):
        out["refusal"] = draw(TEXT)
    calls = draw(st.sampled_from(["none", "null", "empty", "some"]))
    if calls != "none":
        out["tool_calls"] = {"null": None, "empty": []}.get(calls) or draw(
            st.lists(tool_call(), min_size=1, max_size=2)
        )
    return out


def report(prompt: int, completion: int) -> dict[str, Any]:
    return {"prompt_tokens": prompt, "completion_tokens": completion,
            "total_tokens": prompt + completion, "cost": completion / 100}  # fmt: skip


@st.composite
def chunk(draw: st.DrawFn) -> dict[str, Any]:
    choices: list[dict[str, Any]] = []
    for _ in range(draw(st.integers(0, 2))):
        index = draw(INDEX)
        entry: dict[str, Any] = {"index": index, "delta": draw(delta())}
        if any(c["index"] == index for c in choices):
            # A repeated index carries more text and calls, no second spelling of
            # reasoning: which of two spellings in two entries wins is not defined.
            entry["delta"] = {k: v for k, v in entry["delta"].items()
                              if k in ("content", "tool_calls") and not isinstance(v, list)}  # fmt: skip
        finish = draw(st.sampled_from(["absent", "", None, "stop"]))
        if finish != "absent":
            entry["finish_reason"] = finish
        if draw(st.integers(0, 9)) == 0:
            entry["usage"] = report(draw(st.integers(0, 9)), draw(st.integers(0, 9)))
        choices.append(entry)
    out: dict[str, Any] = {"id": "c", "object": "chat.completion.chunk", "created": 1,
                           "model": "m", "choices": choices}  # fmt: skip
    place = draw(st.sampled_from(["none"] * 6 + ["usage", "x_groq", "x_groq id"]))
    counts = report(draw(st.integers(0, 9)), draw(st.integers(0, 9)))
    if place == "usage":
        out["usage"] = counts
    elif place == "x_groq":
        out["x_groq"] = {"id": "r", "usage": counts}
    elif place == "x_groq id":
        out["x_groq"] = {"id": "r"}
    return out


def numbered(stream: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The stream with its reasoning details indexed as OpenRouter indexes them: a new
    item, with the next index, wherever the type changes in a choice."""
    items: dict[int, tuple[str, int]] = {}
    for data in stream:
        for entry in data["choices"]:
            for detail in entry["delta"].get("reasoning_details") or ():
                kind, at = items.get(entry["index"], (detail["type"], 0))
                if kind != detail["type"]:
                    kind, at = detail["type"], at + 1
                items[entry["index"]] = (kind, at)
                detail["index"] = at
    return stream


def assert_every_dialect_reads_back(module: ModuleType, stream: list[Any], **tags: Any) -> None:
    summary = summary_of(module, stream, **tags)
    for dialect in DIALECTS:
        chunks = module.iter_chunks([body(stream)])
        written = b"".join(module.iter_sse(chunks, dialect=dialect, **tags))
        assert read_back(module, written, dialect) == summary, dialect


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(stream=st.lists(chunk(), min_size=1, max_size=6))
def test_any_stream_reads_back_the_same_in_every_dialect(
    module: ModuleType, stream: list[dict[str, Any]]
) -> None:
    count_examples("dialect round trip")
    assert_every_dialect_reads_back(module, numbered(stream))


HARMONY = st.lists(
    st.one_of(
        TEXT.map(lambda t: f"<|channel|>analysis<|message|>{t}<|end|>"),
        TEXT.map(lambda t: f"<|start|>assistant<|channel|>final<|message|>{t}<|return|>"),
        TEXT.map(lambda t: f"<|channel|>commentary to=functions.f<|message|>{t}<|call|>"),
        TEXT,
    ),
    min_size=1,
    max_size=4,
)


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(markup=HARMONY, size=st.integers(1, 9), calls=st.sampled_from([None, [], "absent"]))
def test_harmony_streams_read_back_the_same_in_every_dialect(
    module: ModuleType, markup: list[str], size: int, calls: Any
) -> None:
    """Markup cut anywhere, calls with and without arguments, beside a `tool_calls`
    key that is null, empty or absent."""
    count_examples("harmony dialect round trip")
    text = "".join(markup)
    deltas = [{"content": text[i : i + size]} for i in range(0, len(text), size)]
    if calls != "absent":
        deltas = [{**d, "tool_calls": calls} for d in deltas]
    stream = [{"id": "c", "model": "m", "choices": [{"index": 0, "delta": d}]} for d in deltas]
    stream.append({"id": "c", "model": "m",
                   "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})  # fmt: skip
    summary = summary_of(module, stream, think_tags="harmony")
    for dialect in DIALECTS:
        chunks = module.iter_chunks([body(stream)])
        written = b"".join(module.iter_sse(chunks, dialect=dialect, think_tags="harmony"))
        assert b"<|" not in written
        assert read_back(module, written, dialect) == summary, (dialect, json.dumps(text))
