"""The contract every target keeps, on the shapes real streams send (research/pain.md
groups A, B and E, research/schema.md §4) and on bad input."""

from __future__ import annotations

import dataclasses
import inspect
import json
import pickle
from types import ModuleType
from typing import Any

import pytest

from generated.dataclasses import chat as chunk_dataclasses
from generated.pydantic import chat as chunk_pydantic
from generated.typeddicts import chat as chunk_typeddicts
from tests.helpers.support import TARGETS as ALL_TARGETS
from tests.helpers.support import assert_same_json, normalised

TARGETS = list(ALL_TARGETS.values())
HEAD = '"id":"c1","object":"chat.completion.chunk","created":1,"model":"m"'


def chunk(choice_json: str = '{"index":0,"delta":{"content":"A"}}', extra: str = "") -> str:
    """A minimal valid chunk with one choice, plus extra top-level members."""
    return "{" + HEAD + ',"choices":[' + choice_json + "]" + extra + "}"


def delta(delta_json: str) -> str:
    return chunk('{"index":0,"delta":' + delta_json + ',"finish_reason":null}')


def round_trip(module: ModuleType, text: str) -> Any:
    return json.loads(module.dumps(module.loads(text)))


# Each shape is one a strict parser rejects or a lenient one loses data on.
REAL_SHAPES = {
    "A1 object missing": '{"id":"c1","created":1,"model":"m","choices":[]}',
    "A1 object null": '{"id":"c1","object":null,"created":1,"model":"m","choices":[]}',
    "A1 object chat.completion": '{"id":"c1","object":"chat.completion","created":1,"model":"m","choices":[]}',
    "A2 id and created missing": '{"model":"m","choices":[{"index":0,"delta":{"content":"x"}}]}',
    "A6 empty usage": '{"id":"c","model":"m","choices":[],"usage":{}}',
    "A6 foreign usage": '{"id":"c","model":"m","choices":[],"usage":{"total_tokens":0,"total_characters":0}}',
    "A8 arguments as object": delta(
        '{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"bash","arguments":{"command":"ls"}}}]}'
    ),
    "A9 created float": '{"id":"c","created":1716325454.123,"model":"m","choices":[]}',
    "A9 created in ms": '{"id":"c","created":1716325454123,"model":"m","choices":[]}',
    "A12 error null, no choices": '{"id":"c","created":1,"model":"m","error":null,"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}',
    "A1 object empty": '{"id":"","object":"","created":0,"model":"","choices":[]}',
    "A1 object done": '{"id":"c1","object":"chat.completion.done","created":1,"model":"m","choices":[]}',
    "A2 created missing": '{"id":"c1","object":"chat.completion.chunk","model":"m","choices":[]}',
    "A4 azure preamble": '{"choices":[],"created":0,"id":"","model":"","object":"","prompt_filter_results":[{"prompt_index":0,"content_filter_results":{"hate":{"filtered":false,"severity":"safe"},"jailbreak":{"filtered":false,"detected":false}}}]}',
    "A5 choice without delta": '{"id":"","object":"","created":0,"model":"","choices":[{"index":0,"finish_reason":null,"content_filter_results":{"hate":{"filtered":false,"severity":"safe"}},"content_filter_offsets":{"check_offset":44,"start_offset":44,"end_offset":198}}],"usage":null}',
    "A6 null usage details": chunk(
        extra=',"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3,"prompt_tokens_details":null,"completion_tokens_details":null}'
    ),
    "A6 unknown usage key": chunk(
        extra=',"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3,"total_characters":0,"prompt_tokens_details":{"cached_tokens":0,"cache_write_tokens":null}}'
    ),
    "A7 content parts": delta(
        '{"content":[{"type":"thinking","thinking":[{"type":"text","text":"hmm"}]},{"type":"text","text":"Hi"}]}'
    ),
    "A10 unknown keys everywhere": chunk(
        '{"index":0,"zz_new":{"a":1},"delta":{"zz_new":[1],"tool_calls":[{"index":0,"zz_new":null,"function":{"arguments":"{","zz_new":2}}]}}',
        ',"zz_new":{"a":1},"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2,"zz_new":1.5}',
    ),
    "A11 stop_reason int": chunk(
        '{"index":0,"delta":{},"finish_reason":"stop","stop_reason":151338}'
    ),
    "A11 stop_reason zero": chunk('{"index":0,"delta":{},"finish_reason":"stop","stop_reason":0}'),
    "A11 stop_reason text": chunk(
        '{"index":0,"delta":{},"finish_reason":"stop","stop_reason":"\\n"}'
    ),
    "A12 error null": chunk(extra=',"error":null,"IsDelta":false'),
    "A12 error beside choices": chunk(extra=',"error":{"code":502,"message":"upstream"}'),
    "B1 empty finish_reason": chunk('{"index":0,"delta":{"content":"a"},"finish_reason":""}'),
    "B2 unknown finish_reason": chunk('{"index":0,"delta":{},"finish_reason":"abort"}'),
    "B3 unknown service_tier": chunk(extra=',"service_tier":"on_demand"'),
    "B4 odd roles": delta('{"role":"model","content":null}'),
    "B4 empty role": delta('{"role":""}'),
    "B5 empty tool type": delta(
        '{"tool_calls":[{"index":0,"type":"","function":{"arguments":"py"}}]}'
    ),
    "B5 custom tool": delta(
        '{"tool_calls":[{"index":0,"id":"call_c1","type":"custom","custom":{"name":"apply_patch","input":""}}]}'
    ),
    "tool call without index": delta(
        '{"content":null,"tool_calls":[{"id":"gSIMJiOkT","function":{"name":"weather","arguments":"{}"}}]}'
    ),
    "tool call id empty": delta(
        '{"tool_calls":[{"index":0,"id":"","type":"function","function":{"arguments":"x"}}]}'
    ),
    "zai no finish key": chunk('{"index":0,"delta":{"role":"assistant","reasoning_content":"hm"}}'),
    "E1 nulls stay": delta(
        '{"role":null,"content":null,"refusal":null,"tool_calls":null,"function_call":null}'
    ),
    "E3 numbers stay": chunk(
        '{"index":0,"delta":{},"logprobs":{"content":[{"token":"a","logprob":-1,"bytes":[97],"top_logprobs":[{"token":"a","logprob":-1.0,"bytes":null}]}],"refusal":null}}',
        ',"seed":7228414683750928000,"prompt_token_ids":[18446744073709551617,1],"x":1e300',
    ),
    "vendor heavy": chunk(
        '{"index":0,"delta":{"reasoning":"r","reasoning_content":"rc"},"token_ids":[1,2],"stop_reason":null}',
        ',"prompt_token_ids":null,"prompt_text":null,"request_id":"r1","nvext":{"worker_id":{"decode_worker_id":9007199254740993},"timing":{"ttft_ms":1.5}}',
    ),
    "vendor fields null": chunk(
        '{"index":0,"delta":{"channel":null,"executed_tools":null},"text":null}',
        ',"x_groq":null,"citations":null,"timings":null,"sla_metrics":null,"provider":null',
    ),
    "azure blocklists as an object": chunk(
        '{"index":0,"delta":{},"content_filter_results":{"custom_blocklists":{"filtered":false,"details":[{"filtered":false,"id":"b1"}]}}}'
    ),
    "moderation chunk": '{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"moderation":{"input":{"type":"moderation_results","model":"omni","results":[{"type":"moderation_result","model":"omni","flagged":false,"categories":{"self-harm/intent":false},"category_scores":{"self-harm/intent":0.001},"category_applied_input_types":{"self-harm/intent":["text"]}}]},"output":{"type":"error","code":"timeout","message":"slow"}}}',
    "non-ascii and escapes": delta(
        '{"content":"caf\\u00e9 \\ud83d\\ude00 \\"q\\" \\\\ \\u2028 ✓"}'
    ),
}


