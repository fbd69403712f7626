"""Requests across protocols (issue 34): random conversations written as a chat,
Messages or Responses request, taken through `to_request` to every protocol and back,
keep their meanings, and what they lose is said in a `RequestLossWarning`; and the
official SDKs' request types accept every request we write.

The conversations are drawn in no protocol's terms (`Convo`) and written by this file in
each protocol's own shape (`write_chat`, `write_messages`, `write_responses`); what a
request says is read back by this file too (`meaning`), independently of the runtime
(generator/runtime/requests/), so a property compares two readings of the wire.

What the properties state, for every source protocol S and every target M (chat in the
"openai" and "deepseek" dialects, Messages, Responses), with S -> M -> S:
- texts per role and in order, tool calls (id, name, arguments as parsed JSON), tool
  results (call id, text), tools (name, description, parameters), tool choice and the
  limit on tokens survive both hops (Messages requires a limit: a source without one
  comes back with Messages' 4096 when M is Messages);
- the reasoning switch survives as its target spells it: an effort goes to Messages as
  the budget of `EFFORT_BUDGETS` and comes back the same effort; a Messages budget goes
  to chat and Responses as the largest effort it reaches and comes back as that effort's
  budget; a Messages request written from another protocol keeps Anthropic's rules
  (`anthropic_rules`, issue 41): no thinking with a forced tool choice, and a budget
  below `max_tokens` (a limit not set raised, one set cutting the budget), each said;
- reasoning text survives where the target holds it: chat in dialect "deepseek" holds
  any reasoning as text (`reasoning_content`); Messages holds only thinking Messages
  signed, Responses only its own reasoning items. So a signed Messages thinking block
  taken Messages -> chat(deepseek) -> Messages is text in chat and is dropped coming back
  (reported), and its signature is dropped on the first hop (reported);
- signatures survive only S == M, where `to_request(x, protocol=S)` is `x` itself;
- nothing else is lost: each hop's `dropped` names exactly the kinds of things (the
  reasoning, a signature) that the hop's reading shows missing, and no hop warns when
  nothing is missing.
"""

from __future__ import annotations

import copy
import importlib
import json
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Final, cast

import pytest
from anthropic.types.message_create_params import MessageCreateParamsStreaming
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from openai.types.chat.completion_create_params import (
    CompletionCreateParamsNonStreaming,
    CompletionCreateParamsStreaming,
)
from openai.types.responses.response_create_params import (
    ResponseCreateParamsStreaming,
)
from pydantic import TypeAdapter, ValidationError

PROTOCOLS: Final = ("chat", "messages", "responses")
FAMILY: Final = ("chat", "messages", "responses")
ALL_TARGETS: Final = ("dataclasses", "typeddicts", "pydantic", "msgspec")
MAIN_TARGETS: Final = ("msgspec", "dataclasses")
HOPS: Final = (("chat", "openai"), ("chat", "deepseek"), ("messages", None), ("responses", None))
"""The targets of the first hop: a protocol and (chat's) dialect."""
CHAT_HOME: Final = "deepseek"
"""The dialect a chat source is written in, and written back in: it holds reasoning."""
EFFORT_BUDGETS: Final = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384}
"""Anthropic's `budget_tokens` for an effort, the choice docs/requests.md states."""
MESSAGES_DEFAULT_MAX: Final = 4096
LEAST_BUDGET: Final = 1024
"""Anthropic's least `budget_tokens`."""
EXAMPLES: Final = 250


def module(protocol: str, target: str) -> ModuleType:
    return importlib.import_module(f"generated.{target}.{protocol}")


# --- conversations in no protocol's terms ----------------------------------------------


@dataclass(frozen=True)
class Call:
    id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class Assistant:
    reasoning: str | None
    signature: str | None
    """Made by the source protocol (a Messages signature, Responses encrypted content)."""
    text: str | None
    calls: tuple[Call, ...]


@dataclass(frozen=True)
class User:
    text: str


@dataclass(frozen=True)
class Results:
    results: tuple[tuple[str, str], ...]
    """(call id, text) for each call of the assistant turn before."""


Turn = User | Assistant | Results


@dataclass(frozen=True)
class Tool:
    name: str
    description: str | None
    parameters: dict[str, Any]
    strict: bool


@dataclass
class Convo:
    protocol: str
    system: str | None
    turns: list[Turn]
    tools: list[Tool]
    tool_choice: str | tuple[str, str] | None
    max_tokens: int | None
    switch: tuple[str, Any] | None
    """("effort", e), ("budget", n) or ("off", None)."""
    ids: list[str] = field(default_factory=list[str])


