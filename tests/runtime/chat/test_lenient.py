"""The lenient profile reads what servers no vendor file describes send (issue 31, item
24): a chunk whose values are of the declared kinds is read whatever keys it leaves out
or sends as null, accumulated, summarised and written back as it came, in all four
targets. The few keys it still needs are listed in docs/spec-format.md, checked here
against the spec; the strict profile stays OpenAI's (tests/vendoring/test_vendoring.py)."""

from __future__ import annotations

import json
import re
from types import ModuleType
from typing import Any

import pytest

from generator.ir.build import build_specs
from generator.ir.load import load_spec
from generator.ir.model import (
    Options,
    union_tags,
)
from generator.render.targets import module_names
from tests.generated.examples import EXAMPLES
from tests.generated.test_targets_agree import ROUND_TRIPS
from tests.helpers.project import REPO
from tests.helpers.support import TARGETS, assert_same_json

MODULES = list(TARGETS.values())
LENIENT, STRICT = build_specs(
    load_spec(REPO),
    Options(),
    Options(vendors=(), profile="strict"),
    reserved=module_names(),
)
TAGS = union_tags(LENIENT)

BASE = '"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000'

# A server that never names the model (no `model` key on any chunk).
NO_MODEL = [
    f'{{{BASE},"choices":[{{"index":0,"delta":{{"role":"assistant","content":""}},'
    '"finish_reason":null}]}',
    f'{{{BASE},"choices":[{{"index":0,"delta":{{"content":"Hel"}},"finish_reason":null}}]}}',
    f'{{{BASE},"choices":[{{"index":0,"delta":{{"content":"lo"}},"finish_reason":null}}]}}',
    f'{{{BASE},"choices":[{{"index":0,"delta":{{}},"finish_reason":"stop"}}],'
    '"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}',
]


def running_usage(last: str) -> list[str]:
    """A server that sends its usage so far on every chunk, `completion_tokens` null
    until the report `last` (which may still say null)."""
    running = '"usage":{"prompt_tokens":5,"completion_tokens":null,"total_tokens":null}'
    return [
        f'{{{BASE},"model":"m","choices":[{{"index":0,"delta":{{"content":"Hel"}}}}],{running}}}',
        f'{{{BASE},"model":"m","choices":[{{"index":0,"delta":{{"content":"lo"}}}}],{running}}}',
        f'{{{BASE},"model":"m","choices":[{{"index":0,"delta":{{}},"finish_reason":"stop"}}],'
        f'"usage":{last}}}',
    ]


NULL_THEN_COUNTED = running_usage('{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}')
NULL_THROUGHOUT = running_usage('{"prompt_tokens":5,"completion_tokens":null,"total_tokens":null}')


def read_and_add_up(module: ModuleType, texts: list[str]) -> Any:
    """Each chunk read and written back as it came; the accumulator that added them."""
    accumulator = module.ChunkAccumulator()
    for number, text in enumerate(texts, 1):
        chunk = module.loads(text)
        assert_same_json(json.loads(module.dumps(chunk)), json.loads(text), f"chunk {number}")
        accumulator.add(chunk)
    return accumulator


def assert_completion_round_trips(module: ModuleType, completion: Any) -> dict[str, Any]:
    text = module.dumps(completion)
    assert_same_json(json.loads(module.dumps(module.loads_completion(text))), json.loads(text))
    data: dict[str, Any] = json.loads(text)
    return data


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_a_stream_without_model_is_read_added_up_and_summarised(module: ModuleType) -> None:
    accumulator = read_and_add_up(module, NO_MODEL)
    summary = accumulator.summary()
    [choice] = summary.choices
    assert (choice.text, choice.finish_reason) == ("Hello", "stop")
    usage = summary.usage
    assert (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens) == (5, 2, 7)
    completion = assert_completion_round_trips(module, accumulator.result())
    assert "model" not in completion  # absent stays absent: no model is made up
    assert completion["choices"][0]["message"] == {"role": "assistant", "content": "Hello"}


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_null_completion_tokens_in_running_usage_read_as_none_until_counted(
    module: ModuleType,
) -> None:
    accumulator = module.ChunkAccumulator()
    seen = []
    for text in NULL_THEN_COUNTED:
        accumulator.add(module.loads(text))
        seen.append(accumulator.summary().usage.completion_tokens)
    assert seen == [None, None, 2]  # the later real value
    assert read_and_add_up(module, NULL_THEN_COUNTED).summary().usage.total_tokens == 7
    completion = assert_completion_round_trips(module, accumulator.result())
    assert completion["usage"] == {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}
    body = "".join(f"data: {text}\n\n" for text in NULL_THEN_COUNTED).encode()
    reports = [p.usage for p in module.iter_parts([body]) if p.kind == "usage"]
    assert [r.completion_tokens for r in reports] == [None, None, 2]
    assert [r.prompt_tokens for r in reports] == [5, 5, 5]


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_completion_tokens_null_throughout_summarise_as_none(module: ModuleType) -> None:
    accumulator = read_and_add_up(module, NULL_THROUGHOUT)
    usage = accumulator.summary().usage
    assert (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens) == (5, None, None)
    completion = assert_completion_round_trips(module, accumulator.result())
    # The completion keeps what was said and makes up no count.
    assert completion["usage"].get("completion_tokens") is None
    assert completion["usage"]["prompt_tokens"] == 5