@pytest.mark.parametrize("text", REAL_SHAPES.values(), ids=REAL_SHAPES.keys())
def test_real_shapes_round_trip_in_every_target(text: str) -> None:
    expected = normalised(json.loads(text), {"choices": []})
    dumped = {module.__name__: module.dumps(module.loads(text)) for module in TARGETS}
    for name, out in dumped.items():
        assert_same_json(json.loads(out), expected, where=name)
    assert len(set(dumped.values())) == 1, dumped


@pytest.mark.parametrize("module", TARGETS, ids=lambda m: m.__name__)
@pytest.mark.parametrize(
    "extra",
    [',"verbose_":null', ',"__verbose":null,"verbose_":5', ',"__verbose":{"a":1},"verbose_":2'],
)
def test_an_unknown_key_named_like_a_python_name_stays_unknown(
    module: ModuleType, extra: str
) -> None:
    # llama.cpp's `__verbose` is `verbose_` in Python; pydantic would count a key
    # `verbose_` as setting the field (found by make fuzz).
    text = chunk(extra=extra)
    assert_same_json(round_trip(module, text), json.loads(text))


@pytest.mark.parametrize("module", TARGETS, ids=lambda m: m.__name__)
@pytest.mark.parametrize("choices", ["", ',"choices":null'])
def test_missing_or_null_choices_read_and_write_as_empty(module: ModuleType, choices: str) -> None:
    out = round_trip(module, "{" + HEAD + choices + "}")
    assert out == {**json.loads("{" + HEAD + "}"), "choices": []}


