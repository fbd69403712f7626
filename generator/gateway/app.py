"""The gateway's Starlette application: the three protocols' endpoints, token counting,
the model list and a health check, in front of the configured upstreams."""

from __future__ import annotations

import asyncio
import json
import logging
import math
import os
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, TypeVar, cast

import httpx
from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from . import errors, relay, resources, shapes, state
from .config import Config, ConfigError, Upstream
from .errors import Answer, ErrorInfo
from .policy import Json, Refused
from .relay import Exchange
from .routing import Target, listed, route
from .state import Opened
from .store import Missing, StoreUnavailable, TooLarge, open_store
from .translate import PATHS, translate

ANTHROPIC_VERSION = "2023-06-01"
"""The `anthropic-version` sent to a Messages upstream when the client sent none."""

CONFIG_VARIABLE = "CHUNKSPEC_GATEWAY_CONFIG_JSON"
"""The checked configuration, as JSON, handed by `chunkspec serve` to each worker."""

DROPPED_HEADER = "x-chunkspec-dropped"
"""The response header that says what the request lost on the way (`; `-separated)."""

T = TypeVar("T")

SWEEP_SECONDS = 300.0
"""How often a gateway process removes what outlived the store's time to live (reads
never see it meanwhile)."""


def keys(config: Config, environ: dict[str, str] | None = None) -> dict[str, str]:
    """Each upstream's key from its `key_env`; a variable that is not set stops the
    gateway before it serves."""
    environ = dict(os.environ) if environ is None else environ
    found: dict[str, str] = {}
    for upstream in config.upstreams:
        if upstream.key_env is None:
            continue
        value = environ.get(upstream.key_env)
        if not value:
            raise ConfigError(
                f"upstreams.{upstream.name}.key_env",
                f"the variable {upstream.key_env} is not set (it holds the upstream's key)",
            )
        found[upstream.name] = value
    return found


