"""The Messages request (`POST /v1/messages` body) in spec/messages_stream_event.yaml against
anthropic-sdk-python's own TypedDict params, by introspection (the comparison of
tests/helpers/sdk_drift.py, read through `sdk_fields`), and real request bodies read with
`loads_request` and written back with `dumps` in the four targets.

Every TypedDict that `MessageCreateParamsBase` reaches has a spec type with the same wire
keys, the same required keys, nullable split, compatible types and union members, or is
kept whole as listed below with why; and every request type of the spec stands for one.
The bodies and where they come from: tests/fixtures/messages/requests/SOURCES.md."""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from types import ModuleType
from typing import Any, Literal, Optional, Required

import pytest
from anthropic.types import ThinkingBlockParam, ToolResultBlockParam
from anthropic.types.message_create_params import MessageCreateParamsBase
from typing_extensions import TypedDict, is_typeddict

from tests.helpers.project import REPO
from tests.helpers.sdk_drift import Allowed, Comparison, Family, reachable, stray_types, uncompared

RENAMED = {
    "MessageCreateParamsBase": "MessageCreateRequest",
    # The callers of the request are the response's, key for key.
    "DirectCallerParam": "DirectCaller",
    "ServerToolCallerParam": "ServerToolCaller",
    "ServerToolCaller20260120Param": "ServerToolCaller20260120",
}

COLLAPSED = {
    "MessageParam": "the SDK's User-, Assistant- and SystemMessageParam differ only in"
    " `role` (and the system turn's narrower content): one type with an open role",
}

FLATTENED = {
    "ToolParam": "the SDK's ToolUnionParam is a custom tool, whose `type` may be left out,"
    " and twenty server tools; a named union needs its key on every value, so a server tool"
    " reads as ToolParam too, its own keys kept whole among the unknown keys",
}

OTHER_MEMBERS = {
    ("ToolResultContentBlockParam", "BrowserStateBlockParam"): "a browser toolset's tabs"
    " and downloads, sent back as they came: read by the Other member, kept whole",
}

EXTRA_KEYS = {
    ("MessageCreateRequest", "stream"): "the SDK's MessageCreateParams is two TypedDicts told"
    " apart by `stream` (Literal[False] / Literal[True]): one bool key reads both",
    ("MessageCreateRequest", "temperature"): "no longer in SDK 2.10.0; sent by clients",
    ("MessageCreateRequest", "top_p"): "no longer in SDK 2.10.0; sent by clients",
    ("MessageCreateRequest", "top_k"): "no longer in SDK 2.10.0; sent by clients",
}

LOOSER = {
    ("ToolParam", "input_schema"): "a client tool needs it; a server tool, read as"
    " ToolParam, has none",
}

KEPT_AS_JSON = {
    ("ToolParam", "input_schema"): "a JSON Schema, kept as written",
    ("TextBlockParam", "citations"): "the citations a response gave, sent back as they came",
    ("ImageBlockParam", "source"): "base64 data, a URL or a file id; the SDK's `data` also"
    " takes a file object that it encodes, so its shape is the SDK's, not the wire's",
    ("DocumentBlockParam", "source"): "five kinds of source (one of them content blocks),"
    " kept as sent, as an image's",
    ("WebSearchToolResultBlockParam", "content"): "a server tool's result, sent back as the"
    " response gave it (the response side types it: WebSearchToolResultBlock)",
    ("WebFetchToolResultBlockParam", "content"): "as a web search's",
    ("CodeExecutionToolResultBlockParam", "content"): "as a web search's",
    ("BashCodeExecutionToolResultBlockParam", "content"): "as a web search's",
    ("TextEditorCodeExecutionToolResultBlockParam", "content"): "as a web search's",
    ("ToolSearchToolResultBlockParam", "content"): "as a web search's",
}

ROOTS: tuple[tuple[Any, str], ...] = ((MessageCreateParamsBase, "MessageCreateRequest"),)

FAMILY = Family(
    "messages",
    "spec/messages_stream_event.yaml",
    Allowed(
        renamed=RENAMED,
        collapsed=COLLAPSED,
        flattened=FLATTENED,
        other_members=OTHER_MEMBERS,
        extra_keys=EXTRA_KEYS,
        looser=LOOSER,
        kept_as_json=KEPT_AS_JSON,
    ),
)
COMPARISON = Comparison(FAMILY).run(ROOTS)

# The request's own types: those the request reaches and the stream does not.
STREAM_TYPES = {"DirectCaller", "ServerToolCaller", "ServerToolCaller20260120", "OtherCaller"}