BAD_INPUTS = {
    "invalid JSON": ("{", "$"),
    "truncated": (chunk()[:-3], "$"),
    "invalid UTF-8": (b'{"id":"\xff"}', "$"),
    "not an object": ("[1,2]", "$"),
    "a string": ('"chunk"', "$"),
    "error payload": ('{"error":{"message":"boom","type":"server_error","code":500}}', "$.error"),
    "error payload, bare": ('{"error":"boom"}', "$.error"),
    "BOM before the JSON": (b'\xef\xbb\xbf{"id":"c","model":"m"}', "$"),
    "UTF-16 bytes": ('{"id":"c","model":"m"}'.encode("utf-16"), "$"),
    "nested too deeply": ('{"id":"c","model":"m","x":' + "[" * 100000 + "]" * 100000 + "}", "$"),
    # A typed value (arguments may be an object) that msgspec reads until its recursion
    # limit (found by make fuzz).
    "arguments nested too deeply": (
        delta(
            '{"tool_calls":[{"index":0,"function":{"arguments":'
            + '{"a":' * 100000
            + "1"
            + "}" * 100000
            + "}}]}"
        ),
        "$",
    ),
    "id is a number": ('{"id":1,"object":"x","created":1,"model":"m","choices":[]}', "$.id"),
    "created is a bool": ('{"id":"c","created":true,"model":"m","choices":[]}', "$.created"),
    "created is a string": ('{"id":"c","created":"1","model":"m","choices":[]}', "$.created"),
    "first bad key wins": (
        '{"id":"c","created":"x","model":"m","choices":[],"usage":{"prompt_tokens":1.5}}',
        "$.created",
    ),
    "union member names are not keys": (
        delta('{"content":{"str":5}}'),
        "$.choices[0].delta.content",
    ),
    "choices not a list": ('{"id":"c","created":1,"model":"m","choices":{}}', "$.choices"),
    "choice index a string": (chunk('{"index":"0"}'), "$.choices[0].index"),
    "choice not an object": (chunk('{"index":0,"delta":{}},7'), "$.choices[1]"),
    "delta a list": (chunk('{"index":0,"delta":[]}'), "$.choices[0].delta"),
    "content a number": (delta('{"content":5}'), "$.choices[0].delta.content"),
    "content parts wrong": (
        delta('{"content":[{"type":"text","text":5}]}'),
        "$.choices[0].delta.content[0].text",
    ),
    "tool index a string": (
        delta('{"tool_calls":[{"index":0},{"index":"1"}]}'),
        "$.choices[0].delta.tool_calls[1].index",
    ),
    "arguments a number": (
        delta('{"tool_calls":[{"index":0,"function":{"arguments":1}}]}'),
        "$.choices[0].delta.tool_calls[0].function.arguments",
    ),
    "token id a string": (chunk(extra=',"prompt_token_ids":[1,"2"]'), "$.prompt_token_ids[1]"),
    "logprob a string": (
        chunk('{"index":0,"logprobs":{"content":[{"token":"a","logprob":"-1"}]}}'),
        "$.choices[0].logprobs.content[0].logprob",
    ),
    "score not a number": (
        '{"id":"c","created":1,"model":"m","object":"o","choices":[],"moderation":{"input":{"type":"moderation_results","model":"m","results":[{"type":"moderation_result","model":"m","flagged":false,"categories":{},"category_scores":{"self-harm/intent":"high"},"category_applied_input_types":{}}]},"output":{"type":"error","code":"c","message":"m"}}}',
        '$.moderation.input.results[0].category_scores["self-harm/intent"]',
    ),
    "moderation tag missing": (
        '{"choices":[],"moderation":{"input":{"model":"m"}}}',
        "$.moderation.input.type",
    ),
    "unknown moderation tag": (
        '{"id":"c","created":1,"model":"m","object":"o","choices":[],"moderation":{"input":{"type":"other"},"output":{"type":"error","code":"c","message":"m"}}}',
        "$.moderation.input.type",
    ),
}


