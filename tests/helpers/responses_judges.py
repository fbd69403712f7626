"""Judges of OpenAI Responses streams (`POST /v1/responses`, `event: response.*`): real
clients read the raw bytes of an SSE body, served over loopback HTTP (tests/helpers/loopback.py),
and say what they read.

- `read_with_openai_sdk` (and `aread_with_openai_sdk`, `read_many_with_openai_sdk`):
  openai-python's `responses.stream(...)`, pinned in requirements.lock. Strict: whatever
  it raises propagates. Its `ResponseStream` wants `response.created` first, the same
  response id in every lifecycle event, each item added once before its deltas, done with
  the identity it was added with, and a `response.completed` (else `get_final_response`
  raises `RuntimeError`); an `error` event whose data holds an `error` object raises
  `openai.APIError`. The final response is `response.completed`'s, not the deltas' sum.
- `read_with_ai_sdk` (`read_many_with_ai_sdk`): the Vercel AI SDK's OpenAI provider, its
  Responses model (`@ai-sdk/openai` under `streamText`, tests/clients/openai_responses.mjs,
  pinned by tests/clients/package-lock.json and installed by `make test`). It reports
  errors instead of raising, and reads items from `output_item.added`/`.done` and text,
  summary and argument deltas only: no `reasoning_text`, refusal or `custom_tool_call`;
  a nested `error` event is an error part (finish reason still "unknown"), a flat one
  and `response.failed` are ignored; summary parts after the first need their
  `reasoning_summary_part.added`, and text deltas the message's id as `item_id`.
  `read_urls_with_ai_sdk` points it at servers already running (a gateway).

`meanings_of_response` and `meanings_of_ai_sdk_reading` put what each read in chat terms
(reasoning, text, tool calls, status, usage), so that tests can compare both with what a
writer meant.

    read = read_with_openai_sdk(body)
    meanings_of_response(read["response"])["text"]
"""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
from collections.abc import Generator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import openai

from generator.runtime.parts import _REASONING_SEPARATOR
from tests.helpers.loopback import StreamSpec, serve, stream_app

CLIENTS = Path(__file__).resolve().parents[1] / "clients"
TIMEOUT = 60.0
"""Seconds any one read may take, the Node process's included."""
MODEL = "m"
INPUT = "hi"


@contextmanager
def _served(bodies: Sequence[bytes]) -> Generator[list[str]]:
    """Serves each body as `text/event-stream` on 127.0.0.1; yields one base URL per body
    (`http://127.0.0.1:PORT/streams/<name>/v1`: a client posts to `<base>/responses`) and
    stops the server on exit."""
    names = [f"responses-{i}" for i in range(len(bodies))]
    app = stream_app({name: StreamSpec([body]) for name, body in zip(names, bodies, strict=True)})
    with serve(app) as base:
        yield [f"{base}/streams/{name}/v1" for name in names]


def _client(url: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=url, api_key="x", max_retries=0, timeout=TIMEOUT)


TERMINALS = ("response.completed", "response.incomplete", "response.failed")


def _read(client: openai.OpenAI, events: list[str], final: bool) -> dict[str, Any]:
    terminal: Any = None
    with (
        client,
        _noting(events),
        client.responses.stream(model=MODEL, input=INPUT) as stream,
    ):
        for event in stream:
            events.append(event.type)  # one by one: kept if a later one raises
            if event.type in TERMINALS:
                terminal = getattr(event, "response", None)
        response = stream.get_final_response() if final else terminal
    return _reading(response, events)


def _reading(response: Any, events: list[str]) -> dict[str, Any]:
    dumped = (
        None
        if response is None
        else response.model_dump(mode="json", exclude_unset=True, warnings=False)
    )
    return {"response": dumped, "events": events}


def read_with_openai_sdk(body: bytes, *, final: bool = True) -> dict[str, Any]:
    """What openai-python reads from `body`: `{"response": the final response
    (`get_final_response()`) as `model_dump(mode="json", exclude_unset=True,
    warnings=False)`, "events": the types of the events its `ResponseStream` yielded, in
    order}`. Exceptions propagate, with a note of the events read before.

    `get_final_response()` raises `RuntimeError` without a `response.completed`, so a
    stream that ends `response.incomplete` or `response.failed` raises; with `final=False`
    "response" is the response of the last terminal event the stream yielded instead
    (openai-python fills a null `output` of `.incomplete`/`.failed` from the done items),
    None when there was none."""
    with _served([body]) as [url]:
        return _read(_client(url), [], final)


_READINGS: dict[tuple[bytes, bool], dict[str, Any] | Exception] = {}
"""What `read_many_with_openai_sdk` read from a body, and with which `final`, in this
process."""


def read_many_with_openai_sdk(
    bodies: Sequence[bytes], *, final: bool = True
) -> list[dict[str, Any] | Exception]:
    """`read_with_openai_sdk` of each body, served together by one server: what it read,
    or the exception it raised. A body read before in this process (with the same
    `final`) is not served again: openai-python reads the same bytes the same way, and
    tests read the same captures once per target. Each call gets its own copy."""
    todo = [body for body in dict.fromkeys(bodies) if (body, final) not in _READINGS]
    if todo:
        with _served(todo) as urls:
            for body, url in zip(todo, urls, strict=True):
                try:
                    _READINGS[body, final] = _read(_client(url), [], final)
                except Exception as error:
                    _READINGS[body, final] = error
    return [_copied(_READINGS[body, final]) for body in bodies]


