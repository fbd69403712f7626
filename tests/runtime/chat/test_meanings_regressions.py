"""Meanings that never lie (issue 31): what the meanings reader, the accumulator's
summary and the dialect writers say is exactly what the stream said, in all four
targets. Each test is named after the defect it holds fixed (the issue's numbers)."""

from __future__ import annotations

import asyncio
import json
from types import ModuleType
from typing import Any

import pytest

from tests.helpers.support import FIXTURE_STREAMS, TARGETS, runtime
from tests.runtime.chat.test_meanings import (
    DIALECTS,
    THINK,
    added_up,
    body,
    chunk,
    events_of,
    finish,
    read_back,
    summary_of,
    summary_texts,
    usage,
)

MODULES = list(TARGETS.values())
by_module = pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)


def parts_of(module: ModuleType, stream: list[Any], **options: Any) -> list[Any]:
    return list(module.iter_parts([body(stream)], **options))


def aparts_of(module: ModuleType, stream: list[Any], **options: Any) -> list[Any]:
    async def read() -> list[Any]:
        async def pieces() -> Any:
            yield body(stream)

        return [part async for part in module.aiter_parts(pieces(), **options)]

    return asyncio.run(read())


def written(module: ModuleType, stream: list[Any], dialect: str, **options: Any) -> bytes:
    return b"".join(module.iter_sse(module.iter_chunks([body(stream)]), dialect=dialect, **options))


def awritten(module: ModuleType, stream: list[Any], dialect: str, **options: Any) -> bytes:
    async def write() -> bytes:
        async def pieces() -> Any:
            yield body(stream)

        events = module.aiter_sse(module.aiter_chunks(pieces()), dialect=dialect, **options)
        return b"".join([event async for event in events])

    return asyncio.run(write())


def choice(index: int, delta: dict[str, Any], **more: Any) -> dict[str, Any]:
    return {"index": index, "delta": delta, **more}


@by_module
def test_1_no_usage_object_is_no_report(module: ModuleType) -> None:
    """Groq's first chunk has `x_groq` without `usage`: no report, and no `usage: {}`
    written; its last chunk's `x_groq.usage` is one."""
    stream = [
        chunk({"role": "assistant", "content": ""}, x_groq={"id": "req_1"}),
        chunk({"content": "Hi"}),
        chunk({}, x_groq={"id": "req_1", "usage": usage()}),
    ]
    for parts in (parts_of(module, stream), aparts_of(module, stream)):
        reports = [p.usage for p in parts if p.kind == "usage"]
        assert [r.total_tokens for r in reports] == [15]
    for dialect in DIALECTS:
        out = written(module, stream, dialect)
        assert out == awritten(module, stream, dialect), "async alike"
        events = events_of(out)
        assert "usage" not in events[0] and "usage" not in events[1], dialect
        assert events[2]["usage"]["total_tokens"] == 15


@by_module
@pytest.mark.parametrize("calls", [None, []])
def test_2_harmony_calls_written_beside_an_empty_tool_calls_key(
    module: ModuleType, calls: Any
) -> None:
    markup = 'x<|channel|>commentary to=functions.f<|message|>{"a":1}<|call|>'
    stream = [
        chunk({"content": markup[i : i + 9], "tool_calls": calls}) for i in range(0, len(markup), 9)
    ]
    stream.append(finish("tool_calls"))
    summary = summary_of(module, stream, think_tags="harmony")
    assert [(c.name, c.arguments) for c in summary.choices[0].tool_calls] == [("f", '{"a":1}')]
    out = written(module, stream, "reasoning", think_tags="harmony")
    assert read_back(module, out, "reasoning") == summary


@by_module
def test_3_a_moved_report_keeps_its_keys(module: ModuleType) -> None:
    report = usage(cost=0.5, queue_time=0.1)
    stream = [chunk({"content": "A"}), {**chunk(), "choices": [choice(0, {}, usage=report)]}]
    assert summary_of(module, stream).usage.cost_usd == 0.5
    for dialect in DIALECTS:
        out = written(module, stream, dialect)
        assert events_of(out)[-1]["usage"] == report, dialect
        assert read_back(module, out, dialect).usage.cost_usd == 0.5