@pytest.mark.parametrize("module", TARGETS, ids=lambda m: m.__name__)
@pytest.mark.parametrize(("data", "path"), BAD_INPUTS.values(), ids=BAD_INPUTS.keys())
def test_bad_input_raises_chunk_decode_error_with_its_path(
    module: ModuleType, data: str | bytes, path: str
) -> None:
    with pytest.raises(module.ChunkDecodeError) as caught:
        module.loads(data)
    assert issubclass(module.ChunkDecodeError, ValueError)
    assert caught.value.path == path, str(caught.value)
    assert str(caught.value).startswith(path + ": ")


PYDANTIC_MESSAGES = {
    "a string for a number": (
        '{"id":"c","created":"soon","model":"m","choices":[]}',
        "$.created: expected number, integer, got string",
    ),
    "a number for text or an object": (
        delta('{"tool_calls":[{"index":0,"function":{"arguments":1}}]}'),
        "$.choices[0].delta.tool_calls[0].function.arguments: expected string, object, got"
        " integer",
    ),
}


@pytest.mark.parametrize(("data", "message"), PYDANTIC_MESSAGES.values(), ids=PYDANTIC_MESSAGES)
def test_pydantic_says_which_kinds_were_expected(data: str, message: str) -> None:
    with pytest.raises(chunk_pydantic.ChunkDecodeError) as caught:
        chunk_pydantic.loads(data)
    assert str(caught.value) == message


@pytest.mark.parametrize("module", TARGETS, ids=lambda m: m.__name__)
def test_error_payload_message_is_in_the_error(module: ModuleType) -> None:
    with pytest.raises(module.ChunkDecodeError, match="boom"):
        module.loads('{"error":{"message":"boom","code":500}}')


def test_dataclasses_keep_absent_null_and_unknown_apart() -> None:
    m = chunk_dataclasses
    parsed = m.loads(delta('{"content":null,"zz":{"a":[1]}}'))
    d = parsed.choices[0].delta
    assert isinstance(d, m.ChoiceDelta)  # a choice may lack its delta (Azure)
    assert d.content is None
    assert d.role is m.UNSET
    assert d.extra == {"zz": {"a": [1]}}
    assert parsed.choices[0].finish_reason is None
    assert parsed.choices[0].logprobs is m.UNSET


def test_dataclasses_read_are_the_objects_built_in_code() -> None:
    m = chunk_dataclasses
    parsed = m.loads(delta('{"content":"A","zz":1}'))
    built = dataclasses.replace(parsed)  # through __init__, with every field
    assert built == parsed and repr(built) == repr(parsed)
    assert built.to_dict() == parsed.to_dict()
    assert pickle.loads(pickle.dumps(parsed)) == parsed
    # Read, an object holds only what was present; an absent key reads its default
    # (and no unknown key, the shared empty `extra`).
    assert set(vars(parsed)) == {"id", "object", "created", "model", "choices"}
    assert parsed.usage is m.UNSET and "usage" in vars(built)
    assert parsed.extra is m.ChatCompletionChunk(model="m").extra and not parsed.extra
    read_delta = parsed.choices[0].delta
    assert isinstance(read_delta, m.ChoiceDelta) and read_delta.extra == {"zz": 1}