# --- every key, dropped or null --------------------------------------------------------

READERS = {LENIENT.root: "loads", "ChatCompletion": "loads_completion"}
"""The types a module reads from JSON text itself; every other type is read by the
generated round-trip tests' `round_trip` (as `from_dict` or `model_validate` read it)."""
EXAMPLE_OF = {(name, variant): value for name, variant, value in EXAMPLES}


def read_back(target: str, type_name: str, data: dict[str, Any]) -> Any:
    """`data` read as `type_name` by `target`, and written back as JSON data."""
    module = TARGETS[target]
    if type_name in READERS:
        return json.loads(module.dumps(getattr(module, READERS[type_name])(json.dumps(data))))
    return ROUND_TRIPS[target](type_name, data)


@pytest.mark.parametrize("variant", ["maximal", "alternates"])
@pytest.mark.parametrize("target", TARGETS)
def test_every_key_dropped_or_null_still_reads(target: str, variant: str) -> None:
    """Every key of every type of the spec (the chunk's, the completion's, the vendors'),
    in the type's fullest examples, dropped or sent as null one at a time: the object
    reads and is written back as it came (a defaulted list as `[]`), except a union's
    tag, which the object cannot do without, and `choices` dropped beside an `error`,
    which makes the payload an error report (`error_when`)."""
    module = TARGETS[target]
    tags = {(name, key) for name, (key, _) in TAGS.items()}
    tried = 0
    for model in LENIENT.models:
        value = EXAMPLE_OF[(model.name, variant)]
        report = model.error_when
        for field in (f for f in model.fields if f.wire in value):
            for how in ("drop", "null"):
                tried += 1
                data = {k: v for k, v in value.items() if how == "null" or k != field.wire}
                if how == "null":
                    data[field.wire] = None
                where = f"{model.name}.{field.wire} {how}"
                refused_at = None
                if (model.name, field.wire) in tags:
                    refused_at = f"$.{field.wire}"
                elif report and report.lacks not in data and data.get(report.has) is not None:
                    refused_at = f"$.{report.has}"
                if refused_at is not None:
                    # pydantic's own ValidationError where the round trip validates a
                    # type itself; ChunkDecodeError, with its path, everywhere else.
                    with pytest.raises(ValueError) as caught:
                        read_back(target, model.name, data)
                    error: Any = caught.value
                    path = error.path if isinstance(error, module.ChunkDecodeError) else None
                    loc = None if path else ".".join(map(str, error.errors()[0]["loc"]))
                    assert path == refused_at or f"$.{loc}" == refused_at, where
                    continue
                expected = {**data, field.wire: []} if field.has_default else data
                assert_same_json(read_back(target, model.name, data), expected, where)
    assert tried > 600, "the examples hold every key of every type"


# --- the documented exceptions -----------------------------------------------------------


def documented_exceptions() -> dict[str, set[str]]:
    """The keys docs/spec-format.md says a lenient module still fills or needs, by why."""
    text = (REPO / "docs/spec-format.md").read_text(encoding="utf-8")
    table = text.split("<!-- lenient-exceptions -->")[1].split("<!-- /lenient-exceptions -->")[0]
    found: dict[str, set[str]] = {"default": set(), "discriminator": set()}
    for row in table.strip().splitlines()[2:]:
        keys, why = row.strip().strip("|").split("|")
        kind = "default" if "default" in why else "discriminator"
        found[kind] |= set(re.findall(r"`([A-Za-z]+\.[a-z_]+)`", keys))
    return found


def test_the_docs_list_every_key_a_lenient_module_may_not_leave_unset() -> None:
    fields = [(m.name, f) for m in LENIENT.models for f in m.fields]
    defaulted = {f"{name}.{f.wire}" for name, f in fields if f.has_default}
    needed = {f"{name}.{f.wire}" for name, f in fields if f.required or not f.nullable}
    documented = documented_exceptions()
    assert documented["default"] == defaulted
    assert documented["discriminator"] | documented["default"] == needed
    assert documented["discriminator"] == {f"{name}.{key}" for name, (key, _) in TAGS.items()}
    assert len(fields) - len(needed) > 300, "every other key may be absent or null"


def test_the_strict_profile_keeps_every_key_as_openai_declares_it() -> None:
    declared = {
        (t.name, f.wire): (f.required or f.default is not None, f.nullable)
        for t in load_spec(REPO).core.types
        for f in t.fields
    }
    built = {(m.name, f.wire): (f.required, f.nullable) for m in STRICT.models for f in m.fields}
    assert built == {key: declared[key] for key in built}
    assert built[("ChatCompletionChunk", "model")] == (True, False)
    assert built[("CompletionUsage", "completion_tokens")] == (True, False)
