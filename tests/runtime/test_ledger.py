"""The ledger of issue 41: nothing a stream says is dropped silently.

For every direction (chat, Messages and Responses, each to the other two and to
itself), random sources with every meaning-bearing field the spec knows (tests/helpers/ledger.py
draws them in no protocol's terms and spells them in the source's) are read by the
source's reader, which must read each meaning the source holds; written to the target
by its writer; and read back by the target's reader, which must hold each meaning the
source's reader read, unless the writer's `dropped` names it. Never neither. The
Messages and Responses streams written are judged by the invariants the official SDKs
need (tests/helpers/messages_invariants.py, tests/helpers/responses_invariants.py), as the bridge
tests judge captured streams.

The meanings come from the spec (`meanings:`), the runtime (`MEANINGS`), the kinds the
`Part` docstring lists and the fields of `UsageSummary` and `Citation`: a meaning or a
kind without a rule fails `test_every_meaning_has_a_ledger_rule`.

`make test` runs each direction on a few dozen examples (the "ledger" settings below);
`make fuzz` (HYPOTHESIS_PROFILE=fuzz) on many more, in all four targets.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import os
from types import ModuleType
from typing import Any, Final

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from generator.runtime.parts import MEANINGS
from tests.helpers import ledger
from tests.helpers.ledger import (
    ODDITIES,
    Block,
    Call,
    Choice,
    Cite,
    Reasoning,
    Redacted,
    Refusal,
    Server,
    Text,
    Turn,
    Usage,
)
from tests.helpers.messages_invariants import check_messages
from tests.helpers.responses_invariants import check_responses
from tests.helpers.support import count_examples, runtime
from tests.runtime.requests.test_roundtrip import requests

PROTOCOLS: Final = ("chat", "messages", "responses")
DIRECTIONS: Final = [(s, t) for s in PROTOCOLS for t in PROTOCOLS]
FUZZ: Final = os.environ.get("HYPOTHESIS_PROFILE") == "fuzz"
TARGETS: Final = (
    ("msgspec", "dataclasses", "typeddicts", "pydantic") if FUZZ else ("msgspec", "dataclasses")
)
LEDGER: Final = settings(
    max_examples=1_000 if FUZZ else 30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
"""30 examples per direction and target in `make test` (540 streams), 1,000 under fuzz
(in four targets: 36,000)."""
REQUEST_LEDGER: Final = settings(LEDGER, max_examples=1_000 if FUZZ else 15)
"""15 per direction and target in `make test` (450 requests: a request costs twice a
stream), 1,000 under fuzz (60,000)."""


def chunks_module(target: str) -> ModuleType:
    return importlib.import_module(f"generated.{target}.chat")


def usage_fields(chunks: ModuleType) -> list[str]:
    return [f.name for f in dataclasses.fields(chunks.UsageSummary)]


def chat_cache_write_key() -> str | None:
    """Chat's spelling of cache-write tokens, once the spec knows one (OpenRouter's
    `prompt_tokens_details.cache_write_tokens`): until then a chat source says none."""
    spec = (ledger.ROOT / "spec").glob("**/*.yaml")
    known = any("cache_write_tokens" in path.read_text() for path in spec)
    return "cache_write_tokens" if known else None


# --- drawing sources --------------------------------------------------------------------

TEXT = st.text(st.sampled_from('ab \n2é😀"\\{'), min_size=1, max_size=8)
OPAQUE = st.text(st.sampled_from("abcXYZ019+/="), min_size=4, max_size=12)
NAMES = st.sampled_from(["get_weather", "f", "lookup_2"])
JSON_ARGS = st.dictionaries(
    st.sampled_from(["city", "n", "x"]), st.integers(0, 9) | TEXT, max_size=2
)


@st.composite
def reasonings(draw: st.DrawFn, protocol: str) -> Reasoning:
    parts = tuple(draw(st.lists(TEXT, min_size=1, max_size=3 if protocol == "responses" else 1)))
    signature = encrypted = None
    if protocol in ("chat", "messages"):
        signature = draw(st.none() | OPAQUE)
    if protocol == "responses":
        encrypted = draw(st.none() | OPAQUE)
    return Reasoning("".join(parts), parts, signature, encrypted)


TITLES: Final = {"https://a.example/": "A", "https://b.example/x": "B"}
"""One title per page: the summary holds each source once, with the first title."""


@st.composite
def cites(draw: st.DrawFn, protocol: str) -> Cite:
    kinds = ["url"] if protocol == "chat" else ["url", "document"]
    kind = draw(st.sampled_from(kinds))
    if kind == "url":
        url = draw(st.sampled_from(sorted(TITLES)))
        # Responses requires a title ("" reads as none).
        titled = protocol == "responses" or draw(st.booleans())
        return Cite("url", url, TITLES[url] if titled else None)
    if protocol == "responses":
        return Cite("document", draw(st.sampled_from(["file-1", "file-2"])), "notes.pdf")
    return Cite("document", "", draw(st.sampled_from(["Doc A", "Doc B"])))


@st.composite
def calls(draw: st.DrawFn, protocol: str, number: int) -> Call:
    custom = protocol != "messages" and draw(st.integers(0, 4)) == 0
    if custom:
        arguments = draw(TEXT)
    elif protocol != "messages" and draw(st.integers(0, 5)) == 0:
        arguments = draw(st.sampled_from(['{"x":', "not json", '{"a": 1} trailing']))
    else:
        arguments = json.dumps(draw(JSON_ARGS))
    prefix = "toolu_" if protocol == "messages" else "call_"
    return Call(f"{prefix}{number}", draw(NAMES), arguments, custom)


@st.composite
def blocks(draw: st.DrawFn, protocol: str) -> tuple[Block, ...]:
    kinds = ["reasoning", "redacted", "text", "text", "refusal", "call", "call"]
    if protocol != "chat":
        kinds.append("server")
    drawn: list[Block] = []
    for kind in draw(st.lists(st.sampled_from(kinds), max_size=5)):
        if kind == "reasoning":
            drawn.append(draw(reasonings(protocol)))
        elif kind == "redacted":
            drawn.append(Redacted(draw(OPAQUE)))
        elif kind == "text":
            notes = tuple(draw(st.lists(cites(protocol), max_size=2)))
            drawn.append(Text(draw(TEXT), notes))
        elif kind == "refusal":
            drawn.append(Refusal(draw(TEXT)))
        elif kind == "call":
            drawn.append(draw(calls(protocol, len(drawn))))
        else:
            drawn.append(Server("web_search", draw(TEXT)))
    return tuple(drawn)


def finishes(protocol: str, called: bool) -> st.SearchStrategy[str | None]:
    if protocol == "chat":
        return st.sampled_from(["tool_calls", "length"] if called else
                               ["stop", "length", "content_filter", "stop"]) | st.none()  # fmt: skip
    if protocol == "messages":
        return st.sampled_from(["tool_use", "max_tokens"] if called else
                               ["end_turn", "stop_sequence", "max_tokens", "refusal",
                                "pause_turn", "model_context_window_exceeded"])  # fmt: skip
    return st.sampled_from(["completed", "max_output_tokens", "content_filter"])


@st.composite
def usages(draw: st.DrawFn, protocol: str, cache_write: bool) -> Usage:
    count = st.integers(0, 50)
    cached = draw(st.none() | count)
    written = draw(st.none() | count) if cache_write else None
    prompt = draw(count) + (cached or 0) + (written or 0)
    cost = draw(st.none() | st.sampled_from([0.5, 0.00125])) if protocol != "messages" else None
    servers = draw(st.none() | st.integers(1, 3)) if protocol != "chat" else None
    return Usage(prompt, draw(count), cached, written, draw(st.none() | count), cost, servers)


@st.composite
def turns(draw: st.DrawFn, protocol: str) -> Turn:
    indexes = [0]
    if protocol == "chat":
        indexes = draw(st.sampled_from([[0], [0], [0, 1], [1, 0], [1]]))
    choices = []
    for index in indexes:
        drawn = draw(blocks(protocol))
        called = any(isinstance(b, Call) for b in drawn)
        choices.append(Choice(index, drawn, draw(finishes(protocol, called))))
    cache_write = protocol == "messages" or (
        protocol == "chat" and chat_cache_write_key() is not None
    )
    usage = draw(st.none() | usages(protocol, cache_write))
    error = draw(st.sampled_from([None] * 6 + ["", "overloaded"]))
    odd = frozenset(draw(st.sets(st.sampled_from(ODDITIES[protocol]))))
    cuts = tuple(draw(st.lists(st.integers(1, 5), min_size=1, max_size=3)))
    return Turn(protocol, tuple(choices), usage, error, odd, cuts)


# --- the ledger -------------------------------------------------------------------------


def judged(target: str, data: bytes) -> list[str]:
    """What the official SDKs' invariants say of a written stream (nothing: valid)."""
    try:
        if target == "messages":
            check_messages(data)
        elif target == "responses":
            check_responses(data)
    except AssertionError as error:
        return [f"the {target} stream breaks an SDK invariant: {error}"]
    return []


