"""The assistant's turn written back for the next request, per backend (issue 34).

Each test takes a captured first turn (a stream that reasoned and called a tool), adds
it up in every target, and checks that `assistant_message` writes the second request
exactly as that backend's documentation requires: the documented shape is quoted above
each test. The values come from the capture itself (its summary), never typed here.
"""

from __future__ import annotations

import importlib
import json
import warnings
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.helpers.support import FIXTURES

TARGETS = ("dataclasses", "typeddicts", "pydantic", "msgspec")
MESSAGES = FIXTURES.parents[1] / "messages"
RESPONSES = FIXTURES.parents[1] / "responses"
USER = {"role": "user", "content": "What is the weather tomorrow?"}


def module(kind: str, target: str) -> ModuleType:
    return importlib.import_module(f"generated.{target}.{kind}")


def chat_turn(target: str, name: str) -> Any:
    """A captured chat stream added up by `target`'s ChunkAccumulator."""
    chat = module("chat", target)
    accumulator = chat.ChunkAccumulator()
    for line in (FIXTURES / name).read_text().splitlines():
        if line.strip():
            accumulator.add(chat.loads(line))
    return accumulator


def event_turn(target: str, path: Path, protocol: str) -> Any:
    """A captured Messages or Responses stream added up by its accumulator."""
    kind = "messages" if protocol == "messages" else "responses"
    family = module(kind, target)
    accumulator = (
        family.MessageAccumulator() if protocol == "messages" else family.ResponseAccumulator()
    )
    for event in family.iter_events(path.read_bytes()):
        accumulator.add(event)
    return accumulator


