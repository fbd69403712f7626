"""The request side of issue 41 ("Protocols that never lie", defects 13 to 21): what
`to_request` and `assistant_message` cannot carry is named in the warning's `dropped`,
and what a target can hold is carried, in every target."""

from __future__ import annotations

import importlib
import json
import warnings
from pathlib import Path
from types import ModuleType
from typing import Any, Final

import pytest

from generator.gateway.policy import judge

TARGETS: Final = ("dataclasses", "typeddicts", "pydantic", "msgspec")
FAMILY: Final = ("chat", "messages", "responses")
MESSAGES_CAPTURES: Final = Path(__file__).parents[2] / "fixtures" / "messages"
CACHE: Final = {"type": "ephemeral"}


def module(protocol: str, target: str) -> ModuleType:
    return importlib.import_module(f"generated.{target}.{protocol}")


def said(call: Any, *args: Any, **kwargs: Any) -> tuple[Any, list[tuple[str, str]]]:
    """What `call` returns, and what its warnings dropped."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = call(*args, **kwargs)
    return out, [d for w in caught for d in getattr(w.message, "dropped", ())]


def convert(source: str, body: dict[str, Any], target: str, **to: Any) -> Any:
    return said(module(source, target).to_request, json.loads(json.dumps(body)), **to)


# --- 13. a Messages signature carried through a chat stream ----------------------------


def bridged_thinking(target: str) -> tuple[Any, dict[str, Any]]:
    """A Messages turn that thought (signed), through the Messages -> chat bridge and
    added up by a chat client; and the thinking block it came with."""
    messages, chat = module("messages", target), module("chat", target)
    capture = (MESSAGES_CAPTURES / "anthropic__thinking-signature-text.sse").read_bytes()
    source = messages.MessageAccumulator()
    for event in messages.iter_events(capture):
        source.add(event)
    [block] = [b for b in source._said()[1]["content"] if b["type"] == "thinking"]
    written = b"".join(messages.write_parts(messages.iter_parts(capture), protocol="chat"))
    turn = chat.ChunkAccumulator()
    for chunk in chat.iter_chunks(written):
        turn.add(chunk)
    return turn, block


@pytest.mark.parametrize("target", TARGETS)
def test_a_signed_thinking_block_bridged_to_chat_reads_back_with_its_text(target: str) -> None:
    turn, block = bridged_thinking(target)
    chat = module("chat", target)
    [message], dropped = said(chat.assistant_message, turn, protocol="messages")
    assert message["content"][0] == block
    assert dropped == []
    [message], dropped = said(chat.assistant_message, turn, dialect="deepseek")
    assert message["reasoning_content"] == block["thinking"] != ""
    assert dropped == [("a reasoning signature", "made by messages: deepseek would refuse it")]


@pytest.mark.parametrize("target", TARGETS)
def test_reasoning_details_of_several_blocks_without_their_texts_are_said(target: str) -> None:
    signed = {"type": "reasoning.text", "format": "anthropic-claude-v1"}
    body = {
        "model": "m",
        "messages": [
            {"role": "user", "content": "Hi"},
            {
                "role": "assistant",
                "content": "Hello",
                "reasoning_content": "onetwo",
                "reasoning_details": [
                    {**signed, "signature": "AAA", "index": 0},
                    {**signed, "signature": "BBB", "index": 1},
                ],
            },
        ],
    }
    out, dropped = convert("chat", body, target, protocol="messages")
    assert out["messages"][1]["content"] == [{"type": "text", "text": "Hello"}]
    assert dropped[0] == (
        "the signatures of 2 thinking blocks",
        "their texts came run together: each signs its own",
    )


# --- 14. a thinking budget below max_tokens ---------------------------------------------


@pytest.mark.parametrize("target", TARGETS)
def test_an_effort_without_a_limit_raises_max_tokens_above_the_budget(target: str) -> None:
    body = {
        "model": "m",
        "reasoning_effort": "high",
        "messages": [{"role": "user", "content": "x"}],
    }
    out, dropped = convert("chat", body, target, protocol="messages")
    assert out["thinking"] == {"type": "enabled", "budget_tokens": 16384}
    assert out["max_tokens"] == 16384 + 4096
    assert [what for what, _ in dropped] == ["the default max_tokens 4096"]
    codex = {"model": "m", "reasoning": {"effort": "medium"}, "input": "x"}
    out, dropped = convert("responses", codex, target, protocol="messages")
    assert (out["thinking"]["budget_tokens"], out["max_tokens"]) == (8192, 8192 + 4096)
    assert [what for what, _ in dropped] == ["the default max_tokens 4096"]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(
    ("limit", "thinking", "what"),
    [
        (4096, {"type": "enabled", "budget_tokens": 4095}, "the thinking budget 16384"),
        (1024, None, "thinking"),
    ],
)
def test_a_budget_not_below_the_clients_limit_is_cut_or_left_out(
    target: str, limit: int, thinking: Any, what: str
) -> None:
    body = {
        "model": "m",
        "max_completion_tokens": limit,
        "reasoning_effort": "high",
        "messages": [{"role": "user", "content": "x"}],
    }
    out, dropped = convert("chat", body, target, protocol="messages")
    assert out["max_tokens"] == limit
    assert out.get("thinking") == thinking
    assert [w for w, _ in dropped] == [what]


# --- 15. thinking and a forced tool choice ----------------------------------------------


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(
    ("choice", "written"),
    [
        ("required", {"type": "any"}),
        ({"type": "function", "function": {"name": "f"}}, {"type": "tool", "name": "f"}),
    ],
)
def test_a_forced_tool_choice_is_kept_and_thinking_left_out(
    target: str, choice: Any, written: Any
) -> None:
    body = {
        "model": "m",
        "reasoning_effort": "low",
        "tool_choice": choice,
        "tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}],
        "messages": [{"role": "user", "content": "x"}],
    }
    out, dropped = convert("chat", body, target, protocol="messages")
    assert out["tool_choice"] == written
    assert "thinking" not in out
    assert [w for w, _ in dropped] == ["thinking"]


# --- 16. a turn of nothing Messages takes -----------------------------------------------


@pytest.mark.parametrize("target", TARGETS)
def test_a_turn_of_reasoning_only_is_left_out_and_said(target: str) -> None:
    body = {
        "model": "m",
        "messages": [
            {"role": "user", "content": "x"},
            {"role": "assistant", "content": None, "reasoning_content": "hmm"},
            {"role": "user", "content": "y"},
        ],
    }
    out, dropped = convert("chat", body, target, protocol="messages")
    assert out["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "x"}, {"type": "text", "text": "y"}]}
    ]
    assert ("a turn of the assistant with nothing Messages takes",) in [(w,) for w, _ in dropped]


# --- 17. a Messages tool result for Responses --------------------------------------------


@pytest.mark.parametrize("target", TARGETS)
def test_a_tool_result_keeps_its_texts_apart_and_says_its_error(target: str) -> None:
    result = {
        "type": "tool_result",
        "tool_use_id": "t1",
        "is_error": True,
        "content": [{"type": "text", "text": "line 1"}, {"type": "text", "text": "line 2"}],
    }
    body = {
        "model": "m",
        "max_tokens": 100,
        "messages": [
            {"role": "user", "content": "x"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {}}],
            },
            {"role": "user", "content": [result]},
        ],
    }
    out, dropped = convert("messages", body, target, protocol="responses")
    assert out["input"][-1]["output"] == [
        {"type": "input_text", "text": "line 1"},
        {"type": "input_text", "text": "line 2"},
    ]
    assert dropped == [
        ("that the result of call 't1' is an error", "Responses has no place for it")
    ]


# --- 18. a chat custom tool call ----------------------------------------------------------


def custom_call_request() -> dict[str, Any]:
    call = {"id": "c1", "type": "custom", "custom": {"name": "shell", "input": "ls -la"}}
    return {
        "model": "m",
        "messages": [
            {"role": "user", "content": "x"},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "content": "a.txt"},
        ],
    }


@pytest.mark.parametrize("target", TARGETS)
def test_a_custom_tool_call_is_carried_to_responses_and_back(target: str) -> None:
    out, dropped = convert("chat", custom_call_request(), target, protocol="responses")
    assert out["input"][1:] == [
        {"type": "custom_tool_call", "call_id": "c1", "name": "shell", "input": "ls -la"},
        {"type": "custom_tool_call_output", "call_id": "c1", "output": "a.txt"},
    ]
    assert dropped == []
    back, dropped = convert("responses", out, target, protocol="chat")
    assert back["messages"] == custom_call_request()["messages"]
    assert dropped == []


@pytest.mark.parametrize("target", TARGETS)
def test_a_custom_tool_call_for_messages_keeps_its_input_and_is_said(target: str) -> None:
    out, dropped = convert("chat", custom_call_request(), target, protocol="messages")
    call = out["messages"][1]["content"][0]
    assert (call["name"], call["input"]) == ("shell", {"input": "ls -la"})
    assert [w for w, _ in dropped] == ["that call 'c1' is of a custom tool"]


# --- 19. cache_control ----------------------------------------------------------------------


def cached_request() -> dict[str, Any]:
    return {
        "model": "m",
        "max_tokens": 100,
        "system": [{"type": "text", "text": "Be terse.", "cache_control": CACHE}],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "x", "cache_control": CACHE}]}
        ],
    }


@pytest.mark.parametrize("target", TARGETS)
def test_cache_control_is_kept_where_the_dialect_takes_it(target: str) -> None:
    out, dropped = convert(
        "messages", cached_request(), target, protocol="chat", dialect="openrouter"
    )
    cached = {"type": "text", "text": "x", "cache_control": CACHE}
    assert out["messages"][1]["content"] == [cached]
    assert out["messages"][0]["content"] == [{**cached, "text": "Be terse."}]
    assert dropped == []
    back, dropped = convert("chat", out, target, protocol="messages")
    assert back["system"] == cached_request()["system"]
    assert back["messages"] == cached_request()["messages"]
    assert dropped == []


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(
    ("protocol", "dialect", "why"),
    [
        ("chat", "openai", "openai takes none"),
        ("chat", "deepseek", "deepseek takes none"),
        ("responses", None, "Responses caches by itself: it takes no breakpoints"),
    ],
)
def test_cache_control_is_said_where_the_target_takes_none(
    target: str, protocol: str, dialect: str | None, why: str
) -> None:
    out, dropped = convert("messages", cached_request(), target, protocol=protocol, dialect=dialect)
    assert "cache_control" not in json.dumps(out)
    assert dropped == [("the cache_control of a text", why)]


def test_only_openrouter_takes_cache_control() -> None:
    chat = module("chat", "msgspec")
    assert [d.name for d in chat._REQUEST_DIALECTS if d.cache_control] == ["openrouter"]


# --- 20. an image's detail -----------------------------------------------------------------


@pytest.mark.parametrize("target", TARGETS)
def test_an_images_detail_is_kept_between_chat_and_responses(target: str) -> None:
    image = {"type": "image_url", "image_url": {"url": "https://x/a.png", "detail": "low"}}
    body = {"model": "m", "messages": [{"role": "user", "content": [image]}]}
    out, dropped = convert("chat", body, target, protocol="responses")
    assert out["input"][0]["content"] == [
        {"type": "input_image", "detail": "low", "image_url": "https://x/a.png"}
    ]
    back, _ = convert("responses", out, target, protocol="chat")
    assert back["messages"][0]["content"] == [image]
    assert dropped == []
    out, dropped = convert("chat", body, target, protocol="messages")
    assert dropped == [("the detail 'low' of an image", "Messages has none")]


# --- 21. a refusal of a Responses turn ------------------------------------------------------


def refused_turn(target: str) -> Any:
    """A Responses turn that refused, written by the chat -> Responses bridge."""
    chat, responses = module("chat", target), module("responses", target)
    head = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    deltas: tuple[tuple[dict[str, Any], str | None], ...] = (
        ({"role": "assistant", "refusal": "I can't help"}, None),
        ({}, "stop"),
    )
    body = "".join(
        f"data: {json.dumps({**head, 'choices': [{'index': 0, 'delta': d, 'finish_reason': f}]})}\n\n"
        for d, f in deltas
    )
    written = b"".join(
        chat.write_parts(chat.iter_parts(body + "data: [DONE]\n\n"), protocol="responses")
    )
    turn = responses.ResponseAccumulator()
    for event in responses.iter_events(written):
        turn.add(event)
    return turn


@pytest.mark.parametrize("target", TARGETS)
def test_a_responses_refusal_goes_to_chat_as_its_refusal(target: str) -> None:
    turn = refused_turn(target)
    [message], dropped = said(module("responses", target).assistant_message, turn, protocol="chat")
    assert message["refusal"] == "I can't help"
    assert dropped == []
    output = turn._said()[1]["output"]
    body = {"model": "m", "input": [{"role": "user", "content": "x"}, *output]}
    out, dropped = convert("responses", body, target, protocol="chat")
    assert out["messages"][1]["refusal"] == "I can't help"
    assert dropped == []


# --- the ledger's finds: a refusal of chat or Responses for another protocol ---------------

REFUSED: Final = {
    "chat": {"role": "assistant", "content": None, "refusal": "I can't help"},
    "responses": {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "refusal", "refusal": "I can't help"}],
    },
}


def refused_request(source: str) -> dict[str, Any]:
    key = "input" if source == "responses" else "messages"
    turns = [{"role": "user", "content": "x"}, REFUSED[source], {"role": "user", "content": "y"}]
    return {"model": "m", key: turns}


@pytest.mark.parametrize("source", ["chat", "responses"])
@pytest.mark.parametrize("target", TARGETS)
def test_a_refusal_for_messages_is_its_text_and_said(target: str, source: str) -> None:
    out, dropped = convert(source, refused_request(source), target, protocol="messages")
    assert out["messages"][1] == {
        "role": "assistant",
        "content": [{"type": "text", "text": "I can't help"}],
    }
    assert dropped == [("the assistant's refusal", "Messages has none: written as its text")]


def test_a_gateway_passes_an_earlier_refusal_on_to_messages() -> None:
    _, dropped = convert("chat", refused_request("chat"), "msgspec", protocol="messages")
    assert judge("chat", dropped) == (["the assistant's refusal"], [])


@pytest.mark.parametrize("target", TARGETS)
def test_a_chat_refusal_goes_to_responses_as_a_refusal_part(target: str) -> None:
    out, dropped = convert("chat", refused_request("chat"), target, protocol="responses")
    assert out["input"][1] == REFUSED["responses"]
    assert dropped == []
    back, dropped = convert("responses", out, target, protocol="chat")
    assert back["messages"][1]["refusal"] == "I can't help"
    assert dropped == []


@pytest.mark.parametrize("target", TARGETS)
def test_a_refusal_part_of_a_chat_message_is_its_refusal(target: str) -> None:
    body = refused_request("chat")
    body["messages"][1] = {
        "role": "assistant",
        "content": [{"type": "text", "text": "Well, "}, {"type": "refusal", "refusal": "no"}],
    }
    out, dropped = convert("chat", body, target, protocol="responses")
    assert out["input"][1:3] == [
        {"role": "assistant", "content": "Well, "},
        {"type": "message", "role": "assistant",
         "content": [{"type": "refusal", "refusal": "no"}]},
    ]  # fmt: skip
    assert dropped == []


@pytest.mark.parametrize("target", TARGETS)
def test_an_image_of_an_assistant_message_for_responses_is_said(target: str) -> None:
    image = {"type": "image_url", "image_url": {"url": "https://img.example/a.png"}}
    body = refused_request("chat")
    body["messages"][1] = {"role": "assistant", "content": [{"type": "text", "text": "A"}, image]}
    out, dropped = convert("chat", body, target, protocol="responses")
    assert out["input"][1] == {"role": "assistant", "content": "A"}
    assert dropped == [("image content in an assistant message", "Responses has no place for it")]


# --- chat to chat: what the reader does not know is carried ----------------------------------

VIDEO: Final = {"type": "video_url", "video_url": {"url": "https://v.example/a.mp4"}}
ALLOWED: Final = {"type": "allowed_tools", "allowed_tools": {"mode": "auto", "tools": []}}
CUSTOM_TOOL: Final = {"type": "custom", "custom": {"name": "patch"}}
FUNCTION_TOOL: Final = {"type": "function", "function": {"name": "run", "parameters": {}}}


def unknown_parts() -> dict[str, Any]:
    """A chat request with a part no reader knows in a user message, an assistant
    message and a tool message, a custom tool beside a function and a tool choice only
    chat has."""
    call = {"id": "c1", "type": "function", "function": {"name": "run", "arguments": "{}"}}
    return {
        "model": "m",
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "see"}, VIDEO]},
            {"role": "assistant", "content": [VIDEO], "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "content": [{"type": "text", "text": "ok"}, VIDEO]},
        ],
        "tools": [FUNCTION_TOOL, CUSTOM_TOOL],
        "tool_choice": ALLOWED,
    }  # fmt: skip


@pytest.mark.parametrize("dialect", ["openai", "vllm", "openrouter"])
@pytest.mark.parametrize("target", TARGETS)
def test_a_chat_request_for_chat_carries_what_its_reader_does_not_know(
    target: str, dialect: str
) -> None:
    out, dropped = convert("chat", unknown_parts(), target, protocol="chat", dialect=dialect)
    assert out["messages"][0]["content"] == [{"type": "text", "text": "see"}, VIDEO]
    assert out["messages"][1]["content"] == [VIDEO]
    assert out["messages"][2]["content"] == [{"type": "text", "text": "ok"}, VIDEO]
    assert out["tools"] == [{"type": "function", "function": {"name": "run", "parameters": {}}},
                            CUSTOM_TOOL]  # fmt: skip
    assert out["tool_choice"] == ALLOWED
    assert dropped == []


@pytest.mark.parametrize("protocol", ["messages", "responses"])
@pytest.mark.parametrize("target", TARGETS)
def test_what_only_chat_has_is_said_once_for_another_protocol(target: str, protocol: str) -> None:
    _, dropped = convert("chat", unknown_parts(), target, protocol=protocol)
    assert sorted(set(dropped)) == sorted(dropped)
    assert sorted(dropped) == [
        ("a content part of type 'video_url'", "no other protocol has it"),
        ("tool 'patch'", "only function tools cross protocols"),
        ("tool choice 'allowed_tools'", "only a function is named"),
    ]


# --- chat to chat: a message's keys and stream_options the reader does not know -------------


def named_request() -> dict[str, Any]:
    """A chat request with a participant's `name`, a reference to an earlier audio
    answer, DeepSeek's `prefix` and stream options besides `include_usage`."""
    return {
        "model": "m",
        "stream": True,
        "stream_options": {"include_usage": True, "include_obfuscation": False},
        "messages": [
            {"role": "user", "content": "hi", "name": "bob"},
            {"role": "assistant", "content": "x", "audio": {"id": "audio_1"}},
            {"role": "user", "content": "go on"},
            {"role": "assistant", "content": "Once", "prefix": True},
        ],
    }