@by_module
def test_4_an_empty_finish_reason_is_no_finish(module: ModuleType) -> None:
    stream = [
        {**chunk(), "choices": [choice(0, {"content": piece}, finish_reason="")]}
        for piece in ("<thi", "nk>Hm</thi", "nk>Yes")
    ]
    parts = parts_of(module, stream, think_tags=THINK)
    assert [p.kind for p in parts if p.kind == "finish"] == []
    assert added_up(parts) == {(0, "reasoning"): "Hm", (0, "text"): "Yes"}
    [summed] = summary_of(module, stream, think_tags=THINK).choices
    assert (summed.reasoning, summed.text, summed.finish_reason) == ("Hm", "Yes", None)
    reasoning = [chunk({"reasoning": p}) for p in ("a", "b")] + [chunk({"content": "c"})]
    reasoning = [{**c, "choices": [{**c["choices"][0], "finish_reason": ""}]} for c in reasoning]
    contents = [
        d.get("content")
        for e in events_of(written(module, reasoning, "think_tags"))
        for d in [e["choices"][0]["delta"]]
    ]
    assert contents == ["<think>a", "b", "</think>c"], "one block, opened once"


@by_module
def test_5_a_held_back_tag_prefix_comes_out_at_the_end(module: ModuleType) -> None:
    """A stream cut off (no finish_reason) after a piece that ends like a tag."""
    stream = [chunk({"content": "<think>Hm</think>It is 4 <"}), chunk({"content": "th"})]
    accumulator = module.ChunkAccumulator(think_tags=THINK)
    for text in stream:
        accumulator.add(module.loads(json.dumps(text)))
    assert accumulator.summary().choices[0].text == "It is 4 ", "held back mid-stream"
    accumulator.result()
    assert accumulator.summary().choices[0].text == "It is 4 <th", "the end says it was text"
    out = written(module, stream, "reasoning", think_tags=THINK)
    assert read_back(module, out, "reasoning").choices[0].text == "It is 4 <th"
    assert out == awritten(module, stream, "reasoning", think_tags=THINK), "async alike"
    for parts in (
        parts_of(module, stream, think_tags=THINK),
        aparts_of(module, stream, think_tags=THINK),
    ):
        assert added_up(parts)[(0, "text")] == "It is 4 <th"


@by_module
def test_6_the_last_report_wins_wherever_it_is(module: ModuleType) -> None:
    early, late = usage(), usage(completion_tokens=9, total_tokens=19)
    stream = [chunk({"content": "A"}, usage=early),
              {**chunk(), "choices": [choice(0, {}, usage=late)]}]  # fmt: skip
    assert summary_of(module, stream).usage.completion_tokens == 9
    reports = [p.usage for p in parts_of(module, stream) if p.kind == "usage"]
    assert reports[-1].completion_tokens == 9
    for dialect in DIALECTS:
        assert (
            read_back(module, written(module, stream, dialect), dialect).usage.completion_tokens
            == 9
        )


@by_module
def test_7_custom_tool_calls_have_a_name_and_input(module: ModuleType) -> None:
    def call(**fields: Any) -> dict[str, Any]:
        return chunk({"tool_calls": [{"index": 0, **fields}]})

    stream = [
        call(id="c1", type="custom", custom={"name": "apply_patch", "input": "*** Begin"}),
        call(custom={"input": "\n*** End"}),
        finish("tool_calls"),
    ]
    [summed] = summary_of(module, stream).choices
    assert [(c.id, c.name, c.arguments) for c in summed.tool_calls] == [
        ("c1", "apply_patch", "*** Begin\n*** End")
    ]
    calls = [p for p in parts_of(module, stream) if p.kind == "tool_call"]
    assert "".join(p.text for p in calls) == "*** Begin\n*** End"
    assert calls[0].tool_call.name == "apply_patch"


@by_module
def test_8_parts_of_other_kinds_are_written(module: ModuleType) -> None:
    reference = {"type": "reference", "reference_ids": [1, 2]}
    thinking = {"type": "thinking", "thinking": [{"type": "text", "text": "Hm"}], "closed": True}
    stream = [
        chunk({"content": [thinking]}),
        chunk({"content": [{"type": "text", "text": "A"}, reference]}),
    ]
    summary = summary_of(module, stream)
    for dialect in DIALECTS:
        out = written(module, stream, dialect)
        assert b'"reference_ids":[1,2]' in out and b'"closed":true' in out, dialect
        assert read_back(module, out, dialect) == summary, dialect


