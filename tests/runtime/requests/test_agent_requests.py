"""What the real agents send, through `to_request` (issue 40): the shapes Claude Code
2.1.328 and Codex 0.169.0 were seen to send (captured on the `agents` branch,
tests/fixtures/agents/ and its note), each taken to a chat upstream, in every target
(the request given typed, as `loads_request` reads it, or as JSON data).

- An image or a PDF in a tool result (Claude Code's Read, Codex's `view_image`): the
  tool message keeps the text and says where the media went; the media go in one user
  message after the tool messages of the turn (with what the user says next), as the
  dialect takes them (`media` in the spec): DeepSeek takes no image, vLLM no file.
- A system message after the first turn (Claude Code's "# Environment", Codex's second
  developer message): in place where the dialect takes it anywhere, else (`system:
  first`: vLLM, SGLang) joined into one system message, first.
- Tool search: a Messages tool marked `defer_loading` is held back until a
  `tool_reference` in a tool result names it (said), and the reference is text.
- Codex's `namespace` tool: its functions as chat functions of flat names chat accepts,
  calls in the history under the same names, and `tool_names` + the Responses writer
  to give a call back as Codex runs it (`name` and `namespace`).
- `client_metadata` (the spec's `client_only`): dropped for another protocol, said as
  describing the client.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import re
import warnings
from collections.abc import AsyncIterator
from types import ModuleType
from typing import Any, Final

import pytest

TARGETS: Final = ("dataclasses", "typeddicts", "pydantic", "msgspec")
FAMILY: Final = ("chat", "messages", "responses")
PNG: Final = (
    "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEElEQVR4nGP4z8AARAwQCgAf7gP9i18U1AAAAABJRU5ErkJggg=="
)
PDF: Final = "JVBERi0xLjQKJcTl8uXrp/Og0MTGCjEgMCBvYmoKPDwvVHlwZS9DYXRhbG9nPj4KZW5kb2JqCg=="
CHAT_NAME: Final = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def module(protocol: str, target: str) -> ModuleType:
    return importlib.import_module(f"generated.{target}.{protocol}")


def convert(
    source: str, body: dict[str, Any], target: str = "msgspec", **to: Any
) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """`body` (a `source` request) through `to_request` of the target's module, given
    typed (read by `loads_request`), and what the warning said."""
    mod = module(source, target)
    typed = mod.loads_request(json.dumps(body))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = mod.to_request(typed, **to)
    # A ResourceWarning here is an earlier test's socket collected meanwhile, not ours.
    said = [w.message for w in caught if not issubclass(w.category, ResourceWarning)]
    assert all(isinstance(m, mod.RequestLossWarning) for m in said), said
    dropped: list[tuple[str, str]] = [d for m in said for d in getattr(m, "dropped", ())]
    return out, dropped


def tool_use(call_id: str, name: str = "Read") -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": name, "input": {"file_path": "/x"}}


def image_block() -> dict[str, Any]:
    return {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}


def pdf_block() -> dict[str, Any]:
    source = {"type": "base64", "media_type": "application/pdf", "data": PDF}
    return {"type": "document", "source": source}


def claude_code(
    *turns: dict[str, Any], tools: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """A Claude Code request: its system blocks, a first user turn, then `turns`."""
    return {
        "model": "claude-sonnet-4-5",
        "max_tokens": 32000,
        "system": [{"type": "text", "text": "You are a Claude agent."}],
        "messages": [{"role": "user", "content": [{"type": "text", "text": "Look."}]}, *turns],
        "tools": tools
        or [{"name": "Read", "description": "Read a file", "input_schema": {"type": "object"}}],
        "stream": True,
    }


def roles(request: dict[str, Any]) -> list[str]:
    return [m["role"] for m in request["messages"]]


# --- 1. images and documents in tool results -------------------------------------------


@pytest.mark.parametrize("target", TARGETS)
def test_an_image_read_by_claude_code_goes_in_a_user_message_after_the_tool_messages(
    target: str,
) -> None:
    body = claude_code(
        {"role": "assistant", "content": [tool_use("toolu_1"), tool_use("toolu_2", "Bash")]},
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": [image_block()]},
                {"type": "tool_result", "tool_use_id": "toolu_2", "content": "done"},
            ],
        },
    )
    out, dropped = convert("messages", body, target, protocol="chat")
    assert roles(out) == ["system", "user", "assistant", "tool", "tool", "user"]
    first, second, media = out["messages"][3:]
    assert first == {
        "role": "tool",
        "tool_call_id": "toolu_1",
        "content": "[the image of this result: in the next user message]",
    }
    assert second == {"role": "tool", "tool_call_id": "toolu_2", "content": "done"}
    assert media["content"] == [
        {"type": "text", "text": "[the result of tool call toolu_1:]"},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
    ]
    assert dropped == []  # carried, not lost


@pytest.mark.parametrize("target", TARGETS)
def test_a_pdf_read_by_claude_code_is_a_file_part_where_the_dialect_takes_files(
    target: str,
) -> None:
    result = {
        "type": "tool_result",
        "tool_use_id": "toolu_1",
        "content": [{"type": "text", "text": "PDF file read: /x/doc.pdf (200 bytes)"}, pdf_block()],
    }
    body = claude_code(
        {"role": "assistant", "content": [tool_use("toolu_1")]},
        {"role": "user", "content": [result, {"type": "text", "text": "Summarise it."}]},
    )
    out, dropped = convert("messages", body, target, protocol="chat")
    assert roles(out) == ["system", "user", "assistant", "tool", "user"]
    assert out["messages"][3]["content"] == (
        "PDF file read: /x/doc.pdf (200 bytes)\n[the file of this result: in the next user message]"
    )
    # One user message: the result's file, then what the user said after it.
    assert out["messages"][4]["content"] == [
        {"type": "text", "text": "[the result of tool call toolu_1:]"},
        {
            "type": "file",
            "file": {"file_data": f"data:application/pdf;base64,{PDF}", "filename": "document.pdf"},
        },
        {"type": "text", "text": "Summarise it."},
    ]
    assert dropped == []

    out, dropped = convert("messages", body, target, protocol="chat", dialect="vllm")
    assert roles(out) == ["system", "user", "assistant", "tool", "user"]
    assert out["messages"][3]["content"] == (
        "PDF file read: /x/doc.pdf (200 bytes)\n[the file of this result: left out, not readable here]"
    )
    assert out["messages"][4]["content"] == "Summarise it."
    assert dropped == [("a file in a tool result", "vllm takes no file content parts")]


def test_a_document_by_url_is_left_out_of_a_tool_result_and_said() -> None:
    source = {"type": "url", "url": "https://example.com/doc.pdf"}
    result = {
        "type": "tool_result",
        "tool_use_id": "toolu_1",
        "content": [{"type": "document", "source": source}],
    }
    body = claude_code(
        {"role": "assistant", "content": [tool_use("toolu_1")]},
        {"role": "user", "content": [result]},
    )
    out, dropped = convert("messages", body, protocol="chat")
    assert roles(out) == ["system", "user", "assistant", "tool"]
    assert out["messages"][3]["content"] == (
        "[the file of this result: left out, not readable here]"
    )
    assert dropped == [("a file by URL", "chat has no place for it")]


@pytest.mark.parametrize("target", TARGETS)
def test_codex_view_image_output_goes_in_a_user_message_and_deepseek_is_told_why_not(
    target: str,
) -> None:
    image = {"type": "input_image", "image_url": f"data:image/png;base64,{PNG}", "detail": "high"}
    body = {
        "model": "gpt-5",
        "input": [
            {"type": "message", "role": "user", "content": "Look at red.png"},
            {
                "type": "function_call",
                "call_id": "call_2",
                "name": "view_image",
                "arguments": '{"path": "red.png"}',
            },
            {"type": "function_call_output", "call_id": "call_2", "output": [image]},
        ],
        "tools": [{"type": "function", "name": "view_image", "parameters": {"type": "object"}}],
    }
    out, dropped = convert("responses", body, target, protocol="chat")
    assert roles(out) == ["user", "assistant", "tool", "user"]
    assert out["messages"][2]["content"] == "[the image of this result: in the next user message]"
    assert out["messages"][3]["content"][1] == {
        "type": "image_url",
        "image_url": {"url": f"data:image/png;base64,{PNG}", "detail": "high"},
    }
    assert dropped == []

    out, dropped = convert("responses", body, target, protocol="chat", dialect="deepseek")
    assert roles(out) == ["user", "assistant", "tool"]
    assert out["messages"][2]["content"] == (
        "[the image of this result: left out, not readable here]"
    )
    assert dropped == [("an image in a tool result", "deepseek takes no image content parts")]


def test_a_user_image_for_deepseek_is_left_out_and_said() -> None:
    body = {
        "model": "m",
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "What is this?"},
                    {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
                ],
            }
        ],
    }
    out, dropped = convert("chat", body, protocol="chat", dialect="deepseek")
    assert out["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "What is this?"}]}
    ]
    assert dropped == [("an image", "deepseek takes no image content parts")]


@pytest.mark.parametrize("target", TARGETS)
def test_media_of_a_tool_result_cross_to_messages_and_responses_whole(target: str) -> None:
    body = claude_code(
        {"role": "assistant", "content": [tool_use("toolu_1")]},
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_1",
                    "content": [{"type": "text", "text": "red.png"}, image_block()],
                }
            ],
        },
    )
    out, dropped = convert("messages", body, target, protocol="responses")
    output = [i for i in out["input"] if i.get("type") == "function_call_output"]
    assert output == [
        {
            "type": "function_call_output",
            "call_id": "toolu_1",
            "output": [
                {"type": "input_text", "text": "red.png"},
                {
                    "type": "input_image",
                    "detail": "auto",
                    "image_url": f"data:image/png;base64,{PNG}",
                },
            ],
        }
    ]
    assert dropped == []
    back, dropped = convert("responses", out, target, protocol="messages")
    [result] = back["messages"][-1]["content"]
    assert result["content"] == [{"type": "text", "text": "red.png"}, image_block()]
    assert dropped == []


# --- 2. a system message after the first turn -----------------------------------------


def with_environment() -> dict[str, Any]:
    """Claude Code's first request: its "# Environment" system message after the user's."""
    body = claude_code()
    body["messages"].append(
        {"role": "system", "content": [{"type": "text", "text": "# Environment\nLinux"}]}
    )
    body["messages"].append({"role": "user", "content": "Go on."})
    return body


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dialect", ["vllm", "sglang"])
def test_a_later_system_message_is_joined_into_the_first_where_templates_refuse_it(
    target: str, dialect: str
) -> None:
    out, dropped = convert("messages", with_environment(), target, protocol="chat", dialect=dialect)
    assert roles(out) == ["system", "user", "user"]
    assert out["messages"][0] == {
        "role": "system",
        "content": "You are a Claude agent.\n\n# Environment\nLinux",
    }
    assert dropped == []


@pytest.mark.parametrize("dialect", ["openai", "deepseek", "moonshot", "gemini", "openrouter"])
def test_a_later_system_message_stays_in_place_where_the_dialect_takes_it(dialect: str) -> None:
    out, _ = convert("messages", with_environment(), protocol="chat", dialect=dialect)
    assert roles(out) == ["system", "user", "system", "user"]
    assert out["messages"][2]["content"] == "# Environment\nLinux"


def test_codex_developer_messages_become_one_system_message_first_for_vllm() -> None:
    body = {
        "model": "m",
        "input": [
            {"type": "message", "role": "developer", "content": "You are Codex."},
            {"type": "message", "role": "developer", "content": "Permissions: all."},
            {"type": "message", "role": "user", "content": "Hi"},
            {"type": "message", "role": "developer", "content": "Mode: exec."},
            {"type": "message", "role": "user", "content": "Go"},
        ],
    }
    out, _ = convert("responses", body, protocol="chat", dialect="vllm")
    assert roles(out) == ["system", "user", "user"]
    text = json.dumps(out["messages"][0]["content"])
    assert [
        text.index(t) for t in ("You are Codex.", "Permissions: all.", "Mode: exec.")
    ] == sorted(text.index(t) for t in ("You are Codex.", "Permissions: all.", "Mode: exec."))
    out, _ = convert("responses", body, protocol="chat", dialect="openai")
    assert roles(out) == ["developer", "developer", "user", "developer", "user"]


def test_the_dialects_say_where_system_messages_go_and_what_media_they_take() -> None:
    chat = module("chat", "msgspec")
    rules = {d.name: d for d in chat._REQUEST_DIALECTS}
    assert {n for n, d in rules.items() if d.system == "first"} == {"vllm", "sglang"}
    assert rules["openai"].media == ("image", "file", "audio")
    assert rules["deepseek"].media == ()
    assert "file" not in rules["vllm"].media and "image" in rules["vllm"].media


# --- 3. tool search ---------------------------------------------------------------------


def searched(loaded: bool) -> dict[str, Any]:
    """Claude Code with tool search: a placeholder always deferred, WebFetch deferred and
    (when `loaded`) named by a `tool_reference` in ToolSearch's result."""
    tools: list[dict[str, Any]] = [
        {"name": "ToolSearch", "description": "Search tools", "input_schema": {"type": "object"}},
        {
            "name": "DeferredToolPlaceholder",
            "description": "never call this tool",
            "input_schema": {"type": "object", "properties": {}},
            "defer_loading": True,
        },
        {
            "name": "WebFetch",
            "description": "Fetch a URL",
            "input_schema": {"type": "object", "properties": {"url": {"type": "string"}}},
            "defer_loading": True,
        },
    ]
    turns: list[dict[str, Any]] = []
    if loaded:
        call = {
            "type": "tool_use",
            "id": "toolu_2",
            "name": "ToolSearch",
            "input": {"query": "select:WebFetch"},
        }
        reference = {"type": "tool_reference", "tool_name": "WebFetch"}
        result = {"type": "tool_result", "tool_use_id": "toolu_2", "content": [reference]}
        turns = [{"role": "assistant", "content": [call]}, {"role": "user", "content": [result]}]
    return claude_code(*turns, tools=tools)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("protocol", ["chat", "responses"])
