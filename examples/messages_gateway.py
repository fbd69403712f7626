"""A gateway between the two streamed protocols: it serves Anthropic Messages from a chat
completions upstream, and chat completions from a Messages upstream.

    GATEWAY_CHAT_UPSTREAM=http://localhost:8000 uvicorn examples.messages_gateway:app --port 4000
    ANTHROPIC_BASE_URL=http://localhost:4000 claude     # Claude Code, on a chat model

- `POST /v1/messages` (what Claude Code and anthropic-sdk-python call) is sent on as
  `POST {chat upstream}/v1/chat/completions`, with `stream: true` and
  `stream_options.include_usage`, and the chat stream is written back as Messages events.
- `POST /v1/chat/completions` (what openai-python calls) is sent on as
  `POST {messages upstream}/v1/messages`, and the Messages stream is written back as chat
  chunks (reasoning as `reasoning_content`).

The answer streams end to end: each upstream event is read (httpx, async) into typed
`Part`s by `aiter_parts` and written as the client's events by `awrite_parts` as it
arrives. A client that goes away closes the upstream response at once. An upstream's HTTP
error keeps its status and gets the client protocol's error body; an error inside the
stream, or a stream cut off, ends the client's stream with its protocol's error event.
A request without `"stream": true` is answered too, unstreamed: the upstream still
streams, and the gateway adds the bridged stream up (`MessageAccumulator`,
`ChunkAccumulator`) into the one JSON body the client expects.

The request is translated for conversations of text and tools: the system prompt, user
and assistant text turns, tools (`input_schema` <-> `function.parameters`), `tool_choice`
(auto, any/required, none, one named tool; `disable_parallel_tool_use` <->
`parallel_tool_calls: false`), `max_tokens`, stop sequences, `temperature`, `top_p`,
assistant `tool_use` blocks <-> assistant `tool_calls`, and user `tool_result` blocks <->
`tool` messages. The `model` is passed on as it is. Requests across protocols in full are
a later issue; until then:

- Refused, with a 400 in the client's error shape before anything is sent upstream,
  because leaving them out would change what the model is asked: images, documents and
  any other content block but text, tool_use and tool_result (thinking blocks excepted,
  below); tools the server runs (web search, code execution, computer use: a tool with a
  `type` other than "custom", a chat tool other than a function); and from chat clients
  `n` above 1, a `response_format` other than text, `logprobs`, audio, and arguments of
  a tool call that are no JSON object.
- Not passed on, because the other protocol has no place for them or they only tune the
  answer: thinking budgets (`thinking`) and the thinking blocks of earlier assistant turns
  (chat takes no reasoning back, and a chat upstream cannot check their signatures),
  `cache_control`, `metadata`, `top_k`, `service_tier`, a `tool_result`'s `is_error`,
  beta headers, and from chat clients penalties, `seed`, `user`, `stream_options` (a
  Messages stream always reports its usage). A system or developer message anywhere in a
  chat conversation joins Anthropic's one `system` prompt. A chat request without
  `max_tokens` (or `max_completion_tokens`) is sent with `DEFAULT_MAX_TOKENS`: Messages
  requires one. Values are passed as they are: a chat `temperature` above 1, which
  Anthropic refuses, comes back as the upstream's 400.
- A chat `stop` finish is Anthropic's `end_turn` even when a stop sequence ended it
  (chat does not say which). Other routes (`/v1/messages/count_tokens`, `/v1/models`)
  are not served.

It uses the msgspec module, for the reason examples/gateway.py gives: a gateway decodes
every event of every stream it carries, and msgspec reads them about three times as fast
as the other modules. The parts and the writers are the same in every module, so any
other works by changing the imports.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, TypeGuard, cast

import httpx
from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

# The msgspec target: a gateway decodes every event of every stream (see the docstring).
from generated.chunk_msgspec import (
    ChunkAccumulator,
    Part,
    StreamError,
    aiter_parts,
    awrite_parts,
    iter_chunks,
)
from generated.chunk_msgspec import dumps as dumps_completion
from generated.messages_msgspec import MessageAccumulator, iter_events
from generated.messages_msgspec import dumps as dumps_message

Json = dict[str, Any]

log = logging.getLogger("uvicorn.error").getChild("messages_gateway")

TIMEOUT = httpx.Timeout(10.0, read=300.0)
"""A model may think for minutes before its next event: reads may wait long."""

DEFAULT_MAX_TOKENS = 4096
"""The `max_tokens` of a chat request that gives none: Messages requires one."""

ANTHROPIC_VERSION = "2023-06-01"
"""The `anthropic-version` sent upstream when the client sent none (a chat client)."""

ANTHROPIC_ERRORS = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    504: "timeout_error",
    529: "overloaded_error",
}
"""Anthropic's error type of each HTTP status (its documented pairs)."""

