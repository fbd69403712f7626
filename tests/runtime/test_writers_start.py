"""The writers write their opening events (`message_start`; `response.created` and
`response.in_progress`; chat's chunk that opens choice 0 with its role) as the "start"
part comes, not with the part after it: with a real model the part after it comes after
the whole prefill, and a client through the gateway heard nothing until then. The usage
known at the start (a Messages upstream's input tokens, which ride on the "start" part)
is in `message_start` all the same."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any, Final

import pytest
from anthropic.lib.streaming._messages import accumulate_event
from anthropic.types import RawMessageStartEvent

from tests.helpers.messages_judges import read_many_with_anthropic_sdk
from tests.helpers.support import TARGETS

WAIT: Final = 5.0
"""How long a test waits for an event it expects (seconds): far longer than it takes."""


def _sse(kind: str, data: dict[str, Any]) -> bytes:
    return f"event: {kind}\ndata: {json.dumps(data)}\n\n".encode()


INPUT_TOKENS: Final = 1234
CACHE_READS: Final = 200

MESSAGES_BODY: Final = b"".join(
    (
        _sse(
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": "msg_01start",
                    "type": "message",
                    "role": "assistant",
                    "model": "claude-x",
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {
                        "input_tokens": INPUT_TOKENS,
                        "cache_read_input_tokens": CACHE_READS,
                        "output_tokens": 1,
                    },
                },
            },
        ),
        _sse(
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
        ),
        _sse(
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": "Hello"},
            },
        ),
        _sse("content_block_stop", {"type": "content_block_stop", "index": 0}),
        _sse(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": 7},
            },
        ),
        _sse("message_stop", {"type": "message_stop"}),
    )
)
"""A Messages upstream's stream whose `message_start` says the input tokens."""


