"""A gateway for OpenAI-compatible chat completion streams: it forwards the upstream's
stream to its client byte for byte, reads each chunk typed on the way, and logs one line
with what the stream added up to.

    GATEWAY_UPSTREAM=https://api.openai.com/v1 uvicorn examples.gateway:app

Clients post to the gateway's `/v1/chat/completions` as they would upstream (the body and
the Authorization header are passed on). `raw_events()` gives every event with the bytes it
arrived as (keep-alives, `[DONE]` and an upstream's error event included), so the client
sees exactly what the upstream sent, while `ChatCompletionAccumulator` adds the chunks up.

It uses the msgspec package (`generated.msgspec`): a gateway decodes every chunk of every
stream it carries, and msgspec's `aiter_chunks` reads about three times as many chunks a
second as the other targets' (bench/streams.md), for one compiled dependency. Any other
target's package works the same by changing the import (dataclasses or typeddicts need
nothing beyond the standard library).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
from starlette.applications import Starlette
from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from generated.msgspec.chat import (
    ChatCompletion,
    ChatCompletionAccumulator,
    ChatCompletionMessage,
    CompletionUsage,
    EventTooLargeError,
    StreamError,
    aiter_chunks,
    sse_error,
)

# Under uvicorn's logger, so that `uvicorn examples.gateway:app` prints the lines; an app
# of your own logs where its logging is configured.
log = logging.getLogger("uvicorn.error").getChild("gateway")

FORWARDED_HEADERS = ("authorization", "content-type")
"""The request headers passed on to the upstream."""

TIMEOUT = httpx.Timeout(10.0, read=300.0)
"""A model may think for minutes before its next chunk: reads may wait long."""


def create_app(upstream: str, *, client: httpx.AsyncClient | None = None) -> Starlette:
    """The gateway, forwarding to `upstream`, a base URL such as https://api.openai.com/v1.
    `client` sends the upstream requests (by default one with `TIMEOUT`); the app closes it
    when it shuts down."""
    http = client or httpx.AsyncClient(timeout=TIMEOUT)
    url = upstream.rstrip("/") + "/chat/completions"

    async def chat_completions(request: Request) -> Response:
        headers = {k: v for k, v in request.headers.items() if k in FORWARDED_HEADERS}
        # Sent before the response starts, so that an upstream's HTTP error keeps its status.
        upstream_request = http.build_request(
            "POST", url, content=await request.body(), headers=headers
        )
        try:
            response = await http.send(upstream_request, stream=True)
        except httpx.TransportError as exc:
            log.warning("upstream unreachable: %r", exc)
            return Response(f"upstream unreachable: {exc!r}", 502)
        if not response.headers.get("content-type", "").startswith("text/event-stream"):
            await response.aread()  # an HTTP error, or a request without "stream": true
            kept = {k: v for k, v in response.headers.items() if k == "content-type"}
            return Response(response.content, response.status_code, headers=kept)
        return StreamingResponse(
            relay(response),
            response.status_code,
            media_type="text/event-stream",
            # For a client that leaves before the body starts (relay's finally never runs).
            background=BackgroundTask(response.aclose),
        )

    async def relay(response: httpx.Response) -> AsyncIterator[bytes]:
        accumulator = ChatCompletionAccumulator()
        stream = aiter_chunks(response)  # its aclose() closes the upstream response
        skipped, error = 0, ""
        try:
            async for event in stream.raw_events():
                yield event.raw  # the upstream's bytes, unchanged, its errors included
                # Let the event loop run between writes: when the client has gone, the
                # server learns it there, and no later write reaches the closed socket.
                # (A write that does not block never yields, and a short stream would
                # be written whole into it, each write logging "socket.send() raised".)
                await asyncio.sleep(0)
                if event.chunk is not None:
                    accumulator.add(event.chunk)
                elif isinstance(event.error, StreamError):
                    error = f"upstream error {event.error.message!r} (code {event.error.code!r})"
                elif event.error is not None:  # a chunk this module cannot read
                    skipped += 1
        except (httpx.HTTPError, EventTooLargeError) as exc:  # cut off, stalled, or too big
            error = f"upstream failed {exc!r}"
            yield sse_error({"message": "the upstream stream broke off", "type": "gateway_error"})
        finally:
            # Also when the client goes away: Starlette cancels or closes this generator,
            # and closing the stream closes the upstream connection at once.
            log_stream(accumulator.snapshot(), stream.done, skipped, error)
            await stream.aclose()

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with http:
            yield

    routes = [Route("/v1/chat/completions", chat_completions, methods=["POST"])]
    return Starlette(routes=routes, lifespan=lifespan)


def log_stream(completion: ChatCompletion, done: bool, skipped: int, error: str) -> None:
    """One line per stream: what it added up to, and how it ended."""
    choice = completion.choices[0] if completion.choices else None
    message = choice.message if choice else None  # a lenient completion may lack it
    content = message.content if isinstance(message, ChatCompletionMessage) else None
    usage = completion.usage if isinstance(completion.usage, CompletionUsage) else None
    log.info(
        "stream model=%s finish_reason=%s usage=%s content_chars=%d done=%s skipped=%d%s",
        completion.model or None,  # UNSET (no chunk named it) is false
        choice.finish_reason if choice else None,
        json.dumps(usage.to_dict()) if usage else None,
        len(content) if isinstance(content, str) else 0,
        done,
        skipped,
        f" error={error}" if error else "",
    )


app = create_app(os.environ.get("GATEWAY_UPSTREAM", "https://api.openai.com/v1"))
"""For `uvicorn examples.gateway:app`; the upstream is $GATEWAY_UPSTREAM."""