@pytest.mark.parametrize("target", TARGETS)
def test_a_chat_request_for_chat_carries_the_keys_of_its_messages(target: str) -> None:
    out, dropped = convert("chat", named_request(), target, protocol="chat", dialect="openai")
    assert out["messages"] == named_request()["messages"]
    assert out["stream_options"] == {"include_usage": True, "include_obfuscation": False}
    assert dropped == []


@pytest.mark.parametrize("protocol", ["messages", "responses"])
@pytest.mark.parametrize("target", TARGETS)
def test_the_keys_of_chat_messages_are_said_for_another_protocol(
    target: str, protocol: str
) -> None:
    _, dropped = convert("chat", named_request(), target, protocol=protocol)
    why = f"a {protocol} request has no place for it"
    assert dropped == [
        ("the key 'stream_options'", why),
        ("the key 'name' of a message of the user", why),
        ("the key 'audio' of a message of the assistant", why),
        ("the key 'prefix' of a message of the assistant", why),
    ]
    said, refused = judge("chat", dropped)
    assert said == ["the key 'stream_options'", "the key 'name' of a message of the user"]
    assert [r.partition(" (")[0] for r in refused] == [
        "the key 'audio' of a message of the assistant",
        "the key 'prefix' of a message of the assistant",
    ]