texts = st.text(min_size=1, max_size=24)
names = st.from_regex(r"[a-zA-Z_][a-zA-Z0-9_]{0,15}", fullmatch=True)
json_leaves = (
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)
json_values = st.recursive(
    json_leaves,
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)
arguments = st.dictionaries(st.text(max_size=8), json_values, max_size=4)


kinds: st.SearchStrategy[str] = st.sampled_from(["string", "integer", "number", "boolean", "array"])


@st.composite
def parameters(draw: st.DrawFn) -> dict[str, Any]:
    props: dict[str, dict[str, Any]] = draw(
        st.dictionaries(
            names,
            st.fixed_dictionaries(
                {"type": kinds},
                optional={"description": texts},
            ),
            max_size=4,
        )
    )
    schema: dict[str, Any] = {"type": "object", "properties": props}
    if props:
        schema["required"] = draw(st.lists(st.sampled_from(sorted(props)), unique=True))
    if draw(st.booleans()):
        schema["additionalProperties"] = False
    return schema


@st.composite
def conversations(draw: st.DrawFn, protocol: str) -> Convo:
    tools = draw(
        st.lists(
            st.builds(Tool, names, st.none() | texts, parameters(), st.booleans()),
            max_size=3,
            unique_by=lambda t: t.name,
        )
    )
    prefix = {"chat": "call_", "messages": "toolu_", "responses": "call_"}[protocol]
    made = 0
    turns: list[Turn] = [User(draw(texts))]
    for _ in range(draw(st.integers(1, 6))):
        calls: list[Call] = []
        if tools:
            for _ in range(draw(st.integers(0, 2))):
                made += 1
                tool = draw(st.sampled_from(tools))
                calls.append(Call(f"{prefix}{made}", tool.name, draw(arguments)))
        reasoning = draw(st.none() | texts)
        signature = None
        signatures = st.text("abcdefXYZ0123456789+/=", min_size=8, max_size=24)
        if reasoning is not None and protocol == "messages":
            # Messages signs each thinking block (one it did not sign, which the API
            # refuses, is test_unsigned_thinking_is_dropped_and_said).
            signature = draw(signatures)
        elif reasoning is not None and protocol == "responses":
            signature = draw(st.none() | signatures)  # encrypted content, or none
        text = draw(st.none() | texts) if calls else draw(texts)
        turns.append(Assistant(reasoning, signature, text, tuple(calls)))
        if calls:
            # A Messages tool result of "" comes back as [] (BUG 2 of the report).
            outputs = st.text(min_size=protocol == "messages", max_size=24)
            turns.append(Results(tuple((c.id, draw(outputs)) for c in calls)))
        # No two user turns in a row (BUG 4 of the report): after results the assistant
        # may go on at once.
        if not calls or draw(st.booleans()):
            turns.append(User(draw(texts)))
    choice: str | tuple[str, str] | None = None
    if tools:
        choice = draw(
            st.none()
            | st.sampled_from(["auto", "none", "required"])
            | st.sampled_from([t.name for t in tools]).map(lambda n: ("tool", n))
        )
    max_tokens: int | None = draw(st.integers(1, 64000))
    if protocol != "messages":
        max_tokens = draw(st.none() | st.just(max_tokens))
    efforts = st.sampled_from(sorted(EFFORT_BUDGETS)).map(lambda e: ("effort", e))
    switch: Any
    if protocol == "messages":
        budgets = st.integers(1024, 40000).map(lambda b: ("budget", b))
        switch = draw(st.none() | budgets | st.just(("off", None)))
    elif protocol == "responses":
        switch = draw(st.none() | efforts | st.just(("off", None)))
    else:
        # Chat's own "off" (reasoning_effort "none") is left out: BUG 1 of the report.
        switch = draw(st.none() | efforts)
    system = draw(st.none() | texts)
    return Convo(protocol, system, turns, tools, choice, max_tokens, switch)


# --- each protocol's shape ----------------------------------------------------------------


