"""Judges of Anthropic Messages streams: real clients read the raw bytes of an SSE body,
served over loopback HTTP (tests/helpers/loopback.py), and say what they read.

- `read_with_anthropic_sdk` (and `aread_with_anthropic_sdk`): anthropic-sdk-python's
  `messages.stream(...)`, pinned in requirements.lock. Strict: whatever the SDK raises
  propagates (an `error` event raises `anthropic.APIStatusError`; a `message_delta`
  without `usage` breaks its accumulator with an `AttributeError`).
- `read_with_ai_sdk`: the Vercel AI SDK's Anthropic provider (`@ai-sdk/anthropic` under
  `streamText`, tests/clients/anthropic_ai.mjs, pinned by tests/clients/package-lock.json
  and installed by `make test`). It reports errors instead of raising.

`meanings_of_sdk_message` and `meanings_of_ai_sdk_reading` put what each read in chat
terms (reasoning, text, tool calls, usage), so that tests can compare both with what a
writer meant.

    read = read_with_anthropic_sdk(body)
    meanings_of_sdk_message(read["message"])["text"]
"""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
from collections.abc import Generator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anthropic

from tests.helpers.loopback import StreamSpec, serve, stream_app

CLIENTS = Path(__file__).resolve().parents[1] / "clients"
TIMEOUT = 60.0
"""Seconds any one read may take, the Node process's included."""
MODEL = "m"
MAX_TOKENS = 1024
MESSAGES: list[anthropic.types.MessageParam] = [{"role": "user", "content": "hi"}]


@contextmanager
def _served(bodies: Sequence[bytes]) -> Generator[list[str]]:
    """Serves each body as `text/event-stream` on 127.0.0.1; yields one base URL per body
    (`http://127.0.0.1:PORT/streams/<name>`) and stops the server on exit."""
    names = [f"messages-{i}" for i in range(len(bodies))]
    app = stream_app({name: StreamSpec([body]) for name, body in zip(names, bodies, strict=True)})
    with serve(app) as base:
        yield [f"{base}/streams/{name}" for name in names]


def read_with_anthropic_sdk(body: bytes) -> dict[str, Any]:
    """What anthropic-sdk-python reads from `body`: `{"message": the final message as
    `model_dump(mode="json", exclude_unset=True, warnings=False)`, "events": the types of the events its
    `MessageStream` yielded, in order}` (its own events, such as "text" and "thinking",
    among the raw ones). Exceptions propagate, with a note of the events read before."""
    events: list[str] = []
    with _served([body]) as [url]:
        client = anthropic.Anthropic(base_url=url, api_key="x", max_retries=0, timeout=TIMEOUT)
        with (
            client,
            _noting(events),
            client.messages.stream(model=MODEL, max_tokens=MAX_TOKENS, messages=MESSAGES) as s,
        ):
            for event in s:
                events.append(event.type)  # one by one: kept if a later one raises
            message = s.get_final_message()
    return {
        "message": message.model_dump(mode="json", exclude_unset=True, warnings=False),
        "events": events,
    }


_READINGS: dict[bytes, dict[str, Any] | Exception] = {}
"""What `read_many_with_anthropic_sdk` read from a body in this process."""


def read_many_with_anthropic_sdk(bodies: Sequence[bytes]) -> list[dict[str, Any] | Exception]:
    """`read_with_anthropic_sdk` of each body, served together by one server: what it
    read, or the exception it raised. A body read before in this process is not served
    again: anthropic-sdk-python reads the same bytes the same way, and tests read the
    same captures once per target. Each call gets its own copy."""
    todo = [body for body in dict.fromkeys(bodies) if body not in _READINGS]
    if todo:
        _READINGS.update(zip(todo, _read_many(todo), strict=True))
    return [
        read if isinstance(read, Exception) else copy.deepcopy(read)
        for read in (_READINGS[body] for body in bodies)
    ]


def _read_many(bodies: Sequence[bytes]) -> list[dict[str, Any] | Exception]:
    out: list[dict[str, Any] | Exception] = []
    with _served(bodies) as urls:
        for url in urls:
            events: list[str] = []
            client = anthropic.Anthropic(base_url=url, api_key="x", max_retries=0, timeout=TIMEOUT)
            try:
                with (
                    client,
                    _noting(events),
                    client.messages.stream(
                        model=MODEL, max_tokens=MAX_TOKENS, messages=MESSAGES
                    ) as s,
                ):
                    for event in s:
                        events.append(event.type)
                    message = s.get_final_message()
            except Exception as error:
                out.append(error)
                continue
            dumped = message.model_dump(mode="json", exclude_unset=True, warnings=False)
            out.append({"message": dumped, "events": events})
    return out


async def aread_with_anthropic_sdk(body: bytes) -> dict[str, Any]:
    """`read_with_anthropic_sdk` with `AsyncAnthropic` (the server still runs in a thread:
    starting it blocks the event loop for a moment)."""
    events: list[str] = []
    with _served([body]) as [url]:
        client = anthropic.AsyncAnthropic(base_url=url, api_key="x", max_retries=0, timeout=TIMEOUT)
        async with client:
            with _noting(events):
                stream = client.messages.stream(
                    model=MODEL, max_tokens=MAX_TOKENS, messages=MESSAGES
                )
                async with stream as s:
                    async for event in s:
                        events.append(event.type)
                    message = await s.get_final_message()
    return {
        "message": message.model_dump(mode="json", exclude_unset=True, warnings=False),
        "events": events,
    }


