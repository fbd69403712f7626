"""Meanings across dialects (issue 23): every module reads reasoning, text, refusal,
tool calls, finish reason, usage, cost and citations the same way from any backend's
spelling, by the spec's `means:`. Each captured stream is checked against the meanings
written down for it in tests/fixtures/chat/meanings/, in all four targets."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.helpers.project import copy_project, run_generator
from tests.helpers.support import FIXTURE_STREAMS, TARGETS, load_module, runtime

MEANINGS = Path(__file__).resolve().parents[2] / "fixtures" / "chat" / "meanings"
MODULES = list(TARGETS.values())
THINK = ("<think>", "</think>")


def summary_of(module: ModuleType, payloads: Iterable[str | dict[str, Any]], **options: Any) -> Any:
    accumulator = module.ChunkAccumulator(**options)
    for payload in payloads:
        text = payload if isinstance(payload, str) else json.dumps(payload)
        accumulator.add(module.loads(text))
    return accumulator.summary()


def plain(summary: Any) -> dict[str, Any]:
    """A summary as the fixture files write it (without the opaque reasoning items, and
    the server tools without the items that carried them)."""
    data: dict[str, Any] = json.loads(json.dumps(dataclasses.asdict(summary)))
    for choice in data["choices"]:
        del choice["reasoning_items"]
        for tool in choice["server_tools"]:
            del tool["source"]
    return data


def chunk(delta: dict[str, Any] | None = None, **top: Any) -> dict[str, Any]:
    choices = [] if delta is None else [{"index": 0, "delta": delta}]
    return {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
            "choices": choices, **top}  # fmt: skip


def finish(reason: str = "stop") -> dict[str, Any]:
    return {**chunk({}), "choices": [{"index": 0, "delta": {}, "finish_reason": reason}]}


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
@pytest.mark.parametrize("stream", FIXTURE_STREAMS, ids=lambda s: s.name)
def test_a_captured_stream_reads_as_its_meanings_were_written_down(
    module: ModuleType, stream: Any
) -> None:
    expected = json.loads((MEANINGS / f"{stream.name}.json").read_text(encoding="utf-8"))
    got = plain(summary_of(module, (text for _, text in stream.chunks)))
    assert got == {k: v for k, v in expected.items() if k != "stream"}


def test_every_captured_stream_has_its_meanings_written_down() -> None:
    assert sorted(p.stem for p in MEANINGS.glob("*.json")) == [s.name for s in FIXTURE_STREAMS]


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_two_spellings_of_one_text_come_once(module: ModuleType) -> None:
    """OpenRouter sends reasoning in `reasoning` and `reasoning_details`, MLX in
    `reasoning_content` and `reasoning`: the text is read once, from the spelling of
    higher precedence, even when only one of them carries a piece."""
    details = [{"type": "reasoning.text", "text": "Two ", "index": 0}]
    openrouter = [
        chunk({"reasoning": "Two ", "reasoning_details": details}),
        chunk({"reasoning": "words.", "reasoning_details": [{**details[0], "text": "words."}]}),
        chunk({"content": "Yes."}),
    ]
    mlx = [chunk({"reasoning_content": p, "reasoning": p}) for p in ("Two ", "words.")]
    for stream in (openrouter, mlx):
        assert summary_of(module, stream).choices[0].reasoning == "Two words."
    renamed = [chunk({"reasoning": "old "}), chunk({"reasoning_content": "new"})]
    assert summary_of(module, renamed).choices[0].reasoning == "old new", "chunk by chunk"


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_the_signature_and_encrypted_reasoning_are_kept_in_order(module: ModuleType) -> None:
    text = {"type": "reasoning.text", "text": "Hm.", "signature": "", "index": 0}
    signed = {"type": "reasoning.text", "signature": "sig-1", "index": 0}
    sealed = {"type": "reasoning.encrypted", "data": "blob", "index": 1}
    stream = [chunk({"reasoning_details": [text]}), chunk({"content": "A"}),
              chunk({"reasoning_details": [signed]}), chunk({"reasoning_details": [sealed]})]  # fmt: skip
    [choice] = summary_of(module, stream).choices
    assert choice.reasoning == "Hm." and choice.text == "A"
    assert [(i.kind, i.value) for i in choice.reasoning_items] == [
        ("signature", "sig-1"),
        ("encrypted", "blob"),
    ]
    assert choice.reasoning_items[0].source == {**text, "signature": "sig-1"}
    assert choice.reasoning_items[1].source == sealed


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_mistral_thinking_parts_and_text(module: ModuleType) -> None:
    thinking = {"type": "thinking", "thinking": [{"type": "text", "text": "Let me see."}]}
    stream = [chunk({"content": [thinking]}), chunk({"content": [{"type": "text", "text": "4"}]}),
              chunk({"content": "\n"})]  # fmt: skip
    [choice] = summary_of(module, stream).choices
    assert (choice.reasoning, choice.text) == ("Let me see.", "4\n")


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_a_summary_mid_stream_is_a_start_of_the_last(module: ModuleType) -> None:
    [stream] = [
        s for s in FIXTURE_STREAMS if s.name == "deepseek__reasoner-thinking-cache-hit-miss"
    ]
    accumulator = module.ChunkAccumulator()
    seen = []
    for _, text in stream.chunks:
        accumulator.add(module.loads(text))
        [choice] = accumulator.summary().choices
        seen.append((choice.reasoning, choice.text))
    last_reasoning, last_text = seen[-1]
    assert last_reasoning and last_text
    for reasoning, text in seen:
        assert last_reasoning.startswith(reasoning) and last_text.startswith(text)
    assert len(set(seen)) > len(seen) // 2, "it grows as the chunks come"


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_think_tags_split_across_chunks(module: ModuleType) -> None:
    pieces = ["<thi", "nk>Let me", " think.</th", "ink>", "The answer", " is <", "b>4</b>."]
    accumulator = module.ChunkAccumulator(think_tags=THINK)
    for piece in pieces:
        accumulator.add(module.loads(json.dumps(chunk({"content": piece}))))
        [choice] = accumulator.summary().choices
        assert "<thi" not in choice.text and "</" not in choice.reasoning, "held back"
    assert (choice.reasoning, choice.text) == ("Let me think.", "The answer is <b>4</b>.")
    assert (
        summary_of(module, [chunk({"content": "".join(pieces)})])
        .choices[0]
        .text.startswith("<think>")
    ), "off by default: the tags are text"


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_think_tags_a_stream_that_starts_inside_reasoning(module: ModuleType) -> None:
    stream = [chunk({"content": "Hm, 2+2"}), chunk({"content": "</think>\n\n4"}), finish()]
    [choice] = summary_of(module, stream, think_tags=("", "</think>")).choices
    assert (choice.reasoning, choice.text) == ("Hm, 2+2", "\n\n4")


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_think_tags_a_cut_tag_is_text_once_the_choice_ends(module: ModuleType) -> None:
    stream = [chunk({"content": "a <thi"})]
    assert summary_of(module, stream, think_tags=THINK).choices[0].text == "a "
    ended = summary_of(module, [*stream, finish()], think_tags=THINK)
    assert ended.choices[0].text == "a <thi", "nothing lost"


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
@pytest.mark.parametrize("tags", [("<think>",), ("<think>", ""), "<think>", ["<a>", "</a>"]])
def test_think_tags_that_are_not_two_tags_are_refused(module: ModuleType, tags: Any) -> None:
    with pytest.raises(ValueError, match="think_tags is"):
        module.ChunkAccumulator(think_tags=tags)
    with pytest.raises(ValueError, match="think_tags is"):
        module.iter_parts([b""], think_tags=tags)  # at the call, not at the first part


def usage(**counts: Any) -> dict[str, Any]:
    return {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15, **counts}


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
@pytest.mark.parametrize(
    ("stream", "expected"),
    [
        # The last report wins; cumulative reports are never summed (Perplexity, vLLM).
        ([chunk(usage=usage()), chunk(usage=usage(completion_tokens=7, total_tokens=17))],
         {"completion_tokens": 7, "total_tokens": 17}),
        # Groq's second copy is the same report.
        ([chunk(usage=usage(), x_groq={"id": "r", "usage": usage()})], {"completion_tokens": 5}),
        # On the choice (Moonshot).
        ([{**chunk(), "choices": [{"index": 0, "delta": {}, "usage": usage()}]}],
         {"prompt_tokens": 10}),
        # xAI counts reasoning apart from the completion.
        ([chunk(usage=usage(total_tokens=18, completion_tokens_details={"reasoning_tokens": 3}))],
         {"completion_tokens": 8, "reasoning_tokens": 3}),
        # Cached tokens: OpenAI's place, DeepSeek's, Together's.
        ([chunk(usage=usage(prompt_tokens_details={"cached_tokens": 4}, prompt_cache_hit_tokens=4))],
         {"cached_prompt_tokens": 4}),
        ([chunk(usage=usage(prompt_cache_hit_tokens=6))], {"cached_prompt_tokens": 6}),
        ([chunk(usage=usage(cached_tokens=2))], {"cached_prompt_tokens": 2}),
        # Cost: OpenRouter's number, Perplexity's object, xAI's ticks of 1e-10 USD.
        ([chunk(usage=usage(cost=0.25))], {"cost_usd": 0.25}),
        ([chunk(usage=usage(cost={"total_cost": 0.5, "request_cost": 0.1}))], {"cost_usd": 0.5}),
        ([chunk(usage=usage(cost_in_usd_ticks=12_500_000_000))], {"cost_usd": 1.25}),
    ],
)  # fmt: skip
def test_usage_is_read_by_its_rules(
    module: ModuleType, stream: list[dict[str, Any]], expected: dict[str, Any]
) -> None:
    got = dataclasses.asdict(summary_of(module, stream).usage)
    assert {k: got[k] for k in expected} == expected


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_citations_come_once_each_with_the_best_title(module: ModuleType) -> None:
    url = "https://a.example/x"
    stream = [
        chunk(citations=[url, "https://b.example/"]),
        chunk(citations=[url, "https://b.example/"], search_results=[{"url": url, "title": "A"}]),
    ]
    cited = summary_of(module, stream).citations
    assert [(c.url, c.title) for c in cited] == [(url, "A"), ("https://b.example/", None)]


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_arguments_sent_as_an_object_are_json_text(module: ModuleType) -> None:
    call = {
        "index": 0,
        "id": "t1",
        "type": "function",
        "function": {"name": "f", "arguments": {"q": "é"}},
    }
    [choice] = summary_of(module, [chunk({"tool_calls": [call]})]).choices
    assert [(c.id, c.name, c.arguments) for c in choice.tool_calls] == [("t1", "f", '{"q":"é"}')]


def test_a_new_spelling_is_one_yaml_edit(tmp_path: Path) -> None:
    """A vendor file with a new reasoning key and its `means:` is read by every module,
    with no Python change; the key is read even by a module that leaves the vendor out."""
    project = copy_project(tmp_path / "project")
    (project / "spec/vendors/acme.yaml").write_text(
        "vendor: acme\ntitle: Acme\nsource: https://acme.example/docs\nfields:\n"
        "  ChoiceDelta:\n    thoughts:\n      type: string\n      merge: append\n"
        "      nullable: true\n      means: {meaning: reasoning, precedence: 40}\n"
        "      doc: A piece of Acme's reasoning.\n",
        encoding="utf-8",
    )
    result = run_generator(project, "generate")
    assert result.returncode == 0, result.stderr
    narrowed = tmp_path / "narrowed"
    result = run_generator(
        project, "vendor", "--target", "dataclasses", "--vendors", "none", "--out", str(narrowed)
    )
    assert result.returncode == 0, result.stderr
    paths = [project / f"generated/{name}/chat.py" for name in TARGETS] + [narrowed]
    stream = [chunk({"reasoning": "no", "thoughts": "Hm"}), chunk({"thoughts": "m."})]
    for path in paths:
        module = load_module(path)
        assert summary_of(module, stream).choices[0].reasoning == "Hmm.", path.name


def body(payloads: Iterable[str | dict[str, Any]]) -> bytes:
    lines = [p if isinstance(p, str) else json.dumps(p) for p in payloads]
    return ("".join(f"data: {line}\n\n" for line in lines) + "data: [DONE]\n\n").encode()


def added_up(parts: Iterable[Any]) -> dict[tuple[int, str], str]:
    texts: dict[tuple[int, str], str] = {}
    for part in parts:
        if part.kind in ("text", "reasoning", "refusal"):
            key = (part.choice, part.kind)
            texts[key] = texts.get(key, "") + part.text
    return texts


def summary_texts(summary: Any) -> dict[tuple[int, str], str]:
    return {
        (c.index, kind): getattr(c, kind)
        for c in summary.choices
        for kind in ("text", "reasoning", "refusal")
        if getattr(c, kind)
    }


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
@pytest.mark.parametrize("stream", FIXTURE_STREAMS, ids=lambda s: s.name)
def test_the_parts_of_a_stream_add_up_to_its_summary(module: ModuleType, stream: Any) -> None:
    data = body(text for _, text in stream.chunks)
    parts = list(module.iter_parts([data]))

    async def read() -> list[Any]:
        async def pieces() -> Any:
            yield data

        return [part async for part in module.aiter_parts(pieces())]

    assert [(p.kind, p.choice, p.text) for p in asyncio.run(read())] == [
        (p.kind, p.choice, p.text) for p in parts
    ]
    summary = summary_of(module, (text for _, text in stream.chunks))
    assert added_up(parts) == summary_texts(summary)
    [choice] = summary.choices
    finishes = [p.text for p in parts if p.kind == "finish"]
    assert finishes[-1:] == [choice.finish_reason] if choice.finish_reason else not finishes
    reports = [p.usage for p in parts if p.kind == "usage"]
    assert (reports[-1] if reports else module.UsageSummary()) == summary.usage
    calls = {p.tool_call.index for p in parts if p.kind == "tool_call"}
    assert len(calls) == len(choice.tool_calls) or None in calls
    kind = dict if module is TARGETS["typeddicts"] else module.ChatCompletionChunk
    assert all(isinstance(p.chunk, kind) for p in parts), "each part keeps its chunk"


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_parts_with_think_tags_add_up_to_the_summary(module: ModuleType) -> None:
    pieces = ["<thi", "nk>Let me", " think.</th", "ink>", "The answer", " is <", "b>4</b>.", " <th"]
    stream = [chunk({"content": piece}) for piece in pieces]
    parts = list(module.iter_parts([body(stream)], think_tags=THINK))
    assert added_up(parts) == {
        (0, "reasoning"): "Let me think.",
        (0, "text"): "The answer is <b>4</b>. <th",
    }, "the cut tag at the end of the stream is text"
    summary = summary_of(module, [*stream, finish()], think_tags=THINK)
    assert summary_texts(summary) == added_up(parts)
    assert [p.kind for p in parts][:4] == ["start", "reasoning", "reasoning", "text"]


DIALECTS = ("reasoning_content", "reasoning", "think_tags")


def read_back(module: ModuleType, data: bytes, dialect: str) -> Any:
    tags = THINK if dialect == "think_tags" else None
    accumulator = module.ChunkAccumulator(think_tags=tags)
    for chunk in module.iter_chunks([data]):
        accumulator.add(chunk)
    return accumulator.summary()


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
@pytest.mark.parametrize("stream", FIXTURE_STREAMS, ids=lambda s: s.name)
def test_a_stream_written_in_a_dialect_reads_back_the_same(module: ModuleType, stream: Any) -> None:
    data = body(text for _, text in stream.chunks)
    summary = summary_of(module, (text for _, text in stream.chunks))
    for dialect in DIALECTS:
        written = b"".join(module.iter_sse(module.iter_chunks([data]), dialect=dialect))
        assert written.endswith(b"data: [DONE]\n\n")
        assert read_back(module, written, dialect) == summary, dialect
        if dialect != "think_tags" and any(c.reasoning for c in summary.choices):
            other = DIALECTS[1 - DIALECTS.index(dialect)]
            events = [json.loads(e[6:]) for e in written.split(b"\n\n") if e[6:7] == b"{"]
            deltas = [c.get("delta", {}) for e in events for c in e.get("choices", [])]
            assert any(d.get(dialect) for d in deltas), "reasoning where the dialect puts it"
            assert not any(d.get(other) for d in deltas), "and nowhere else it was spelled"


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_think_tags_are_re_spelled_into_a_field(module: ModuleType) -> None:
    pieces = ["<thi", "nk>Let me", " think.</th", "ink>", "The answer."]
    stream = [*(chunk({"content": piece}) for piece in pieces), finish()]
    written = b"".join(
        module.iter_sse(module.iter_chunks([body(stream)]), dialect="reasoning", think_tags=THINK)
    )
    events = [json.loads(e[6:]) for e in written.split(b"\n\n") if e[6:7] == b"{"]
    deltas = [e["choices"][0]["delta"] for e in events]
    assert "".join(d.get("reasoning") or "" for d in deltas) == "Let me think."
    assert "".join(d.get("content") or "" for d in deltas) == "The answer."


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_to_dialect_moves_the_meanings_and_leaves_its_input(module: ModuleType) -> None:
    text = json.dumps(
        {
            **chunk({"role": "assistant", "reasoning": "Hm.", "content": ""}),
            "usage": {**usage(prompt_cache_hit_tokens=4), "cost": 0.5},
            "zz": {"kept": [1]},
        }
    )
    original = module.loads(text)
    moved = module.to_dialect(original, "reasoning_content")
    assert json.loads(module.dumps(original)) == json.loads(text), "the input is untouched"
    out = json.loads(module.dumps(moved))
    assert out["choices"][0]["delta"] == {
        "role": "assistant",
        "reasoning_content": "Hm.",
        "content": "",
    }
    assert out["usage"] == {**usage(prompt_cache_hit_tokens=4), "cost": 0.5,
                            "prompt_tokens_details": {"cached_tokens": 4}}  # fmt: skip
    assert out["zz"] == {"kept": [1]}
    tagged = json.loads(module.dumps(module.to_dialect(original, "think_tags")))
    assert tagged["choices"][0]["delta"]["content"] == "<think>Hm."
    with pytest.raises(ValueError, match="unknown dialect 'vllm'"):
        module.to_dialect(original, "vllm")
    with pytest.raises(ValueError, match="unknown dialect"):
        module.iter_sse([original], dialect="vllm")
    with pytest.raises(ValueError, match="give a dialect too"):
        module.iter_sse([original], think_tags=THINK)


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_harmony_markup_is_reasoning_text_and_tool_calls(module: ModuleType) -> None:
    """Raw Harmony (gpt-oss without a reasoning parser), with every token cut across
    chunks: the analysis channel is reasoning, a message to a function a tool call, the
    final channel text; the captured llama.cpp stream reads the same way."""
    markup = (
        "<|channel|>analysis<|message|>Weather, then answer.<|end|>"
        "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json"
        '<|message|>{"city":"Oslo"}<|call|>'
        "<|start|>assistant<|channel|>final<|message|>It is <b>cold</b>.<|return|>"
    )
    pieces = [markup[i : i + 5] for i in range(0, len(markup), 5)]
    stream = [chunk({"content": piece}) for piece in pieces]
    [choice] = summary_of(module, stream, think_tags="harmony").choices
    assert (choice.reasoning, choice.text) == ("Weather, then answer.", "It is <b>cold</b>.")
    assert [(c.name, c.arguments) for c in choice.tool_calls] == [
        ("get_weather", '{"city":"Oslo"}')
    ]
    parts = list(module.iter_parts([body(stream)], think_tags="harmony"))
    assert added_up(parts) == {(0, "reasoning"): choice.reasoning, (0, "text"): choice.text}
    calls = [p for p in parts if p.kind == "tool_call"]
    assert "".join(p.text for p in calls) == '{"city":"Oslo"}'
    assert {p.tool_call.name for p in calls} == {"get_weather"}
    [captured] = [
        s for s in FIXTURE_STREAMS if s.name == "llamacpp__gptoss-raw-harmony-usage-timings"
    ]
    [choice] = summary_of(module, (t for _, t in captured.chunks), think_tags="harmony").choices
    assert choice.reasoning.startswith("User says") and choice.text.startswith("Got it!")
    assert "<|" not in choice.reasoning + choice.text


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_parts_of_a_stream_object_sync_and_async(module: ModuleType) -> None:
    """`iter_parts(stream)` reads a stream `iter_chunks` made, whose `skipped` and `done`
    then tell the rest; `aiter_parts` likewise."""
    data = body([chunk({"reasoning_content": "Hm."}), "{bad", chunk({"content": "Yes."})])
    stream = module.iter_chunks([data], on_error="skip")
    parts = [(p.kind, p.text) for p in module.iter_parts(stream)]
    assert parts == [("start", ""), ("reasoning", "Hm."), ("text", "Yes.")]
    assert stream.done and stream.skipped_count == 1

    async def read() -> list[tuple[str, str]]:
        async def pieces() -> Any:
            yield data

        astream = module.aiter_chunks(pieces(), on_error="skip")
        got = [(p.kind, p.text) async for p in module.aiter_parts(astream)]
        assert astream.done and astream.skipped_count == 1
        return got

    assert asyncio.run(read()) == parts


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_a_harmony_stream_re_spelled_reads_back_the_same(module: ModuleType) -> None:
    """Harmony markup re-spelled in a dialect: reasoning in its field, the answer as
    text, and the calls in markup as `tool_calls`, which any client reads."""
    markup = (
        "<|channel|>analysis<|message|>Need weather.<|end|><|start|>assistant<|channel|>"
        'commentary to=functions.get_weather<|message|>{"city":"Oslo"}<|call|>'
    )
    pieces = [markup[i : i + 7] for i in range(0, len(markup), 7)]
    stream = [*(chunk({"content": piece}) for piece in pieces), finish("tool_calls")]
    summary = summary_of(module, stream, think_tags="harmony")
    chunks = module.iter_chunks([body(stream)])
    written = b"".join(module.iter_sse(chunks, dialect="reasoning", think_tags="harmony"))
    assert read_back(module, written, "reasoning") == summary
    [choice] = summary.choices
    assert [(c.name, c.arguments) for c in choice.tool_calls] == [
        ("get_weather", '{"city":"Oslo"}')
    ]
    assert b"<|" not in written


def events_of(written: bytes) -> list[Any]:
    """The JSON data of each chunk event, refusing an object that repeats a key."""

    def unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        keys = [key for key, _ in pairs]
        assert len(keys) == len(set(keys)), f"a key twice: {keys}"
        return dict(pairs)

    return [
        json.loads(e[6:], object_pairs_hook=unique)
        for e in written.split(b"\n\n")
        if e[6:7] == b"{"
    ]


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
@pytest.mark.parametrize("stream", FIXTURE_STREAMS, ids=lambda s: s.name)
def test_a_dialect_writes_each_chunk_as_re_spelling_it_would(
    module: ModuleType, stream: Any
) -> None:
    """`iter_sse` writes a chunk with nothing to move as `dumps` does, and renames a key
    in place when that is all that moves: the same JSON as re-spelling it whole."""
    chunks = list(module.iter_chunks([body(text for _, text in stream.chunks)]))
    for dialect in DIALECTS:
        written = events_of(b"".join(module.iter_sse(chunks, dialect=dialect)))
        whole = module._Respeller(
            module._dialect_named(dialect, module._DIALECTS), module._DATA_READINGS, None
        )
        respelled = [json.loads(json.dumps(whole.respell(module._chunk_json(c)))) for c in chunks]
        assert written == respelled, dialect


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_a_key_is_renamed_only_where_it_is_the_delta_s(module: ModuleType) -> None:
    """The quick rename in a dialect touches the delta's key and nothing that looks
    like it: a key of that name elsewhere, the dialect's key already there (null), the
    name inside a text."""
    nested = {"x_trace": {"reasoning": "not this"}}
    calls = [{"index": 0, "function": {"arguments": {"reasoning": "not this"}}}]
    cases = [
        (chunk({"reasoning": "Think."}, **nested), {"reasoning_content": "Think."}),
        (
            chunk({"tool_calls": calls, "reasoning": "Think."}),
            {"tool_calls": calls, "reasoning_content": "Think."},
        ),
        (chunk({"content": "Hi"}, **nested), {"content": "Hi"}),
        (
            chunk({"reasoning": "Think.", "reasoning_content": None}),
            {"reasoning_content": "Think."},
        ),
        (chunk({"reasoning": 'a "reasoning":"b'}), {"reasoning_content": 'a "reasoning":"b'}),
        (chunk({"content": '{"reasoning":"x"}'}), {"content": '{"reasoning":"x"}'}),
        (chunk({"reasoning": ""}), {"reasoning": ""}),
    ]
    for payload, delta in cases:
        [event] = events_of(
            b"".join(
                module.iter_sse(module.iter_chunks([body([payload])]), dialect="reasoning_content")
            )
        )
        assert event["choices"][0]["delta"] == delta, payload
        assert event.get("x_trace") == payload.get("x_trace")


def two_choices(*deltas: dict[str, Any]) -> dict[str, Any]:
    return {**chunk(), "choices": [{"index": i, "delta": d} for i, d in enumerate(deltas)]}


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_an_accumulator_reads_chunk_by_chunk_once_a_second_spelling_comes(
    module: ModuleType,
) -> None:
    """An accumulator leaves a choice's texts to its completion while each meaning has
    come in one key, and reads it chunk by chunk from the chunk where a second key may
    spell one: the summary is what the parts add up to, at every chunk."""
    thinking = [{"type": "thinking", "thinking": [{"type": "text", "text": "t"}]}]
    streams = [
        # a rename mid-stream, in one choice of two
        [
            two_choices({"reasoning_content": "a"}, {"content": "x"}),
            two_choices({"reasoning_content": "b"}, {"content": "y"}),
            two_choices({"reasoning": "c"}, {"content": "z"}),
            two_choices({"content": "done"}, {"content": "!"}),
        ],
        # `content` first a text, then Mistral's parts beside another reasoning key
        [
            chunk({"content": ""}),
            chunk({"reasoning_content": "r1"}),
            chunk({"content": thinking}),
            chunk({"content": "x"}),
        ],
        # the same text twice in one chunk, from the third chunk on
        [
            chunk({"reasoning": "p"}),
            chunk({"reasoning": "q"}),
            chunk({"reasoning": "r", "reasoning_content": "r"}),
            chunk({"reasoning_content": "s"}),
        ],
    ]
    for stream in streams:
        for end in range(1, len(stream) + 1):
            parts = module.iter_parts([body(stream[:end])])
            assert summary_texts(summary_of(module, stream[:end])) == added_up(parts)
    assert summary_of(module, streams[1]).choices[0].reasoning == "r1t"


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_tool_calls_spelled_deeper_in_a_choice_are_read(module: ModuleType) -> None:
    """The reader reads tool calls anywhere a spelling puts them, not only as the items
    of a list under the delta (a spec may declare them deeper)."""
    items = (("id", ("id",)), ("name", ("function", "name")), ("arguments", ("args",)))
    spelling = module._Spelling("tool_calls", ("delta", "plan", "calls", None), items=items)
    readings = module._Readings((spelling,), None)
    call = {"id": "c1", "function": {"name": "f"}, "args": '{"a":1}'}
    data = {"choices": [{"index": 0, "delta": {"plan": {"calls": [call]}}}]}
    out: list[Any] = []
    runtime(module, "_Reader")(readings, None, keeps=False).read(data, data, out)
    assert [(p.kind, p.text, p.tool_call.id, p.tool_call.name) for p in out] == [
        ("tool_call", '{"a":1}', "c1", "f")
    ]