def calls_of(accumulator: Any) -> list[dict[str, Any]]:
    """The tool calls a turn made, as chat writes them."""
    return [
        {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
        for c in accumulator.summary().choices[0].tool_calls
    ]


def replayed(accumulator: Any, target: str, **how: Any) -> list[dict[str, Any]]:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the backend's own turn goes back whole
        written: list[dict[str, Any]] = module("chat", target).assistant_message(accumulator, **how)
    return written


# DeepSeek, https://api-docs.deepseek.com/guides/thinking_mode#tool-calls:
#   "for turns that do perform tool calls, the `reasoning_content` must be fully passed
#   back to the API in all subsequent requests. If your code does not correctly pass back
#   `reasoning_content`, the API will return a 400 error." ... "This line of code is
#   equivalent to: messages.append({'role': 'assistant', 'content': ...,
#   'reasoning_content': ..., 'tool_calls': ...})"
@pytest.mark.parametrize("target", TARGETS)
def test_deepseek_gets_its_reasoning_back_in_reasoning_content(target: str) -> None:
    turn = chat_turn(target, "deepseek__reasoner-reasoning-then-tool-call.jsonl")
    said = turn.summary().choices[0]
    assert said.reasoning and said.tool_calls, "the capture reasoned and called a tool"
    [message] = replayed(turn, target, dialect="deepseek")
    assert message == {
        "role": "assistant",
        "content": said.text or None,
        "reasoning_content": said.reasoning,
        "tool_calls": calls_of(turn),
    }


# The same turn without its reasoning (a history from another backend): DeepSeek
# refuses a tool-call turn without the key, so it is sent empty ("the field must be
# present", deepseek-harness #739), and Kimi the same ("thinking is enabled but
# reasoning_content is missing in assistant tool call message at index N",
# https://platform.moonshot.ai/docs/guide/use-kimi-k2-thinking-model#usage-notes).
@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dialect", ["deepseek", "moonshot"])
def test_a_foreign_tool_call_turn_gets_the_empty_placeholder(target: str, dialect: str) -> None:
    chat = module("chat", target)
    request = {
        "model": "m",
        "messages": [
            USER,
            {"role": "assistant", "content": None, "tool_calls": calls_of_plain()},
            {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
        ],
    }
    written = chat.to_request(request, protocol="chat", dialect=dialect)
    assert written["messages"][1]["reasoning_content"] == ""


def calls_of_plain() -> list[dict[str, Any]]:
    return [
        {
            "id": "call_1",
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
        }
    ]


# Anthropic, https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking:
#   "Preserving thinking blocks: During tool use, you must pass thinking blocks back to
#   the API for the last assistant message. Include the complete unmodified block back to
#   the API" ... "If thinking is enabled, the final assistant turn should start with a
#   thinking block." Shape: {"role": "assistant", "content": [{"type": "thinking",
#   "thinking": ..., "signature": ...}, ..., {"type": "tool_use", "id": ..., "name": ...,
#   "input": {...}}]}
@pytest.mark.parametrize("target", TARGETS)
def test_messages_gets_its_thinking_blocks_first_with_their_signatures(target: str) -> None:
    path = MESSAGES / "vercel-gateway__gemini-signature-only-thinking-tool-use.sse"
    turn = event_turn(target, path, "messages")
    content = json.loads(module("messages", target).dumps(turn.result()))["content"]
    [message] = replayed(turn, target, protocol="messages")
    assert message == {"role": "assistant", "content": content}, "the blocks as they came"
    blocks = message["content"]
    thinking = [b for b in content if b["type"] in ("thinking", "redacted_thinking")]
    assert thinking and blocks[: len(thinking)] == [
        {k: v for k, v in b.items() if k in ("type", "thinking", "signature", "data")}
        for b in thinking
    ]
    uses = [b for b in content if b["type"] == "tool_use"]
    assert [b for b in blocks if b["type"] == "tool_use"] == [
        {"type": "tool_use", "id": b["id"], "name": b["name"], "input": b["input"]} for b in uses
    ]


@pytest.mark.parametrize("target", TARGETS)
def test_redacted_thinking_goes_back_as_it_came(target: str) -> None:
    turn = event_turn(target, MESSAGES / "anthropic__redacted-thinking-two-blocks.sse", "messages")
    content = json.loads(module("messages", target).dumps(turn.result()))["content"]
    [message] = replayed(turn, target, protocol="messages")
    redacted = [b for b in content if b["type"] == "redacted_thinking"]
    assert redacted
    assert [b for b in message["content"] if b["type"] == "redacted_thinking"] == redacted


# OpenAI Responses, https://developers.openai.com/api/docs/guides/reasoning#keeping-reasoning-items-in-context:
#   "When doing function calling with a reasoning model in the Responses API, we highly
#   recommend you pass back any reasoning items returned with the last function call (in
#   addition to the output of your function)." ... "by manually passing in all the output
#   items from a past response into the input of a new one." Shape: [{"type": "reasoning",
#   "id": "rs_...", "summary": [], "encrypted_content": "..."}, {"type": "function_call",
#   "call_id": ..., "name": ..., "arguments": ...}]
@pytest.mark.parametrize("target", TARGETS)
def test_responses_gets_its_reasoning_items_with_encrypted_content(target: str) -> None:
    path = RESPONSES / "openai__reasoning-encrypted-function-call.sse"
    turn = event_turn(target, path, "responses")
    output = json.loads(module("responses", target).dumps(turn.result()))["output"]
    items = replayed(turn, target, protocol="responses")
    assert items == output, "every output item, as it came"
    reasoning = [i for i in items if i["type"] == "reasoning"]
    assert reasoning and all(i.get("encrypted_content") for i in reasoning)
    first_call = next(n for n, i in enumerate(items) if i["type"] == "function_call")
    assert items[0]["type"] == "reasoning" and first_call > 0, "reasoning before its call"


# A signature is never sent where it would be refused: Anthropic's to chat, Responses'
# encrypted reasoning to Messages.
@pytest.mark.parametrize("target", TARGETS)
def test_a_signature_of_another_backend_is_not_sent(target: str) -> None:
    path = MESSAGES / "vercel-gateway__gemini-signature-only-thinking-tool-use.sse"
    turn = event_turn(target, path, "messages")
    for dialect in ("deepseek", "openrouter", "gemini"):
        with pytest.warns(UserWarning, match="would refuse it"):
            [message] = module("chat", target).assistant_message(turn, dialect=dialect)
        text = json.dumps(message)
        signature = json.loads(module("messages", target).dumps(turn.result()))["content"][0]
        assert signature["signature"] not in text
    responses = event_turn(
        target, RESPONSES / "openai__reasoning-encrypted-function-call.sse", "responses"
    )
    with pytest.warns(UserWarning, match="would refuse it"):
        [message] = module("chat", target).assistant_message(responses, protocol="messages")
    assert "encrypted" not in json.dumps(message)


# Kimi, https://platform.moonshot.ai/docs/guide/use-kimi-k2-thinking-model#usage-notes:
#   an assistant message with tool calls keeps its `reasoning_content` ("thinking is
#   enabled but reasoning_content is missing in assistant tool call message at index N");
#   the message has DeepSeek's shape. No public Kimi capture with a tool call was found:
#   the first turn is DeepSeek's captured one, in the same spelling.
@pytest.mark.parametrize("target", TARGETS)
def test_kimi_gets_its_reasoning_back_in_reasoning_content(target: str) -> None:
    turn = chat_turn(target, "deepseek__reasoner-reasoning-then-tool-call.jsonl")
    said = turn.summary().choices[0]
    [message] = replayed(turn, target, dialect="moonshot")
    assert message["reasoning_content"] == said.reasoning
    assert message["tool_calls"] == calls_of(turn)


# OpenRouter, https://openrouter.ai/docs/use-cases/reasoning-tokens#preserving-reasoning:
#   {"role": "assistant", "content": message.content, "tool_calls": message.tool_calls,
#   "reasoning_details": message.reasoning_details  # Pass back unmodified}; "the entire
#   sequence of consecutive reasoning blocks must match the outputs generated by the
#   model during the original request".
@pytest.mark.parametrize("target", TARGETS)
def test_openrouter_gets_its_reasoning_details_back_unmodified(target: str) -> None:
    turn = chat_turn(target, "openrouter__reasoning-details.jsonl")
    completion = json.loads(module("chat", target).dumps(turn.result()))
    details = completion["choices"][0]["message"]["reasoning_details"]
    assert any(d.get("signature") for d in details), "the capture signed its reasoning"
    [message] = replayed(turn, target, dialect="openrouter")
    assert message["reasoning_details"] == details
    assert "reasoning_content" not in message and "reasoning" not in message


def gemini_turn(target: str, where: str) -> Any:
    """Gemini's documented answer with parallel calls (ai.google.dev/gemini-api/docs/
    thought-signatures, "Signatures for OpenAI compatibility"), streamed as chunks: the
    first call carries the signature. No public capture of one was found."""
    chat = module("chat", target)
    accumulator = chat.ChunkAccumulator()
    calls = [
        (
            "function-call-f3b9ecb3",
            '{"location":"Paris"}',
            {where: {"thought_signature": "<Signature A>"}},
        ),
        ("function-call-335673ad", '{"location":"London"}', None),
    ]
    for index, (ident, arguments, extra) in enumerate(calls):
        call: dict[str, Any] = {
            "index": index,
            "id": ident,
            "type": "function",
            "function": {"name": "get_current_temperature", "arguments": arguments},
        }
        if extra is not None:
            call["extra_content"] = extra
        chunk = {
            "id": "g1",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "gemini-3-pro-preview",
            "choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [call]}}],
        }
        accumulator.add(chat.loads(json.dumps(chunk)))
    return accumulator


# Gemini, https://ai.google.dev/gemini-api/docs/thought-signatures:
#   "you must pass back thought signatures during function calling, otherwise you will get
#   a validation error (4xx status code)" ... "The first functionCall part in each step of
#   the current turn must include its thought_signature." Shape: {"role": "assistant",
#   "tool_calls": [{"extra_content": {"google": {"thought_signature": "<Signature A>"}},
#   "function": {...}, "id": ..., "type": "function"}, {"function": {...}, "id": ...,
#   "type": "function"}]}; Vertex spells it `extra_content.vertex` (pi#6733).
@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(("dialect", "where"), [("gemini", "google"), ("vertex", "vertex")])
def test_gemini_gets_the_signature_back_on_the_call_that_carried_it(
    target: str, dialect: str, where: str
) -> None:
    turn = gemini_turn(target, where)
    [message] = replayed(turn, target, dialect=dialect)
    first, second = message["tool_calls"]
    assert first["extra_content"] == {where: {"thought_signature": "<Signature A>"}}
    assert "extra_content" not in second
    assert [c["id"] for c in message["tool_calls"]] == [c["id"] for c in calls_of(turn)]


@pytest.mark.parametrize("target", TARGETS)
def test_a_gemini_signature_goes_to_vertex_under_its_key(target: str) -> None:
    [message] = replayed(gemini_turn(target, "google"), target, dialect="vertex")
    assert message["tool_calls"][0]["extra_content"] == {
        "vertex": {"thought_signature": "<Signature A>"}
    }