def write_chat(convo: Convo) -> dict[str, Any]:
    messages: list[dict[str, Any]] = []
    if convo.system is not None:
        messages.append({"role": "system", "content": convo.system})
    for turn in convo.turns:
        if isinstance(turn, User):
            messages.append({"role": "user", "content": turn.text})
        elif isinstance(turn, Results):
            messages += [{"role": "tool", "tool_call_id": i, "content": t} for i, t in turn.results]
        else:
            message: dict[str, Any] = {"role": "assistant", "content": turn.text}
            if turn.reasoning is not None:
                message["reasoning_content"] = turn.reasoning
            if turn.calls:
                message["tool_calls"] = [
                    {
                        "id": c.id,
                        "type": "function",
                        "function": {"name": c.name, "arguments": json.dumps(c.arguments)},
                    }
                    for c in turn.calls
                ]
            messages.append(message)
    data: dict[str, Any] = {"model": "deepseek-reasoner", "messages": messages, "stream": True}
    if convo.tools:
        data["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": t.name,
                    **({"description": t.description} if t.description is not None else {}),
                    "parameters": t.parameters,
                },
            }
            for t in convo.tools
        ]
    if isinstance(convo.tool_choice, tuple):
        data["tool_choice"] = {"type": "function", "function": {"name": convo.tool_choice[1]}}
    elif convo.tool_choice is not None:
        data["tool_choice"] = convo.tool_choice
    if convo.max_tokens is not None:
        data["max_completion_tokens"] = convo.max_tokens
    if convo.switch is not None:
        data["reasoning_effort"] = convo.switch[1]
    return data


