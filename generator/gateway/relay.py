"""The upstream's stream as the client's, as it arrives, and the one log line each request
gets.

Across protocols each upstream event is read into typed `Part`s (`aiter_parts`, with the
upstream's think tags) and written as the client's events (`awrite_parts`). Within one
protocol the upstream's bytes go to the client unchanged, and are read on the side for
the log line. A request without `"stream": true` gets the written stream added up into
the one JSON body its protocol answers with."""

from __future__ import annotations

import asyncio
import contextvars
import json
import logging
import time
import warnings
from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass, field
from typing import Any, TextIO

import httpx

from . import errors
from .config import Upstream
from .errors import ErrorInfo
from .wire import chat, messages, responses

log = logging.getLogger("chunkspec.gateway")


@dataclass
class Exchange:
    """What one request did, for its log line."""

    protocol: str
    path: str
    model: str | None = None
    upstream: str | None = None
    upstream_model: str | None = None
    started: float = field(default_factory=time.perf_counter)
    status: int = 200
    first_byte: float | None = None
    finish: str | None = None
    error: str | None = None
    refused: str | None = None
    dropped: list[str] = field(default_factory=list[str])
    usage: Any = None
    parts: dict[str, int] = field(default_factory=dict[str, int])
    logged: bool = False

    def add(self, part: Any) -> None:
        """A typed part of the upstream's stream, on its way."""
        self.parts[part.kind] = self.parts.get(part.kind, 0) + 1
        if part.kind == "finish":
            self.finish = part.text
        elif part.kind == "error":
            self.error = part.text
        elif part.kind == "usage" and part.usage is not None:
            self.usage = part.usage

    def wrote(self) -> None:
        if self.first_byte is None:
            self.first_byte = time.perf_counter()

    def log(self) -> None:
        """The request's line, once: JSON, one object per request."""
        if self.logged:
            return
        self.logged = True
        now = time.perf_counter()
        usage = self.usage
        line: dict[str, Any] = {
            "protocol": self.protocol,
            "path": self.path,
            "model": self.model,
            "upstream": self.upstream,
            "upstream_model": self.upstream_model,
            "status": self.status,
            "input_tokens": getattr(usage, "prompt_tokens", None),
            "output_tokens": getattr(usage, "completion_tokens", None),
            "reasoning_tokens": getattr(usage, "reasoning_tokens", None),
            "cached_tokens": getattr(usage, "cached_prompt_tokens", None),
            "cache_write_tokens": getattr(usage, "cache_write_tokens", None),
            "ttfb_ms": _ms(self.first_byte - self.started) if self.first_byte else None,
            "duration_ms": _ms(now - self.started),
            "finish": self.finish,
            "parts": self.parts or None,
            "dropped": self.dropped or None,
            "refused": self.refused,
            "error": self.error,
        }
        text = json.dumps({k: v for k, v in line.items() if v is not None})
        log.log(logging.WARNING if self.status >= 500 or self.error else logging.INFO, text)


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 2)


# --- what the writers leave out -------------------------------------------------------

LOSSES: tuple[type[Warning], ...] = (
    chat.ChatLossWarning,
    messages.MessagesLossWarning,
    responses.ResponsesLossWarning,
)
"""What a writer says it could not write in the client's protocol (once per stream)."""

current: contextvars.ContextVar[Exchange | None] = contextvars.ContextVar(
    "chunkspec_gateway_exchange", default=None
)
"""The request being answered, in its task and the tasks it starts."""


def hear_losses() -> None:
    """Route the writers' loss warnings to the log line of the request whose stream
    raised them (a warning is process-wide; the request is the task's). Installed once;
    other warnings are shown as before."""
    if getattr(warnings.showwarning, "_chunkspec", False):
        return
    shown = warnings.showwarning

    def showwarning(
        message: Warning | str,
        category: type[Warning],
        filename: str,
        lineno: int,
        file: TextIO | None = None,
        line: str | None = None,
    ) -> None:
        exchange = current.get()
        if exchange is not None and issubclass(category, LOSSES):
            exchange.dropped.append(str(message))
            return
        shown(message, category, filename, lineno, file, line)

    showwarning._chunkspec = True  # type: ignore[attr-defined]
    warnings.showwarning = showwarning
    for loss in LOSSES:  # every stream's, not only the first of each place
        warnings.filterwarnings("always", category=loss)


# --- streams --------------------------------------------------------------------------