def _copied(read: dict[str, Any] | Exception) -> dict[str, Any] | Exception:
    return read if isinstance(read, Exception) else copy.deepcopy(read)


async def aread_with_openai_sdk(body: bytes, *, final: bool = True) -> dict[str, Any]:
    """`read_with_openai_sdk` with `AsyncOpenAI` (the server still runs in a thread:
    starting it blocks the event loop for a moment)."""
    events: list[str] = []
    terminal: Any = None
    with _served([body]) as [url]:
        client = openai.AsyncOpenAI(base_url=url, api_key="x", max_retries=0, timeout=TIMEOUT)
        async with client:
            with _noting(events):
                async with client.responses.stream(model=MODEL, input=INPUT) as stream:
                    async for event in stream:
                        events.append(event.type)
                        if event.type in TERMINALS:
                            terminal = getattr(event, "response", None)
                    response = await stream.get_final_response() if final else terminal
    return _reading(response, events)


@contextmanager
def _noting(events: list[str]) -> Generator[None]:
    try:
        yield
    except Exception as error:
        error.add_note(f"events openai-python yielded before: {events}")
        raise


def read_with_ai_sdk(body: bytes) -> dict[str, Any]:
    """What the Vercel AI SDK's OpenAI Responses model reads from `body` (the JSON object
    tests/clients/openai_responses.mjs prints; its header comment lists the keys)."""
    [seen] = read_many_with_ai_sdk([body])
    return seen


def read_many_with_ai_sdk(bodies: Sequence[bytes]) -> list[dict[str, Any]]:
    """`read_with_ai_sdk` for each body, in one Node process (it takes a while to start)."""
    with _served(bodies) as urls:
        return read_urls_with_ai_sdk(urls)


def read_urls_with_ai_sdk(
    urls: Sequence[str], *, hosted_tools: bool = True
) -> list[dict[str, Any]]:
    """What the Vercel AI SDK reads from each base URL (a server of `<url>/responses`
    already running, such as a gateway), in one Node process. It asks for model "m" with
    the prompt "hi", declaring the hosted tools it knows unless `hosted_tools` is False
    (then the request has no `tools`)."""
    node = shutil.which("node")
    assert node, "Node.js is needed for the real-client tests (see README)"
    assert (CLIENTS / "node_modules").is_dir(), "run `make test`: it installs tests/clients"
    result = subprocess.run(
        [node, str(CLIENTS / "openai_responses.mjs"), *urls],
        capture_output=True,
        text=True,
        timeout=TIMEOUT * max(1, len(urls)),
        check=False,
        env=os.environ | {"AI_SDK_HOSTED_TOOLS": "1" if hosted_tools else "0"},
    )
    assert result.returncode == 0, result.stderr
    seen = {entry["baseURL"]: entry for entry in map(json.loads, result.stdout.splitlines())}
    return [seen[url] for url in urls]


def meanings_of_response(response: dict[str, Any]) -> dict[str, Any]:
    """The meanings a final Responses `response` (as `read_with_openai_sdk` returns it)
    holds, in chat terms:

    - reasoning: of each `reasoning` item, its `summary` texts joined (by
      `_REASONING_SEPARATOR`, as one text holds them), or, when it has no summary text,
      its `content` (`reasoning_text` parts) joined; all items' joined in
      order. `reasoning_from` says which each item gave: "summary", "content" or "" (none).
      openai-python keeps both lists of an item; a writer puts a source's reasoning in one.
    - encrypted: the non-empty `encrypted_content` of the reasoning items, in order;
    - text: the `output_text` parts of `message` items, joined; refusal: their `refusal`
      parts, joined;
    - tool_calls: `(call_id, name, arguments)` of each `function_call` item, the arguments
      parsed as JSON (the raw string when they are no JSON); custom_tool_calls: the same
      of each `custom_tool_call` item, with its `input` (JSON when it is, else the text);
    - status ("completed", "incomplete", "failed"), incomplete_reason
      (`incomplete_details.reason`, None without), and usage: prompt_tokens =
      input_tokens, completion_tokens = output_tokens, cached_prompt_tokens =
      input_tokens_details.cached_tokens and reasoning_tokens =
      output_tokens_details.reasoning_tokens (None when absent; usage None without)."""
    items: list[dict[str, Any]] = response.get("output") or []

    def of(kind: str) -> list[dict[str, Any]]:
        return [item for item in items if item.get("type") == kind]

    def parts(kind: str, key: str) -> str:
        return "".join(
            part.get(key) or ""
            for item in of("message")
            for part in _parts(item, "content")
            if part.get("type") == kind
        )

    reasoning: list[str] = []
    reasoning_from: list[str] = []
    for item in of("reasoning"):
        text, source = _reasoning_of(item)
        reasoning.append(text)
        reasoning_from.append(source)
    details: dict[str, Any] = response.get("incomplete_details") or {}
    usage: dict[str, Any] | None = response.get("usage")
    return {
        "reasoning": "".join(reasoning),
        "reasoning_from": reasoning_from,
        "encrypted": [
            i["encrypted_content"] for i in of("reasoning") if i.get("encrypted_content")
        ],
        "text": parts("output_text", "text"),
        "refusal": parts("refusal", "refusal"),
        "tool_calls": [
            (i.get("call_id"), i.get("name"), _json_or_text(i.get("arguments")))
            for i in of("function_call")
        ],
        "custom_tool_calls": [
            (i.get("call_id"), i.get("name"), _json_or_text(i.get("input")))
            for i in of("custom_tool_call")
        ],
        "status": response.get("status"),
        "incomplete_reason": details.get("reason"),
        "usage": None if usage is None else _chat_usage(usage),
    }