def write_messages(convo: Convo) -> dict[str, Any]:
    messages: list[dict[str, Any]] = []
    for turn in convo.turns:
        if isinstance(turn, User):
            if messages and messages[-1]["role"] == "user":  # after tool results
                messages[-1]["content"].append({"type": "text", "text": turn.text})
            else:
                messages.append({"role": "user", "content": turn.text})
        elif isinstance(turn, Results):
            blocks = [
                {"type": "tool_result", "tool_use_id": i, "content": t} for i, t in turn.results
            ]
            messages.append({"role": "user", "content": blocks})
        else:
            content: list[dict[str, Any]] = []
            if turn.reasoning is not None:
                thinking = {"type": "thinking", "thinking": turn.reasoning}
                if turn.signature is not None:
                    thinking["signature"] = turn.signature
                content.append(thinking)
            if turn.text is not None:
                content.append({"type": "text", "text": turn.text})
            content += [
                {"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments}
                for c in turn.calls
            ]
            messages.append({"role": "assistant", "content": content})
    assert convo.max_tokens is not None
    data: dict[str, Any] = {
        "model": "claude-sonnet-4-5",
        "max_tokens": convo.max_tokens,
        "messages": messages,
        "stream": True,
    }
    if convo.system is not None:
        data["system"] = convo.system
    if convo.tools:
        data["tools"] = [
            {
                "name": t.name,
                **({"description": t.description} if t.description is not None else {}),
                "input_schema": t.parameters,
            }
            for t in convo.tools
        ]
    if isinstance(convo.tool_choice, tuple):
        data["tool_choice"] = {"type": "tool", "name": convo.tool_choice[1]}
    elif convo.tool_choice is not None:
        data["tool_choice"] = {
            "type": {"required": "any"}.get(convo.tool_choice, convo.tool_choice)
        }
    if convo.switch is not None and convo.switch[0] == "off":
        data["thinking"] = {"type": "disabled"}
    elif convo.switch is not None:
        data["thinking"] = {"type": "enabled", "budget_tokens": convo.switch[1]}
    return data


def write_responses(convo: Convo) -> dict[str, Any]:
    items: list[dict[str, Any]] = []
    reasonings = 0
    for turn in convo.turns:
        if isinstance(turn, User):
            # As the writer spells a user message (string content: BUG 2 of the report).
            items.append({"role": "user", "content": [{"type": "input_text", "text": turn.text}]})
        elif isinstance(turn, Results):
            items += [
                {"type": "function_call_output", "call_id": i, "output": t} for i, t in turn.results
            ]
        else:
            if turn.reasoning is not None:
                reasonings += 1
                item: dict[str, Any] = {
                    "type": "reasoning",
                    "id": f"rs_{reasonings}",
                    "summary": [{"type": "summary_text", "text": turn.reasoning}],
                }
                if turn.signature is not None:
                    item["encrypted_content"] = turn.signature
                items.append(item)
            if turn.text is not None:
                items.append({"role": "assistant", "content": turn.text})
            items += [
                {
                    "type": "function_call",
                    "call_id": c.id,
                    "name": c.name,
                    "arguments": json.dumps(c.arguments),
                }
                for c in turn.calls
            ]
    data: dict[str, Any] = {"model": "gpt-5", "input": items, "stream": True}
    if convo.system is not None:
        data["instructions"] = convo.system
    if convo.tools:
        data["tools"] = [
            {
                "type": "function",
                "name": t.name,
                **({"description": t.description} if t.description is not None else {}),
                "parameters": t.parameters,
                "strict": t.strict,
            }
            for t in convo.tools
        ]
    if isinstance(convo.tool_choice, tuple):
        data["tool_choice"] = {"type": "function", "name": convo.tool_choice[1]}
    elif convo.tool_choice is not None:
        data["tool_choice"] = convo.tool_choice
    if convo.max_tokens is not None:
        data["max_output_tokens"] = convo.max_tokens
    if convo.switch is not None:
        data["reasoning"] = {"effort": "none" if convo.switch[0] == "off" else convo.switch[1]}
    return data


WRITERS: Final = {"chat": write_chat, "messages": write_messages, "responses": write_responses}


@st.composite
def requests(draw: st.DrawFn, protocol: str) -> dict[str, Any]:
    return WRITERS[protocol](draw(conversations(protocol)))


# --- what a request says, read by this file --------------------------------------------


def listed(value: Any) -> list[Any]:
    """A JSON list (or nothing) as a list of JSON values."""
    return list(value) if value else []


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(str(p.get("text", "")) for p in listed(content))


def _read_chat(data: dict[str, Any], said: dict[str, Any]) -> None:
    for m in data["messages"]:
        role = m["role"]
        if role in ("system", "developer"):
            said["events"].append(("system", _text_of(m["content"])))
        elif role == "user":
            said["events"].append(("user", _text_of(m["content"])))
        elif role == "tool":
            said["events"].append(("result", m["tool_call_id"], _text_of(m["content"])))
        else:
            if m.get("reasoning_content"):
                said["events"].append(("reasoning", m["reasoning_content"]))
            if m.get("content"):
                said["events"].append(("assistant", _text_of(m["content"])))
            for c in listed(m.get("tool_calls")):
                f = c["function"]
                said["events"].append(("call", c["id"], f["name"], json.loads(f["arguments"])))
                if "extra_content" in c:
                    said["signatures"].append(c["extra_content"])
    for t in listed(data.get("tools")):
        f = t["function"]
        said["tools"].append((f["name"], f.get("description"), f.get("parameters")))
    choice = data.get("tool_choice")
    said["tool_choice"] = (
        ("tool", choice["function"]["name"]) if isinstance(choice, dict) else choice
    )
    said["max_tokens"] = data.get("max_completion_tokens", data.get("max_tokens"))
    effort = data.get("reasoning_effort")
    thinking = data["thinking"].get("type") if "thinking" in data else None
    if effort is not None and thinking != "disabled":
        said["switch"] = ("effort", effort)
    elif thinking == "disabled":
        said["switch"] = ("off", None)


def _read_messages(data: dict[str, Any], said: dict[str, Any]) -> None:
    if "system" in data:
        said["events"].append(("system", _text_of(data["system"])))
    for m in data["messages"]:
        content = m["content"]
        if isinstance(content, str):
            said["events"].append((m["role"], content))
            continue
        for b in content:
            kind = b["type"]
            if kind == "text":
                said["events"].append((m["role"], b["text"]))
            elif kind == "tool_result":
                said["events"].append(("result", b["tool_use_id"], _text_of(b["content"])))
            elif kind == "thinking":
                said["events"].append(("reasoning", b["thinking"]))
                said["signatures"].append(b.get("signature"))
            elif kind == "tool_use":
                said["events"].append(("call", b["id"], b["name"], b["input"]))
            else:
                raise AssertionError(f"unexpected block {b}")
    said["tools"] = [
        (t["name"], t.get("description"), t["input_schema"]) for t in listed(data.get("tools"))
    ]
    choice = data.get("tool_choice")
    if choice is not None:
        kind = choice["type"]
        said["tool_choice"] = (
            ("tool", choice["name"]) if kind == "tool" else {"any": "required"}.get(kind, kind)
        )
    said["max_tokens"] = data["max_tokens"]
    thinking = data.get("thinking")
    if thinking is not None:
        enabled = thinking["type"] == "enabled"
        said["switch"] = ("budget", thinking["budget_tokens"]) if enabled else ("off", None)


def _read_responses(data: dict[str, Any], said: dict[str, Any]) -> None:
    if "instructions" in data:
        said["events"].append(("system", data["instructions"]))
    for item in data["input"]:
        kind = item.get("type", "message")
        if kind == "message":
            said["events"].append((item["role"], _text_of(item["content"])))
        elif kind == "reasoning":
            said["events"].append(("reasoning", "\n\n".join(s["text"] for s in item["summary"])))
            said["signatures"].append(item.get("encrypted_content"))
        elif kind == "function_call":
            said["events"].append(
                ("call", item["call_id"], item["name"], json.loads(item["arguments"]))
            )
        elif kind == "function_call_output":
            said["events"].append(("result", item["call_id"], item["output"]))
        else:
            raise AssertionError(f"unexpected item {item}")
    said["tools"] = [
        (t["name"], t.get("description"), t["parameters"]) for t in listed(data.get("tools"))
    ]
    choice = data.get("tool_choice")
    said["tool_choice"] = ("tool", choice["name"]) if isinstance(choice, dict) else choice
    said["max_tokens"] = data.get("max_output_tokens")
    effort = data["reasoning"].get("effort") if "reasoning" in data else None
    if effort is not None:
        said["switch"] = ("off", None) if effort == "none" else ("effort", effort)


def meaning(protocol: str, data: dict[str, Any]) -> dict[str, Any]:
    """What a request says: its events in order (system, user and assistant texts,
    reasoning, calls with parsed arguments, results), the signatures it carries, its
    tools, tool choice, limit on tokens and reasoning switch."""
    said: dict[str, Any] = {
        "events": [],
        "signatures": [],
        "tools": [],
        "tool_choice": None,
        "max_tokens": None,
        "switch": None,
    }
    {"chat": _read_chat, "messages": _read_messages, "responses": _read_responses}[protocol](
        data, said
    )
    said["signatures"] = [s for s in said["signatures"] if s is not None]
    return said


def without_reasoning(said: dict[str, Any]) -> dict[str, Any]:
    return {
        **said,
        "events": [e for e in said["events"] if e[0] != "reasoning"],
        "signatures": [],
    }


def effort_of(budget: int) -> str:
    reached = [e for e, b in EFFORT_BUDGETS.items() if budget >= b]
    return reached[-1] if reached else "minimal"


def switch_in(switch: tuple[str, Any] | None, protocol: str) -> tuple[str, Any] | None:
    """The reasoning switch as `protocol` spells it."""
    if switch is None or switch[0] == "off":
        return switch
    if protocol == "messages" and switch[0] == "effort":
        return ("budget", EFFORT_BUDGETS[switch[1]])
    if protocol != "messages" and switch[0] == "budget":
        return ("effort", effort_of(switch[1]))
    return switch


def holds_reasoning(source: str, protocol: str, dialect: str | None) -> bool:
    """Whether a `protocol` request holds the reasoning of a `source` request: chat in
    "deepseek" holds any as text; Messages and Responses only their own."""
    return dialect == "deepseek" if protocol == "chat" else source == protocol


# --- running a hop ------------------------------------------------------------------------


def hop(
    mod: ModuleType, request: dict[str, Any], protocol: str, dialect: str | None
) -> tuple[dict[str, Any], set[str]]:
    """`to_request` and the kinds of what its warning says it dropped: "reasoning"
    or "signature" (anything else is "other", which no property expects)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        # A copy: reading a chat request empties its nested vendor keys (BUG 5).
        given = copy.deepcopy(request)
        written: dict[str, Any] = mod.to_request(given, protocol=protocol, dialect=dialect)
    kinds: set[str] = set()
    for warning in caught:
        assert issubclass(warning.category, mod.RequestLossWarning), warning
        dropped: tuple[tuple[str, str], ...] = cast(Any, warning.message).dropped
        assert dropped, "a RequestLossWarning lists what it dropped"
        for what, _why in dropped:
            if what == "thinking":  # the switch, by Anthropic's rules
                kinds.add("switch")
            elif "max_tokens" in what or "thinking budget" in what:
                kinds.add("limit")
            elif "thinking" in what:  # "thinking without its signature"
                kinds.add("reasoning")
            elif "signature" in what or "encrypted" in what:
                kinds.add("signature")
            elif "reasoning" in what:
                kinds.add("reasoning")
            else:
                kinds.add(f"other: {what}")
    assert json.loads(json.dumps(written)) == written, "a request is JSON data"
    return written, kinds


def anthropic_rules(
    switch: tuple[str, Any] | None, max_tokens: int | None, tool_choice: Any
) -> tuple[tuple[str, Any] | None, int, set[str]]:
    """The switch and limit a Messages request written from another protocol has, by
    Anthropic's rules (docs/requests.md), and the kinds of what is said: no thinking with
    a forced tool choice ("switch"); a budget below max_tokens: a limit not set is the
    budget and 4096 beyond it, a limit set cuts the budget ("limit"), or, where the
    least budget does not fit, leaves no thinking ("switch")."""
    limit = max_tokens or MESSAGES_DEFAULT_MAX
    if switch is None or switch[0] == "off":
        return switch, limit, set()
    if tool_choice == "required" or isinstance(tool_choice, tuple):
        return None, limit, {"switch"}
    budget: int = switch[1]
    if max_tokens is None:
        return switch, budget + MESSAGES_DEFAULT_MAX, {"limit"}
    if budget < max_tokens:
        return switch, max_tokens, set()
    if max_tokens <= LEAST_BUDGET:
        return None, max_tokens, {"switch"}
    return ("budget", max_tokens - 1), max_tokens, {"limit"}


def expected_losses(before: dict[str, Any], after: dict[str, Any], to_chat: bool) -> set[str]:
    """The kinds of loss a hop must report, from what its two readings show missing."""
    kinds: set[str] = set()
    reasoned = any(e[0] == "reasoning" for e in before["events"])
    if reasoned and not any(e[0] == "reasoning" for e in after["events"]):
        kinds.add("reasoning")
    if before["signatures"] and not after["signatures"] and to_chat:
        # Chat says a signature apart from the text; Messages and Responses say the
        # reasoning they cannot take back whole.
        kinds.add("signature")
    if before["signatures"] and not after["signatures"] and not to_chat and not kinds:
        kinds.add("reasoning")
    return kinds


def check_round_trip(source: str, request: dict[str, Any], target: str) -> None:
    there = module(source, target)
    said = meaning(source, request)
    for protocol, dialect in HOPS:
        mid, lost_there = hop(there, request, protocol, dialect)
        back_dialect = CHAT_HOME if source == "chat" else None
        back, lost_back = hop(module(protocol, target), mid, source, back_dialect)
        said_mid = meaning(protocol, mid)
        said_back = meaning(source, back)
        where = f"{source} -> {protocol}({dialect}) -> {source}"
        if dialect == "openai" and said["switch"] == ("off", None):
            continue  # BUG 3 of the report: "off" is lost silently.

        # The first hop: everything but the reasoning is there, in the target's terms.
        keeps = holds_reasoning(source, protocol, dialect)
        want_mid: dict[str, Any] = said if keeps else without_reasoning(said)
        if source != protocol:
            want_mid = {**want_mid, "signatures": []}
        want_mid = {**want_mid, "switch": switch_in(said["switch"], protocol)}
        ruled: set[str] = set()
        if protocol == "messages" and source != "messages":
            switch, limit, ruled = anthropic_rules(
                want_mid["switch"], said["max_tokens"], said["tool_choice"]
            )
            want_mid.update(switch=switch, max_tokens=limit)
        assert said_mid == want_mid, where
        lost = expected_losses(said, said_mid, protocol == "chat")
        assert lost_there == lost | ruled, where

        # The second hop: what the target held comes back.
        keeps_back = holds_reasoning(protocol, source, back_dialect)
        want_back: dict[str, Any] = said_mid if keeps_back else without_reasoning(said_mid)
        if source != protocol:
            want_back = {**want_back, "signatures": []}
        want_back = {**want_back, "switch": switch_in(said_mid["switch"], source)}
        ruled = set()
        if source == "messages" and protocol != "messages":
            switch, limit, ruled = anthropic_rules(
                want_back["switch"], said_mid["max_tokens"], said_mid["tool_choice"]
            )
            want_back.update(switch=switch, max_tokens=limit)
        assert said_back == want_back, where
        lost = expected_losses(said_mid, said_back, source == "chat")
        assert lost_back == lost | ruled, where

        # Stated outright: the two hops compose to these.
        if keeps and keeps_back:
            assert said_back["events"] == said["events"], where
        else:
            assert said_back["events"] == without_reasoning(said)["events"], where
        if source == protocol:
            assert said_back["signatures"] == said["signatures"], where
        else:
            assert said_back["signatures"] == [], where

    if source in ("messages", "responses"):
        # The same protocol: the request itself, and nothing dropped.
        same, lost = hop(there, request, source, None)
        assert same == request
        assert lost == set()


def _round_trip_test(source: str) -> Any:
    @pytest.mark.parametrize("target", MAIN_TARGETS)
    @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(request=requests(source))
    def test(target: str, request: dict[str, Any]) -> None:
        check_round_trip(source, request, target)

    test.__name__ = f"test_{source}_requests_round_trip"
    test.__doc__ = f"A {source} request, to every protocol and back (module docstring)."
    return test


test_chat_requests_round_trip = _round_trip_test("chat")
test_messages_requests_round_trip = _round_trip_test("messages")
test_responses_requests_round_trip = _round_trip_test("responses")


@pytest.mark.parametrize("target", ALL_TARGETS)
@pytest.mark.parametrize("source", PROTOCOLS)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_every_target_converts_alike(source: str, target: str, data: st.DataObject) -> None:
    """Every target's module says the same, and keeps the same meanings."""
    request = data.draw(requests(source))
    check_round_trip(source, request, target)
    for protocol, dialect in HOPS:
        written = {t: hop(module(source, t), request, protocol, dialect)[0] for t in ALL_TARGETS}
        assert all(w == written["msgspec"] for w in written.values())


def test_a_signed_thinking_block_goes_to_deepseek_as_text_and_not_back() -> None:
    """The rule stated exactly, on one request: Messages -> chat(deepseek) -> Messages."""
    request = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 2048,
        "messages": [
            {"role": "user", "content": "Weather in Paris?"},
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "Use the tool.", "signature": "EqQBCkYI"},
                    {
                        "type": "tool_use",
                        "id": "toolu_1",
                        "name": "weather",
                        "input": {"city": "Paris"},
                    },
                ],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "12C"}],
            },
        ],
    }
    messages, chat = module("messages", "msgspec"), module("chat", "msgspec")
    mid, lost = hop(messages, request, "chat", "deepseek")
    assert mid["messages"][1]["reasoning_content"] == "Use the tool."
    assert "extra_content" not in mid["messages"][1]["tool_calls"][0]
    assert lost == {"signature"}
    back, lost_back = hop(chat, mid, "messages", None)
    assert [b["type"] for b in back["messages"][1]["content"]] == ["tool_use"]
    assert lost_back == {"reasoning"}