@contextmanager
def _noting(events: list[str]) -> Generator[None]:
    try:
        yield
    except Exception as error:
        error.add_note(f"events the anthropic SDK yielded before: {events}")
        raise


def read_with_ai_sdk(body: bytes) -> dict[str, Any]:
    """What the Vercel AI SDK's Anthropic provider reads from `body` (the JSON object
    tests/clients/anthropic_ai.mjs prints; its header comment lists the keys)."""
    [seen] = read_many_with_ai_sdk([body])
    return seen


def read_many_with_ai_sdk(bodies: Sequence[bytes]) -> list[dict[str, Any]]:
    """`read_with_ai_sdk` for each body, in one Node process (it takes a while to start)."""
    node = shutil.which("node")
    assert node, "Node.js is needed for the real-client tests (see README)"
    assert (CLIENTS / "node_modules").is_dir(), "run `make test`: it installs tests/clients"
    with _served(bodies) as urls:
        base_urls = [f"{url}/v1" for url in urls]  # the provider posts to <baseURL>/messages
        result = subprocess.run(
            [node, str(CLIENTS / "anthropic_ai.mjs"), *base_urls],
            capture_output=True,
            text=True,
            timeout=TIMEOUT * max(1, len(bodies)),
            check=False,
        )
    assert result.returncode == 0, result.stderr
    seen = {entry["baseURL"]: entry for entry in map(json.loads, result.stdout.splitlines())}
    return [seen[url] for url in base_urls]


def meanings_of_sdk_message(message: dict[str, Any]) -> dict[str, Any]:
    """The meanings a final Anthropic message (as `read_with_anthropic_sdk` returns it)
    holds, in chat terms:

    - reasoning: the texts of its `thinking` blocks, joined; signatures: their non-empty
      signatures, in order; redacted: the `data` of its `redacted_thinking` blocks;
    - text: its `text` blocks, joined;
    - tool_calls: `(id, name, input)` of each `tool_use` block (input a JSON value);
      server_tool_uses: the same of each `server_tool_use` block;
    - stop_reason, and usage: prompt_tokens = input_tokens + cache_read_input_tokens +
      cache_creation_input_tokens (absent or null ones count 0), completion_tokens =
      output_tokens, cached_prompt_tokens = cache_read_input_tokens (None if absent)."""
    blocks: list[dict[str, Any]] = message.get("content") or []

    def of(kind: str) -> list[dict[str, Any]]:
        return [block for block in blocks if block.get("type") == kind]

    usage: dict[str, Any] = message.get("usage") or {}
    return {
        "reasoning": "".join(b.get("thinking", "") for b in of("thinking")),
        "signatures": [b["signature"] for b in of("thinking") if b.get("signature")],
        "redacted": [b.get("data") for b in of("redacted_thinking")],
        "text": "".join(b.get("text", "") for b in of("text")),
        "tool_calls": [(b.get("id"), b.get("name"), b.get("input")) for b in of("tool_use")],
        "server_tool_uses": [
            (b.get("id"), b.get("name"), b.get("input")) for b in of("server_tool_use")
        ],
        "stop_reason": message.get("stop_reason"),
        "usage": _chat_usage(usage),
    }


def meanings_of_ai_sdk_reading(seen: dict[str, Any]) -> dict[str, Any]:
    """The same meanings from what `read_with_ai_sdk` returns, with two differences: the
    stop is the SDK's `finish_reason` ("stop", "tool-calls", ...: it keeps no
    `stop_reason`), and the usage is computed as `meanings_of_sdk_message` does from the
    raw usage the provider passes on (providerMetadata.anthropic.usage; None when it
    passed none); `errors` are the stream's error parts."""
    blocks: list[dict[str, Any]] = seen["reasoningBlocks"]
    calls: list[dict[str, Any]] = seen["toolCalls"]
    provider_metadata: dict[str, Any] = seen.get("providerMetadata") or {}
    metadata: dict[str, Any] = provider_metadata.get("anthropic") or {}
    raw_usage: dict[str, Any] | None = metadata.get("usage")
    return {
        "reasoning": seen["reasoning"],
        "signatures": [b["signature"] for b in blocks if b.get("signature")],
        "redacted": [b["redactedData"] for b in blocks if b.get("redactedData") is not None],
        "text": seen["text"],
        "tool_calls": [
            (c["toolCallId"], c["toolName"], c["input"]) for c in calls if not c["providerExecuted"]
        ],
        "server_tool_uses": [
            (c["toolCallId"], c["toolName"], c["input"]) for c in calls if c["providerExecuted"]
        ],
        "finish_reason": seen["finishReason"],
        "usage": None if raw_usage is None else _chat_usage(raw_usage),
        "errors": seen["errors"],
    }


def _chat_usage(usage: dict[str, Any]) -> dict[str, int | None]:
    def count(key: str) -> int:
        value = usage.get(key)
        return value if isinstance(value, int) else 0

    cached = usage.get("cache_read_input_tokens")
    return {
        "prompt_tokens": count("input_tokens")
        + count("cache_read_input_tokens")
        + count("cache_creation_input_tokens"),
        "completion_tokens": usage.get("output_tokens"),
        "cached_prompt_tokens": cached if isinstance(cached, int) else None,
    }