def create_app(
    config: Config,
    *,
    client: httpx.AsyncClient | None = None,
    environ: dict[str, str] | None = None,
) -> Starlette:
    """The gateway for `config`. `client` sends the upstream requests (by default one the
    app makes and closes when it shuts down)."""
    secrets = keys(config, environ)
    relay.hear_losses()
    http = client or httpx.AsyncClient(
        timeout=httpx.Timeout(10.0, read=max(u.timeout for u in config.upstreams)),
        # Idle connections are let go before the upstream's server does (uvicorn, which
        # vLLM and SGLang run, closes them after 5 s): see `_send`.
        limits=httpx.Limits(
            max_connections=None, max_keepalive_connections=100, keepalive_expiry=4.0
        ),
    )

    made = open_store(config.store)
    opened = Opened(made, config.store.max_bytes) if made is not None else None

    def endpoint(protocol: str) -> Callable[[Request], Awaitable[Response]]:
        async def handle(request: Request) -> Response:
            return await _exchange(config, http, secrets, protocol, request, opened)

        return handle

    async def count_tokens(request: Request) -> Response:
        return await _count_tokens(config, http, secrets, request)

    async def models(request: Request) -> Response:
        return JSONResponse(_models(config, request.headers))

    async def health(request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncGenerator[None, None]:
        async with http:
            if opened is None:
                yield
                return
            await opened()  # a store that cannot open stops the gateway before it serves
            sweeping = asyncio.create_task(_sweep(opened))
            try:
                yield
            finally:
                sweeping.cancel()
                await asyncio.gather(sweeping, return_exceptions=True)
                await opened.close()

    routes = [
        Route("/v1/messages", endpoint("messages"), methods=["POST"]),
        Route("/v1/messages/count_tokens", count_tokens, methods=["POST"]),
        Route("/v1/responses", endpoint("responses"), methods=["POST"]),
        Route("/v1/chat/completions", endpoint("chat"), methods=["POST"]),
        Route("/v1/models", models, methods=["GET"]),
        Route("/health", health, methods=["GET"]),
        *(resources.routes(opened) if opened is not None else []),
    ]
    return Starlette(routes=routes, lifespan=lifespan)


async def _sweep(opened: Opened) -> None:
    """Remove what expired, now and every `SWEEP_SECONDS`; a store that fails meanwhile
    is tried again next time (its requests say so)."""
    log = logging.getLogger("chunkspec.gateway")
    while True:
        try:
            await (await opened()).sweep()
        except StoreUnavailable as error:
            log.warning(json.dumps({"store": "sweep failed", "error": str(error)}))
        await asyncio.sleep(SWEEP_SECONDS)


def from_environment() -> Starlette:
    """The app of the configuration `chunkspec serve` checked (for uvicorn's workers)."""
    return create_app(Config.from_json(os.environ[CONFIG_VARIABLE]))


# --- one request ----------------------------------------------------------------------


async def _exchange(
    config: Config,
    http: httpx.AsyncClient,
    secrets: dict[str, str],
    client: str,
    request: Request,
    opened: Opened | None,
) -> Response:
    exchange = Exchange(client, request.url.path)
    relay.current.set(exchange)
    turn: state.Prepared | None = None
    try:
        given = _object(await request.body())
        target = _target(config, given, exchange)
        _check_shape(client, given)
        if opened is not None and _keeps_state(client, target, given):
            turn = await _prepared(opened, config, request, given)
            given = turn.body
        translated = translate(client, target, given, config.hosted_tools)
        upstream = target.upstream
        sent = http.build_request(
            "POST",
            upstream.url(PATHS[upstream.protocol]),
            json=translated.body,
            headers=_headers(upstream, request.headers, secrets, client),
        )
    except Answer as answer:
        return _error(exchange, answer.info)
    except Refused as error:
        exchange.refused = str(error)
        return _error(exchange, ErrorInfo(400, f"not translated: {error}"))
    except RecursionError:
        return _error(exchange, TOO_DEEP)
    except (ValueError, TypeError, AttributeError, KeyError) as error:  # malformed
        return _error(exchange, ErrorInfo(400, f"a request this gateway cannot read: {error!r}"))
    exchange.dropped = translated.dropped
    # Sent before the answer starts, so that an upstream's HTTP error keeps its status.
    try:
        response = await _unless_gone(request, _send(http, sent))
    except httpx.TransportError as error:
        return _error(exchange, ErrorInfo(502, f"upstream unreachable: {error!r}"))
    except _Gone:
        return _error(exchange, GONE)
    if response.status_code >= 400:
        await response.aread()
        info = errors.read_upstream(response.status_code, response.content)
        passed = {k: v for k, v in response.headers.items() if k.lower() in errors.RETRY_HEADERS}
        return _error(exchange, info, passed)
    if not response.headers.get("content-type", "").startswith("text/event-stream"):
        await response.aclose()
        return _error(exchange, ErrorInfo(502, "the upstream answered without a stream"))
    said = _said(translated.dropped)
    usage = _usage_asked(client, given)
    named = turn.response_id if turn is not None else None
    events = relay.stream(response, client, upstream, exchange, translated.tool_names, usage, named)
    if given.get("stream"):
        if turn is not None and opened is not None:
            events = state.kept(events, opened.store, turn)
        return _Relay(events, response, exchange, said)
    try:
        stream = await _unless_gone(request, _joined(events))
    except _Gone:
        return _error(exchange, GONE)
    finally:
        await _close(events, response)
    status, body = relay.added_up(client, stream)
    if status == 200 and turn is not None and opened is not None:
        answered = {**json.loads(body), **state.told(turn)}
        body = json.dumps(answered).encode()
        try:
            await state.keep(opened.store, turn, answered, state.stated(stream, turn))
        except (StoreUnavailable, TooLarge, Missing) as error:
            return _error(exchange, state.failure(error))
    exchange.status = status
    exchange.log()
    return Response(body, status, headers=said, media_type="application/json")


def _keeps_state(client: str, target: Target, given: Json) -> bool:
    """Whether the gateway reads or keeps Responses state for a request: a Responses
    client's, on an upstream that does not speak Responses (one that does keeps its own:
    the request goes to it as it is)."""
    return (
        client == "responses"
        and target.upstream.protocol != "responses"
        and (state.stateful(given))
    )


async def _prepared(
    opened: Opened, config: Config, request: Request, given: Json
) -> state.Prepared:
    try:
        store = await opened()
    except StoreUnavailable as error:
        raise Answer(state.unavailable(error)) from None
    return await state.prepare(store, state.owner(request.headers), given, config.store.max_bytes)


TOO_DEEP = ErrorInfo(400, "a request nested too deep to read")
"""A request whose JSON nests deeper than Python reads (or writes) it."""

GONE = ErrorInfo(499, "the client went away before the answer started")
"""The client closed its connection while the upstream had not answered: nginx's 499,
for the log line (nobody reads the answer)."""


def _check_shape(client: str, given: Json) -> None:
    """Refuse a request whose conversation is not of its protocol's shape: translated,
    it would reach the upstream shortened or empty (see `shapes`)."""
    problem = shapes.problem(client, given)
    if problem is not None:
        raise Answer(problem)


def _usage_asked(client: str, given: Json) -> bool:
    """Whether the client's stream reports usage: a streamed chat request only when it
    asks (`stream_options.include_usage`), as OpenAI's: the chunk that reports it has no
    choices, and a loop over `chunk.choices[0]` fails on it. The gateway asks a chat
    upstream for it always (for the log line)."""
    if client != "chat" or not given.get("stream"):
        return True
    options = given.get("stream_options")
    return isinstance(options, dict) and cast(Json, options).get("include_usage") is True


async def _joined(events: AsyncGenerator[bytes, None]) -> bytes:
    return b"".join([event async for event in events])


class _Gone(Exception):
    """The client closed its connection before its answer started."""


async def _unless_gone(request: Request, work: Awaitable[T]) -> T:
    """`work`'s result; when the client leaves first, `work` is cancelled (its upstream
    connection closed, not left open for the read timeout) and `_Gone` raised. Nothing
    else listens to the client before the response starts (Starlette's streamed
    response does once it has)."""
    task = asyncio.ensure_future(work)
    watch = asyncio.ensure_future(_disconnected(request.receive))
    try:
        await asyncio.wait((task, watch), return_when=asyncio.FIRST_COMPLETED)
    finally:
        watch.cancel()
        if not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)  # closed before we go on
    if task.cancelled():
        raise _Gone
    return task.result()