def test_a_wide_dataclass_built_holds_only_its_keywords() -> None:
    m = chunk_dataclasses
    built = m.ChatCompletionChunk(model="m", usage=m.UNSET, id="x")
    assert set(vars(built)) == {"model", "usage", "id", "choices"}
    assert built.service_tier is m.UNSET and built.choices == [] and not built.extra
    # Written in spec order, whatever the order of the keywords and of later
    # assignments; a value UNSET given by hand is not written.
    built.system_fingerprint = None
    assert m.dumps(built) == '{"id":"x","choices":[],"model":"m","system_fingerprint":null}'
    assert m.loads(m.dumps(built)) == built
    assert m.ChatCompletionChunk(model="m").choices is not built.choices
    # The keywords are checked as the dataclass's own __init__ checks them, and its
    # signature is the one shown.
    with pytest.raises(
        TypeError,
        match=r"^ChatCompletionChunk.__init__\(\) got an unexpected keyword argument 'zz'$",
    ):
        m.ChatCompletionChunk(model="m", zz=1)  # type: ignore[call-arg]
    # Lenient: no key is required (test_runtime checks a wide class's required ones).
    assert m.dumps(m.ChatCompletionChunk(id="x")) == '{"id":"x","choices":[]}'
    with pytest.raises(TypeError):
        m.Choice(0)  # type: ignore[call-arg]
    assert "*, id: 'str | _Unset | None' = UNSET" in str(inspect.signature(m.ChatCompletionChunk))


def test_typeddicts_return_the_validated_dict() -> None:
    parsed = chunk_typeddicts.loads(delta('{"content":null,"zz":{"a":[1]}}'))
    d = parsed["choices"][0]["delta"]
    assert d == {"content": None, "zz": {"a": [1]}}
    assert "role" not in d


def test_pydantic_keeps_absent_null_and_unknown_apart() -> None:
    parsed = chunk_pydantic.loads(delta('{"content":null,"zz":{"a":[1]}}'))
    d = parsed.choices[0].delta
    assert d is not None
    assert d.content is None
    assert d.model_fields_set == {"content", "zz"}
    assert d.model_extra == {"zz": {"a": [1]}}
    assert json.loads(d.model_dump_json(exclude_unset=True)) == {"content": None, "zz": {"a": [1]}}


def test_vendor_fields_are_typed_attributes() -> None:
    text = REAL_SHAPES["vendor heavy"]
    dc = chunk_dataclasses.loads(text)
    assert dc.request_id == "r1"
    assert isinstance(dc.nvext, chunk_dataclasses.NvExt)
    assert isinstance(dc.nvext.worker_id, chunk_dataclasses.NvExtWorkerId)
    assert dc.nvext.worker_id.decode_worker_id == 9007199254740993
    assert isinstance(dc.nvext.timing, chunk_dataclasses.NvExtTiming)
    assert dc.nvext.timing.ttft_ms == 1.5
    assert dc.prompt_token_ids is None
    assert dc.choices[0].token_ids == [1, 2]
    dc_delta = dc.choices[0].delta
    assert isinstance(dc_delta, chunk_dataclasses.ChoiceDelta)
    assert dc_delta.reasoning == "r"
    assert dc_delta.reasoning_content == "rc"
    assert dc.extra == {}
    pd = chunk_pydantic.loads(text)
    assert pd.request_id == "r1"
    pd_delta = pd.choices[0].delta
    assert pd_delta is not None
    assert pd_delta.reasoning_content == "rc"
    assert pd.model_extra == {}


def test_numbers_keep_their_type() -> None:
    text = REAL_SHAPES["E3 numbers stay"]
    dc = chunk_dataclasses.loads(text)
    logprob = dc.choices[0].logprobs.content[0]  # type: ignore[union-attr,index]
    assert type(logprob.logprob) is int
    assert type(logprob.top_logprobs[0].logprob) is float  # type: ignore[index]
    assert dc.prompt_token_ids == [2**64 + 1, 1]
    pd = chunk_pydantic.loads(text)
    assert type(pd.choices[0].logprobs.content[0].logprob) is int  # type: ignore[union-attr,index]


def test_unknown_enum_values_are_kept_as_strings() -> None:
    text = chunk(
        '{"index":0,"delta":{"role":"model"},"finish_reason":"abort"}',
        ',"service_tier":"on_demand"',
    )
    for module in (chunk_dataclasses, chunk_pydantic):
        parsed: Any = module.loads(text)
        assert parsed.service_tier == "on_demand"
        assert parsed.choices[0].finish_reason == "abort"
        assert parsed.choices[0].delta.role == "model"