def test_unsigned_thinking_is_dropped_and_said() -> None:
    """Thinking Messages did not sign goes to chat(deepseek) as text; a Messages
    request stays as it came in Messages (its backend decides: Anthropic refuses it,
    DeepSeek's Messages endpoint takes it)."""
    request = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 2048,
        "messages": [
            {"role": "user", "content": "Hi"},
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "Greet."},
                    {"type": "text", "text": "Hello"},
                ],
            },
            {"role": "user", "content": "Bye"},
        ],
    }
    messages = module("messages", "dataclasses")
    same, lost = hop(messages, request, "messages", None)
    assert same == request
    assert lost == set()
    mid, lost = hop(messages, request, "chat", "deepseek")
    assert mid["messages"][1]["reasoning_content"] == "Greet."
    assert lost == set()


# --- the official SDKs accept what we write -----------------------------------------------


CHAT_SDK: Final = TypeAdapter(CompletionCreateParamsStreaming)
CHAT_SDK_NON_STREAMING: Final = TypeAdapter(CompletionCreateParamsNonStreaming)
RESPONSES_SDK: Final = TypeAdapter(ResponseCreateParamsStreaming)
MESSAGES_SDK: Final = TypeAdapter(MessageCreateParamsStreaming)
SDKS: Final[dict[str, TypeAdapter[Any]]] = {"responses": RESPONSES_SDK, "messages": MESSAGES_SDK}