ANTHROPIC_STATUS = {kind: status for status, kind in ANTHROPIC_ERRORS.items()}


class Untranslatable(ValueError):
    """The request asks for what this gateway does not translate: a 400 for the client."""


# --- Messages request -> chat request -------------------------------------------------


def chat_request(body: Json) -> Json:
    """A Messages request as the chat completions request that asks the same."""
    out: Json = {"model": body.get("model"), "messages": chat_messages(body)}
    _copy(body, out, ("max_tokens", "temperature", "top_p"))
    if body.get("stop_sequences"):
        out["stop"] = list(body["stop_sequences"])
    if body.get("tools"):
        out["tools"] = [chat_tool(tool) for tool in _objects(body["tools"], "tools")]
    if body.get("tool_choice"):
        out.update(chat_tool_choice(_object(body["tool_choice"])))
    # Always streamed upstream: an unstreamed client request is added up here.
    out["stream"] = True
    out["stream_options"] = {"include_usage": True}
    return out


def chat_messages(body: Json) -> list[Json]:
    """The system prompt and the turns, as chat messages (a user turn's tool results
    first, as `tool` messages: chat wants them right after the assistant's calls)."""
    out: list[Json] = []
    system = _texts(body.get("system"), "system")
    if system:
        out.append({"role": "system", "content": "\n\n".join(system)})
    for turn in _objects(body.get("messages"), "messages"):
        if turn.get("role") == "assistant":
            out.append(chat_assistant(turn.get("content")))
        else:
            out.extend(chat_user(turn.get("content")))
    return out


def chat_user(content: Any) -> list[Json]:
    """A user turn: a `tool` message per tool result, then a user message of its text."""
    out: list[Json] = []
    texts: list[str] = []
    for block in _blocks(content):
        if block["type"] == "tool_result":
            result = _texts(block.get("content"), "tool_result")
            message = {"role": "tool", "tool_call_id": block.get("tool_use_id")}
            out.append(message | {"content": "\n\n".join(result)})
        elif block["type"] == "text":
            texts.append(block["text"])
        else:
            raise Untranslatable(f"a user content block of type {block['type']!r}")
    if texts:
        out.append({"role": "user", "content": _chat_content(texts)})
    return out


def chat_assistant(content: Any) -> Json:
    """An assistant turn: its text, and its `tool_use` blocks as `tool_calls`."""
    texts: list[str] = []
    calls: list[Json] = []
    for block in _blocks(content):
        if block["type"] == "text":
            texts.append(block["text"])
        elif block["type"] == "tool_use":
            arguments = json.dumps(block.get("input") or {}, ensure_ascii=False)
            function = {"name": block.get("name"), "arguments": arguments}
            calls.append({"id": block.get("id"), "type": "function", "function": function})
        elif block["type"] not in ("thinking", "redacted_thinking"):  # not passed on
            raise Untranslatable(f"an assistant content block of type {block['type']!r}")
    message: Json = {"role": "assistant", "content": _chat_content(texts) if texts else None}
    if calls:
        message["tool_calls"] = calls
    return message


def chat_tool(tool: Json) -> Json:
    """An Anthropic client tool as a chat function tool."""
    if tool.get("type", "custom") != "custom":
        raise Untranslatable(f"a server tool of type {tool.get('type')!r}")
    function: Json = {"name": tool.get("name")}
    _copy(tool, function, ("description",))
    function["parameters"] = tool.get("input_schema") or {"type": "object", "properties": {}}
    return {"type": "function", "function": function}


def chat_tool_choice(choice: Json) -> Json:
    """Anthropic's `tool_choice` as chat's `tool_choice` (and `parallel_tool_calls`)."""
    kind = choice.get("type")
    simple = {"auto": "auto", "any": "required", "none": "none"}
    out: Json
    if kind in simple:
        out = {"tool_choice": simple[kind]}
    elif kind == "tool":
        out = {"tool_choice": {"type": "function", "function": {"name": choice.get("name")}}}
    else:
        raise Untranslatable(f"a tool_choice of type {kind!r}")
    if choice.get("disable_parallel_tool_use"):
        out["parallel_tool_calls"] = False
    return out