def ledger_problems(chunks: ModuleType, source: str, target: str, turn: Turn) -> list[str]:
    """Every meaning of the turn that is neither in the target nor in `dropped`, and
    every meaning of the turn its source's reader did not read."""
    body = ledger.RENDER[source](turn, chat_cache_write_key())
    said = ledger.truth(turn, usage_fields(chunks))
    read = ledger.ledger_of(ledger.read(chunks, source, body))
    found = ledger.Found()
    found.add(f"the {source} reader loses", ledger.missing(said, read))
    data, dropped = ledger.bridge(chunks, source, target, body)
    back = ledger.ledger_of(ledger.read(chunks, target, data))
    lost = ledger.missing(read, back)
    found.add(f"{source} -> {target} loses silently",
              [a for a in lost if not ledger.accounted(a, dropped)])  # fmt: skip
    found.problems += judged(target, data)
    return found.problems


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(
    ("source", "protocol"), DIRECTIONS, ids=[f"{s}-to-{t}" for s, t in DIRECTIONS]
)
@LEDGER
@given(data=st.data())
def test_nothing_is_dropped_silently(
    target: str, source: str, protocol: str, data: st.DataObject
) -> None:
    count_examples(f"ledger, {target}")
    turn = data.draw(turns(source), label="source")
    problems = ledger_problems(chunks_module(target), source, protocol, turn)
    assert not problems, "\n".join(problems)


