"""A gateway between the two streamed protocols: it serves Anthropic Messages from a chat
completions upstream, and chat completions from a Messages upstream.

    GATEWAY_CHAT_UPSTREAM=http://localhost:8000 uvicorn examples.messages_gateway:app --port 4000
    ANTHROPIC_BASE_URL=http://localhost:4000 claude     # Claude Code, on a chat model
    GATEWAY_CHAT_UPSTREAM=https://api.deepseek.com GATEWAY_CHAT_DIALECT=deepseek uvicorn ...

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

The request is written by the module's `to_request`: `messages_msgspec.to_request(body,
protocol="chat", dialect=...)` for a chat upstream, `chunk_msgspec.to_request(body,
protocol="messages")` for a Messages upstream. It carries the conversation (system
prompt, turns of text, images and documents, tool calls and their results, the
assistant's reasoning where the upstream reads it back), function tools, `tool_choice`
and parallel calls, the output limit, the reasoning switch (`thinking` <->
`reasoning_effort`, in the dialect's spelling), stop sequences, `temperature`, `top_p`
and the user. The chat upstream's dialect is `GATEWAY_CHAT_DIALECT` ("openai" by
default; "deepseek" or "moonshot" get the assistant's earlier reasoning back as
`reasoning_content`, which their tool-calling turns require; "vllm", "openrouter",
"gemini"...). What the gateway still decides itself: the request always streams
upstream (`stream: true`, and `stream_options.include_usage` to chat), the `model` is
passed on as it is, and each `RequestLossWarning` is judged item by item:

- Refused, with a 400 in the client's error shape before anything is sent upstream,
  because leaving them out would change what the model is asked: anything `to_request`
  reports lost but the reasoning below, such as tools the server runs (web search, code
  execution, a chat tool other than a function) and their blocks, an image given by file
  id (chat takes images inline only), audio to Messages, a content block or part of a
  kind the other protocol lacks, and arguments of a tool call that are no JSON object;
  any request key the other protocol has no place for but those that only tune the
  answer (`TUNING_KEYS`), such as `mcp_servers`; and from chat clients `n` above 1, a
  `response_format` other than text, `logprobs` and audio, which a Messages answer
  cannot give.
- Dropped, because the upstream takes them back in no form or only tune the answer:
  earlier turns' reasoning a chat dialect has no key for ("openai"), the signatures and
  redacted thinking Anthropic made (a chat upstream cannot check them), a chat client's
  `reasoning_content` (Messages takes only thinking it signed), a reasoning budget or
  effort the dialect has no place for, a `tool_result`'s `is_error` (chat's tool
  messages have no place for it; the result's text usually says so), and the keys that
  only tune the answer (`TUNING_KEYS`: `top_k`, `service_tier`, and from chat clients
  penalties, `seed` and the like); `cache_control` and beta headers. A system or
  developer message anywhere in a chat conversation joins Anthropic's one `system`
  prompt; a chat request without a limit gets `max_tokens` 4096 (Messages requires
  one). Values are passed as they are: a chat `temperature` above 1, which Anthropic
  refuses, comes back as the upstream's 400.
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
import warnings
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from typing import Any, cast

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
    RequestLossWarning,
    StreamError,
    aiter_parts,
    awrite_parts,
    iter_chunks,
)
from generated.chunk_msgspec import dumps as dumps_completion
from generated.chunk_msgspec import to_request as to_messages_request
from generated.messages_msgspec import MessageAccumulator, iter_events
from generated.messages_msgspec import dumps as dumps_message
from generated.messages_msgspec import to_request as to_chat_request

Json = dict[str, Any]

log = logging.getLogger("uvicorn.error").getChild("messages_gateway")

TIMEOUT = httpx.Timeout(10.0, read=300.0)
"""A model may think for minutes before its next event: reads may wait long."""

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


# --- requests: `to_request`, and what the gateway decides itself ----------------------

DROPPABLE = (
    "the assistant's reasoning",
    "a reasoning signature",
    "encrypted reasoning",
    "thinking without its signature",
    "the reasoning effort or budget",
    "reasoning turned on",
    "reasoning turned off",
    "that a tool result is an error",
)
"""What a request may lose on the way (`RequestLossWarning.dropped`, by what): earlier
turns' reasoning that the upstream takes back in no form (or signed by another), and a
reasoning switch it has no place for. Anything else lost is refused."""
DROPPABLE_PREFIXES = ("the signature on call ",)

TUNING_KEYS = frozenset(
    (
        # Messages clients: how the answer is served, not what is asked.
        "service_tier",
        "top_k",
        "context_management",
        "container",
        # Chat clients, once `_refuse_chat_options` has let them through.
        "n",
        "response_format",
        "logprobs",
        "top_logprobs",
        "seed",
        "frequency_penalty",
        "presence_penalty",
        "logit_bias",
        "store",
        "metadata",
        "prompt_cache_key",
        "safety_identifier",
        "verbosity",
    )
)
"""Request keys the other protocol has no place for that only tune how the answer is
made or served: dropped (`to_request` says each as "the key 'K'"). Any other key is
refused."""

REFUSED_KEYS = ("mcp_servers",)
"""Messages request keys that give the model what no chat request can (MCP servers'
tools), which `to_request` leaves out: refused."""


def translated(write: Callable[[], Json], tuning: frozenset[str] = TUNING_KEYS) -> Json:
    """The request `write` makes with `to_request`, refused (`Untranslatable`) if it lost
    anything that changes what the model is asked (anything but `DROPPABLE` and the
    `tuning` keys)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", RequestLossWarning)
        out = write()
    refused: list[str] = []
    for warning in caught:
        if not isinstance(warning.message, RequestLossWarning):
            warnings.warn_explicit(
                warning.message, warning.category, warning.filename, warning.lineno
            )
            continue
        for what, why in warning.message.dropped:
            key = what.removeprefix("the key ").strip("'")
            if what.startswith("the key ") and key in tuning:
                continue
            if what not in DROPPABLE and not what.startswith(DROPPABLE_PREFIXES):
                refused.append(f"{what} ({why})")
    if refused:
        raise Untranslatable("; ".join(refused))
    return out