def _chat_content(texts: list[str]) -> str | list[Json]:
    """One text as a string (every chat server reads that), several as text parts."""
    if len(texts) == 1:
        return texts[0]
    return [{"type": "text", "text": text} for text in texts]


def _blocks(content: Any) -> list[Json]:
    """A Messages content (a string, or a list of blocks) as blocks."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    blocks = _objects(content, "content")
    if not all(isinstance(block.get("type"), str) for block in blocks):
        raise Untranslatable("a content block without a type")
    return blocks


def _texts(content: Any, where: str) -> list[str]:
    """The texts of a system prompt or a tool result: nothing but text is translated."""
    if content is None:
        return []
    texts: list[str] = []
    for block in _blocks(content):
        if block["type"] != "text":
            raise Untranslatable(f"a {where} block of type {block['type']!r}")
        texts.append(block["text"])
    return texts


# --- chat request -> Messages request -------------------------------------------------


def messages_request(body: Json) -> Json:
    """A chat completions request as the Messages request that asks the same."""
    _refuse_chat_options(body)
    system, turns = messages_turns(_objects(body.get("messages"), "messages"))
    limit = body.get("max_completion_tokens") or body.get("max_tokens") or DEFAULT_MAX_TOKENS
    out: Json = {"model": body.get("model"), "max_tokens": limit}
    if system:
        out["system"] = "\n\n".join(system)
    out["messages"] = turns
    _copy(body, out, ("temperature", "top_p"))
    stop = body.get("stop")
    if stop:
        out["stop_sequences"] = [stop] if isinstance(stop, str) else list(stop)
    if body.get("tools"):
        out["tools"] = [messages_tool(tool) for tool in _objects(body["tools"], "tools")]
    choice = messages_tool_choice(body.get("tool_choice"), body.get("parallel_tool_calls"))
    if choice is not None:
        out["tool_choice"] = choice
    out["stream"] = True  # always streamed upstream, as in chat_request
    return out


def _refuse_chat_options(body: Json) -> None:
    """Refuse what a Messages answer cannot give the chat client it asks for."""
    if body.get("n") not in (None, 1):
        raise Untranslatable("n above 1: a message is one answer")
    if body.get("response_format") not in (None, {"type": "text"}):
        raise Untranslatable("a response_format other than text")
    if body.get("logprobs"):
        raise Untranslatable("logprobs")
    if body.get("audio") or "audio" in (body.get("modalities") or []):
        raise Untranslatable("audio")


def messages_turns(messages: list[Json]) -> tuple[list[str], list[Json]]:
    """Chat messages as the system prompt's texts and Messages turns (tool results in a
    user turn; consecutive turns of one role merged: Messages alternates them)."""
    system: list[str] = []
    turns: list[Json] = []
    for message in messages:
        role = message.get("role")
        if role in ("system", "developer"):
            system.extend(_part_texts(message.get("content")))
            continue
        if role == "tool":
            role, blocks = "user", [messages_tool_result(message)]
        elif role == "assistant":
            blocks = messages_assistant(message)
        elif role == "user":
            blocks = [_text_block(t) for t in _part_texts(message.get("content")) if t]
        else:
            raise Untranslatable(f"a message of role {role!r}")
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})
    return system, turns


def messages_assistant(message: Json) -> list[Json]:
    """An assistant message's text and tool calls as Messages blocks."""
    blocks = [_text_block(t) for t in _part_texts(message.get("content")) if t]
    for call in _objects(message.get("tool_calls"), "tool_calls"):
        function = _object(call.get("function"))
        if call.get("type", "function") != "function":
            raise Untranslatable(f"a tool call of type {call.get('type')!r}")
        try:
            given = json.loads(function.get("arguments") or "{}")
        except ValueError:
            given = None
        if not isinstance(given, dict):
            raise Untranslatable("tool call arguments that are no JSON object")
        use = {"type": "tool_use", "id": call.get("id"), "name": function.get("name")}
        blocks.append(use | {"input": given})
    return blocks