def test_every_meaning_has_a_ledger_rule() -> None:
    """A new meaning (in the spec or the runtime), a new Part kind or a new count
    fails here until the ledger has a rule for it."""
    chunks = chunks_module("msgspec")
    meanings = [*ledger.spec_meanings(), *MEANINGS]  # the runtime's: not inlined
    kinds = ledger.part_kinds(chunks.Part)
    assert {"start", "text", "usage", "error"} <= set(kinds), "the Part docstring's list is read"
    assert not ledger.uncovered(meanings, kinds, usage_fields(chunks))


def test_the_ledger_finds_a_silent_loss() -> None:
    """The oracle itself: a writer that forgets a meaning without a word is caught, and
    one that names it in `dropped` is not."""
    chunks = chunks_module("msgspec")
    turn = Turn("chat", (Choice(0, (Text("Hi"), Call("call_1", "f", "{}")), "tool_calls"),),
                None, None)  # fmt: skip
    said = ledger.truth(turn, usage_fields(chunks))
    read = ledger.ledger_of(ledger.read(chunks, "chat", ledger.render_chat(turn, None)))
    assert not ledger.missing(said, read)
    forgot = [a for a in read if a.kind != "tool_call"]
    [lost] = ledger.missing(read, forgot)
    assert not ledger.accounted(lost, {})
    assert ledger.accounted(lost, {("tool_call", "no place for it"): 1})
    twice = [
        dataclasses.replace(a, value=(a.value[0] * 2,)) if a.kind == "text" else a for a in read
    ]
    assert [a.kind for a in ledger.missing(read, twice)] == ["text"], "a text said twice"