def test_deferred_tools_are_held_back_until_a_tool_reference_loads_them(
    target: str, protocol: str
) -> None:
    def names(out: dict[str, Any]) -> list[str]:
        return [t.get("name") or t["function"]["name"] for t in out["tools"]]

    out, dropped = convert("messages", searched(False), target, protocol=protocol)
    assert names(out) == ["ToolSearch"]
    held = "held back until a tool_reference loads it (tool search)"
    assert dropped == [
        ("the deferred tool 'DeferredToolPlaceholder'", held),
        ("the deferred tool 'WebFetch'", held),
    ]

    out, dropped = convert("messages", searched(True), target, protocol=protocol)
    assert names(out) == ["ToolSearch", "WebFetch"]
    assert dropped == [("the deferred tool 'DeferredToolPlaceholder'", held)]
    if protocol == "chat":
        assert out["messages"][-1] == {
            "role": "tool",
            "tool_call_id": "toolu_2",
            "content": "Tool loaded: WebFetch",
        }
    else:
        assert out["input"][-1]["output"] == "Tool loaded: WebFetch"


def test_a_messages_request_to_messages_keeps_its_deferred_tools() -> None:
    body = searched(False)
    out, dropped = convert("messages", body, protocol="messages")
    assert out["tools"] == body["tools"] and dropped == []