def messages_tool_result(message: Json) -> Json:
    """A `tool` message as a `tool_result` block."""
    text = "\n\n".join(_part_texts(message.get("content")))
    return {"type": "tool_result", "tool_use_id": message.get("tool_call_id"), "content": text}


def messages_tool(tool: Json) -> Json:
    """A chat function tool as an Anthropic client tool."""
    if tool.get("type") != "function":
        raise Untranslatable(f"a tool of type {tool.get('type')!r}")
    function = _object(tool.get("function"))
    out: Json = {"name": function.get("name")}
    _copy(function, out, ("description",))
    out["input_schema"] = function.get("parameters") or {"type": "object", "properties": {}}
    return out


def messages_tool_choice(choice: Any, parallel: Any) -> Json | None:
    """Chat's `tool_choice` (and `parallel_tool_calls: false`) as Anthropic's."""
    simple = {"auto": "auto", "required": "any", "none": "none"}
    out: Json | None
    if choice is None:
        out = None
    elif isinstance(choice, str) and choice in simple:
        out = {"type": simple[choice]}
    elif isinstance(choice, dict) and _object(choice).get("type") == "function":
        out = {"type": "tool", "name": _object(_object(choice).get("function")).get("name")}
    else:
        raise Untranslatable(f"a tool_choice of {choice!r}")
    if parallel is False and (out is None or out["type"] != "none"):
        out = (out or {"type": "auto"}) | {"disable_parallel_tool_use": True}
    return out


def _part_texts(content: Any) -> list[str]:
    """The texts of a chat message's content (a string, None, or a list of parts)."""
    if content is None:
        return []
    if isinstance(content, str):
        return [content]
    texts: list[str] = []
    for part in _objects(content, "content"):
        kind = part.get("type")
        if kind not in ("text", "refusal"):
            raise Untranslatable(f"a content part of type {kind!r}")
        texts.append(str(part.get(kind, "")))
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
        raise Untranslatable(f"{what} must be a list of objects")
    return cast(list[Json], value)


def _is_list(value: object) -> TypeGuard[list[Any]]:
    return isinstance(value, list)


def _text_block(text: str) -> Json:
    return {"type": "text", "text": text}


def _copy(source: Json, target: Json, keys: tuple[str, ...]) -> None:
    """The keys both protocols spell alike, when given."""
    for key in keys:
        if source.get(key) is not None:
            target[key] = source[key]


# --- error bodies ---------------------------------------------------------------------


def anthropic_error(status: int, message: str, kind: str | None = None) -> Json:
    """An error as Anthropic's API answers one (anthropic-sdk-python reads its type)."""
    if kind not in ANTHROPIC_STATUS:
        kind = ANTHROPIC_ERRORS.get(
            status, "invalid_request_error" if status < 500 else "api_error"
        )
    return {"type": "error", "error": {"type": kind, "message": message}}


def chat_error(status: int, message: str, kind: str | None = None) -> Json:
    """An error as OpenAI's API answers one (openai-python reads its message)."""
    kind = kind or ("invalid_request_error" if status < 500 else "server_error")
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}


def upstream_said(body: bytes) -> tuple[str, str | None]:
    """The message and type of an upstream's error body, of either protocol (or its
    text, cut short, when it is no JSON error)."""
    try:
        data = json.loads(body)
    except ValueError:
        data = None
    outer = cast(Json, data) if isinstance(data, dict) else {}
    error = outer.get("error", outer)
    if isinstance(error, dict):
        message, kind = cast(Json, error).get("message"), cast(Json, error).get("type")
        if isinstance(message, str):
            return message, kind if isinstance(kind, str) else None
    return body.decode(errors="replace")[:500] or "the upstream gave no reason", None


# --- the two directions ---------------------------------------------------------------


@dataclass(frozen=True)
class Bridge:
    """One direction of the gateway: what the client speaks, where the request goes, and
    how each side of it is translated."""

    client: str
    """The client's protocol, as `awrite_parts` names it: "messages", "chat" (or
    "responses", in examples/responses_gateway.py)."""
    upstream: str
    """The upstream's protocol, as `aiter_parts` names it."""
    path: str
    """The upstream's path, after its base URL."""
    translate: Callable[[Json], Json]
    error: Callable[[int, str, str | None], Json]
    headers: Callable[[Headers], dict[str, str]]
    add_up: Callable[[bytes], tuple[int, bytes]]
    """The whole bridged stream as the client's unstreamed answer: status, JSON body."""