@by_module
def test_9_a_repeated_choice_index_is_written_once(module: ModuleType) -> None:
    entries = [choice(0, {"reasoning": "a", "content": "x"}), choice(0, {"reasoning": "b"})]
    stream = [{**chunk(), "choices": entries}]
    summary = summary_of(module, stream)
    assert (summary.choices[0].reasoning, summary.choices[0].text) == ("ab", "x")
    for dialect in DIALECTS:
        assert read_back(module, written(module, stream, dialect), dialect) == summary


@by_module
def test_10_a_harmony_call_without_arguments(module: ModuleType) -> None:
    stream = [chunk({"content": "<|channel|>commentary to=functions.now<|message|><|call|>"}),
              finish("tool_calls")]  # fmt: skip
    summary = summary_of(module, stream, think_tags="harmony")
    assert [(c.name, c.arguments) for c in summary.choices[0].tool_calls] == [("now", "")]
    calls = [p for p in parts_of(module, stream, think_tags="harmony") if p.kind == "tool_call"]
    assert [(p.tool_call.name, p.text) for p in calls] == [("now", "")]
    out = written(module, stream, "reasoning", think_tags="harmony")
    assert read_back(module, out, "reasoning") == summary


@by_module
def test_11_mixed_reasoning_details_in_stream_order(module: ModuleType) -> None:
    details = [{"type": "reasoning.summary", "summary": "S1 ", "index": 0},
               {"type": "reasoning.text", "text": "T1 ", "index": 1}]  # fmt: skip
    later = {"type": "reasoning.summary", "summary": "S2", "index": 2}
    stream = [chunk({"reasoning_details": details}), chunk({"reasoning_details": [later]})]
    assert summary_of(module, stream).choices[0].reasoning == "S1 T1 S2"
    assert added_up(parts_of(module, stream))[(0, "reasoning")] == "S1 T1 S2"


@by_module
def test_12_surrogate_halves_split_across_chunks_are_joined(module: ModuleType) -> None:
    halves = ['{"id":"c","model":"m","choices":[{"index":0,"delta":{"content":"\\ud83d"}}]}',
              '{"id":"c","model":"m","choices":[{"index":0,"delta":{"content":"\\ude00!"}}]}']  # fmt: skip
    plain = summary_of(module, halves).choices[0].text
    tagged = summary_of(module, halves, think_tags=THINK).choices[0].text
    respelled = summary_of(module, [*halves, json.dumps(chunk({"reasoning": "r"}))])
    assert plain == tagged == respelled.choices[0].text == "\U0001f600!"


def test_13_the_captured_mistral_streams_accumulate_to_a_thinking_and_a_text_part() -> None:
    """A non-streamed Mistral response holds one thinking part with the whole reasoning
    and one text part with the whole answer: so does the accumulated stream."""
    streams = [s for s in FIXTURE_STREAMS if s.name.startswith("mistral__magistral")]
    assert streams
    for module in MODULES:
        for stream in streams:
            accumulator = module.ChunkAccumulator()
            for _, text in stream.chunks:
                accumulator.add(module.loads(text))
            completion = json.loads(module.dumps(accumulator.result()))
            content = completion["choices"][0]["message"]["content"]
            [summed] = accumulator.summary().choices
            assert content == [
                {"type": "thinking", "thinking": [{"type": "text", "text": summed.reasoning}]},
                {"type": "text", "text": summed.text},
            ], stream.name


@by_module
def test_13_adjacent_parts_of_one_kind_are_joined_others_kept(module: ModuleType) -> None:
    reference = {"type": "reference", "reference_ids": [1]}
    signed = {"type": "thinking", "thinking": [{"type": "text", "text": "c"}], "signature": "s"}
    stream = [
        chunk({"content": [{"type": "text", "text": "a"}]}),
        chunk({"content": [{"type": "text", "text": ""}, {"type": "text", "text": "b"}]}),
        chunk({"content": [reference]}),
        chunk({"content": [signed]}),
        chunk({"content": "d"}),
        chunk({"content": "e"}),
    ]
    accumulator = module.ChunkAccumulator()
    for text in stream:
        accumulator.add(module.loads(json.dumps(text)))
    content = json.loads(module.dumps(accumulator.result()))["choices"][0]["message"]["content"]
    assert content == [{"type": "text", "text": "ab"}, reference, signed,
                       {"type": "text", "text": "de"}]  # fmt: skip


