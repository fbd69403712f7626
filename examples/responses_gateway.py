"""A gateway that serves OpenAI Responses from a chat completions upstream: the Codex
case, a client that speaks only `POST /v1/responses` in front of a model served only as
`POST /v1/chat/completions` (vLLM, llama.cpp, Ollama, most hosted open models).

    GATEWAY_CHAT_UPSTREAM=http://localhost:8000 uvicorn examples.responses_gateway:app --port 4000
    OPENAI_BASE_URL=http://localhost:4000/v1 codex     # Codex, on a chat model

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

What it translates, Responses -> chat:

- `instructions` -> a first `system` message; `input` as a string -> one `user` message;
  `input` as a list of items: messages (`role` user, system, developer or assistant, with
  `type: "message"` or without a type; content a string or `input_text`/`output_text`
  parts; a `refusal` part read as text) -> chat messages of that role (developer as
  system: not every chat server knows the role); `function_call` items -> `tool_calls` of
  the assistant message before them (or of a new one, `content: null`);
  `function_call_output` items (output a string or `input_text` parts) -> `tool` messages.
- `tools` of type "function" (flat `name`, `description`, `parameters`, `strict`) -> chat
  function tools (the same nested under `function`); `tool_choice` ("auto", "none",
  "required", `{"type": "function", "name": ...}`); `parallel_tool_calls`,
  `temperature`, `top_p` as they are; `max_output_tokens` -> `max_tokens`;
  `reasoning.effort` -> `reasoning_effort`. The `model` is passed on as it is, and the
  client's `Authorization` header.

What it does NOT do:

- Refused, with a 400 in OpenAI's error shape before anything is sent upstream, because
  leaving them out would change what the model is asked: images, files and audio
  (`input_image`, `input_file`, ...), any other input item (hosted tools' calls and
  outputs, `custom_tool_call`, `local_shell_call`, `item_reference`), tools other than
  functions (`web_search`, `file_search`, `local_shell`, `custom`, MCP, ...), a
  `tool_choice` other than those above (`allowed_tools`, a hosted tool), a `text.format`
  other than text (structured outputs are not translated), and server-kept state:
  `previous_response_id`, `conversation`, `prompt` (a stored prompt), `background`.
- Not passed on, because chat has no place for them or they only tune the answer:
  `reasoning` items of earlier turns (chat takes no reasoning back; Codex sends them with
  `encrypted_content`), `reasoning.summary`, `include`, `store`, `metadata`,
  `prompt_cache_key`, `service_tier`, `truncation`, `text.verbosity`, `user`,
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
from typing import Any, TypeGuard, cast

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
)
from generated.chunk_msgspec import StreamError
from generated.responses_msgspec import ResponseAccumulator, dumps, iter_events

REFUSED_KEYS = ("previous_response_id", "conversation", "prompt", "background")
"""Request keys that ask for state kept on the server: a gateway that keeps none refuses
them (leaving them out would change what the model is asked)."""

MESSAGE_ROLES = {"user": "user", "assistant": "assistant", "system": "system"}
MESSAGE_ROLES["developer"] = "system"  # not every chat server knows the role
TEXT_PARTS = {"input_text": "text", "output_text": "text", "refusal": "refusal"}
"""The content parts translated, with the key of their text."""
SKIPPED_ITEMS = ("reasoning",)
"""Input items not passed on: chat takes no reasoning back."""


# --- Responses request -> chat request ------------------------------------------------


def chat_request(body: Json) -> Json:
    """A Responses request as the chat completions request that asks the same."""
    for key in REFUSED_KEYS:
        if body.get(key):
            raise Untranslatable(f"{key}: this gateway keeps no state")
    text_format = _object(_object(body.get("text")).get("format"))
    if text_format.get("type", "text") != "text":
        raise Untranslatable(f"a text.format of type {text_format.get('type')!r}")
    out: Json = {"model": body.get("model"), "messages": chat_messages(body)}
    if body.get("max_output_tokens") is not None:
        out["max_tokens"] = body["max_output_tokens"]
    for key in ("temperature", "top_p", "parallel_tool_calls"):
        if body.get(key) is not None:
            out[key] = body[key]
    effort = _object(body.get("reasoning")).get("effort")
    if effort is not None:
        out["reasoning_effort"] = effort
    if body.get("tools"):
        out["tools"] = [chat_tool(tool) for tool in _objects(body["tools"], "tools")]
    if body.get("tool_choice") is not None:
        out["tool_choice"] = chat_tool_choice(body["tool_choice"])
    # Always streamed upstream: an unstreamed client request is added up here.
    out["stream"] = True
    out["stream_options"] = {"include_usage": True}
    return out


def chat_messages(body: Json) -> list[Json]:
    """`instructions` and `input` as chat messages."""
    out: list[Json] = []
    if body.get("instructions"):
        out.append({"role": "system", "content": str(body["instructions"])})
    given = body.get("input")
    if isinstance(given, str):
        out.append({"role": "user", "content": given})
        return out
    for item in _objects(given, "input"):
        kind = item.get("type", "message")
        if kind == "message":
            out.append(chat_message(item))
        elif kind == "function_call":
            call = {
                "id": item.get("call_id"),
                "type": "function",
                "function": {"name": item.get("name"), "arguments": item.get("arguments", "")},
            }
            last = out[-1] if out else None
            if last is None or last["role"] != "assistant":
                last = {"role": "assistant", "content": None}
                out.append(last)
            last.setdefault("tool_calls", []).append(call)
        elif kind == "function_call_output":
            output = "\n\n".join(_texts(item.get("output")))
            out.append({"role": "tool", "tool_call_id": item.get("call_id"), "content": output})
        elif kind not in SKIPPED_ITEMS:
            raise Untranslatable(f"an input item of type {kind!r}")
    return out


def chat_message(item: Json) -> Json:
    """A message item as a chat message of its role."""
    role = item.get("role")
    if role not in MESSAGE_ROLES:
        raise Untranslatable(f"a message of role {role!r}")
    texts = _texts(item.get("content"))
    content: str | list[Json] | None
    if len(texts) == 1:
        content = texts[0]  # one text as a string: every chat server reads that
    elif texts:
        content = [{"type": "text", "text": text} for text in texts]
    else:
        content = None if role == "assistant" else ""
    return {"role": MESSAGE_ROLES[role], "content": content}


def chat_tool(tool: Json) -> Json:
    """A Responses function tool (flat) as a chat function tool (nested)."""
    if tool.get("type") != "function":
        raise Untranslatable(f"a tool of type {tool.get('type')!r}")
    function: Json = {"name": tool.get("name")}
    if tool.get("description") is not None:
        function["description"] = tool["description"]
    function["parameters"] = tool.get("parameters") or {"type": "object", "properties": {}}
    if tool.get("strict") is not None:
        function["strict"] = tool["strict"]
    return {"type": "function", "function": function}


def chat_tool_choice(choice: Any) -> Any:
    """Responses' `tool_choice` as chat's."""
    if choice in ("auto", "none", "required"):
        return choice
    if isinstance(choice, dict) and _object(choice).get("type") == "function":
        return {"type": "function", "function": {"name": _object(choice).get("name")}}
    raise Untranslatable(f"a tool_choice of {choice!r}")


def _texts(content: Any) -> list[str]:
    """The texts of a message's content or a call's output (a string, None, or a list of
    text parts): nothing but text is translated."""
    if content is None:
        return []
    if isinstance(content, str):
        return [content]
    texts: list[str] = []
    for part in _objects(content, "content"):
        kind = part.get("type")
        if not isinstance(kind, str) or kind not in TEXT_PARTS:
            raise Untranslatable(f"a content part of type {kind!r}")
        texts.append(str(part.get(TEXT_PARTS[kind]) or ""))
    return texts


def _object(value: Any) -> Json:
    """A JSON object of the request (null: an empty one); anything else is refused."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise Untranslatable(f"{value!r} where an object belongs")
    return cast(Json, value)