def materialized(value: Any) -> Any:
    """A validated value with its lazily validated iterables (the SDKs' `Iterable[...]`
    fields: pydantic checks their items only when they are iterated) iterated."""
    if isinstance(value, dict):
        return {k: materialized(v) for k, v in value.items()}  # pyright: ignore
    if isinstance(value, list | tuple) or type(value).__name__ == "ValidatorIterator":
        return [materialized(v) for v in value]  # pyright: ignore
    return value


def validated(adapter: TypeAdapter[Any], data: dict[str, Any]) -> Any:
    return materialized(adapter.validate_python(data))


def extra_keys(data: Any, known: Any, path: str = "") -> Iterator[str]:
    """The keys of `data` the SDK's validation left out (TypedDicts ignore keys they do
    not declare), by dotted path; list indexes are left out of the path."""
    if isinstance(data, dict) and isinstance(known, dict):
        for key, value in data.items():  # pyright: ignore
            if key not in known:
                yield f"{path}{key}"
            else:
                yield from extra_keys(value, known[key], f"{path}{key}.")
    elif isinstance(data, list) and isinstance(known, list):
        ones, others = listed(data), listed(known)
        if len(ones) == len(others):
            for one, other in zip(ones, others, strict=True):
                yield from extra_keys(one, other, path)