# --- requests ---------------------------------------------------------------------------

HOPS: Final[dict[str, list[tuple[str, str | None]]]] = {"chat": [("chat", "openai"), ("chat", "deepseek"), ("chat", "gemini")],
               "messages": [("messages", None)], "responses": [("responses", None)]}  # fmt: skip
"""The targets of a request: chat in a dialect of each kind (no reasoning, reasoning as
text, signatures on calls), Messages and Responses."""

IMAGE: Final = "https://img.example/cat.png"


Expected = list[tuple[str, str, Any]]
"""Meanings a request must hold, read by its protocol's reader: (kind, where, value) as
`ledger.request_holds` takes them."""


@st.composite
def enriched_requests(draw: st.DrawFn, protocol: str) -> tuple[dict[str, Any], Expected]:
    """A request of tests/runtime/requests/test_roundtrip.py with more that means something:
    an image with its detail, a refusal, a custom tool's call, a tool's result that is
    an error with an image, opaque reasoning, a cache mark."""
    data: dict[str, Any] = draw(requests(protocol))
    expected: Expected = []
    extras = draw(st.sets(st.sampled_from(["image", "refusal", "custom", "result", "opaque",
                                           "cache"])))  # fmt: skip
    key = "input" if protocol == "responses" else "messages"
    turns: list[dict[str, Any]] = data[key]
    first = next((t for t in turns if t.get("role") == "user"), None)
    said = draw(TEXT)
    image = (("kind", "image"), ("url", IMAGE))
    if first is not None and "image" in extras:
        first["content"] = [*_as_parts(protocol, first["content"]), _image(protocol)]
        detail = () if protocol == "messages" else (("detail", "low"),)
        expected.append(("_MediaPiece", "user", (*image, *detail)))
    if first is not None and "cache" in extras and protocol != "responses":
        first["content"] = _as_parts(protocol, first["content"])
        first["content"][0]["cache_control"] = {"type": "ephemeral"}
        expected.append(("cache", "user", None))
    if "refusal" in extras and protocol != "messages":
        turns.append(_refusal(protocol, said))
        expected.append(("_Turn.refusal", "assistant", said))
    if "custom" in extras and protocol != "messages":
        turns += _custom_call(protocol, said)
        expected.append(("_CallPiece.name", "call_custom", "patch"))
    if "result" in extras and protocol == "messages":
        turns += _error_result(said)
        expected += [
            ("_ResultPiece.is_error", "toolu_err", True),
            ("_MediaPiece", "toolu_err", image),
        ]
    if "opaque" in extras:
        value = draw(OPAQUE)
        turns += _opaque(protocol, value)
        expected.append(("_ReasoningPiece.encrypted", "assistant", value))
    if protocol != "responses" and turns and turns[-1]["role"] == "assistant":
        turns.append({"role": "user", "content": said})
    return data, expected


def _as_parts(protocol: str, content: Any) -> list[dict[str, Any]]:
    if isinstance(content, list):
        return list(content)
    kind = "input_text" if protocol == "responses" else "text"
    return [{"type": kind, "text": content}]


def _image(protocol: str) -> dict[str, Any]:
    if protocol == "chat":
        return {"type": "image_url", "image_url": {"url": IMAGE, "detail": "low"}}
    if protocol == "messages":
        return {"type": "image", "source": {"type": "url", "url": IMAGE}}
    return {"type": "input_image", "image_url": IMAGE, "detail": "low"}


def _refusal(protocol: str, said: str) -> dict[str, Any]:
    if protocol == "chat":
        return {"role": "assistant", "content": None, "refusal": said}
    return {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "refusal", "refusal": said}],
    }


