"""`inspect` and `new-vendor --from`: captures read, departures explained, a vendor drafted.

The drafting tests take a vendor of the fixtures out of a copy of the project (its file,
and its name from the `also` lists of the others), draft its file back from its captured
streams, generate, and check that every chunk of those streams round-trips in all four
targets and that `inspect` then finds no key the spec does not know.
"""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from generator.captures.draftfile import Declared, Draft, Entry, generating
from generator.ir.errors import SpecError
from tests.helpers.project import REPO, copy_project, run_generator
from tests.helpers.support import (
    FIXTURE_STREAMS,
    assert_same_json,
    load_module,
    normalised,
    outcome,
)
from tests.helpers.support import TARGETS as TARGET_MODULES

FIXTURES = REPO / "tests/fixtures/chat/streams"
TARGETS = ("dataclasses", "typeddicts", "pydantic", "msgspec")

# Vendors none of whose types another vendor's file uses, so the copy builds without them.
# groq, vllm, deepseek and azure send keys only their file declares; azure and mistral
# send values only their relaxations allow; zai's keys are all declared by others.
DRAFTED = {
    "groq": "groq__",
    "vllm": "vllm__",
    "deepseek": "deepseek__",
    "azure": "azure__",
    "zai": "zai__",
    "mistral": "mistral__",
}


def inspect(root: Path, *args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "generator", "inspect", "--root", str(root), *args],
        cwd=REPO,
        input=None if stdin is None else stdin.decode("utf-8", "replace"),
        capture_output=True,
        text=True,
        check=False,
    )


def without(vendor: str, dest: Path) -> Path:
    """A copy of the project without `vendor`'s file or its name in `also` lists."""
    root = copy_project(dest)
    (root / "spec/vendors" / f"{vendor}.yaml").unlink()
    for path in (root / "spec/vendors").glob("*.yaml"):
        text = path.read_text(encoding="utf-8")

        def drop(match: re.Match[str]) -> str:
            names = [n.strip() for n in match[2].split(",") if n.strip() not in ("", vendor)]
            return f"{match[1]}also: [{', '.join(names)}]" if names else ""

        path.write_text(re.sub(r"(\n *)also: \[([^\]]*)\]", drop, text), encoding="utf-8")
    return root


def captures(prefix: str) -> list[Path]:
    return sorted(FIXTURES.glob(f"{prefix}*.jsonl"))


def test_inspect_finds_every_fixture_known_to_the_spec() -> None:
    result = inspect(REPO, *map(str, sorted(FIXTURES.glob("*.jsonl"))))
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr
    summaries = ("every key is known to the spec", "nothing departs from OpenAI's definition")
    assert sum(map(result.stdout.count, summaries)) == len(FIXTURE_STREAMS)
    assert "unknown to the spec" not in result.stdout


def test_inspect_explains_a_vendor_key_and_a_quirk() -> None:
    result = inspect(REPO, str(FIXTURES / "mistral__magistral-content-array-short.jsonl"))
    assert result.returncode == 0, result.stderr
    line = next(row for row in result.stdout.splitlines() if "$.choices[].delta.content" in row)
    assert re.search(
        r"list \(OpenAI has string\) +3 +1  text, reasoning +Mistral AI, spec/vendors/mistral\.yaml:"
        r" https://",
        line,
    ), line
    groq = inspect(REPO, str(FIXTURES / "groq__qwen3-32b-reasoning-field.jsonl"))
    row = next(row for row in groq.stdout.splitlines() if ".delta.reasoning " in row)
    assert re.search(r" key +963 +2  reasoning +vLLM ", row), "a vendor key's meaning is shown"


def test_inspect_credits_only_the_relaxation_that_allows_the_departure() -> None:
    path = FIXTURES / "azure__docs-async-filter-prompt-annotations-elided.jsonl"
    result = inspect(REPO, "--format", "json", str(path))
    assert result.returncode == 0, result.stderr
    [report] = json.loads(result.stdout)
    found = {
        d["path"]: (d["what"], d["count"], d["first"], d["explained_by"])
        for d in report["departures"]
    }
    what, count, first, by = found["$.choices[].delta"]
    assert (what, count, first) == ("missing", 2, 6)
    assert by.startswith("Azure OpenAI, spec/vendors/azure.yaml: https://")  # not Mistral's
    assert found["$.object"][0] == "value '' (not one of OpenAI's ChunkObject)"
    assert found["$.object"][3] == "the lenient profile (its enums are open)"