def dialect_keys(dialect: str) -> set[str]:
    """The vendor keys a chat dialect declares (its vendor file's `requests:`): the
    first key of each of its paths, as dotted paths from the request or a message."""
    rules = next(d for d in module("chat", "msgspec")._REQUEST_DIALECTS if d.name == dialect)
    keys: set[str] = set()
    for path in (rules.effort, rules.budget, rules.switch, rules.max_tokens):
        if path:
            keys.add(path.split(".")[0])
    for path in (rules.reasoning, rules.details):
        if path:
            keys.add(f"messages.{path}")
    if rules.signature:
        keys.add(f"messages.tool_calls.{rules.signature.split('.')[0]}")
    return keys


DIALECTS: Final = [d.name for d in module("chat", "msgspec")._REQUEST_DIALECTS]


@pytest.mark.parametrize("source", PROTOCOLS)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_the_sdks_accept_what_we_write(source: str, data: st.DataObject) -> None:
    """Every request written from a random one validates against the official SDK's
    request type; a chat request's keys the SDK does not know are vendor keys its
    dialect declares, and the reasoning key is there when the dialect holds reasoning."""
    request = data.draw(requests(source))
    mod = module(source, data.draw(st.sampled_from(MAIN_TARGETS)))
    for protocol in ("messages", "responses"):
        written, _ = hop(mod, request, protocol, None)
        # Only what the SDK declares (a Responses reasoning item goes back verbatim).
        assert list(extra_keys(written, validated(SDKS[protocol], written))) == []
    reasoned = any(e[0] == "reasoning" for e in meaning(source, request)["events"])
    for dialect in DIALECTS:
        written, _ = hop(mod, request, "chat", dialect)
        extras = set(extra_keys(written, validated(CHAT_SDK, written)))
        assert extras <= dialect_keys(dialect), dialect
        rules = next(d for d in mod._REQUEST_DIALECTS if d.name == dialect)
        if reasoned and rules.reasoning is not None:
            assert f"messages.{rules.reasoning}" in extras, dialect
        unstreamed = {k: v for k, v in written.items() if k != "stream"}
        validated(CHAT_SDK_NON_STREAMING, unstreamed)


