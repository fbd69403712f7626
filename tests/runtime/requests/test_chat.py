"""The chat-completions request (`request: ChatCompletionRequest` in
spec/chat_completion_chunk.yaml): real request bodies, OpenAI's and the vendors', go
through `loads_request` and `dumps` of every target unchanged, unknown keys included;
the spec's request types have exactly the keys of openai-python's TypedDicts
(`CompletionCreateParamsStreaming` and all it reaches), the SDK's unions of messages,
content parts, tools and tool choices read as one flat type each; and Gemini's thought
signature on a streamed tool call is read as a `signature` part of that call."""

from __future__ import annotations

import json
import re
import types
from collections.abc import Iterable
from typing import Any, Literal, NotRequired, Required, Union, get_args, get_origin, get_type_hints

import pytest
from openai.types.chat import ChatCompletionMessageParam
from openai.types.chat.completion_create_params import CompletionCreateParamsStreaming

from generator.ir.load import RawType, load_spec
from tests.helpers.project import REPO
from tests.helpers.support import TARGETS, assert_same_json

# --- request bodies ----------------------------------------------------------------

_OPENAI: dict[str, dict[str, Any]] = {
    # openai-python README, "Usage" (Chat Completions).
    "readme": {
        "model": "gpt-4o",
        "messages": [
            {"role": "developer", "content": "Talk like a pirate."},
            {
                "role": "user",
                "content": "How do I check if a Python object is an instance of a class?",
            },
        ],
    },
    # openai-python README, "Vision", with a base64 image as in the API reference.
    "vision": {
        "model": "gpt-4o",
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "What is in this image?"},
                    {
                        "type": "image_url",
                        "image_url": {
                            "url": "https://upload.wikimedia.org/wikipedia/commons/thumb/d/dd/Gfp-wisconsin-madison-the-nature-boardwalk.jpg/2560px-Gfp-wisconsin-madison-the-nature-boardwalk.jpg",
                            "detail": "high",
                        },
                    },
                    {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,/9j/4AAQ"}},
                ],
            }
        ],
        "max_completion_tokens": 300,
    },
    # openai-python examples/streaming.py and the API reference's "Streaming" example.
    "streaming": {
        "model": "gpt-4o",
        "messages": [
            {"role": "system", "content": "You are a helpful assistant."},
            {"role": "user", "content": "Hello!"},
        ],
        "stream": True,
        "stream_options": {"include_usage": True, "include_obfuscation": False},
    },
    # API reference, "Functions".
    "functions": {
        "model": "gpt-4.1",
        "messages": [{"role": "user", "content": "What is the weather like in Boston today?"}],
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "get_current_weather",
                    "description": "Get the current weather in a given location",
                    "parameters": {
                        "type": "object",
                        "properties": {
                            "location": {
                                "type": "string",
                                "description": "The city and state, e.g. San Francisco, CA",
                            },
                            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                        },
                        "required": ["location"],
                    },
                    "strict": None,
                },
            }
        ],
        "tool_choice": "auto",
    },
    # API reference, "Logprobs".
    "logprobs": {
        "model": "gpt-4.1",
        "messages": [{"role": "user", "content": "Hello!"}],
        "logprobs": True,
        "top_logprobs": 2,
    },
    # Audio guide: audio out, audio in, then the earlier answer referred to by id.
    "audio": {
        "model": "gpt-4o-audio-preview",
        "modalities": ["text", "audio"],
        "audio": {"voice": "alloy", "format": "wav"},
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "What is in this recording?"},
                    {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}},
                ],
            },
            {"role": "assistant", "audio": {"id": "audio_abc123"}, "content": None},
            {"role": "user", "content": "Say it again, slower."},
        ],
    },
    # Structured Outputs guide (response_format is kept as plain JSON).
    "structured": {
        "model": "gpt-4o-2024-08-06",
        "messages": [
            {"role": "system", "content": "Extract the event information."},
            {"role": "user", "content": "Alice and Bob are going to a science fair on Friday."},
        ],
        "response_format": {
            "type": "json_schema",
            "json_schema": {
                "name": "calendar_event",
                "schema": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string"},
                        "date": {"type": "string"},
                        "participants": {"type": "array", "items": {"type": "string"}},
                    },
                    "required": ["name", "date", "participants"],
                    "additionalProperties": False,
                },
                "strict": True,
            },
        },
    },
    # Function-calling guide: the second request, with the call and its result.
    "tool_turns": {
        "model": "gpt-4.1",
        "messages": [
            {"role": "user", "content": "What's the weather like in Paris today?"},
            {
                "role": "assistant",
                "content": None,
                "refusal": None,
                "tool_calls": [
                    {
                        "id": "call_12345xyz",
                        "type": "function",
                        "function": {
                            "name": "get_weather",
                            "arguments": '{"location":"Paris, France"}',
                        },
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_12345xyz", "content": "14"},
        ],
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "get_weather",
                    "parameters": {
                        "type": "object",
                        "properties": {"location": {"type": "string"}},
                    },
                    "strict": True,
                },
            }
        ],
        "tool_choice": {"type": "function", "function": {"name": "get_weather"}},
        "parallel_tool_calls": False,
    },
    # Every other parameter of the API reference, each once.
    "everything": {
        "model": "gpt-5",
        "messages": [
            {"role": "system", "content": [{"type": "text", "text": "Be brief."}], "name": "ops"},
            {
                "role": "user",
                "name": "ann",
                "content": [
                    {
                        "type": "text",
                        "text": "Summarise the file.",
                        "prompt_cache_breakpoint": {"mode": "explicit", "ttl": "12h"},
                    },
                    {
                        "type": "file",
                        "file": {
                            "filename": "a.pdf",
                            "file_data": "data:application/pdf;base64,JVBER",
                        },
                    },
                    {"type": "file", "file": {"file_id": "file-abc"}},
                ],
            },
            {
                "role": "assistant",
                "content": [{"type": "refusal", "refusal": "I can't."}],
                "tool_calls": [
                    {
                        "id": "call_c",
                        "type": "custom",
                        "custom": {"name": "sql", "input": "SELECT 1"},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_c", "content": [{"type": "text", "text": "1"}]},
            {
                "role": "assistant",
                "content": None,
                "function_call": {"name": "f", "arguments": "{}"},
            },
            {"role": "function", "name": "f", "content": None},
        ],
        "max_tokens": 100,
        "max_completion_tokens": 200,
        "reasoning_effort": "minimal",
        "verbosity": "low",
        "temperature": 0.2,
        "top_p": 1,
        "n": 1,
        "stop": ["\n\n", "END"],
        "seed": 42,
        "user": "user-1234",
        "safety_identifier": "hash-1",
        "prompt_cache_key": "docs-v1",
        "prompt_cache_retention": "24h",
        "prompt_cache_options": {"mode": "explicit", "ttl": "30m"},
        "metadata": {"project": "docs"},
        "store": True,
        "service_tier": "flex",
        "frequency_penalty": 0.5,
        "presence_penalty": -0.5,
        "logit_bias": {"50256": -100},
        "prediction": {"type": "content", "content": "def f():\n    return 1\n"},
        "web_search_options": {
            "search_context_size": "low",
            "user_location": {
                "type": "approximate",
                "approximate": {
                    "country": "GB",
                    "city": "London",
                    "region": "London",
                    "timezone": "Europe/London",
                },
            },
        },
        "moderation": {
            "model": "omni-moderation-latest",
            "policy": {"input": {"mode": "block"}, "output": None},
        },
        "tools": [
            {
                "type": "custom",
                "custom": {
                    "name": "sql",
                    "description": "Runs SQL.",
                    "format": {
                        "type": "grammar",
                        "grammar": {"syntax": "lark", "definition": "start: /.+/"},
                    },
                },
            }
        ],
        "tool_choice": {
            "type": "allowed_tools",
            "allowed_tools": {
                "mode": "required",
                "tools": [{"type": "custom", "custom": {"name": "sql"}}],
            },
        },
        "functions": [{"name": "f", "description": "Does f.", "parameters": {"type": "object"}}],
        "function_call": {"name": "f"},
    },
}

_VENDORS: dict[str, dict[str, Any]] = {
    # DeepSeek thinking mode, tool calls: the reasoning of the turn that called tools
    # goes back with it (api-docs.deepseek.com/guides/thinking_mode).
    "deepseek_thinking": {
        "model": "deepseek-reasoner",
        "thinking": {"type": "enabled"},
        "reasoning_effort": "high",
        "messages": [
            {"role": "user", "content": "How's the weather in Hangzhou tomorrow?"},
            {
                "role": "assistant",
                "content": "",
                "reasoning_content": "The user wants tomorrow's weather; I need the date first.",
                "tool_calls": [
                    {
                        "id": "call_00",
                        "type": "function",
                        "function": {"name": "get_date", "arguments": "{}"},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_00", "content": "2025-12-01"},
        ],
        "tools": [
            {"type": "function", "function": {"name": "get_date", "parameters": {"type": "object"}}}
        ],
    },
    # OpenRouter's reasoning switch and an assistant turn sent back with its reasoning
    # (openrouter.ai/docs/use-cases/reasoning-tokens, "Preserving reasoning blocks").
    "openrouter_reasoning": {
        "model": "anthropic/claude-sonnet-4",
        "reasoning": {"effort": "high", "exclude": False},
        "messages": [
            {"role": "user", "content": "What's the weather in Boston?"},
            {
                "role": "assistant",
                "content": None,
                "reasoning": "I should call the weather tool.",
                "reasoning_details": [
                    {
                        "type": "reasoning.text",
                        "text": "I should call the weather tool.",
                        "signature": "EqQBCkgIARABGAI",
                        "format": "anthropic-claude-v1",
                        "index": 0,
                    },
                    {
                        "type": "reasoning.encrypted",
                        "data": "gAAAAB",
                        "format": "anthropic-claude-v1",
                        "index": 1,
                    },
                ],
                "tool_calls": [
                    {
                        "id": "toolu_01",
                        "type": "function",
                        "function": {"name": "weather", "arguments": '{"city":"Boston"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "toolu_01", "content": "Sunny, 22 C"},
        ],
    },
    # Gemini's OpenAI-compatible endpoint: thinking settings in `extra_body`, and the
    # thought signature sent back on the call (ai.google.dev/gemini-api/docs/thought-signatures).
    "gemini_signature": {
        "model": "gemini-3-pro-preview",
        "extra_body": {
            "google": {"thinking_config": {"thinking_level": "low", "include_thoughts": True}}
        },
        "messages": [
            {"role": "user", "content": "Check flight status for AA100."},
            {
                "role": "assistant",
                "tool_calls": [
                    {
                        "id": "function-call-1",
                        "type": "function",
                        "function": {"name": "check_flight", "arguments": '{"flight":"AA100"}'},
                        "extra_content": {"google": {"thought_signature": "<Signature A>"}},
                    },
                    {
                        "id": "function-call-2",
                        "type": "function",
                        "function": {"name": "check_weather", "arguments": '{"city":"NYC"}'},
                        "extra_content": {"vertex": {"thought_signature": "<Signature B>"}},
                    },
                ],
            },
            {"role": "tool", "tool_call_id": "function-call-1", "content": '{"status":"delayed"}'},
        ],
    },
    # vLLM's chat-template switch, and Z.ai's preserved thinking.
    "vllm_template": {
        "model": "Qwen/Qwen3-8B",
        "chat_template_kwargs": {"enable_thinking": False},
        "messages": [
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "Hello!", "reasoning": "A greeting."},
            {"role": "user", "content": "Bye"},
        ],
    },
    "zai_thinking": {
        "model": "glm-4.7",
        "thinking": {"type": "enabled", "clear_thinking": False},
        "messages": [{"role": "user", "content": "Plan a refactor."}],
    },
}

_BODIES = {**_OPENAI, **_VENDORS}


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", _BODIES)
def test_a_request_body_is_written_back_unchanged(target: str, name: str) -> None:
    module = TARGETS[target]
    text = json.dumps(_BODIES[name])
    request = module.loads_request(text)
    assert_same_json(json.loads(module.dumps(request)), _BODIES[name], f"{target} {name}")


@pytest.mark.parametrize("target", TARGETS)
def test_unknown_keys_of_a_request_are_kept_at_every_depth(target: str) -> None:
    body: dict[str, Any] = {
        "model": "m",
        "messages": [
            {
                "role": "user",
                "content": [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}],
                "x_message": 1,
            },
            {
                "role": "assistant",
                "tool_calls": [
                    {
                        "id": "c",
                        "type": "function",
                        "function": {"name": "f", "arguments": "{}", "x_fn": [1]},
                        "x_call": None,
                    }
                ],
            },
        ],
        "tools": [
            {"type": "function", "function": {"name": "f"}, "cache_control": {"type": "ephemeral"}}
        ],
        "top_k": 20,
        "repetition_penalty": 1.1,
        "provider": {"order": ["groq"]},
    }
    module = TARGETS[target]
    assert_same_json(json.loads(module.dumps(module.loads_request(json.dumps(body)))), body)


@pytest.mark.parametrize("target", TARGETS)
def test_a_request_without_model_or_messages_is_read_leniently(target: str) -> None:
    """Lenient reading: even the required keys may be absent, and nothing is added."""
    module = TARGETS[target]
    body: dict[str, Any] = {"messages": []}
    assert json.loads(module.dumps(module.loads_request(json.dumps(body)))) == body


@pytest.mark.parametrize("target", TARGETS)
def test_a_request_of_the_wrong_shape_is_refused(target: str) -> None:
    module = TARGETS[target]
    with pytest.raises(module.ChunkDecodeError):
        module.loads_request(json.dumps({"model": "m", "messages": "hi"}))


# --- drift against openai-python's TypedDicts -----------------------------------------

_CORE = load_spec(REPO).core
_TYPES: dict[str, RawType] = {t.name: t for t in _CORE.types}
_ENUMS = {e.name: {v for v, _ in e.values} for e in _CORE.enums}
_NAME = re.compile(r"[A-Z][A-Za-z0-9]*")

_KEPT_AS_JSON = {
    ("ChatCompletionRequest", "response_format"): (
        "free-form JSON Schema inside, and vendors' own shapes (vLLM `structural_tag`)"
    ),
}
"""Keys whose SDK TypedDicts the spec keeps as plain JSON, with why."""

_EXTRA_KEYS: dict[tuple[str, str], str] = {}
"""Core keys of a spec type that no SDK TypedDict mapped to it has, with why."""


def _is_typed_dict(value: Any) -> bool:
    return (
        isinstance(value, type)
        and hasattr(value, "__total__")
        and hasattr(value, "__annotations__")
    )


_SEQUENCES = ("Sequence", "SequenceNotStr")


def _walk(annotation: Any) -> Iterable[Any]:
    """The leaves of an annotation: through Required, Optional, unions, lists,
    iterables and aliases, to TypedDicts, literals and plain types."""
    origin = get_origin(annotation)
    containers = (Required, NotRequired, Union, types.UnionType, list, Iterable)
    if origin in containers or getattr(origin, "__name__", "") in _SEQUENCES:
        for arg in get_args(annotation):
            yield from _walk(arg)
    else:
        yield annotation


def _literals(annotation: Any) -> set[str]:
    found: set[str] = set()
    for leaf in _walk(annotation):
        if get_origin(leaf) is Literal:
            found |= {v for v in get_args(leaf) if isinstance(v, str)}
    return found


def _spec_refs(type_text: str) -> tuple[list[str], list[str]]:
    names = _NAME.findall(type_text)
    return [n for n in names if n in _TYPES], [n for n in names if n in _ENUMS]


def _drift(root: Any, spec_root: str = "ChatCompletionRequest") -> list[str]:
    """Every difference between the SDK's TypedDicts reachable from `root` and the core
    spec types they map to (by walking both in step), as `Type.key: what`."""
    mapped: dict[str, list[Any]] = {}
    literals: dict[tuple[str, str], set[str]] = {}
    problems: list[str] = []
    todo = [(root, spec_root)]
    while todo:
        sdk, name = todo.pop()
        if sdk in mapped.setdefault(name, []):
            continue
        mapped[name].append(sdk)
        fields = {f.wire: f for f in _TYPES[name].fields}
        for key, annotation in get_type_hints(sdk, include_extras=True).items():
            field = fields.get(key)
            if field is None:
                continue
            literals.setdefault((name, key), set()).update(_literals(annotation))
            dicts = [leaf for leaf in _walk(annotation) if _is_typed_dict(leaf)]
            refs, _ = _spec_refs(field.type)
            if dicts and not refs:
                if (name, key) not in _KEPT_AS_JSON:
                    problems.append(f"{name}.{key}: the SDK types it, the spec keeps plain JSON")
                continue
            if len(refs) > 1 and dicts:
                problems.append(f"{name}.{key}: {len(refs)} spec types for the SDK's {dicts}")
                continue
            todo.extend((d, refs[0]) for d in dicts)
    for name, sdks in mapped.items():
        sdk_keys = {k for sdk in sdks for k in get_type_hints(sdk)}
        spec_keys = {f.wire for f in _TYPES[name].fields}
        problems += [
            f"{name}.{k}: in the SDK, not in the spec" for k in sorted(sdk_keys - spec_keys)
        ]
        problems += [
            f"{name}.{k}: in the spec, not in the SDK"
            for k in sorted(spec_keys - sdk_keys)
            if (name, k) not in _EXTRA_KEYS
        ]
    for (name, key), values in literals.items():
        _, enums = _spec_refs(next(f.type for f in _TYPES[name].fields if f.wire == key))
        known = {v for e in enums for v in _ENUMS[e]}
        if enums and not values <= known:
            problems.append(f"{name}.{key}: values {sorted(values - known)} not in {enums}")
    unmapped = _reachable(spec_root) - set(mapped)
    problems += [f"{name}: no SDK TypedDict maps to it" for name in sorted(unmapped)]
    return problems


def _reachable(name: str) -> set[str]:
    seen: set[str] = set()
    todo = [name]
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        for field in _TYPES[current].fields:
            todo.extend(_spec_refs(field.type)[0])
    return seen


def test_the_request_types_have_the_keys_of_the_sdk() -> None:
    assert _drift(CompletionCreateParamsStreaming) == []


def test_a_message_has_every_key_of_every_role_of_the_sdk() -> None:
    roles = {leaf for leaf in _walk(ChatCompletionMessageParam) if _is_typed_dict(leaf)}
    assert len(roles) == 6
    for role in roles:
        keys = set(get_type_hints(role))
        spec = {f.wire for f in _TYPES["ChatCompletionMessageParam"].fields}
        assert keys <= spec, role
    tags = {
        v for role in roles for v in _literals(get_type_hints(role, include_extras=True)["role"])
    }
    assert tags == _ENUMS["ChatCompletionRole"]


def test_a_key_the_sdk_adds_is_caught_naming_the_type_and_key() -> None:
    class Newer(CompletionCreateParamsStreaming, total=False):
        brand_new_knob: int

    assert _drift(Newer) == ["ChatCompletionRequest.brand_new_knob: in the SDK, not in the spec"]


def test_only_model_and_messages_are_required() -> None:
    required = {f.wire for f in _TYPES["ChatCompletionRequest"].fields if f.required}
    assert required == {"model", "messages"}


_VENDOR_KEYS = {
    ("ChatCompletionRequest", "thinking"),
    ("ChatCompletionRequest", "reasoning"),
    ("ChatCompletionRequest", "chat_template_kwargs"),
    ("ChatCompletionRequest", "extra_body"),
    ("ChatCompletionMessageParam", "reasoning_content"),
    ("ChatCompletionMessageParam", "reasoning"),
    ("ChatCompletionMessageParam", "reasoning_details"),
    ("ChatCompletionMessageToolCallParam", "extra_content"),
}


def test_the_vendor_keys_of_the_request_are_declared_in_vendor_files_only() -> None:
    spec = load_spec(REPO)
    declared = {
        (owner, f.wire)
        for vendor in spec.vendors
        for owner, _, fields in vendor.fields
        for f in fields
        if owner in _reachable("ChatCompletionRequest")
    }
    assert declared == _VENDOR_KEYS
    for owner, key in _VENDOR_KEYS:
        assert key not in {f.wire for f in _TYPES[owner].fields}


def test_every_vendor_request_body_uses_a_vendor_key_as_a_typed_field() -> None:
    """The vendor bodies above exercise the typed fields, not unknown keys: the
    dataclasses read each into an attribute."""
    module = TARGETS["dataclasses"]
    deepseek = module.loads_request(json.dumps(_VENDORS["deepseek_thinking"]))
    assert deepseek.thinking.type == "enabled"
    assert deepseek.messages[1].reasoning_content.startswith("The user")
    openrouter = module.loads_request(json.dumps(_VENDORS["openrouter_reasoning"]))
    assert openrouter.reasoning.effort == "high"
    assert openrouter.messages[1].reasoning_details[0].signature == "EqQBCkgIARABGAI"
    gemini = module.loads_request(json.dumps(_VENDORS["gemini_signature"]))
    calls = gemini.messages[1].tool_calls
    assert calls[0].extra_content.google.thought_signature == "<Signature A>"
    assert calls[1].extra_content.vertex.thought_signature == "<Signature B>"
    assert gemini.extra_body == _VENDORS["gemini_signature"]["extra_body"]
    for request in (deepseek, openrouter, gemini):
        assert not request.extra


# --- Gemini's thought signature on a streamed tool call --------------------------------


def _gemini_stream() -> bytes:
    """A stream in the documented shape (ai.google.dev/gemini-api/docs/thought-signatures,
    "OpenAI compatibility"): two parallel calls, the signature on the first only."""
    head = {
        "id": "g",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "gemini-3-pro-preview",
    }
    calls = [
        {
            "index": 0,
            "id": "function-call-1",
            "type": "function",
            "function": {"name": "check_flight", "arguments": '{"flight":"AA100"}'},
            "extra_content": {"google": {"thought_signature": "<Signature A>"}},
        },
        {
            "index": 1,
            "id": "function-call-2",
            "type": "function",
            "function": {"name": "book_taxi", "arguments": '{"time":"10 AM"}'},
        },
    ]
    chunks = [
        {**head, "choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": calls}}]},
        {**head, "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
    ]
    return (
        b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks) + b"data: [DONE]\n\n"
    )


@pytest.mark.parametrize("target", TARGETS)
def test_a_thought_signature_on_a_tool_call_is_a_signature_part_of_that_call(target: str) -> None:
    module = TARGETS[target]
    parts = list(module.iter_parts(_gemini_stream()))
    signed = [p for p in parts if p.kind == "signature"]
    assert [(p.text, p.choice) for p in signed] == [("<Signature A>", 0)]
    assert signed[0].tool_call.id == "function-call-1"
    assert signed[0].tool_call.index == 0
    kinds = [p.kind for p in parts]
    assert kinds.index("signature") < kinds.index("tool_call")  # the reasoning came first
    accumulator = module.ChunkAccumulator()
    for chunk in module.iter_chunks(_gemini_stream()):
        accumulator.add(chunk)
    items = accumulator.summary().choices[0].reasoning_items
    assert [(i.kind, i.value) for i in items] == [("signature", "<Signature A>")]
    assert items[0].source["id"] == "function-call-1"


def test_a_signature_on_a_call_is_written_back_on_that_call_in_chat() -> None:
    module = TARGETS["dataclasses"]
    written = b"".join(module.write_parts(module.iter_parts(_gemini_stream())))
    again = [p for p in module.iter_parts(written) if p.kind == "signature"]
    assert [(p.text, p.tool_call.id if p.tool_call else None) for p in again] == [
        ("<Signature A>", "function-call-1")
    ]
    assert b"reasoning_details" not in written