def test_inspect_credits_the_lenient_profile_with_a_key_left_out_or_null() -> None:
    chunk = (
        '{"id":"c","object":"chat.completion.chunk","created":1,"choices":[],'
        '"usage":{"prompt_tokens":1,"completion_tokens":null,"total_tokens":1}}'
    )
    result = inspect(REPO, "--format", "json", stdin=f"{chunk}\n".encode())
    assert result.returncode == 0, result.stdout  # read, so nothing is unknown
    [report] = json.loads(result.stdout)
    found = {d["path"]: (d["what"], d["explained_by"]) for d in report["departures"]}
    assert found == {
        "$.model": ("missing", "the lenient profile (it reads any key absent)"),
        "$.usage.completion_tokens": ("null", "the lenient profile (it reads any key as null)"),
    }


def test_inspect_reads_server_sent_events_from_stdin_as_json() -> None:
    chunk = (
        '{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"x_new":1}'
    )
    stream = f": keep-alive\n\ndata: {chunk}\n\nevent: ping\ndata: {{}}\n\ndata: [DONE]\n\n"
    result = inspect(REPO, "--format", "json", stdin=stream.encode())
    assert result.returncode == 1, result.stderr  # x_new is unknown
    [report] = json.loads(result.stdout)
    assert (report["format"], report["chunks"], report["done"]) == ("sse", 1, True)
    assert report["other_events"] == ["ping"]
    [departure] = report["departures"]
    assert departure == {
        "path": "$.x_new",
        "what": "key",
        "count": 1,
        "first": 1,
        "explained_by": None,
        "known": False,
        "means": [],
    }


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"", "empty"),
        (b"\x89PNG\r\n\x1a\n\x00\x00", "binary data"),
        (b"\xff\xfe{", "not UTF-8 text"),
        (b"<html>hello</html>\n", "neither server-sent events nor JSON Lines"),
        (b'{"id": 1}\n{"id": \n', ":2: not JSON"),
        (b'{"id": 1}\n[1, 2]\n', ":2: a JSON list, not an object"),
        (b"data: not json\n\n", "an event's data is not JSON"),
        (b"data: {oops\n\n", "event 1: not JSON"),
        (b": only a comment\n\n", "no chunk in it"),
    ],
    ids=[
        "empty",
        "binary",
        "not-utf8",
        "not-sse",
        "bad-json-line",
        "not-an-object",
        "sse-text",
        "sse-bad-json",
        "no-chunk",
    ],
)
def test_an_unreadable_capture_says_why_and_exits_2(
    tmp_path: Path, data: bytes, reason: str
) -> None:
    path = tmp_path / "capture.txt"
    path.write_bytes(data)
    result = inspect(REPO, str(path))
    assert result.returncode == 2
    assert result.stderr.startswith(f"error: {path}") and reason in result.stderr, result.stderr
    assert "Traceback" not in result.stderr


def test_a_missing_capture_exits_2(tmp_path: Path) -> None:
    result = inspect(REPO, str(tmp_path / "nowhere.sse"))
    assert result.returncode == 2 and "No such file" in result.stderr


@pytest.fixture(scope="module", params=sorted(DRAFTED))
def drafted(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> tuple[str, Path]:
    vendor: str = request.param
    root = without(vendor, tmp_path_factory.mktemp(vendor) / "project")
    paths = [str(p) for p in captures(DRAFTED[vendor])]
    before = inspect(root, *paths)
    result = run_generator(root, "new-vendor", vendor, "--from", *paths)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"wrote spec/vendors/{vendor}.yaml: ")
    generated = run_generator(root, "generate")
    assert generated.returncode == 0, generated.stderr
    if "unknown to the spec" in before.stdout:
        assert before.returncode == 1
    return vendor, root


def test_a_drafted_vendor_leaves_nothing_unknown(drafted: tuple[str, Path]) -> None:
    vendor, root = drafted
    result = inspect(root, *map(str, captures(DRAFTED[vendor])))
    assert result.returncode == 0, result.stdout[-3000:]
    assert "unknown to the spec" not in result.stdout


@pytest.mark.parametrize("target", TARGETS)
def test_a_drafted_vendor_round_trips_its_captures_typed(
    drafted: tuple[str, Path], target: str
) -> None:
    vendor, root = drafted
    module = load_module(root / f"generated/{target}/chat.py")
    for stream in (s for s in FIXTURE_STREAMS if s.name.startswith(DRAFTED[vendor])):
        for line, text in stream.chunks:
            chunk = module.loads(text)
            where = f"{stream.name}:{line}"
            assert_same_json(
                json.loads(module.dumps(chunk)),
                normalised(json.loads(text), {"choices": []}),
                where,
            )
            # Typed: no object keeps a key in its extra (TypedDicts are dicts: no extra).
            assert not list(extras(chunk, "$")), (where, list(extras(chunk, "$")))