@by_module
def test_14_the_think_tags_dialect_keeps_tags_in_texts_from_being_read_as_tags(
    module: ModuleType,
) -> None:
    """Reasoning that holds the close tag, or an answer that holds the open tag (whole or
    split across chunks), would change meaning when read back between tags: the writer
    breaks such a tag with a zero-width space (docs/meanings.md)."""
    stream = [chunk({"reasoning": "<think>a </thi"}), chunk({"reasoning": "nk> b"}),
              chunk({"content": "see <think> and </think>"}), finish()]  # fmt: skip
    [summed] = summary_of(module, stream).choices
    assert summed.reasoning == "<think>a </think> b", "the field is read as it came"
    out = written(module, stream, "think_tags")
    [back] = read_back(module, out, "think_tags").choices
    assert back.reasoning.replace("\u200b", "") == summed.reasoning
    assert back.text.replace("\u200b", "") == summed.text
    assert "</think>" not in back.reasoning and "<think>" not in back.text


@by_module
def test_finish_parts_and_summary_agree_on_the_summary_s_texts(module: ModuleType) -> None:
    stream = [chunk({"content": "a"}), finish()]
    assert summary_texts(summary_of(module, stream)) == added_up(parts_of(module, stream))


SEARCH_ARGUMENTS = '{"query": "pydantic ai github"}'
SEARCH_RESULTS = {
    "results": [
        {
            "title": "Pydantic AI",
            "url": "https://github.com/pydantic/pydantic-ai",
            "content": "Agent framework.",
            "score": 0.91,
        }
    ]
}


def compound_stream() -> list[dict[str, Any]]:
    """A stream as Groq's compound systems send one: each server tool first with its
    arguments, then again (the same index) with its output and results; here a client
    tool call beside them, which stays the client's."""
    search = {"index": 0, "type": "search", "arguments": SEARCH_ARGUMENTS}
    code = {"index": 1, "type": "python", "arguments": '{"code": "print(2 + 2)"}'}
    searched = {**search, "output": "Title: Pydantic AI", "search_results": SEARCH_RESULTS}
    call = {"index": 0, "id": "t1", "type": "function",
            "function": {"name": "save", "arguments": "{}"}}  # fmt: skip
    return [
        chunk({"role": "assistant", "reasoning": "Look it up."}, x_groq={"id": "req_1"}),
        chunk({"executed_tools": [search, code]}),
        chunk({"reasoning": " Found it."}),
        chunk({"executed_tools": [searched]}),
        chunk({"executed_tools": [{"index": 1, "type": "python", "output": "4\n"}]}),
        chunk({"content": "It is on GitHub.", "tool_calls": [call]}),
        finish("tool_calls"),
    ]


@by_module
def test_15_server_tools_are_their_own_kind_in_the_summary(module: ModuleType) -> None:
    """Groq's `executed_tools` read as the tools the server ran, one per index with
    everything its entries said; the client's tool calls are only its own."""
    stream = compound_stream()
    [summed] = summary_of(module, stream).choices
    assert [(t.index, t.name, t.arguments, t.output) for t in summed.server_tools] == [
        (0, "search", SEARCH_ARGUMENTS, "Title: Pydantic AI"),
        (1, "python", '{"code": "print(2 + 2)"}', "4\n"),
    ]
    assert summed.server_tools[0].source["search_results"] == SEARCH_RESULTS
    assert summed.server_tools[1].source["type"] == "python"
    assert [(c.id, c.name) for c in summed.tool_calls] == [("t1", "save")]
    assert (summed.reasoning, summed.text) == ("Look it up. Found it.", "It is on GitHub.")
    before_output = summary_of(module, stream[:2]).choices[0].server_tools
    assert [(t.name, t.output) for t in before_output] == [("search", None), ("python", None)]
    only_tools = summary_of(module, stream[:5]).choices[0]
    assert only_tools.tool_calls == () and len(only_tools.server_tools) == 2