@pytest.mark.parametrize("target", TARGETS)
def test_an_empty_key_of_a_chat_message_says_nothing(target: str) -> None:
    body = named_request()
    body["messages"][1] = {"role": "assistant", "content": "x", "annotations": [], "audio": None}
    _, dropped = convert("chat", body, target, protocol="messages")
    said = {what for what, _ in dropped}
    assert "the key 'annotations' of a message of the assistant" not in said
    assert "the key 'audio' of a message of the assistant" not in said


def audio_answer(target: str) -> Any:
    """A chat answer with a citation and audio, added up."""
    chat = module("chat", target)
    head = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    cited = {"type": "url_citation",
             "url_citation": {"url": "https://a.example", "title": "a", "start_index": 0, "end_index": 1}}  # fmt: skip
    deltas: tuple[tuple[dict[str, Any], str | None], ...] = (
        ({"role": "assistant", "content": "Hi", "annotations": [cited]}, None),
        ({"audio": {"id": "audio_1", "transcript": "Hi"}}, None),
        ({}, "stop"),
    )
    body = "".join(
        f"data: {json.dumps({**head, 'choices': [{'index': 0, 'delta': d, 'finish_reason': f}]})}\n\n"
        for d, f in deltas
    )
    turn = chat.ChunkAccumulator()
    for chunk in chat.iter_chunks(body + "data: [DONE]\n\n"):
        turn.add(chunk)
    return turn