def extras(value: Any, path: str) -> Iterator[str]:
    """Where an object of a dataclasses, pydantic or msgspec module keeps unknown keys."""
    if isinstance(value, list):
        for index, item in enumerate(value):
            yield from extras(item, f"{path}[{index}]")
        return
    if isinstance(value, dict):
        for key, item in value.items():
            yield from extras(item, f"{path}.{key}")
        return
    if hasattr(type(value), "model_fields"):  # pydantic
        names, extra = list(type(value).model_fields), value.model_extra
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        instance: Any = value
        names, extra = [f.name for f in dataclasses.fields(instance)], instance.extra
    elif hasattr(type(value), "__struct_fields__"):  # msgspec
        names, extra = list(type(value).__struct_fields__), value.extra
    else:
        return
    if extra:
        yield f"{path}: {sorted(extra)}"
    for name in names:
        if name != "extra":
            yield from extras(getattr(value, name), f"{path}.{name}")


def test_drafting_is_deterministic_and_says_what_others_declare(tmp_path: Path) -> None:
    texts = []
    for run, seed in (("one", "1"), ("two", "2")):
        root = without("groq", tmp_path / run)
        paths = [str(p) for p in captures("groq__")]
        assert (
            run_generator(root, "new-vendor", "groq", "--from", *paths, hash_seed=seed).returncode
            == 0
        )
        texts.append((root / "spec/vendors/groq.yaml").read_text(encoding="utf-8"))
    assert texts[0] == texts[1]
    text = texts[0]
    # reasoning is vLLM's (groq is listed under its `also`): named, not declared again.
    assert "# Seen, and declared already: $.choices[].delta.reasoning by vLLM" in text
    assert not re.search(r"^    reasoning:", text, re.M)
    assert re.search(r"^  ChatCompletionChunk:\n    x_groq:\n      type: GroqXGroq\n", text, re.M)
    assert re.search(r"^    queue_time:\n      type: float\n", text, re.M)
    assert text.count("# REVIEW") > 10


def test_types_and_merge_rules_are_inferred_from_every_value(tmp_path: Path) -> None:
    base = '"id":"c","object":"chat.completion.chunk","created":1,"model":"m"'
    lines = [
        f'{{{base},"x_count":1,"x_ratio":1,"x_maybe":null,"x_label":"L","x_list":[1,2],'
        '"x_obj":{"a":1,"b":"s"},"choices":[{"index":0,"delta":{"x_text":"Hel"},"x_flag":true}]}',
        f'{{{base},"x_count":2,"x_ratio":1.5,"x_maybe":"m","x_label":"L","x_list":[],'
        '"x_obj":{"a":2},"choices":[{"index":0,"delta":{"x_text":"lo"},"x_flag":false}]}',
    ]
    capture = tmp_path / "acme.jsonl"
    capture.write_text("\n".join(lines) + "\n")
    root = copy_project(tmp_path / "project")
    assert run_generator(root, "new-vendor", "acme", "--from", str(capture)).returncode == 0
    drafted = yaml.safe_load((root / "spec/vendors/acme.yaml").read_text())
    chunk = drafted["fields"]["ChatCompletionChunk"]
    shapes = {
        key: (f["type"], f.get("nullable", False), f.get("merge")) for key, f in chunk.items()
    }
    assert shapes == {
        "x_count": ("int", False, None),
        "x_ratio": ("float", False, None),  # an int, then a float
        "x_maybe": ("string", True, None),
        "x_label": ("string", False, None),  # not a delta: never appended
        "x_list": ("list[int]", False, None),
        "x_obj": ("AcmeXObj", False, None),
    }
    assert drafted["fields"]["ChoiceDelta"]["x_text"]["merge"] == "append"
    assert drafted["fields"]["Choice"]["x_flag"]["type"] == "bool"
    assert drafted["types"]["AcmeXObj"]["fields"]["a"]["type"] == "int"
    assert "Seen in 1 of 2 `x_obj` objects" in drafted["types"]["AcmeXObj"]["fields"]["b"]["doc"]
    assert run_generator(root, "generate").returncode == 0
    assert inspect(root, str(capture)).returncode == 0
    module = load_module(root / "generated/dataclasses/chat.py")
    accumulator = module.ChunkAccumulator()
    for line in lines:
        chunk_ = module.loads(line)
        assert not list(extras(chunk_, "$"))
        accumulator.add(chunk_)
    assert accumulator.result().choices[0].message.x_text == "Hello"  # appended