def _reasoning_of(item: dict[str, Any]) -> tuple[str, str]:
    summary = _joined(_parts(item, "summary"))
    if summary:
        return summary, "summary"
    content = _joined(_parts(item, "content"))
    return content, "content" if content else ""


def _ai_sdk_reasoning(blocks: list[dict[str, Any]]) -> str:
    """The AI SDK's reasoning blocks (one per summary part) as one text: an item's
    blocks joined as the reader joins its parts."""
    out, item = "", None
    for block in blocks:
        text: str = block.get("text") or ""
        if not text:
            continue
        if out and block.get("itemId") == item:
            out += _REASONING_SEPARATOR
        out, item = out + text, block.get("itemId")
    return out


def _joined(parts: list[dict[str, Any]]) -> str:
    """The texts of an item's parts as one text, as the reader joins them."""
    return _REASONING_SEPARATOR.join(t for p in parts if (t := p.get("text")))


def _parts(item: dict[str, Any], key: str) -> list[dict[str, Any]]:
    """The list of parts `item[key]` (none when it is null or absent)."""
    parts: list[dict[str, Any]] = item.get(key) or []
    return parts


def _json_or_text(text: Any) -> Any:
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


def _chat_usage(usage: dict[str, Any]) -> dict[str, int | None]:
    def count(value: Any) -> int | None:
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    inputs: dict[str, Any] = usage.get("input_tokens_details") or {}
    outputs: dict[str, Any] = usage.get("output_tokens_details") or {}
    return {
        "prompt_tokens": count(usage.get("input_tokens")),
        "completion_tokens": count(usage.get("output_tokens")),
        "cached_prompt_tokens": count(inputs.get("cached_tokens")),
        "reasoning_tokens": count(outputs.get("reasoning_tokens")),
    }


def meanings_of_ai_sdk_reading(seen: dict[str, Any]) -> dict[str, Any]:
    """The meanings `meanings_of_response` gives, from what `read_with_ai_sdk` returns,
    as far as the AI SDK reads them:

    - reasoning: the summary text it read (it never reads `reasoning_text`), a block per
      summary part, an item's blocks joined by `_REASONING_SEPARATOR`;
      encrypted: the non-empty encrypted contents of its reasoning blocks, once per item;
    - text; tool_calls: `(toolCallId, toolName, input)` of the calls it did not mark
      `providerExecuted` (it reports no `custom_tool_call`, and no refusal);
    - finish_reason (the SDK's: it keeps no status), usage from its own counts:
      prompt_tokens = inputTokens, completion_tokens = outputTokens, cached_prompt_tokens
      = cachedInputTokens, reasoning_tokens = reasoningTokens (None when absent; usage
      None when it read none, as without a `response.completed`/`.incomplete`);
    - response_id (providerMetadata.openai.responseId) and errors (its error parts)."""
    calls: list[dict[str, Any]] = seen["toolCalls"]
    encrypted: dict[str, str] = {}
    for block in seen["reasoningBlocks"]:
        if block.get("encryptedContent"):
            encrypted.setdefault(block.get("itemId") or block["id"], block["encryptedContent"])
    usage: dict[str, Any] | None = seen.get("usage")
    has_usage = usage is not None and usage.get("inputTokens") is not None
    provider_metadata: dict[str, Any] = seen.get("providerMetadata") or {}
    metadata: dict[str, Any] = provider_metadata.get("openai") or {}

    def count(key: str) -> int | None:
        value = (usage or {}).get(key)
        return value if isinstance(value, int) else None

    return {
        "reasoning": _ai_sdk_reasoning(seen["reasoningBlocks"]),
        "encrypted": list(encrypted.values()),
        "text": seen["text"],
        "tool_calls": [
            (c["toolCallId"], c["toolName"], c["input"]) for c in calls if not c["providerExecuted"]
        ],
        "finish_reason": seen["finishReason"],
        "usage": (
            {
                "prompt_tokens": count("inputTokens"),
                "completion_tokens": count("outputTokens"),
                "cached_prompt_tokens": count("cachedInputTokens"),
                "reasoning_tokens": count("reasoningTokens"),
            }
            if has_usage
            else None
        ),
        "response_id": metadata.get("responseId"),
        "errors": seen["errors"],
    }