def stream(
    response: httpx.Response,
    client: str,
    upstream: Upstream,
    exchange: Exchange,
    tool_names: dict[str, tuple[str, str]] | None = None,
) -> AsyncGenerator[bytes, None]:
    """The client's events of the upstream `response`'s stream (`tool_names`: the
    namespace and name of each flat call name, for a Responses client)."""
    if client == upstream.protocol and upstream.think_tags is None:
        return _passed(response, upstream, exchange)
    return _bridged(response, client, upstream, exchange, tool_names)


async def _parts(
    source: AsyncIterator[bytes] | httpx.Response, upstream: Upstream, exchange: Exchange
) -> AsyncGenerator[Any, None]:
    try:
        async for part in chat.aiter_parts(
            source, protocol=upstream.protocol, think_tags=upstream.think_tags
        ):
            exchange.add(part)
            yield part
    except Exception as error:  # the writer ends the client's stream with it
        exchange.error = str(error)
        raise


async def _bridged(
    response: httpx.Response,
    client: str,
    upstream: Upstream,
    exchange: Exchange,
    tool_names: dict[str, tuple[str, str]] | None,
) -> AsyncGenerator[bytes, None]:
    parts = _parts(response, upstream, exchange)
    events = chat.awrite_parts(parts, protocol=client, tool_names=tool_names)
    try:
        async for event in events:
            exchange.wrote()
            yield event
            # Let the event loop run between writes: when the client has gone, the
            # server learns it there, and no later write reaches the closed socket.
            await asyncio.sleep(0)
    finally:
        if isinstance(events, AsyncGenerator):  # closing the writer closes the parts
            await events.aclose()


async def _passed(
    response: httpx.Response, upstream: Upstream, exchange: Exchange
) -> AsyncGenerator[bytes, None]:
    """The upstream's bytes as they came, read into parts on the side (for the log)."""
    pending: list[bytes] = []
    raw = response.aiter_raw()  # one iterator: what the reader leaves is drained below

    async def source() -> AsyncGenerator[bytes, None]:
        async for data in raw:
            pending.append(data)
            yield data

    parts = _parts(source(), upstream, exchange)
    try:
        try:
            async for _ in parts:
                if pending:
                    exchange.wrote()
                    yield b"".join(pending)
                    pending.clear()
                    await asyncio.sleep(0)
        except chat.StreamError:  # the upstream's own error event: passed on as it came
            async for data in raw:  # and the rest, as it comes
                pending.append(data)
        except Exception as error:  # cut off, or unreadable: said in the protocol's way
            pending.append(cut_off(upstream.protocol, f"the upstream stream broke off: {error}"))
        if pending:
            exchange.wrote()
            yield b"".join(pending)
    finally:
        await parts.aclose()


def cut_off(protocol: str, message: str) -> bytes:
    """The error event that ends a stream of `protocol` the upstream broke off."""
    if protocol == "chat":
        return chat.sse_error({"message": message, "type": "server_error"})
    data = json.dumps({"type": "error", "error": {"type": "api_error", "message": message}})
    if protocol == "responses":
        data = json.dumps(
            {"type": "error", "code": "server_error", "message": message, "param": None}
        )
    return f"event: error\ndata: {data}\n\n".encode()


# --- unstreamed answers ---------------------------------------------------------------


def added_up(protocol: str, stream: bytes) -> tuple[int, bytes]:
    """A client's stream of `protocol` added up to the body an unstreamed call returns
    (or its error event as the error an unstreamed call gets)."""
    try:
        if protocol == "messages":
            message = messages.MessageAccumulator()
            for message_event in messages.iter_events(stream):
                message.add(message_event)
            return 200, messages.dumps(message.result()).encode()
        if protocol == "responses":
            response = responses.ResponseAccumulator()
            for response_event in responses.iter_events(stream):
                response.add(response_event)
            return 200, responses.dumps(response.result()).encode()
        completion = chat.ChunkAccumulator()
        for chunk in chat.iter_chunks(stream):
            completion.add(chunk)
        return 200, chat.dumps(completion.result()).encode()
    except chat.StreamError as error:
        kind = error.type if isinstance(error.type, str) else None
        code = error.code if isinstance(error.code, str) else None
        status = errors.ANTHROPIC_STATUS.get(kind or "", 502)
        info = ErrorInfo(status, str(error.message), kind, code)
        return status, errors.encoded(protocol, info)
