"""A gateway that serves OpenAI Responses from a chat completions upstream: the Codex
case, a client that speaks only `POST /v1/responses` in front of a model served only as
`POST /v1/chat/completions` (vLLM, llama.cpp, Ollama, most hosted open models).

    GATEWAY_CHAT_UPSTREAM=http://localhost:8000 uvicorn examples.responses_gateway:app --port 4000
    OPENAI_BASE_URL=http://localhost:4000/v1 codex     # Codex, on a chat model
    GATEWAY_CHAT_UPSTREAM=https://api.deepseek.com GATEWAY_CHAT_DIALECT=deepseek uvicorn ...

`POST /v1/responses` is sent on as `POST {chat upstream}/v1/chat/completions`, with
`stream: true` and `stream_options.include_usage`, and the chat stream is written back as
Responses events. It is examples/messages_gateway.py's machinery with a third direction
(its `Bridge`, its endpoint, its relay and its log line, "responses from chat: ..."): each
upstream event is read (httpx, async) into typed `Part`s by `aiter_parts` and written as
Responses events by `awrite_parts(..., protocol="responses")` as it arrives. A client that
goes away closes the upstream response at once. An upstream's HTTP error keeps its status
and gets OpenAI's error body (`{"error": {"message", "type", "param", "code"}}`); an error
inside the stream, or a stream cut off, ends the client's stream with an `error` event and
`response.failed`. A request without `"stream": true` is answered too, unstreamed: the
upstream still streams, and the gateway adds the bridged stream up (`ResponseAccumulator`)
into the one `Response` the client expects (a failed stream: its error, status 502).

The request is written by `responses_msgspec.to_request(body, protocol="chat",
dialect=...)`: `instructions` and `input` (a string, or items: messages of text and
images, reasoning items, `function_call` and `function_call_output` items) as chat
messages, function `tools` (flat in Responses, nested under `function` in chat),
`tool_choice`, `parallel_tool_calls`, `temperature`, `top_p`, `max_output_tokens` and
`reasoning.effort`, in the chat upstream's dialect, `GATEWAY_CHAT_DIALECT` ("openai" by
default; "deepseek" or "moonshot" get the reasoning of earlier turns, which Codex sends
back as reasoning items, as `reasoning_content`; "vllm", "openrouter", "gemini"...).
What the gateway still decides itself: the request always streams upstream (`stream:
true`, `stream_options.include_usage`), the `model` and the client's `Authorization`
header are passed on as they are, and each `RequestLossWarning` is judged item by item
(examples/messages_gateway.py's `translated`):

- Refused, with a 400 in OpenAI's error shape before anything is sent upstream, because
  leaving them out would change what the model is asked: anything `to_request` reports
  lost but the reasoning below, such as tools other than functions (`web_search`,
  `file_search`, `local_shell`, `custom`, MCP, ...), any other input item (hosted tools'
  calls and outputs, `custom_tool_call`, `local_shell_call`, `item_reference`) and
  an image given by file id (chat takes images inline only); and, which `to_request` leaves out
  without a word, a `tool_choice` other than "auto", "none", "required" or one function,
  a `text.format` other than text (structured outputs are not translated), and
  server-kept state: `previous_response_id`, `conversation`, `prompt` (a stored prompt),
  `background`.
- Dropped, because chat takes them back in no form or they only tune the answer: the
  reasoning of earlier turns a dialect has no key for ("openai"), reasoning items'
  `encrypted_content` (only OpenAI can read it), a reasoning effort the dialect has no
  place for; the keys that only tune the answer (`TUNING_KEYS`): `include`, `store`,
  `metadata`, `prompt_cache_key`, `service_tier`, `truncation`, `text.verbosity`,
  `safety_identifier`, `max_tool_calls`, `top_logprobs`, items' `id` and `status`.
- No other route is served (`GET /v1/responses/{id}`, `/v1/models`, WebSocket mode): a
  gateway that keeps nothing has no responses to look up.

It uses the msgspec module, for the reason examples/gateway.py gives.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

import httpx
from starlette.applications import Starlette
from starlette.routing import Route

from examples.messages_gateway import (
    TIMEOUT,
    Bridge,
    Json,
    Untranslatable,
    bridge_endpoint,
    chat_error,
    chat_headers,
    in_dialect,
    translated,
)
from generated.chunk_msgspec import StreamError
from generated.responses_msgspec import ResponseAccumulator, dumps, iter_events, to_request

TUNING_KEYS = frozenset(
    (
        "include",
        "store",
        "metadata",
        "prompt_cache_key",
        "prompt_cache_retention",
        "service_tier",
        "truncation",
        "text",  # its format is checked first: what is left is verbosity
        "safety_identifier",
        "max_tool_calls",
        "top_logprobs",
        "stream_options",
    )
)
"""Responses request keys that only tune how the answer is made, kept, or served:
dropped when `to_request` says chat has no place for them."""

REFUSED_KEYS = ("previous_response_id", "conversation", "prompt", "background")
"""Request keys that ask for state kept on the server: a gateway that keeps none refuses
them (leaving them out would change what the model is asked)."""


# --- Responses request -> chat request ------------------------------------------------


def chat_request(body: Json, dialect: str = "openai") -> Json:
    """A Responses request as the chat completions request, in the upstream's `dialect`,
    that asks the same."""
    for key in REFUSED_KEYS:
        if body.get(key):
            raise Untranslatable(f"{key}: this gateway keeps no state")
    text = body.get("text")
    text_format = text.get("format") if isinstance(text, dict) else None
    kind: Any = text_format.get("type", "text") if isinstance(text_format, dict) else "text"
    if kind != "text":
        raise Untranslatable(f"a text.format of type {kind!r}")
    choice = body.get("tool_choice")
    if not (
        choice in (None, "auto", "none", "required")
        or (isinstance(choice, dict) and choice.get("type") == "function")
    ):
        raise Untranslatable(f"a tool_choice of {choice!r}")
    out = translated(lambda: to_request(body, protocol="chat", dialect=dialect), TUNING_KEYS)
    # Always streamed upstream: an unstreamed client request is added up here.
    out["stream"] = True
    out["stream_options"] = {"include_usage": True}
    return out


# --- the answer -----------------------------------------------------------------------


def responses_error(status: int, message: str, kind: str | None = None) -> Json:
    """An error as OpenAI's API answers one: the chat shape, which Responses shares."""
    return chat_error(status, message, kind)