def chat_request(body: Json, dialect: str = "openai") -> Json:
    """A Messages request as the chat completions request, in the upstream's `dialect`,
    that asks the same."""
    for key in REFUSED_KEYS:
        if body.get(key):
            raise Untranslatable(f"{key}: a chat request has no place for them")
    out = translated(lambda: to_chat_request(body, protocol="chat", dialect=dialect))
    # Always streamed upstream: an unstreamed client request is added up here.
    out["stream"] = True
    out["stream_options"] = {"include_usage": True}
    return out


def messages_request(body: Json) -> Json:
    """A chat completions request as the Messages request that asks the same."""
    _refuse_chat_options(body)
    out = translated(lambda: to_messages_request(body, protocol="messages"))
    out["stream"] = True  # always streamed upstream, as in chat_request
    return out


def _refuse_chat_options(body: Json) -> None:
    """Refuse what a Messages answer cannot give the chat client it asks for (keys that
    `to_request` leaves out without a word: they are no part of the conversation)."""
    if body.get("n") not in (None, 1):
        raise Untranslatable("n above 1: a message is one answer")
    if body.get("response_format") not in (None, {"type": "text"}):
        raise Untranslatable("a response_format other than text")
    if body.get("logprobs"):
        raise Untranslatable("logprobs")
    if body.get("audio") or "audio" in (body.get("modalities") or []):
        raise Untranslatable("audio")


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
    chat_dialect: str = "openai",
    client: httpx.AsyncClient | None = None,
) -> Starlette:
    """The gateway: `/v1/messages` served from `chat_upstream`, `/v1/chat/completions`
    from `messages_upstream` (base URLs such as http://localhost:8000, before `/v1`); a
    route whose upstream is None is not served. `chat_dialect` is the chat upstream's
    (`to_request`'s `dialect`: where it takes the assistant's reasoning back, its limit
    and reasoning switch). `client` sends the upstream requests (by default one with
    `TIMEOUT`); the app closes it when it shuts down."""
    http = client or httpx.AsyncClient(timeout=TIMEOUT)
    from_chat = in_dialect(MESSAGES_FROM_CHAT, chat_request, chat_dialect)
    routes = [
        Route(path, bridge_endpoint(http, bridge, base.rstrip("/")), methods=["POST"])
        for path, bridge, base in (
            ("/v1/messages", from_chat, chat_upstream),
            ("/v1/chat/completions", CHAT_FROM_MESSAGES, messages_upstream),
        )
        if base is not None
    ]

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncGenerator[None, None]:
        async with http:
            yield

    return Starlette(routes=routes, lifespan=lifespan)


def in_dialect(bridge: Bridge, translate: Callable[[Json, str], Json], dialect: str) -> Bridge:
    """`bridge` to a chat upstream, its requests written by `translate` in `dialect` (a
    name `to_request` does not know is a ValueError here, not a 400 on every request)."""
    to_chat_request({"messages": []}, protocol="chat", dialect=dialect)
    return replace(bridge, translate=lambda body: translate(body, dialect))


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
    chat_dialect=os.environ.get("GATEWAY_CHAT_DIALECT", "openai"),
)
"""For `uvicorn examples.messages_gateway:app`: the upstreams are $GATEWAY_CHAT_UPSTREAM
and $GATEWAY_MESSAGES_UPSTREAM, the chat upstream's dialect $GATEWAY_CHAT_DIALECT."""