# --- 4. Codex's namespace tools ----------------------------------------------------------


def close_agent() -> dict[str, Any]:
    params = {
        "type": "object",
        "properties": {"target": {"type": "string"}},
        "required": ["target"],
    }
    return {
        "type": "function",
        "name": "close_agent",
        "description": "Close an agent.",
        "strict": False,
        "parameters": params,
    }


def codex_multi_agent() -> dict[str, Any]:
    """Codex's stock request after a call of `close_agent` in `multi_agent_v1`."""
    namespace = {
        "type": "namespace",
        "name": "multi_agent_v1",
        "description": "Tools for spawning and managing sub-agents.",
        "tools": [close_agent(), {**close_agent(), "name": "spawn_agent"}],
    }
    return {
        "model": "gpt-5",
        "input": [
            {"type": "message", "role": "user", "content": "Close the agent."},
            {
                "type": "function_call",
                "status": "completed",
                "id": "fc_0",
                "name": "close_agent",
                "namespace": "multi_agent_v1",
                "arguments": '{"target": "a"}',
                "call_id": "call_3",
            },
            {"type": "function_call_output", "call_id": "call_3", "output": "closed"},
        ],
        "tools": [
            {"type": "function", "name": "exec_command", "parameters": {"type": "object"}},
            namespace,
        ],
        "client_metadata": {"turn_id": "t1", "session_id": "s1"},
    }