async def _disconnected(receive: Receive) -> None:
    """Returns when the client disconnects (its request body is read already)."""
    while (await receive())["type"] != "http.disconnect":
        pass


STALE = (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError)
"""How a pooled connection the upstream closed while it was idle fails, before any byte
of an answer."""


async def _send(http: httpx.AsyncClient, request: httpx.Request) -> httpx.Response:
    """The upstream's answer to `request`, its body still to be read. A kept-alive
    connection the upstream closed just as it was reused fails before any answer
    (1 to 2 requests in 1,000 against uvicorn's 5 s keep-alive, bench/gateway.md): the
    request goes once more, on a new connection."""
    try:
        return await http.send(request, stream=True)
    except STALE:
        return await http.send(request, stream=True)


def _object(body: bytes) -> Json:
    given: object = json.loads(body)
    if not isinstance(given, dict):
        raise Answer(ErrorInfo(400, "a request body that is no JSON object"))
    return cast(Json, given)


def _target(config: Config, given: Json, exchange: Exchange) -> Target:
    model = given.get("model")
    if not isinstance(model, str):
        raise Answer(ErrorInfo(400, "the request names no model", param="model"))
    exchange.model = model
    target = route(config, model)
    if target is None:
        served = ", ".join(entry.pattern for entry in config.routes)
        raise Answer(
            ErrorInfo(
                404,
                f"the model {model!r} is not served here (the gateway's [models]: {served})",
                code="model_not_found",
                param="model",
            )
        )
    exchange.upstream = target.upstream.name
    exchange.upstream_model = target.model
    return target


def _headers(
    upstream: Upstream, given: Headers, secrets: dict[str, str], client: str
) -> dict[str, str]:
    """The upstream request's headers: its key (the gateway's, or the client's own passed
    on), and for a Messages upstream its version and betas."""
    key = secrets.get(upstream.name) or state.client_key(given)
    headers = {"content-type": "application/json", "accept": "text/event-stream"}
    if upstream.protocol == "messages":
        headers["anthropic-version"] = given.get("anthropic-version", ANTHROPIC_VERSION)
        if client == "messages" and "anthropic-beta" in given:
            headers["anthropic-beta"] = given["anthropic-beta"]
        if key:
            headers["x-api-key"] = key
    elif key:
        headers["authorization"] = f"Bearer {key}"
    headers.update(upstream.headers)
    return headers


def _said(dropped: list[str]) -> dict[str, str]:
    if not dropped:
        return {}
    text = "; ".join(dict.fromkeys(dropped))
    return {DROPPED_HEADER: text.encode("ascii", "backslashreplace").decode()}