def test_moderation_sides_decode_to_their_variant() -> None:
    text = REAL_SHAPES["moderation chunk"]
    dc = chunk_dataclasses.loads(text)
    assert isinstance(dc.moderation, chunk_dataclasses.Moderation)
    assert isinstance(dc.moderation.input, chunk_dataclasses.ModerationResults)
    assert isinstance(dc.moderation.output, chunk_dataclasses.ModerationError)
    pd = chunk_pydantic.loads(text)
    assert isinstance(pd.moderation, chunk_pydantic.Moderation)
    assert isinstance(pd.moderation.output, chunk_pydantic.ModerationError)


def test_a_chunk_built_in_code_writes_its_choices() -> None:
    dc = chunk_dataclasses.ChatCompletionChunk(
        id="x", created=1, model="m", object="chat.completion.chunk"
    )
    pd = chunk_pydantic.ChatCompletionChunk(
        id="x", created=1, model="m", object="chat.completion.chunk"
    )
    expected = '{"id":"x","choices":[],"created":1,"model":"m","object":"chat.completion.chunk"}'
    assert chunk_dataclasses.dumps(dc) == expected
    assert chunk_pydantic.dumps(pd) == expected


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1E400", "-1e0309"])
@pytest.mark.parametrize(
    ("head", "tail", "path"),
    [
        ('"x":', "", "$.x"),  # an unknown key
        ('"x":{"a":[0,', "]}", "$.x.a[1]"),  # inside one
        ('"choices":[{"index":', "}]", "$.choices[0].index"),  # a typed field
    ],
)
def test_non_finite_numbers_are_refused_at_their_path(
    number: str, head: str, tail: str, path: str
) -> None:
    """Documented behaviour: NaN, Infinity and numbers past a float's range are not
    JSON (Python's json reads them; msgspec, orjson, JavaScript and serde_json refuse
    them): every target refuses them where they are."""
    text = '{"id":"c","model":"m",' + head + number + tail + "}"
    for module in TARGETS:
        with pytest.raises(module.ChunkDecodeError) as caught:
            module.loads(text)
        assert caught.value.path == path, module.__name__


@pytest.mark.parametrize("module", TARGETS, ids=lambda m: m.__name__)
def test_a_hand_built_non_finite_number_is_written_as_null(module: ModuleType) -> None:
    """Writers write JSON only: a float that is not finite, put in a chunk by hand, is
    written as null, as JavaScript, msgspec and pydantic write it."""
    token = '{"token":"x","logprob":%s,"bytes":null,"top_logprobs":[]}'
    choices = '"choices":[{"index":0,"delta":{},"logprobs":{"content":[%s]}}]'
    text = '{"id":"c",' + choices + ',"model":"m"}'
    chunk = module.loads(text % (token % "-0.5"))
    for number in (float("nan"), float("inf"), float("-inf")):
        if isinstance(chunk, dict):
            chunk["choices"][0]["logprobs"]["content"][0]["logprob"] = number
        else:
            chunk.choices[0].logprobs.content[0].logprob = number
        written = module.dumps(chunk)
        value = json.loads(written, parse_constant=lambda name: pytest.fail(name))
        assert value == json.loads(text % (token % "null"))
        assert module.sse_error({"message": "m", "x": number}).endswith(b',"x":null}}\n\n')


@pytest.mark.parametrize("module", TARGETS, ids=lambda m: m.__name__)
def test_a_write_that_failed_leaves_the_writer_as_it_was(module: ModuleType) -> None:
    """The writers keep one JSON encoder between calls: a write that raised (a cycle put
    in a JSON value by hand) leaves nothing behind, and the next write is whole."""
    chunk = module.loads('{"id":"c","choices":[],"model":"m","perf_metrics":{}}')
    cycle: dict[str, Any] = {}
    cycle["self"] = cycle
    for value, written in ((cycle, None), ({"a": [1, 2.5]}, {"a": [1, 2.5]})):
        if isinstance(chunk, dict):
            chunk["perf_metrics"] = value
        else:
            chunk.perf_metrics = value
        if written is None:
            with pytest.raises((ValueError, RecursionError)):
                module.dumps(chunk)
            continue
        expected = {"id": "c", "choices": [], "model": "m", "perf_metrics": written}
        assert json.loads(module.dumps(chunk)) == expected