@pytest.mark.parametrize("target", TARGETS)
def test_a_namespace_is_flat_function_tools_for_chat_and_its_calls_keep_those_names(
    target: str,
) -> None:
    out, dropped = convert("responses", codex_multi_agent(), target, protocol="chat")
    names = [t["function"]["name"] for t in out["tools"]]
    assert names == ["exec_command", "multi_agent_v1__close_agent", "multi_agent_v1__spawn_agent"]
    assert all(CHAT_NAME.match(n) for n in names)
    assert out["tools"][1]["function"]["parameters"] == close_agent()["parameters"]
    [call] = out["messages"][1]["tool_calls"]
    assert call["function"]["name"] == "multi_agent_v1__close_agent"
    assert not [d for d in dropped if "namespace" in d[0]]
    mod = module("responses", target)
    typed = mod.loads_request(json.dumps(codex_multi_agent()))
    assert mod.tool_names(typed) == {
        "multi_agent_v1__close_agent": ("multi_agent_v1", "close_agent"),
        "multi_agent_v1__spawn_agent": ("multi_agent_v1", "spawn_agent"),
    }


def test_flat_names_stay_within_what_chat_accepts() -> None:
    long = {
        "type": "namespace",
        "name": "mcp.server:" + "n" * 60,
        "tools": [close_agent(), {**close_agent(), "name": "close_agent2"}],
    }
    body = {"model": "m", "input": "hi", "tools": [long]}
    out, _ = convert("responses", body, protocol="chat")
    names = [t["function"]["name"] for t in out["tools"]]
    assert len(set(names)) == 2 and all(CHAT_NAME.match(n) for n in names), names
    assert set(module("responses", "msgspec").tool_names(body)) == set(names)