@pytest.mark.parametrize("protocol", ["chat", "messages", "responses"])
@pytest.mark.parametrize("target", TARGETS)
def test_an_answers_own_keys_are_said_by_assistant_message(target: str, protocol: str) -> None:
    turn = audio_answer(target)
    _, dropped = said(module("chat", target).assistant_message, turn, protocol=protocol)
    why = f"a {protocol} request has no place for it"
    assert dropped == [
        ("the key 'annotations' of a message of the assistant", why),
        ("the key 'audio' of a message of the assistant", why),
    ]


# --- citations and a document's context, said ---------------------------------------------

CITED: Final = {"type": "char_location", "cited_text": "d", "document_index": 0,
                "start_char_index": 0, "end_char_index": 1}  # fmt: skip
DOCUMENT: Final = {
    "type": "document",
    "source": {"type": "text", "media_type": "text/plain", "data": "doc"},
    "title": "Notes",
    "context": "from the wiki",
    "citations": {"enabled": True},
}


@pytest.mark.parametrize("protocol", ["chat", "responses"])
@pytest.mark.parametrize("target", TARGETS)
def test_a_documents_context_and_citations_are_said(target: str, protocol: str) -> None:
    body = {
        "model": "m",
        "max_tokens": 9,
        "messages": [
            {"role": "user", "content": [DOCUMENT, {"type": "text", "text": "q"}]},
            {"role": "assistant", "content": [{"type": "text", "text": "d", "citations": [CITED]}]},
            {"role": "user", "content": "more"},
        ],
    }  # fmt: skip
    _, dropped = convert("messages", body, target, protocol=protocol)
    assert dropped == [
        ("citations asked of a document", "no other protocol has them"),
        ("the context of a document", "no other protocol has it"),
        ("the title of a document", "no other protocol has it"),
        ("the citations of a text", "no other protocol's request takes them"),
    ]
    said, refused = judge("messages", dropped)
    assert said == ["the citations of a text"]
    assert len(refused) == 3


@pytest.mark.parametrize("protocol", ["chat", "messages"])
@pytest.mark.parametrize("target", TARGETS)
def test_the_annotations_of_an_earlier_answer_are_said(target: str, protocol: str) -> None:
    cited = {"type": "url_citation", "url": "https://a.example", "title": "a",
             "start_index": 0, "end_index": 1}  # fmt: skip
    answer = {"type": "output_text", "text": "ans", "annotations": [cited]}
    body = {"model": "m", "input": [
        {"role": "user", "content": "q"},
        {"type": "message", "role": "assistant", "content": [answer]},
        {"role": "user", "content": "more"},
    ]}  # fmt: skip
    _, dropped = convert("responses", body, target, protocol=protocol)
    assert dropped == [("the annotations of a text", "no other protocol's request takes them")]
    assert judge("responses", dropped) == (["the annotations of a text"], [])