def _custom_call(protocol: str, said: str) -> list[dict[str, Any]]:
    if protocol == "chat":
        call = {"id": "call_custom", "type": "custom", "custom": {"name": "patch", "input": said}}
        return [{"role": "assistant", "content": None, "tool_calls": [call]},
                {"role": "tool", "tool_call_id": "call_custom", "content": "patched"}]  # fmt: skip
    return [{"type": "custom_tool_call", "call_id": "call_custom", "name": "patch", "input": said},
            {"type": "custom_tool_call_output", "call_id": "call_custom", "output": "patched"}]  # fmt: skip


def _error_result(said: str) -> list[dict[str, Any]]:
    use = {"type": "tool_use", "id": "toolu_err", "name": "run", "input": {}}
    image = {"type": "image", "source": {"type": "url", "url": IMAGE}}
    result = {"type": "tool_result", "tool_use_id": "toolu_err", "is_error": True,
              "content": [{"type": "text", "text": said}, {"type": "text", "text": "again"}, image]}  # fmt: skip
    return [{"role": "assistant", "content": [use]}, {"role": "user", "content": [result]}]


def _opaque(protocol: str, value: str) -> list[dict[str, Any]]:
    if protocol == "chat":  # OpenRouter's spelling
        detail = {"type": "reasoning.encrypted", "data": value, "index": 0}
        return [{"role": "assistant", "content": "ok", "reasoning_details": [detail]}]
    if protocol == "messages":
        return [{"role": "assistant", "content": [{"type": "redacted_thinking", "data": value},
                                                  {"type": "text", "text": "ok"}]}]  # fmt: skip
    return [{"type": "reasoning", "id": "rs_opaque", "summary": [], "encrypted_content": value},
            {"role": "assistant", "content": "ok"}]  # fmt: skip


def request_problems(target: str, source: str, protocol: str, dialect: str | None,
                     drawn: tuple[dict[str, Any], Expected]) -> list[str]:  # fmt: skip
    """Every meaning this file put in a source request that its reader does not read,
    and every meaning of the source that the target request neither holds nor names in
    its `RequestLossWarning`."""
    chunks = chunks_module(target)
    module = importlib.import_module(f"generated.{target}.{source}")
    data, expected = drawn
    said = ledger.request_ledger(ledger.read_request(chunks, source, data))
    unread = [f"the {source} request reader loses: {kind}[{where}]={value!r}"
              for kind, where, value in expected
              if not ledger.request_holds(said, kind, where, value)]  # fmt: skip
    written, dropped = ledger.convert(module, data, protocol, dialect)
    back = ledger.request_ledger(ledger.read_request(chunks, protocol, written))
    lost = ledger.request_missing(said, back)
    where = f"{source} -> {protocol}" + (f" ({dialect})" if dialect else "")
    return unread + [f"{where} request loses silently: {a}" for a in lost
                     if not ledger.request_accounted(a, dropped)]  # fmt: skip


REQUEST_DIRECTIONS: Final = [(s, p, d) for s in PROTOCOLS for t in PROTOCOLS for p, d in HOPS[t]]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(("source", "protocol", "dialect"), REQUEST_DIRECTIONS,
                         ids=[f"{s}-to-{p}{'-' + d if d else ''}" for s, p, d in REQUEST_DIRECTIONS])  # fmt: skip
@REQUEST_LEDGER
@given(data=st.data())
def test_no_request_drops_a_meaning_silently(
    target: str, source: str, protocol: str, dialect: str | None, data: st.DataObject
) -> None:
    count_examples(f"request ledger, {target}")
    request = data.draw(enriched_requests(source), label="request")
    problems = request_problems(target, source, protocol, dialect, request)
    assert not problems, "\n".join(problems)


def test_every_request_meaning_has_a_ledger_rule() -> None:
    chunks = chunks_module("msgspec")
    names = ["_TextPiece", "_MediaPiece", "_ReasoningPiece", "_CallPiece", "_ResultPiece",
             "_Turn", "_ForeignPart"]  # fmt: skip
    pieces = [runtime(chunks, name) for name in names]
    assert not ledger.request_unruled(pieces)
