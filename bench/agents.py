"""Agent-sized requests (30-50 KB of JSON) for the gateway benchmark and its load test,
made deterministically from a seed: what Claude Code sends to /v1/messages (a long system
prompt in blocks, its tools with their schemas, a history of tool calls and results),
what Codex sends to /v1/responses (instructions, function tools and a hosted web search,
input items with calls and outputs) and an OpenAI-style agent's chat request.

Sizes and shapes follow /work/shared/research/agents.md; the words are made up."""

from __future__ import annotations

import json
import random
from typing import Any

Json = dict[str, Any]

KB = 1024
SIZES = (30 * KB, 50 * KB)
"""The bounds of a body's size, in bytes of compact JSON."""

_SYLLABLES = ("ka", "lo", "mi", "ne", "su", "ta", "ri", "po", "ve", "do", "gi", "ba", "ze", "hu")
_TOOLS = (
    "Bash",
    "Read",
    "Edit",
    "Write",
    "Glob",
    "Grep",
    "TodoWrite",
    "WebFetch",
    "Task",
    "NotebookEdit",
    "MultiEdit",
    "LS",
    "ExitPlanMode",
    "BashOutput",
)


def _words(rng: random.Random, count: int) -> str:
    words = (
        "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(1, 4))) for _ in range(count)
    )
    return " ".join(words)


def _schema(rng: random.Random, name: str) -> Json:
    properties: Json = {}
    for index in range(rng.randint(2, 6)):
        kind = rng.choice(("string", "number", "boolean", "array"))
        prop: Json = {"type": kind, "description": _words(rng, rng.randint(8, 30))}
        if kind == "array":
            prop["items"] = {"type": "string"}
        properties[f"{name.lower()}_{index}"] = prop
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties)[:2],
        "additionalProperties": False,
        "$schema": "http://json-schema.org/draft-07/schema#",
    }


def _size(rng: random.Random) -> int:
    return rng.randint(*SIZES)


def _fits(body: Json, size: int) -> bool:
    return len(json.dumps(body, separators=(",", ":"))) >= size


def claude_code(seed: int, model: str) -> Json:
    """A Claude Code turn: /v1/messages, streamed."""
    rng = random.Random(seed)
    size = _size(rng)
    system = [
        {"type": "text", "text": "You are Claude Code, Anthropic's official CLI for Claude."},
        {"type": "text", "text": _words(rng, 1500), "cache_control": {"type": "ephemeral"}},
    ]
    tools = [
        {
            "name": name,
            "description": _words(rng, rng.randint(60, 200)),
            "input_schema": _schema(rng, name),
        }
        for name in _TOOLS
    ]
    first = f"<system-reminder>{_words(rng, 120)}</system-reminder>"
    messages: list[Json] = [{"role": "user", "content": [{"type": "text", "text": first}]}]
    body: Json = {
        "model": model,
        "max_tokens": 32000,
        "system": system,
        "tools": tools,
        "messages": messages,
        "metadata": {"user_id": f"user_{seed:08x}_account__session_{seed:04d}"},
        "temperature": 1,
        "stream": True,
    }
    turn = 0
    while not _fits(body, size):
        call = f"toolu_{seed:04d}{turn:04d}"
        messages.append(
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": _words(rng, rng.randint(10, 60))},
                    {
                        "type": "tool_use",
                        "id": call,
                        "name": rng.choice(_TOOLS[:6]),
                        "input": {"command": _words(rng, 8), "description": _words(rng, 6)},
                    },
                ],
            }
        )
        messages.append(
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": call,
                        "content": _words(rng, rng.randint(80, 500)),
                    }
                ],
            }
        )
        turn += 1
    messages.append({"role": "user", "content": [{"type": "text", "text": _words(rng, 20)}]})
    return body


def codex(seed: int, model: str) -> Json:
    """A Codex turn: /v1/responses, streamed, its hosted web search among the tools."""
    rng = random.Random(seed)
    size = _size(rng)
    tools: list[Json] = [
        {
            "type": "function",
            "name": name.lower(),
            "description": _words(rng, rng.randint(60, 200)),
            "strict": False,
            "parameters": _schema(rng, name),
        }
        for name in _TOOLS[:8]
    ]
    tools.append({"type": "web_search"})
    items: list[Json] = [
        _message(
            "developer", f"<permissions instructions>{_words(rng, 80)}</permissions instructions>"
        ),
        _message(
            "user",
            f"<environment_context>\n  <cwd>/repo</cwd>\n  {_words(rng, 40)}\n</environment_context>",
        ),
        _message("user", _words(rng, 30)),
    ]
    body: Json = {
        "model": model,
        "instructions": _words(rng, 1800),
        "input": items,
        "tools": tools,
        "tool_choice": "auto",
        "parallel_tool_calls": False,
        "store": False,
        "stream": True,
        "prompt_cache_key": f"session-{seed:04d}",
    }
    turn = 0
    while not _fits(body, size):
        call = f"call_{seed:04d}{turn:04d}"
        arguments = json.dumps({"command": ["bash", "-lc", _words(rng, 6)]})
        items.append(
            {"type": "function_call", "name": "shell", "arguments": arguments, "call_id": call}
        )
        items.append(
            {
                "type": "function_call_output",
                "call_id": call,
                "output": _words(rng, rng.randint(80, 500)),
            }
        )
        turn += 1
    items.append(_message("user", _words(rng, 20)))
    return body


def _message(role: str, text: str) -> Json:
    return {"type": "message", "role": role, "content": [{"type": "input_text", "text": text}]}


def chat_agent(seed: int, model: str) -> Json:
    """An OpenAI-style agent's turn: /v1/chat/completions, streamed."""
    rng = random.Random(seed)
    size = _size(rng)
    tools = [
        {
            "type": "function",
            "function": {
                "name": name.lower(),
                "description": _words(rng, rng.randint(60, 200)),
                "parameters": _schema(rng, name),
            },
        }
        for name in _TOOLS
    ]
    messages: list[Json] = [
        {"role": "system", "content": _words(rng, 1500)},
        {"role": "user", "content": _words(rng, 40)},
    ]
    # An OpenAI-style agent asks for its usage (openai-agents does): a chat stream has
    # none unasked.
    usage = {"include_usage": True}
    body: Json = {
        "model": model,
        "messages": messages,
        "tools": tools,
        "stream": True,
        "stream_options": usage,
    }
    turn = 0
    while not _fits(body, size):
        call = f"call_{seed:04d}{turn:04d}"
        arguments = json.dumps({"command": _words(rng, 8)})
        messages.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": call,
                        "type": "function",
                        "function": {"name": "bash", "arguments": arguments},
                    }
                ],
            }
        )
        messages.append(
            {"role": "tool", "tool_call_id": call, "content": _words(rng, rng.randint(80, 500))}
        )
        turn += 1
    messages.append({"role": "user", "content": _words(rng, 20)})
    return body


def small(protocol: str, model: str) -> Json:
    """The smallest turn of each protocol: one user message of a few words."""
    if protocol == "messages":
        return {
            "model": model,
            "max_tokens": 1024,
            "messages": [{"role": "user", "content": "Say hello."}],
            "stream": True,
        }
    if protocol == "responses":
        return {"model": model, "input": "Say hello.", "stream": True}
    return {
        "model": model,
        "messages": [{"role": "user", "content": "Say hello."}],
        "stream": True,
        "stream_options": {"include_usage": True},
    }


AGENTS = {"messages": claude_code, "responses": codex, "chat": chat_agent}
"""The agent-sized request of each client protocol."""