def _chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    chunk = {
        "id": "chatcmpl-start",
        "object": "chat.completion.chunk",
        "created": 1700000000,
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return b"data: " + json.dumps(chunk).encode() + b"\n\n"


CHAT_BODY: Final = b"".join(
    (
        _chunk({"role": "assistant", "content": ""}),
        _chunk({"content": "Hello"}),
        _chunk({}, "stop"),
        b"data: [DONE]\n\n",
    )
)
"""A chat upstream's stream: its first chunk the role alone, as OpenAI's."""

CHAT = TARGETS["msgspec"]

RESPONSES_BODY: Final = b"".join(CHAT.write_parts(CHAT.iter_parts(CHAT_BODY), protocol="responses"))
"""A Responses upstream's stream (the chat one, written as Responses)."""

SOURCES: Final = {
    "chat": CHAT_BODY,
    "messages": MESSAGES_BODY,
    "responses": RESPONSES_BODY,
}

OPENING: Final = {
    "chat": ["chat.completion.chunk (role)"],
    "messages": ["message_start"],
    "responses": ["response.created", "response.in_progress"],
}
"""The events a client hears first, as the writer of each protocol writes them (chat's:
the chunk that opens choice 0 with its role)."""

LAST: Final = {"chat": "[DONE]", "messages": "message_stop", "responses": "response.completed"}


def _kinds(events: list[bytes]) -> list[str]:
    """The `type` of each event written (each write may hold several); a chat chunk's
    `object`, marked when it opens a choice with its role; chat's `[DONE]`."""
    kinds: list[str] = []
    for written in events:
        for block in written.decode().split("\n\n"):
            for line in block.splitlines():
                if not line.startswith("data: "):
                    continue
                if line == "data: [DONE]":
                    kinds.append("[DONE]")
                    continue
                data = json.loads(line[6:])
                kind = data.get("type") or data["object"]
                if any("role" in choice["delta"] for choice in data.get("choices", ())):
                    kind += " (role)"
                kinds.append(kind)
    return kinds


def _data(written: bytes, kind: str) -> dict[str, Any]:
    """The data of the first event of `kind` in `written`."""
    for block in written.decode().split("\n\n"):
        for line in block.splitlines():
            if line.startswith("data: "):
                data: dict[str, Any] = json.loads(line[6:])
                if data["type"] == kind:
                    return data
    raise AssertionError(f"no {kind} event in {written!r}")


class _Held:
    """An async parts source that gives the parts up to and including the first
    "start" part, then waits (on `release`) before it gives the rest: the upstream
    between its first chunk and its second (the model's prefill)."""

    def __init__(self, parts: list[Any]) -> None:
        self.parts = parts
        self.release = asyncio.Event()
        self.waiting = asyncio.Event()  # set while it waits on `release`
        self.given: list[str] = []

    async def __aiter__(self) -> AsyncIterator[Any]:
        parts = iter(self.parts)
        for part in parts:
            self.given.append(part.kind)
            yield part
            if part.kind == "start":
                break
        self.waiting.set()
        await self.release.wait()
        self.waiting.clear()
        for part in parts:
            self.given.append(part.kind)
            yield part


async def _opening_while_held(
    source: bytes, upstream: str, client: str
) -> tuple[list[bytes], list[bytes], _Held]:
    """What the writer of `client` writes while the parts of `source` are held after
    their start (each event as it came), and what it writes after they are released."""
    parts = list(CHAT.iter_parts(source, protocol=upstream))
    assert parts[0].kind == "start"
    assert len(parts) > 2  # something comes after the start to hold back
    held = _Held(parts)
    stream = CHAT.awrite_parts(held.__aiter__(), protocol=client)
    early: list[bytes] = []
    for _ in OPENING[client]:
        # (Before the fix the writer waited for the second part: this timed out.)
        early.append(await asyncio.wait_for(anext(stream), WAIT))
    assert held.given == ["start"] and not held.release.is_set()
    # The writer now waits on the source, which waits for its second part.
    pending = asyncio.ensure_future(anext(stream))
    await asyncio.wait_for(held.waiting.wait(), WAIT)
    await asyncio.sleep(0.01)
    assert not pending.done()
    held.release.set()
    late = [await asyncio.wait_for(pending, WAIT)]
    late += [event async for event in stream]
    return early, late, held


@pytest.mark.parametrize("upstream", sorted(SOURCES))
@pytest.mark.parametrize("client", sorted(OPENING))
def test_the_opening_events_come_before_the_second_part(upstream: str, client: str) -> None:
    early, late, held = asyncio.run(_opening_while_held(SOURCES[upstream], upstream, client))
    assert _kinds(early) == OPENING[client]
    assert len(held.given) > 1 and held.given[0] == "start"
    kinds = _kinds(late)
    assert kinds, "the rest of the stream came once released"
    assert not set(OPENING[client]) & set(kinds), "the opening events are written once"
    assert kinds[-1] == LAST[client]


def test_a_messages_upstream_s_input_tokens_are_in_message_start() -> None:
    """The writer's `message_start`, written while the "usage" part is still held,
    carries the input tokens the upstream's `message_start` said: anthropic-sdk-python's
    message, accumulated from that first event alone, has them."""
    early, late, held = asyncio.run(_opening_while_held(MESSAGES_BODY, "messages", "messages"))
    assert held.given[:2] == ["start", "usage"]  # the usage part came after the wait
    [first] = early
    start = RawMessageStartEvent.model_validate(_data(first, "message_start"))
    message = accumulate_event(event=start, current_snapshot=None, json_bufs={})
    assert message.id == "msg_01start" and message.model == "claude-x"
    assert message.usage.input_tokens == INPUT_TOKENS
    assert message.usage.cache_read_input_tokens == CACHE_READS
    # The whole stream, read by the SDK over HTTP: the same input tokens at the end.
    [read] = read_many_with_anthropic_sdk([first + b"".join(late)])
    assert not isinstance(read, Exception), read
    assert read["events"][0] == "message_start"
    usage = read["message"]["usage"]
    assert (usage["input_tokens"], usage["output_tokens"]) == (INPUT_TOKENS, 7)
    assert usage["cache_read_input_tokens"] == CACHE_READS


@pytest.mark.parametrize("upstream", ["messages", "responses"])
def test_the_start_part_carries_the_usage_its_event_said(upstream: str) -> None:
    """A reader puts the usage its start event says on the "start" part, and still
    gives it as the "usage" part that follows; a start event that says none gives a
    start without one."""
    if upstream == "messages":
        body = MESSAGES_BODY
    else:
        created = _data(RESPONSES_BODY, "response.created")
        usage = {"input_tokens": INPUT_TOKENS, "output_tokens": 0, "total_tokens": INPUT_TOKENS}
        said = {**created, "response": {**created["response"], "usage": usage}}
        body = _sse("response.created", said) + RESPONSES_BODY.split(b"\n\n", 1)[1]
    parts = list(CHAT.iter_parts(body, protocol=upstream))
    start, after = parts[0], parts[1]
    assert start.kind == "start" and start.usage is not None
    # In chat's terms: a Messages upstream's input tokens exclude the cache reads.
    cached = CACHE_READS if upstream == "messages" else 0
    assert start.usage.prompt_tokens == INPUT_TOKENS + cached
    assert after.kind == "usage" and after.usage == start.usage
    bare = next(iter(CHAT.iter_parts(RESPONSES_BODY, protocol="responses")))
    assert bare.kind == "start" and bare.usage is None


def test_a_chat_first_chunk_s_usage_rides_on_its_start() -> None:
    """A chat stream whose first chunk reports the usage (a one-chunk answer): the
    "start" part carries it, and the "usage" part still comes."""
    chunk = json.loads(_chunk({"role": "assistant", "content": "Hi"}, "stop")[6:])
    chunk["usage"] = {"prompt_tokens": 11, "completion_tokens": 2, "total_tokens": 13}
    body = b"data: " + json.dumps(chunk).encode() + b"\n\ndata: [DONE]\n\n"
    parts = list(CHAT.iter_parts(body))
    assert parts[0].kind == "start" and parts[0].usage is not None
    assert parts[0].usage.prompt_tokens == 11
    [usage] = [part for part in parts if part.kind == "usage"]
    assert usage.usage == parts[0].usage
    assert next(iter(CHAT.iter_parts(CHAT_BODY))).usage is None