def test_an_integer_is_a_number_where_openai_has_a_float() -> None:
    chunk = {
        "id": "c",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": [
            {
                "index": 0,
                "delta": {},
                "logprobs": {
                    "content": [{"token": "a", "logprob": 0, "bytes": [97], "top_logprobs": []}]
                },
            }
        ],
    }
    result = inspect(REPO, stdin=(json.dumps(chunk) + "\n").encode())
    assert result.returncode == 0, result.stdout
    assert "nothing departs from OpenAI's definition" in result.stdout, result.stdout


def test_a_value_a_vendor_type_refuses_is_unknown() -> None:
    chunk = {
        "id": "c",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": [],
        "x_groq": {"id": "r", "usage": {"queue_time": "slow"}},
    }
    result = inspect(REPO, "--format", "json", stdin=(json.dumps(chunk) + "\n").encode())
    assert result.returncode == 1, result.stdout
    [report] = json.loads(result.stdout)
    found = {d["path"]: d for d in report["departures"]}
    refused = found["$.x_groq.usage.queue_time"]
    assert (refused["what"], refused["known"]) == ("string (the spec has float)", False)
    assert found["$.x_groq"]["explained_by"].startswith("Groq, spec/vendors/groq.yaml: ")


def test_a_draft_guesses_what_a_key_means(tmp_path: Path) -> None:
    """A streamed text named like reasoning, and a usage count named like cached tokens,
    are drafted with a `means:` to review, below every spelling the spec has; after
    `make generate` the summary reads them."""
    base = '"id":"c","object":"chat.completion.chunk","created":1,"model":"m"'
    lines = [
        f'{{{base},"choices":[{{"index":0,"delta":{{"x_thoughts":"Hm"}}}}]}}',
        f'{{{base},"choices":[{{"index":0,"delta":{{"x_thoughts":"m.","x_label":"a"}}}}]}}',
        f'{{{base},"choices":[],"usage":{{"prompt_tokens":3,"completion_tokens":1,'
        '"total_tokens":4,"x_cache_read":2}}',
    ]
    capture = tmp_path / "acme.jsonl"
    capture.write_text("\n".join(lines) + "\n")
    root = copy_project(tmp_path / "project")
    assert run_generator(root, "new-vendor", "acme", "--from", str(capture)).returncode == 0
    text = (root / "spec/vendors/acme.yaml").read_text()
    assert "means: {meaning: reasoning, precedence: -5}  # REVIEW: what it means" in text
    assert "means: {meaning: cached_prompt_tokens, precedence: -5}  # REVIEW" in text
    drafted = yaml.safe_load(text)
    assert "means" not in drafted["fields"]["ChoiceDelta"]["x_label"], "a name means nothing"
    assert run_generator(root, "generate").returncode == 0
    module = load_module(root / "generated/dataclasses/chat.py")
    accumulator = module.ChunkAccumulator()
    for line in lines:
        accumulator.add(module.loads(line))
    summary = accumulator.summary()
    assert summary.choices[0].reasoning == "Hmm."
    assert summary.usage.cached_prompt_tokens == 2


# Captures whose keys a plain draft would declare in ways the generator refuses, by the
# vendor name they are drafted under, with what the draft must say it changed.
BASE = '"id":"c","object":"chat.completion.chunk","created":1,"model":"m"'
AWKWARD = {
    "message beside delta": (
        "pplx",
        [
            f'{{{BASE},"choices":[{{"index":0,"delta":{{"role":"assistant","content":"He"}},'
            '"message":{"role":"assistant","content":"He"}}]}',
            f'{{{BASE},"choices":[{{"index":0,"delta":{{"content":"llo"}},'
            '"message":{"role":"assistant","content":"Hello"}}]}',
            f'{{{BASE},"choices":[{{"index":0,"delta":{{}},"finish_reason":"stop",'
            '"message":{"role":"assistant","content":"Hello"}}]}',
        ],
        ["Choice.message and Choice.delta both merge into 'message'"],
    ),
    "names the spec cannot take": (
        "acme",
        [
            f'{{{BASE},"on":1,"null":"x","x-trace":1,"x_trace_":2,"a\\"b":3,"":4,"x_meta":{{}},'
            '"choices":[{"index":0,"delta":{"content":"Hi"}}]}',
        ],
        ["empty field name", "has a quote", "both become the Python name 'x_trace_'"],
    ),
    "names the modules use, a tag left out": (
        "chunk",
        [
            f'{{{BASE},"choices":[],"decode_error":{{"why":"x"}}}}',
            f'{{{BASE},"choices":[],"moderation":{{"input":{{"model":"m","results":[]}},'
            '"output":{"type":"error","code":"c","message":"m"}}}',
        ],
        ["would shadow a name the generated modules use", "cannot be relaxed"],
    ),
}


