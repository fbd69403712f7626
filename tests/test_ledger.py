"""The ledger of issue 41: nothing a stream says is dropped silently.

For every direction (chat, Messages and Responses, each to the other two and to
itself), random sources with every meaning-bearing field the spec knows (tests/ledger.py
draws them in no protocol's terms and spells them in the source's) are read by the
source's reader, which must read each meaning the source holds; written to the target
by its writer; and read back by the target's reader, which must hold each meaning the
source's reader read, unless the writer's `dropped` names it. Never neither. The
Messages and Responses streams written are judged by the invariants the official SDKs
need (tests/messages_invariants.py, tests/responses_invariants.py), as the bridge
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
from tests import ledger
from tests.ledger import (
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
from tests.messages_invariants import check_messages
from tests.responses_invariants import check_responses
from tests.support import count_examples

PROTOCOLS: Final = ("chat", "messages", "responses")
DIRECTIONS: Final = [(s, t) for s in PROTOCOLS for t in PROTOCOLS]
FUZZ: Final = os.environ.get("HYPOTHESIS_PROFILE") == "fuzz"
TARGETS: Final = ("msgspec", "dataclasses", "typeddicts", "pydantic") if FUZZ else ("msgspec", "dataclasses")
LEDGER: Final = settings(
    max_examples=3_000 if FUZZ else 30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
"""30 examples per direction and target in `make test` (540 in all), 3,000 under fuzz."""


def chunks_module(target: str) -> ModuleType:
    return importlib.import_module(f"generated.chunk_{target}")


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
JSON_ARGS = st.dictionaries(st.sampled_from(["city", "n", "x"]), st.integers(0, 9) | TEXT, max_size=2)


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
@pytest.mark.parametrize(("source", "protocol"), DIRECTIONS, ids=[f"{s}-to-{t}" for s, t in DIRECTIONS])
@LEDGER
@given(data=st.data())
def test_nothing_is_dropped_silently(target: str, source: str, protocol: str, data: st.DataObject) -> None:
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
    twice = [dataclasses.replace(a, value=(a.value[0] * 2,)) if a.kind == "text" else a for a in read]
    assert [a.kind for a in ledger.missing(read, twice)] == ["text"], "a text said twice"