def _objects(value: Any, what: str) -> list[Json]:
    """A JSON list of objects of the request (null: none); anything else is refused."""
    if value is None:
        return []
    if not _is_list(value) or not all(isinstance(item, dict) for item in value):
        raise Untranslatable(f"{what} must be a string or a list of objects")
    return cast(list[Json], value)


def _is_list(value: object) -> TypeGuard[list[Any]]:
    return isinstance(value, list)


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


def create_app(chat_upstream: str, *, client: httpx.AsyncClient | None = None) -> Starlette:
    """The gateway: `/v1/responses` served from `chat_upstream` (a base URL such as
    http://localhost:8000, before `/v1`). `client` sends the upstream requests (by default
    one with `TIMEOUT`); the app closes it when it shuts down."""
    http = client or httpx.AsyncClient(timeout=TIMEOUT)
    endpoint = bridge_endpoint(http, RESPONSES_FROM_CHAT, chat_upstream.rstrip("/"))

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncGenerator[None, None]:
        async with http:
            yield

    return Starlette(routes=[Route("/v1/responses", endpoint, methods=["POST"])], lifespan=lifespan)


app = create_app(os.environ.get("GATEWAY_CHAT_UPSTREAM", "https://api.openai.com"))
"""For `uvicorn examples.responses_gateway:app`: the upstream is $GATEWAY_CHAT_UPSTREAM."""