@pytest.fixture(scope="module", params=sorted(AWKWARD))
def awkward(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> tuple[str, Path, Path]:
    """A case of AWKWARD drafted in a copy of the project, which is then generated."""
    case: str = request.param
    vendor, lines, _ = AWKWARD[case]
    folder = tmp_path_factory.mktemp(vendor)
    capture = folder / f"{vendor}.jsonl"
    capture.write_text("\n".join(lines) + "\n", encoding="utf-8")
    root = copy_project(folder / "project")
    result = run_generator(root, "new-vendor", vendor, "--from", str(capture))
    assert result.returncode == 0, result.stderr
    assert "changed so that it generates" in result.stdout
    generated = run_generator(root, "generate")
    assert generated.returncode == 0, generated.stderr
    return case, root, capture


def test_a_draft_always_generates(awkward: tuple[str, Path, Path]) -> None:
    """A declaration the generator refuses is changed to one it takes (a chunk field
    `merge: drop`) or left out as a comment, marked for review with the generator's
    message; the project then generates (the fixture), and every chunk the repository's
    own modules read is read by the drafted ones and written back as it came."""
    case, root, _ = awkward
    vendor, lines, said = AWKWARD[case]
    text = (root / f"spec/vendors/{vendor}.yaml").read_text(encoding="utf-8")
    for message in said:
        assert re.search(rf"# REVIEW: .*since the generator says: .*{re.escape(message)}", text)
    for target in TARGETS:
        module = load_module(root / f"generated/{target}/chat.py")
        own = TARGET_MODULES[target]
        for line in lines:
            if outcome(own, line).startswith("ok"):
                assert_same_json(json.loads(module.dumps(module.loads(line))), json.loads(line))


@pytest.mark.parametrize("awkward", ["message beside delta"], indirect=True)
def test_a_message_beside_delta_is_kept_in_the_chunk_and_not_merged(
    awkward: tuple[str, Path, Path],
) -> None:
    case, root, capture = awkward
    vendor, lines, _ = AWKWARD[case]
    drafted = yaml.safe_load((root / f"spec/vendors/{vendor}.yaml").read_text())
    assert drafted["fields"]["Choice"]["message"]["merge"] == "drop"
    assert inspect(root, str(capture)).returncode == 0  # typed: nothing left unknown
    for target in TARGETS:
        module = load_module(root / f"generated/{target}/chat.py")
        accumulator = module.ChunkAccumulator()
        for line in lines:
            accumulator.add(module.loads(line))
        completion = json.loads(module.dumps(accumulator.result()))
        assert completion["choices"][0]["message"] == {"role": "assistant", "content": "Hello"}


def test_a_project_that_fails_without_the_draft_gives_its_error_back() -> None:
    """An error that names no line of the draft changes the draft's last entry, then
    the one before, until none is left; then the error is the project's own."""
    fields = [
        Entry(declared=Declared("int", False, "A count."), key=key, indent="    ", merges=True)
        for key in ("x_a", "x_b")
    ]
    owner = Entry(head=["  ChatCompletionChunk:"], entries=fields, indent="  ")
    drafted = Draft(
        "spec/vendors/x.yaml", ["vendor: x"], [Entry(head=["fields:"], entries=[owner])]
    )
    tried: list[str] = []

    def generates(text: str) -> None:
        tried.append(text)
        raise SpecError("broken before the draft", "spec/chat_completion_chunk.yaml", 3)

    with pytest.raises(SpecError, match="broken before the draft"):
        generating(drafted, generates)
    assert len(tried) == 5  # as drafted; x_b dropped, left out; x_a dropped, left out
    assert "merge: drop" in tried[1] and "# REVIEW: left out" in tried[2]
    assert "# REVIEW: left out, as every entry in it is" in tried[-1]
    assert not yaml.safe_load(tried[-1]).get("fields")