def test_every_sdk_param_matches_its_spec_type() -> None:
    assert not COMPARISON.problems, "\n".join(COMPARISON.problems)


def test_every_sdk_param_reachable_has_a_spec_type_or_is_kept_whole() -> None:
    """The mapping is total: no TypedDict the request reaches is left out. (The SDK's
    response models that its content unions also take are compared by
    tests/runtime/messages/test_spec.py.)"""
    missing = [
        f"{m.__module__}.{m.__name__}"
        for m in uncompared(COMPARISON, (a for a, _ in ROOTS))
        if is_typeddict(m)
    ]
    assert not missing, f"SDK params the spec has no type for: {missing}"
    assert len(COMPARISON.visited) >= 35
    # The server tools (read whole by ToolParam) and their results (kept as JSON).
    kept = COMPARISON.kept.keys() | COMPARISON.kept_whole.keys()
    assert len(kept) >= 100, "the server tools and results are kept whole"


def request_types() -> set[str]:
    """The spec types the request reaches (and the stream's do not)."""
    from generator.ir.load import load_spec

    core = next(c for c in load_spec(REPO).families if c.family == "messages")
    types = {t.name: t for t in core.types}
    unions = {u.name: u.members for u in core.unions}
    seen: set[str] = set()
    todo = ["MessageCreateRequest"]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        names = unions.get(name, ())
        if name in types:
            words = " ".join(f.type for f in types[name].fields)
            names = tuple(
                w for w in words.replace("[", " ").replace("]", " ").replace("|", " ").split()
            )
        todo += [n for n in names if n in types or n in unions]
    return {n for n in seen if n in types}


def test_every_request_type_stands_for_an_sdk_param_or_keeps_unknowns() -> None:
    ours = request_types() - STREAM_TYPES
    left = sorted(ours & set(stray_types(COMPARISON)))
    assert not left, f"request types no SDK param maps to: {left}"
    assert not COMPARISON.unused(), "departures listed that the spec does not make"
    assert {"ContentBlockParam", "ThinkingConfigParam", "ToolChoiceParam"} <= COMPARISON.unions


def test_every_request_union_is_open() -> None:
    for name in COMPARISON.unions:
        members = FAMILY.unions[name].members
        others = [m for m in members if FAMILY.is_other(m)]
        assert len(others) == 1 and others[0].startswith("Other"), name


# --- the comparison fails where the SDK's params grow --------------------------------


class ThinkingWithANewKey(ThinkingBlockParam, total=False):
    budget_hint: int


class ToolResultWithRequiredContent(TypedDict, total=False):
    tool_use_id: Required[str]
    type: Required[Literal["tool_result"]]
    content: Required[str]
    is_error: bool
    cache_control: Optional[dict[str, object]]  # noqa: UP045 (the SDK's own spelling)
    toolset_name: Optional[str]  # noqa: UP045


class HologramBlockParam(TypedDict, total=False):
    type: Required[Literal["hologram"]]
    frames: list[int]


class MessageWithAHologram(TypedDict, total=False):
    role: Required[Literal["user"]]
    content: Required[str | list[ToolResultBlockParam | HologramBlockParam]]


@pytest.mark.parametrize(
    ("param", "spec", "expected"),
    [
        (ThinkingWithANewKey, "ThinkingBlockParam", "ThinkingBlockParam.budget_hint: in the SDK's"),
        (ToolResultWithRequiredContent, "ToolResultBlockParam", "content: required is False"),
        (MessageWithAHologram, "MessageParam", "union ContentBlockParam lacks HologramBlockParam"),
    ],
)
def test_a_change_in_the_sdk_params_fails_naming_the_type_and_key(
    param: type[Any], spec: str, expected: str
) -> None:
    problems = Comparison(FAMILY).run([(param, spec)]).problems
    assert any(expected in problem for problem in problems), problems


def test_the_typeddict_walker_reads_required_keys() -> None:
    assert HologramBlockParam in reachable([MessageWithAHologram])
    from tests.helpers.sdk_drift import sdk_fields

    fields = sdk_fields(MessageCreateParamsBase)
    required = {key for key, (_, needed) in fields.items() if needed}
    assert required == {"model", "max_tokens", "messages"}
    assert {"system", "tools", "thinking", "tool_choice"} < fields.keys()


# --- real request bodies, read and written back in the four targets -------------------

BODIES = sorted((REPO / "tests/fixtures/messages/requests").glob("*.json"))
TARGETS = ("dataclasses", "typeddicts", "pydantic", "msgspec")