def response_of(stream: bytes) -> tuple[int, bytes]:
    """A bridged Responses stream added up to the response an unstreamed call returns,
    or its error (an `error` event, `response.failed`) as a 502 in OpenAI's shape."""
    accumulator = ResponseAccumulator()
    try:
        for event in iter_events(stream):
            accumulator.add(event)
    except StreamError as error:
        kind = error.type if isinstance(error.type, str) else None
        return 502, json.dumps(responses_error(502, str(error.message), kind)).encode()
    return 200, dumps(accumulator.result()).encode()


RESPONSES_FROM_CHAT = Bridge(
    client="responses",
    upstream="chat",
    path="/v1/chat/completions",
    translate=chat_request,
    error=responses_error,
    headers=chat_headers,
    add_up=response_of,
)


def create_app(
    chat_upstream: str, *, chat_dialect: str = "openai", client: httpx.AsyncClient | None = None
) -> Starlette:
    """The gateway: `/v1/responses` served from `chat_upstream` (a base URL such as
    http://localhost:8000, before `/v1`), whose requests are written in `chat_dialect`
    (`to_request`'s). `client` sends the upstream requests (by default one with
    `TIMEOUT`); the app closes it when it shuts down."""
    http = client or httpx.AsyncClient(timeout=TIMEOUT)
    bridge = in_dialect(RESPONSES_FROM_CHAT, chat_request, chat_dialect)
    endpoint = bridge_endpoint(http, bridge, chat_upstream.rstrip("/"))

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncGenerator[None, None]:
        async with http:
            yield

    return Starlette(routes=[Route("/v1/responses", endpoint, methods=["POST"])], lifespan=lifespan)


app = create_app(
    os.environ.get("GATEWAY_CHAT_UPSTREAM", "https://api.openai.com"),
    chat_dialect=os.environ.get("GATEWAY_CHAT_DIALECT", "openai"),
)
"""For `uvicorn examples.responses_gateway:app`: the upstream is $GATEWAY_CHAT_UPSTREAM,
its dialect $GATEWAY_CHAT_DIALECT."""