def chat_headers(given: Headers) -> dict[str, str]:
    """The upstream chat request's headers: the client's key as a bearer token."""
    headers = {"content-type": "application/json"}
    if "authorization" in given:
        headers["authorization"] = given["authorization"]
    elif "x-api-key" in given:
        headers["authorization"] = f"Bearer {given['x-api-key']}"
    return headers


def messages_headers(given: Headers) -> dict[str, str]:
    """The upstream Messages request's headers: the client's bearer token as its key."""
    headers = {"content-type": "application/json"}
    headers["anthropic-version"] = given.get("anthropic-version", ANTHROPIC_VERSION)
    if "x-api-key" in given:
        headers["x-api-key"] = given["x-api-key"]
    elif given.get("authorization", "").lower().startswith("bearer "):
        headers["x-api-key"] = given["authorization"][len("bearer ") :]
    return headers


def message_of(stream: bytes) -> tuple[int, bytes]:
    """A bridged Messages stream added up to the message an unstreamed call returns, or
    its error event as the error an unstreamed call gets."""
    accumulator = MessageAccumulator()
    try:
        for event in iter_events(stream):
            accumulator.add(event)
    except StreamError as error:
        kind = error.type if isinstance(error.type, str) else "api_error"
        status = ANTHROPIC_STATUS.get(kind, 500)
        return status, json.dumps(anthropic_error(status, str(error.message), kind)).encode()
    return 200, dumps_message(accumulator.result()).encode()


def completion_of(stream: bytes) -> tuple[int, bytes]:
    """A bridged chat stream added up to the completion an unstreamed call returns, or
    its error as the error an unstreamed call gets."""
    accumulator = ChunkAccumulator()
    try:
        for chunk in iter_chunks(stream):
            accumulator.add(chunk)
    except StreamError as error:
        kind = error.type if isinstance(error.type, str) else None
        status = ANTHROPIC_STATUS.get(kind or "", 502)
        return status, json.dumps(chat_error(status, str(error.message), kind)).encode()
    return 200, dumps_completion(accumulator.result()).encode()


MESSAGES_FROM_CHAT = Bridge(
    client="messages",
    upstream="chat",
    path="/v1/chat/completions",
    translate=chat_request,
    error=anthropic_error,
    headers=chat_headers,
    add_up=message_of,
)
CHAT_FROM_MESSAGES = Bridge(
    client="chat",
    upstream="messages",
    path="/v1/messages",
    translate=messages_request,
    error=chat_error,
    headers=messages_headers,
    add_up=completion_of,
)


# --- the app --------------------------------------------------------------------------


def create_app(
    chat_upstream: str | None = None,
    messages_upstream: str | None = None,
    *,
    client: httpx.AsyncClient | None = None,
) -> Starlette:
    """The gateway: `/v1/messages` served from `chat_upstream`, `/v1/chat/completions`
    from `messages_upstream` (base URLs such as http://localhost:8000, before `/v1`); a
    route whose upstream is None is not served. `client` sends the upstream requests (by
    default one with `TIMEOUT`); the app closes it when it shuts down."""
    http = client or httpx.AsyncClient(timeout=TIMEOUT)
    routes = [
        Route(path, bridge_endpoint(http, bridge, base.rstrip("/")), methods=["POST"])
        for path, bridge, base in (
            ("/v1/messages", MESSAGES_FROM_CHAT, chat_upstream),
            ("/v1/chat/completions", CHAT_FROM_MESSAGES, messages_upstream),
        )
        if base is not None
    ]

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncGenerator[None, None]:
        async with http:
            yield

    return Starlette(routes=routes, lifespan=lifespan)