def module(target: str) -> ModuleType:
    return importlib.import_module(f"generated.{target}.messages")


def test_the_bodies_are_there() -> None:
    assert len(BODIES) >= 15
    listed = (REPO / "tests/fixtures/messages/requests/SOURCES.md").read_text(encoding="utf-8")
    for path in BODIES:
        assert path.name in listed or path.name.split("__")[0] in listed, path.name


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("path", BODIES, ids=lambda p: p.stem)
def test_a_real_request_body_round_trips(target: str, path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    mod = module(target)
    request = mod.loads_request(text)
    assert json.loads(mod.dumps(request)) == json.loads(text)


def blocks(request: Any, target: str) -> list[list[Any]]:
    messages = request["messages"] if target == "typeddicts" else request.messages
    out: list[list[Any]] = []
    for message in messages:
        content = message["content"] if target == "typeddicts" else message.content
        # A string, or a list of blocks.
        out.append([content] if isinstance(content, str) else content)
    return out


@pytest.mark.parametrize("target", TARGETS)
def test_a_two_turn_request_with_thinking_and_a_tool_result_is_typed(target: str) -> None:
    path = (
        REPO / "tests/fixtures/messages/requests/anthropic-docs__thinking-redacted-tool-result.json"
    )
    mod = module(target)
    request = mod.loads_request(path.read_text(encoding="utf-8"))
    turns = blocks(request, target)
    assert [len(t) for t in turns] == [1, 3, 1]
    if target == "typeddicts":
        assert turns[1][0]["signature"].startswith("BDaL4")
        return
    kinds = [type(b).__name__.removeprefix("_").removesuffix("Read") for b in turns[1]]
    assert kinds == ["ThinkingBlockParam", "RedactedThinkingBlockParam", "ToolUseBlockParam"]
    assert turns[1][0].signature.startswith("BDaL4")
    assert turns[1][2].input == {"location": "Paris"}
    result = turns[2][0]
    assert type(result).__name__.removeprefix("_").removesuffix("Read") == "ToolResultBlockParam"
    assert result.tool_use_id == turns[1][2].id
    assert request.thinking.budget_tokens == 10000


UNKNOWN: dict[str, Any] = {
    "model": "claude-sonnet-4-5",
    "max_tokens": 64,
    "messages": [
        {
            "role": "user",
            "content": [
                {"type": "hologram", "frames": [1, 2], "meta": {"fps": 24}},
                {"type": "text", "text": "hi", "brand_new_key": [1, {"a": None}]},
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_1",
                    "content": [{"type": "browser_state", "tabs": [], "x": 1}],
                },
            ],
            "mood": "curious",
        }
    ],
    "tools": [
        {"name": "get", "input_schema": {"type": "object"}, "unheard_of": True},
        {"type": "web_search_20250305", "name": "web_search", "max_uses": 3},
    ],
    "thinking": {"type": "telepathic", "depth": 3},
    "tool_choice": {"type": "whatever", "k": 1},
    "context_management": {"edits": [{"type": "clear_thinking_20251015"}]},
}


@pytest.mark.parametrize("target", TARGETS)
def test_unknown_block_types_and_keys_are_kept_whole(target: str) -> None:
    mod = module(target)
    request = mod.loads_request(json.dumps(UNKNOWN))
    assert json.loads(mod.dumps(request)) == UNKNOWN
    if target == "typeddicts":
        return
    [turn] = blocks(request, target)
    names = [type(b).__name__.removeprefix("_").removesuffix("Read") for b in turn]
    assert names == ["OtherContentBlockParam", "TextBlockParam", "ToolResultBlockParam"]
    other = type(request.thinking).__name__.removeprefix("_").removesuffix("Read")
    assert other == "OtherThinkingConfigParam"
    tools = [type(t).__name__.removeprefix("_").removesuffix("Read") for t in request.tools]
    assert tools == ["ToolParam", "ToolParam"]


@pytest.mark.parametrize("target", TARGETS)
def test_a_missing_required_key_is_refused_in_the_strict_sense(target: str) -> None:
    """`messages` is required by the SDK: the lenient profile still reads a body without it
    (every key optional), but a block without its `type` is an error in every profile."""
    mod = module(target)
    body = {
        "model": "m",
        "max_tokens": 1,
        "messages": [{"role": "user", "content": [{"text": "x"}]}],
    }
    with pytest.raises(mod.ChunkDecodeError) as error:
        mod.loads_request(json.dumps(body))
    assert "type" in str(error.value)