def _error(exchange: Exchange, info: ErrorInfo, headers: dict[str, str] | None = None) -> Response:
    """An error answer in the client protocol's shape, logged."""
    exchange.status = info.status
    if exchange.error is None and exchange.refused is None:
        exchange.error = info.message
    exchange.log()
    return Response(
        errors.encoded(exchange.protocol, info),
        info.status,
        headers=headers,
        media_type="application/json",
    )


async def _close(events: AsyncGenerator[bytes, None], response: httpx.Response) -> None:
    """Close the relay and the upstream response at once (not when collected)."""
    try:
        await events.aclose()
    finally:
        await response.aclose()


class _Relay(StreamingResponse):
    """A streamed answer that closes its events and the upstream response as soon as it
    ends, however it ends: a client that went away included (Starlette leaves the body
    iterator to the garbage collector then), and logs the request's line."""

    def __init__(
        self,
        events: AsyncGenerator[bytes, None],
        upstream: httpx.Response,
        exchange: Exchange,
        headers: dict[str, str],
    ) -> None:
        super().__init__(
            events, headers={"cache-control": "no-cache", **headers}, media_type="text/event-stream"
        )
        self._events = events
        self._upstream = upstream
        self._exchange = exchange

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            await _close(self._events, self._upstream)
            self._exchange.log()


# --- the other routes -----------------------------------------------------------------


async def _count_tokens(
    config: Config, http: httpx.AsyncClient, secrets: dict[str, str], request: Request
) -> Response:
    """Anthropic's token count: the upstream's when it speaks Messages; else an estimate
    (four characters a token of the request the upstream would get), said as one in
    the `x-chunkspec-estimated` header and the log line."""
    exchange = Exchange("messages", request.url.path)
    try:
        given = _object(await request.body())
        target = _target(config, given, exchange)
        _check_shape("messages", given)
        upstream = target.upstream
        if upstream.protocol != "messages":
            return _estimate(exchange, target, given)
        sent = http.build_request(
            "POST",
            upstream.url("/messages/count_tokens"),
            json={**given, "model": target.model},
            headers=_headers(upstream, request.headers, secrets, "messages"),
        )
    except Answer as answer:
        return _error(exchange, answer.info)
    except RecursionError:
        return _error(exchange, TOO_DEEP)
    except ValueError as error:
        return _error(exchange, ErrorInfo(400, f"a request this gateway cannot read: {error!r}"))
    try:
        response = await _unless_gone(request, http.send(sent))
    except httpx.TransportError as error:
        return _error(exchange, ErrorInfo(502, f"upstream unreachable: {error!r}"))
    except _Gone:
        return _error(exchange, GONE)
    if response.status_code >= 400:
        return _error(exchange, errors.read_upstream(response.status_code, response.content))
    exchange.log()
    return Response(response.content, 200, media_type="application/json")


def _estimate(exchange: Exchange, target: Target, given: Json) -> Response:
    """Four characters a token of the request `target`'s upstream would get."""
    try:
        translated = translate("messages", target, {**given, "max_tokens": 1}, "drop")
    except (Refused, ValueError, TypeError, KeyError) as error:
        translated = None
        exchange.dropped = [f"the request as the upstream's ({error})"]
    text = json.dumps(translated.body if translated else given, ensure_ascii=False)
    estimate = math.ceil(len(text) / 4)
    exchange.dropped.append("an exact count (estimated: 4 characters a token)")
    exchange.log()
    return JSONResponse(
        {"input_tokens": estimate}, headers={"x-chunkspec-estimated": "4 characters a token"}
    )


def _models(config: Config, headers: Headers) -> Json:
    """The served model ids, in Anthropic's shape for a client that sends its version
    header, else OpenAI's."""
    entries = listed(config)
    if "anthropic-version" in headers:
        data: list[Any] = [
            {
                "type": "model",
                "id": model,
                "display_name": model,
                "created_at": "1970-01-01T00:00:00Z",
            }
            for model, _ in entries
        ]
        first = data[0]["id"] if data else None
        last = data[-1]["id"] if data else None
        return {"data": data, "has_more": False, "first_id": first, "last_id": last}
    return {
        "object": "list",
        "data": [
            {"id": model, "object": "model", "created": 0, "owned_by": upstream}
            for model, upstream in entries
        ],
    }


# A library's logger: silent unless the application (or `chunkspec serve`) says where.
logging.getLogger("chunkspec.gateway").addHandler(logging.NullHandler())