def chat_call_stream(name: str) -> bytes:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        body = {
            "id": "c1",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "m",
            "choices": [choice],
        }
        return f"data: {json.dumps(body)}\n\n"

    first = {
        "index": 0,
        "id": "call_9",
        "type": "function",
        "function": {"name": name, "arguments": ""},
    }
    rest = {"index": 0, "function": {"arguments": '{"target": "a"}'}}
    text = chunk({"role": "assistant", "tool_calls": [first]}) + chunk({"tool_calls": [rest]})
    return (text + chunk({}, "tool_calls") + "data: [DONE]\n\n").encode()


def written_calls(events: bytes) -> list[dict[str, Any]]:
    items = []
    for line in events.decode().splitlines():
        if line.startswith("data: ") and '"response.output_item.done"' in line:
            items.append(json.loads(line[6:])["item"])
    return [i for i in items if i["type"] == "function_call"]


@pytest.mark.parametrize("target", TARGETS)
def test_a_call_of_a_flat_name_goes_back_to_codex_with_its_namespace(target: str) -> None:
    chat = module("chat", target)
    names = module("responses", target).tool_names(codex_multi_agent())
    parts = chat.iter_parts(chat_call_stream("multi_agent_v1__close_agent"))
    events = b"".join(chat.write_parts(parts, protocol="responses", tool_names=names))
    [item] = written_calls(events)
    assert (item["name"], item["namespace"], item["call_id"]) == (
        "close_agent",
        "multi_agent_v1",
        "call_9",
    )
    assert item["arguments"] == '{"target": "a"}'
    # A call of a function of no namespace, or with no names given, is as it came.
    parts = chat.iter_parts(chat_call_stream("exec_command"))
    [item] = written_calls(
        b"".join(chat.write_parts(parts, protocol="responses", tool_names=names))
    )
    assert item["name"] == "exec_command" and "namespace" not in item
    parts = chat.iter_parts(chat_call_stream("multi_agent_v1__close_agent"))
    [item] = written_calls(b"".join(chat.write_parts(parts, protocol="responses")))
    assert item["name"] == "multi_agent_v1__close_agent" and "namespace" not in item


def test_the_async_writer_maps_names_too() -> None:
    chat = module("chat", "msgspec")
    names = module("responses", "msgspec").tool_names(codex_multi_agent())

    async def parts() -> AsyncIterator[Any]:
        for part in chat.iter_parts(chat_call_stream("multi_agent_v1__spawn_agent")):
            yield part

    async def written() -> bytes:
        stream = chat.awrite_parts(parts(), protocol="responses", tool_names=names)
        return b"".join([event async for event in stream])

    [item] = written_calls(asyncio.run(written()))
    assert (item["name"], item["namespace"]) == ("spawn_agent", "multi_agent_v1")


def test_tool_names_are_for_the_responses_writer_only() -> None:
    chat = module("chat", "msgspec")
    parts = chat.iter_parts(chat_call_stream("x"))
    with pytest.raises(ValueError, match="tool_names are Responses'"):
        chat.write_parts(parts, protocol="messages", tool_names={"x": ("n", "x")})


# --- 5. keys that only describe the client ----------------------------------------------


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("protocol", ["chat", "messages"])
def test_client_metadata_is_dropped_as_describing_the_client(target: str, protocol: str) -> None:
    out, dropped = convert("responses", codex_multi_agent(), target, protocol=protocol)
    assert "client_metadata" not in out
    assert ("the key 'client_metadata'", "it only describes the client") in dropped
    assert not [
        d for d in dropped if d[0] == "the key 'client_metadata'" and "only describes" not in d[1]
    ]


@pytest.mark.parametrize("target", TARGETS)
def test_client_metadata_stays_for_a_responses_upstream(target: str) -> None:
    out, dropped = convert("responses", codex_multi_agent(), target, protocol="responses")
    assert out["client_metadata"] == {"turn_id": "t1", "session_id": "s1"} and dropped == []


def test_the_client_only_keys_are_the_specs() -> None:
    keys = {p: set(module(p, "msgspec")._CLIENT_ONLY_KEYS) for p in FAMILY}
    assert keys == {"chat": set(), "messages": set(), "responses": {"client_metadata"}}
