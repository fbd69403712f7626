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
import re
import time
import warnings
from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass, field
from typing import Any, TextIO, cast

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
    usage: bool = True,
    response_id: str | None = None,
) -> AsyncGenerator[bytes, None]:
    """The client's events of the upstream `response`'s stream (`tool_names`: the
    namespace and name of each flat call name, for a Responses client). Without `usage`
    (a chat client that did not ask for it) no usage chunk is written: the log line
    still has the upstream's counts. A `response_id` is the id the client's response
    gets (one the gateway keeps it by) in place of the upstream's."""
    if client == upstream.protocol and upstream.think_tags is None:
        passing = _AsItCame() if usage or client != "chat" else _WithoutUsageChunk()
        return _passed(response, upstream, exchange, passing)
    held = () if usage else ("usage",)
    return _bridged(response, client, upstream, exchange, tool_names, held, response_id)


async def _parts(
    source: AsyncIterator[bytes] | httpx.Response,
    upstream: Upstream,
    exchange: Exchange,
    held: tuple[str, ...] = (),
    response_id: str | None = None,
) -> AsyncGenerator[Any, None]:
    """The upstream's parts, each counted for the log line; those of a `held` kind
    are not passed on (not written); the start part named `response_id` when given."""
    try:
        async for part in chat.aiter_parts(
            source, protocol=upstream.protocol, think_tags=upstream.think_tags
        ):
            exchange.add(part)
            if response_id is not None and part.kind == "start":
                said = part.identity
                model, created = (said.model, said.created) if said else (None, None)
                part.identity = chat.Identity(response_id, model, created)
            if part.kind not in held:
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
    held: tuple[str, ...],
    response_id: str | None,
) -> AsyncGenerator[bytes, None]:
    parts = _parts(response, upstream, exchange, held, response_id)
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


class _AsItCame:
    """The upstream's bytes, passed on as they came."""

    def __call__(self, data: bytes) -> bytes:
        return data

    def rest(self) -> bytes:
        """What is held back when the stream ends (to pass on)."""
        return b""


EVENT_END = re.compile(rb"(?:\r\n|\r(?!\n)|\n){2}")
"""The blank line that ends a server-sent event, in any of its line ends."""

CHUNK_HEAD = {"id", "object", "created", "model", "system_fingerprint", "service_tier"}
"""The keys every chat chunk repeats: the usage chunk that has nothing else says
nothing but its usage."""


class _WithoutUsageChunk(_AsItCame):
    """The upstream's chat events as they came, all but the usage chunk (`choices: []`)
    that a client which did not ask for it would not get from OpenAI; each event is
    passed on once it is complete."""

    def __init__(self) -> None:
        self._held: list[bytes] = []
        self._seam = b""
        """The held bytes' last three: a blank line may start there."""

    def __call__(self, data: bytes) -> bytes:
        self._held.append(data)
        seam, self._seam = self._seam + data, (self._seam + data)[-3:]
        if not EVENT_END.search(seam):
            return b""
        held = b"".join(self._held)
        kept: list[bytes] = []
        start = 0
        for end in EVENT_END.finditer(held):
            event = held[start : end.end()]
            if not _usage_only(event):
                kept.append(event)
            start = end.end()
        self._held = [held[start:]]
        return b"".join(kept)

    def rest(self) -> bytes:
        return b"".join(self._held)


def _usage_only(event: bytes) -> bool:
    """Whether a chat event is a usage chunk that says nothing else."""
    if b'"usage"' not in event:  # most events: not read twice
        return False
    lines = event.splitlines()
    data = b"\n".join(line[5:].removeprefix(b" ") for line in lines if line.startswith(b"data:"))
    try:
        chunk: object = json.loads(data)
    except ValueError:
        return False
    if not isinstance(chunk, dict):
        return False
    fields = cast(dict[str, Any], chunk)
    rest = fields.keys() - CHUNK_HEAD - {"choices", "usage"}
    return fields.get("choices") == [] and fields.get("usage") is not None and not rest


async def _passed(
    response: httpx.Response, upstream: Upstream, exchange: Exchange, passing: _AsItCame
) -> AsyncGenerator[bytes, None]:
    """The upstream's bytes as they came (or as `passing` leaves them), read into parts
    on the side (for the log)."""
    pending: list[bytes] = []
    # One iterator (what the reader leaves is drained below), of the bytes as the upstream
    # meant them: a gzipped stream decoded, as the client is not told it is gzipped.
    raw = response.aiter_bytes()

    async def source() -> AsyncGenerator[bytes, None]:
        async for data in raw:
            pending.append(passing(data))
            yield data

    parts = _parts(source(), upstream, exchange)
    broke = b""
    try:
        try:
            async for _ in parts:
                out = b"".join(pending)
                pending.clear()
                if out:
                    exchange.wrote()
                    yield out
                    await asyncio.sleep(0)
        except chat.StreamError:  # the upstream's own error event: passed on as it came
            async for data in raw:  # and the rest, as it comes
                pending.append(passing(data))
        except Exception as error:  # cut off, or unreadable: said in the protocol's way
            broke = cut_off(upstream.protocol, f"the upstream stream broke off: {error}")
        out = b"".join(pending) + passing.rest() + broke
        if out:
            exchange.wrote()
            yield out
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
        completion = chat.ChatCompletionAccumulator()
        for chunk in chat.iter_chunks(stream):
            completion.add(chunk)
        return 200, chat.dumps(completion.result()).encode()
    except chat.StreamError as error:
        kind = error.type if isinstance(error.type, str) else None
        code = error.code if isinstance(error.code, str) else None
        status = errors.ANTHROPIC_STATUS.get(kind or "", 502)
        info = ErrorInfo(status, str(error.message), kind, code)
        return status, errors.encoded(protocol, info)