@by_module
def test_15_server_tool_parts_come_one_per_entry_as_it_came(module: ModuleType) -> None:
    stream = compound_stream()
    for parts in (parts_of(module, stream), aparts_of(module, stream)):
        kinds = [p.kind for p in parts]
        assert kinds == ["start", "reasoning", "server_tool", "server_tool", "reasoning",
                         "server_tool", "server_tool", "text", "tool_call", "finish"]  # fmt: skip
        tools = [p for p in parts if p.kind == "server_tool"]
        assert [(p.choice, p.text) for p in tools] == [(0, "")] * 4
        assert [(p.server_tool.index, p.server_tool.name, p.server_tool.output) for p in tools] == [
            (0, "search", None),
            (1, "python", None),
            (0, "search", "Title: Pydantic AI"),
            (1, "python", "4\n"),
        ]
        assert tools[0].server_tool.arguments == SEARCH_ARGUMENTS
        assert tools[3].server_tool.arguments == "", "this entry sent only the output"
        assert tools[2].server_tool.source["search_results"] == SEARCH_RESULTS
        assert tools[0].chunk is tools[1].chunk, "both entries of one chunk"
        assert all(p.tool_call is None for p in tools)
        assert [p.tool_call.name for p in parts if p.kind == "tool_call"] == ["save"]
        assert all(p.server_tool is None for p in parts if p.kind != "server_tool")


@by_module
def test_15_server_tools_re_spelled_read_back_the_same(module: ModuleType) -> None:
    """The writers leave `executed_tools` as it came, in every dialect."""
    stream = compound_stream()
    summary = summary_of(module, stream)
    sent = [c["choices"][0]["delta"].get("executed_tools") for c in stream]
    for dialect in DIALECTS:
        out = written(module, stream, dialect)
        assert read_back(module, out, dialect) == summary, dialect
        deltas = [e["choices"][0]["delta"] for e in events_of(out)]
        assert [d.get("executed_tools") for d in deltas] == sent, dialect


@by_module
def test_15_openrouter_s_server_tool_use_is_counted(module: ModuleType) -> None:
    """OpenRouter's `server_tool_use_details`: the tool calls it ran, else its web
    searches; None where a report does not say."""
    both = {"web_search_requests": 1, "tool_calls_requested": 3, "tool_calls_executed": 2}
    cases = [
        (both, 2),
        ({"web_search_requests": 4}, 4),
        (None, None),
    ]
    for details, expected in cases:
        report = usage() if details is None else usage(server_tool_use_details=details)
        stream = [chunk({"content": "A"}), chunk(usage=report)]
        assert summary_of(module, stream).usage.server_tool_calls == expected, details
        for parts in (parts_of(module, stream), aparts_of(module, stream)):
            [part] = [p for p in parts if p.kind == "usage"]
            assert part.usage.server_tool_calls == expected
        assert summary_of(module, stream).choices[0].server_tools == ()
        for dialect in DIALECTS:
            out = written(module, stream, dialect)
            assert read_back(module, out, dialect).usage.server_tool_calls == expected
            assert events_of(out)[-1]["usage"] == report, "the report as it came"


@by_module
def test_15_server_tools_spelled_elsewhere_in_a_choice_are_read(module: ModuleType) -> None:
    """The reader reads server tools wherever a spelling puts them: deeper in the
    delta, or in a list of the choice itself; a higher tier wins in a chunk."""
    items = (("name", ("tool",)), ("output", ("result",)))
    deep = module._Spelling("server_tools", ("delta", "plan", "runs", None), 10, items=items)
    flat = module._Spelling("server_tools", ("runs", None), items=items)
    readings = module._Readings((deep, flat), None)
    run = {"tool": "search", "result": {"hits": 2}}
    cases: list[tuple[dict[str, Any], list[Any]]] = [
        ({"delta": {"plan": {"runs": [run]}}}, [("search", '{"hits":2}')]),
        ({"runs": [run, {"tool": "fetch"}]}, [("search", '{"hits":2}'), ("fetch", None)]),
        ({"delta": {"plan": {"runs": [run]}}, "runs": [{"tool": "fetch"}]}, [("search", '{"hits":2}')]),
        ({"delta": "not an object", "runs": []}, []),
    ]  # fmt: skip
    for entry, expected in cases:
        data = {"choices": [{"index": 0, **entry}]}
        out: list[Any] = []
        runtime(module, "_Reader")(readings, None, keeps=False).read(data, data, out)
        assert [(p.server_tool.name, p.server_tool.output) for p in out] == expected, entry