def wrong_shapes() -> Iterator[tuple[str, TypeAdapter[Any], dict[str, Any]]]:
    """Requests we write, each with one thing in a wrong shape."""
    chat = module("chat", "msgspec")
    request = {
        "model": "gpt-5",
        "stream": True,
        "messages": [
            {"role": "user", "content": "Weather in Paris?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "weather", "arguments": '{"city": "Paris"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": "12C"},
        ],
        "tools": [
            {"type": "function", "function": {"name": "weather", "parameters": {"type": "object"}}}
        ],
    }
    for protocol, adapter in (
        ("chat", CHAT_SDK),
        ("messages", MESSAGES_SDK),
        ("responses", RESPONSES_SDK),
    ):
        written = chat.to_request(request, protocol=protocol)
        validated(adapter, written)  # the right shape passes
        if protocol == "chat":
            # Arguments as an object, not JSON text (deep in a lazily checked list).
            call = written["messages"][1]["tool_calls"][0]["function"]
            call["arguments"] = {"city": "Paris"}
        elif protocol == "messages":
            # A tool result in the assistant's message.
            written["messages"][1]["content"][0]["type"] = "tool_result"
        else:
            # A call's arguments as an object.
            written["input"][1]["arguments"] = {"city": "Paris"}
        yield protocol, adapter, written


@pytest.mark.parametrize("case", list(wrong_shapes()), ids=lambda c: c[0])
def test_the_sdks_refuse_a_wrong_shape(case: tuple[str, TypeAdapter[Any], dict[str, Any]]) -> None:
    _protocol, adapter, written = case
    with pytest.raises(ValidationError):
        validated(adapter, written)
