"""The gateway under load, as a user runs it (`python -m generator serve`, one worker) in
front of a loopback chat upstream that counts its open streams (bench/upstream.py): the
small version of bench/gateway.py's load, its invariants asserted, its times not."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import httpx
import pytest

from bench import agents, gateway, upstream
from bench.gateway import Server
from generator.gateway.wire import chat

REQUESTS, CONCURRENCY = 100, 20
RSS_GROWTH_KIB = 64 * 1024
"""A generous bound on what 100 requests may leave behind in the gateway's memory."""
KEEP_ALIVE = 600
"""Seconds the upstream keeps an idle connection: long, so that this test is about the
load and not about a pooled connection the upstream closes just as it is reused (which
the gateway sends again on a new connection, generator/gateway/app.py `_send`; too rare
here to be seen reliably: bench/gateway.py's load at uvicorn's 5 s shows it)."""


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, Server]]:
    directory = tmp_path_factory.mktemp("gateway")
    with gateway.processes(directory, long_chunks=2000, keep_alive=KEEP_ALIVE) as started:
        yield started


def test_agent_sized_requests_many_at_a_time_are_answered_alike_and_leave_nothing_open(
    servers: tuple[Server, Server],
) -> None:
    up, ours = servers
    result = gateway.load(ours, up.base, REQUESTS, CONCURRENCY)
    assert result.statuses == {200: REQUESTS}
    assert (result.finished, result.left_early) == (REQUESTS - REQUESTS // 10, REQUESTS // 10)
    assert result.identical == result.finished, result.mismatches
    assert result.prefixes == result.left_early  # what they read is a beginning of it
    assert result.body_kib[0] >= 30 and result.body_kib[1] <= 52
    assert result.upstream_started == REQUESTS
    assert result.upstream_open == 0
    assert result.rss_after_kib - result.rss_before_kib < RSS_GROWTH_KIB


@pytest.mark.parametrize("protocol", gateway.PROTOCOLS)
def test_a_client_that_leaves_mid_stream_ends_the_upstream_stream(
    servers: tuple[Server, Server], protocol: str
) -> None:
    """The long stream, paced, takes seconds; the client leaves after its first bytes, and
    the upstream sees its stream cut well before it would have ended."""
    up, ours = servers

    async def leave() -> dict[str, int]:
        body = gateway.encoded(agents.small(protocol, f"{upstream.LONG}@paced"))
        headers = {"content-type": "application/json", **gateway.HEADERS[protocol]}
        async with httpx.AsyncClient(timeout=httpx.Timeout(gateway.WAIT)) as client:
            before = (await client.get(f"{up.base}/stats")).json()
            url = ours.base + gateway.PATHS[protocol]
            async with client.stream("POST", url, content=body, headers=headers) as answer:
                assert answer.status_code == 200
                async for _ in answer.aiter_raw():
                    break
            after = await gateway.wait_until(client, up.base, lambda c: c["open"] == 0, 5.0)
        return {key: after[key] - before[key] for key in ("started", "closed", "complete")}

    assert asyncio.run(leave()) == {"started": 1, "closed": 1, "complete": 0}


def test_the_upstream_streams_what_the_benchmark_expects() -> None:
    """The long stream has as many chunks as asked, each a chunk the chat module reads."""
    lines = upstream.long_stream(500)
    assert len(lines) == 500
    pieces = upstream.sse(lines)
    parts = list(chat.iter_parts(b"".join(pieces)))
    texts = [p for p in parts if p.kind == "text"]
    assert len(texts) == 249 and texts[0].text == " w0"