def bridge_endpoint(
    http: httpx.AsyncClient, bridge: Bridge, base: str
) -> Callable[[Request], Awaitable[Response]]:
    """The handler of one direction's route (examples/responses_gateway.py serves its
    route with it too)."""

    async def endpoint(request: Request) -> Response:
        try:
            given = _request_object(await request.body())
            translated = bridge.translate(given)
        except Untranslatable as error:
            return _json(bridge, 400, f"not translated: {error}")
        except (ValueError, TypeError, AttributeError, KeyError) as error:  # malformed
            return _json(bridge, 400, f"a request this gateway cannot read: {error!r}")
        upstream_request = http.build_request(
            "POST", base + bridge.path, json=translated, headers=bridge.headers(request.headers)
        )
        # Sent before the response starts, so that an upstream's HTTP error keeps its status.
        try:
            response = await http.send(upstream_request, stream=True)
        except httpx.TransportError as error:
            log.warning("upstream unreachable: %r", error)
            return _json(bridge, 502, f"upstream unreachable: {error!r}")
        if response.status_code >= 400:
            await response.aread()
            return _json(bridge, response.status_code, *upstream_said(response.content))
        if not response.headers.get("content-type", "").startswith("text/event-stream"):
            await response.aclose()
            return _json(bridge, 502, "the upstream answered without a stream")
        tally = Tally(bridge)
        events = _events(response, bridge, tally)
        if given.get("stream"):
            return _Relay(events, response, tally)
        try:
            status, body = bridge.add_up(b"".join([event async for event in events]))
        finally:
            await _close(events, response, tally)
        return Response(body, status, media_type="application/json")

    return endpoint


def _request_object(body: bytes) -> Json:
    """The request's JSON object (the translators read it as it came)."""
    given: object = json.loads(body)
    if not isinstance(given, dict):
        raise Untranslatable("a request body that is no JSON object")
    return cast(Json, given)


def _json(bridge: Bridge, status: int, message: str, kind: str | None = None) -> Response:
    """An error answer in the client protocol's shape."""
    body = json.dumps(bridge.error(status, message, kind))
    return Response(body, status, media_type="application/json")


async def _events(
    response: httpx.Response, bridge: Bridge, tally: Tally
) -> AsyncGenerator[bytes, None]:
    """The upstream stream's events written as the client's, one by one as they come."""

    async def parts() -> AsyncGenerator[Part, None]:
        try:
            async for part in aiter_parts(response, protocol=bridge.upstream):
                tally.add(part)  # the typed parts, on the way
                yield part
        except Exception as error:  # the writer ends the client's stream with it
            tally.error = str(error)
            raise

    events = awrite_parts(parts(), protocol=bridge.client)
    try:
        async for event in events:
            yield event
            # Let the event loop run between writes: when the client has gone, the
            # server learns it there, and no later write reaches the closed socket.
            await asyncio.sleep(0)
    finally:
        if isinstance(events, AsyncGenerator):  # the writer: closing it closes parts()
            await events.aclose()


async def _close(
    events: AsyncGenerator[bytes, None], response: httpx.Response, tally: Tally
) -> None:
    """Close the bridge and the upstream response (at once: not when collected), and log
    the stream's line."""
    try:
        await events.aclose()
    finally:
        await response.aclose()
        tally.log()


class _Relay(StreamingResponse):
    """A streamed answer that closes its events and the upstream response as soon as it
    ends, however it ends: a client that went away included (Starlette leaves the body
    iterator to the garbage collector then)."""

    def __init__(
        self, events: AsyncGenerator[bytes, None], upstream: httpx.Response, tally: Tally
    ) -> None:
        headers = {"cache-control": "no-cache"}
        super().__init__(events, headers=headers, media_type="text/event-stream")
        self._events = events
        self._upstream = upstream
        self._tally = tally

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            await _close(self._events, self._upstream, self._tally)


@dataclass
class Tally:
    """What the typed parts of one stream said, for its log line."""

    bridge: Bridge
    kinds: dict[str, int] = field(default_factory=dict[str, int])
    finish: str | None = None
    error: str | None = None

    def add(self, part: Part) -> None:
        self.kinds[part.kind] = self.kinds.get(part.kind, 0) + 1
        if part.kind == "finish":
            self.finish = part.text
        elif part.kind == "error":
            self.error = part.text

    def log(self) -> None:
        """One line per stream: its direction, what its parts were, and how it ended."""
        log.info(
            "%s from %s: finish_reason=%s parts=%s%s",
            self.bridge.client,
            self.bridge.upstream,
            self.finish,
            json.dumps(self.kinds, sort_keys=True),
            f" error={self.error!r}" if self.error else "",
        )


app = create_app(
    os.environ.get("GATEWAY_CHAT_UPSTREAM", "https://api.openai.com"),
    os.environ.get("GATEWAY_MESSAGES_UPSTREAM", "https://api.anthropic.com"),
)
"""For `uvicorn examples.messages_gateway:app`: the upstreams are $GATEWAY_CHAT_UPSTREAM
and $GATEWAY_MESSAGES_UPSTREAM."""
