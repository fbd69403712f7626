"""A chat upstream on 127.0.0.1 for the gateway benchmark (bench/gateway.py) and its load
test (tests/gateway/test_load.py): it streams captured chat streams, one SSE event per
write, and counts the streams it has open.

The request's `model` names the stream: a capture's file name (tests/fixtures/chat/streams,
without `.jsonl`) or `long` (thousands of chunks, for the relay cost per chunk); a suffix
`@paced` waits a millisecond before each event (so that a client can leave mid-stream),
`@hold` stops half-way until `POST /release` (so that streams stay open to be weighed),
`@pause1` (`@pause2`) waits 20 ms after the first (second) event: a client sees what a
server in between did for its first byte before the rest comes.

    GET  /stats     {"started", "open", "complete", "closed"}: "closed" counts streams
                    whose client went away before the end
    POST /release   lets every held stream go on
    GET  /health

    python -m bench.upstream --port 0   # prints "port N" once it listens, serves until killed
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import uvicorn
from starlette.types import Message, Receive, Scope, Send

ROOT = Path(__file__).resolve().parent.parent
CAPTURES = ROOT / "tests" / "fixtures" / "chat" / "streams"
HOST = "127.0.0.1"
LONG = "long"
"""The synthetic long stream's name."""
LONG_TEMPLATE = "deepseek__reasoner-thinking-cache-hit-miss"
"""The capture whose chunks the long stream repeats (reasoning, then text)."""
PACE = 0.001
"""Seconds a paced stream waits before each event."""
PAUSE = 0.02
"""Seconds a `@pause1` or `@pause2` stream waits after its first or second event."""
HOLD_LIMIT = 60.0
"""The longest a held stream waits for `/release`: the server never hangs a client."""


def sse(lines: Sequence[str]) -> list[bytes]:
    """Chat chunks (JSON text) as the SSE events a server writes, `[DONE]` last."""
    return [f"data: {line}\n\n".encode() for line in lines] + [b"data: [DONE]\n\n"]


def captured(name: str) -> list[str]:
    path = CAPTURES / f"{name}.jsonl"
    return [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def long_stream(chunks: int) -> list[str]:
    """A DeepSeek-style stream of `chunks` chunks: the capture's first chunk, one of its
    reasoning chunks and one of its text chunks repeated (half each, a word each), and its
    last chunk (the finish and the usage)."""
    lines = [json.loads(line) for line in captured(LONG_TEMPLATE)]
    reasoning = next(c for c in lines[1:] if c["choices"][0]["delta"].get("reasoning_content"))
    text = next(c for c in lines if c["choices"][0]["delta"].get("content"))
    body = chunks - 2
    out = [lines[0]]
    out += [_word(reasoning, "reasoning_content", i) for i in range(body // 2)]
    out += [_word(text, "content", i) for i in range(body - body // 2)]
    out.append(lines[-1])
    return [json.dumps(chunk, ensure_ascii=False, separators=(",", ":")) for chunk in out]


def _word(chunk: dict[str, Any], key: str, index: int) -> dict[str, Any]:
    choice = chunk["choices"][0]
    return {**chunk, "choices": [{**choice, "delta": {**choice["delta"], key: f" w{index}"}}]}


def capture_names() -> list[str]:
    return sorted(path.stem for path in CAPTURES.glob("*.jsonl"))


def all_streams(long_chunks: int) -> dict[str, list[bytes]]:
    """Every capture's SSE events by name, and the long stream's."""
    streams = {name: sse(captured(name)) for name in capture_names()}
    streams[LONG] = sse(long_stream(long_chunks))
    return streams


@dataclass
class Counts:
    started: int = 0
    open: int = 0
    complete: int = 0
    closed: int = 0


class Upstream:
    """The ASGI app: POST /v1/chat/completions streams the stream the model names."""

    def __init__(self, streams: Mapping[str, Sequence[bytes]]) -> None:
        self.streams = dict(streams)
        self.counts = Counts()
        self.release = asyncio.Event()
        self.requests = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        if scope["type"] != "http":
            return
        path, method = scope["path"], scope["method"]
        if path == "/v1/chat/completions" and method == "POST":
            await self._stream(receive, send)
        elif path == "/stats":
            await _json(send, 200, vars(self.counts))
        elif path == "/release" and method == "POST":
            self.release.set()
            self.release = asyncio.Event()
            await _json(send, 200, {"released": True})
        elif path == "/health":
            await _json(send, 200, {"status": "ok"})
        else:
            await _json(send, 404, {"error": {"message": f"no route {method} {path}"}})

    async def _stream(self, receive: Receive, send: Send) -> None:
        body = bytearray()
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        self.requests += 1
        model = str(json.loads(body).get("model", ""))
        name, _, mode = model.partition("@")
        pieces = self.streams.get(name)
        if pieces is None:
            await _json(send, 404, {"error": {"message": f"no stream {name!r}"}})
            return
        gone = asyncio.Event()
        watch = asyncio.create_task(_watch(receive, gone))
        counts = self.counts
        counts.started += 1
        counts.open += 1
        try:
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [
                        (b"content-type", b"text/event-stream"),
                        (b"cache-control", b"no-cache"),
                    ],
                }
            )
            half = len(pieces) // 2
            release = self.release
            for index, piece in enumerate(pieces):
                if mode == "hold" and index == half:
                    await _first(release.wait(), gone.wait(), HOLD_LIMIT)
                elif mode == "paced":
                    await asyncio.sleep(PACE)
                elif mode == f"pause{index}":
                    await asyncio.sleep(PAUSE)
                if gone.is_set():
                    counts.closed += 1
                    return
                await send({"type": "http.response.body", "body": piece, "more_body": True})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
            counts.complete += 1
        finally:
            counts.open -= 1
            watch.cancel()


async def _watch(receive: Receive, gone: asyncio.Event) -> None:
    """Sets `gone` when the client disconnects (uvicorn drops later writes silently)."""
    while True:
        message: Message = await receive()
        if message["type"] == "http.disconnect":
            gone.set()
            return


async def _first(one: Any, other: Any, timeout: float) -> None:
    tasks = [asyncio.ensure_future(one), asyncio.ensure_future(other)]
    try:
        await asyncio.wait(tasks, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()


async def _json(send: Send, status: int, data: Any) -> None:
    body = json.dumps(data).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def listening_socket(port: int = 0) -> socket.socket:
    """A socket on 127.0.0.1 whose accepted connections asyncio gives TCP_NODELAY (it
    does so only for sockets made with IPPROTO_TCP)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((HOST, port))
    return sock


def server(app: Upstream, keep_alive: int = 5) -> uvicorn.Server:
    """uvicorn serving `app`; an idle kept-alive connection is closed after `keep_alive`
    seconds (uvicorn's default, as vLLM and SGLang serve)."""
    config = uvicorn.Config(
        app,
        log_level="warning",
        log_config=None,
        access_log=False,
        lifespan="off",
        loop="asyncio",
        http="h11",
        timeout_graceful_shutdown=1,
        backlog=4096,
        timeout_keep_alive=keep_alive,
    )
    return uvicorn.Server(config)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--long", type=int, default=4000, help="chunks of the long stream")
    parser.add_argument(
        "--keep-alive", type=int, default=5, help="seconds an idle connection is kept"
    )
    args = parser.parse_args(argv)
    sock = listening_socket(args.port)
    print(f"port {sock.getsockname()[1]}", flush=True)
    server(Upstream(all_streams(args.long)), args.keep_alive).run(sockets=[sock])
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
