"""Stream reading end to end over loopback HTTP, sync and async, and big events in memory.

A uvicorn + Starlette server in a separate process (a thread would share the GIL with the
reader being measured) serves one long `chat.completion.chunk` stream, as server-sent events
written a few events at a time, then `data: [DONE]`: once built from the four corpora of
bench/corpus.py, once from the captured streams of tests/fixtures/chat/streams. Every reader
drains the whole stream per sample; samples of all readers are interleaved round-robin
after a warm-up, and the median is kept. Ratios are taken against
the floor (httpx lines + json.loads) and openai-python measured in the same run: sync readers
against the sync ones, async readers against the async ones.

Big events: one event whose chunk carries a delta content of N MiB, fed to each target in
16 KiB pieces. Decoding must stay linear in the event's size: time per MiB at 8x the size
within 2x of the time per MiB at 1x.

    python -m bench.streams            # full run; writes bench/streams.md and .json
    python -m bench.streams --quick    # a short stream and small events, to prove it runs (CI)
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import gc
import json
import random
import select
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import uvicorn
from openai import AsyncOpenAI, OpenAI
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import StreamingResponse
from starlette.routing import Route

from bench.common import (
    PYTHON,
    Goal,
    Section,
    add_output_options,
    section,
    table,
    time_paths,
    verdict,
    write_run,
)
from bench.corpus import CORPORA, corpus
from bench.targets import ROOT, STDLIB_ONLY, TARGETS

RESULTS = Path(__file__).resolve().parent / "streams.md"
RESULTS_JSON = RESULTS.with_suffix(".json")

HOST = "127.0.0.1"  # the server is for this machine only
PATH = "/v1/chat/completions"
EVENTS_PER_WRITE = 16
"""The server writes this many events at a time. One event per write (what a server does
when tokens come slowly) caps an h11 uvicorn near 60k events/s, below the fastest readers;
with 16 it serves several times faster than any reader (see the drain-only rows)."""
REQUEST: dict[str, Any] = {
    "model": "gpt-4.1-mini",
    "messages": [{"role": "user", "content": "Say something."}],
    "stream": True,
}
PIECE = 16 * 1024
"""Big events arrive in pieces of this many bytes."""
GROWTH_WITHIN = 2.0
"""The goal for big events: time per MiB at 8x the size within this factor of 1x."""


# The stream and its server -------------------------------------------------------------


STREAMS = ("mixed", "captured")
"""The served streams: the four corpora of bench/corpus.py in turn (logprobs and vendor
chunks are wide), and the captured streams of tests/fixtures/chat/streams one after another
(mostly text and reasoning deltas, as real traffic is)."""
CAPTURES = ROOT / "tests" / "fixtures" / "chat" / "streams"


def captured(chunks: int) -> list[str]:
    """`chunks` chunks of the captured streams, in order, from the first again when they
    run out; error payloads are left out (they end a stream)."""
    lines = [
        line
        for path in sorted(CAPTURES.glob("*.jsonl"))
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip() and "choices" in (data := json.loads(line)) and "error" not in data
    ]
    return [lines[i % len(lines)] for i in range(chunks)]


def stream_events(chunks: int, stream: str = "mixed") -> list[bytes]:
    """The events of a served stream, then [DONE]: `chunks // 4` chunks of each corpus
    (mixed), or `chunks` captured chunks."""
    if stream == "captured":
        lines = captured(chunks)
    else:
        lines = [line for name in CORPORA for line in corpus(name, chunks // len(CORPORA))]
    return [b"data: " + line.encode() + b"\n\n" for line in lines] + [b"data: [DONE]\n\n"]


def stream_writes(chunks: int, stream: str = "mixed") -> list[bytes]:
    """The stream as the server writes it: EVENTS_PER_WRITE events per write."""
    events = stream_events(chunks, stream)
    return [
        b"".join(events[start : start + EVENTS_PER_WRITE])
        for start in range(0, len(events), EVENTS_PER_WRITE)
    ]


def run_server(chunks: int, stream: str) -> None:
    """The server process: serves the stream on a free port of HOST, prints the port, and
    stops when told to (SIGTERM) or when its parent goes (its stdin closes)."""
    writes = stream_writes(chunks, stream)

    async def body() -> AsyncIterator[bytes]:
        for piece in writes:
            yield piece

    async def completions(request: Request) -> StreamingResponse:
        await request.body()
        return StreamingResponse(body(), media_type="text/event-stream")

    app = Starlette(routes=[Route(PATH, completions, methods=["POST"])])
    config = uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        lifespan="off",
        loop="asyncio",
        http="h11",
        timeout_graceful_shutdown=1,
    )
    server = uvicorn.Server(config)

    def stop_when_the_parent_goes() -> None:
        sys.stdin.read()
        server.should_exit = True

    threading.Thread(target=stop_when_the_parent_goes, daemon=True).start()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind((HOST, 0))
    sock.listen(128)  # connections wait in the backlog until uvicorn accepts them
    print(sock.getsockname()[1], flush=True)
    server.run(sockets=[sock])


@contextmanager
def stream_server(chunks: int, stream: str = "mixed", start_timeout: float = 60.0) -> Iterator[str]:
    """A server process serving the stream of `chunks` chunks; yields its base URL and
    stops it on exit, however the body ends."""
    process = subprocess.Popen(
        [sys.executable, "-m", "bench.streams", "--serve", str(chunks), "--stream", stream],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        ready, _, _ = select.select([process.stdout], [], [], start_timeout)
        line = process.stdout.readline() if ready else ""
        if not line.strip().isdigit():
            raise RuntimeError(f"the stream server did not start (exit code {process.poll()})")
        yield f"http://{HOST}:{int(line)}"
    finally:
        process.stdin.close()
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
        process.stdout.close()


# Readers over HTTP: each drains the stream once; returns the chunks (drains: bytes) read --

SYNC_FLOOR = "floor: httpx iter_lines + json.loads"
ASYNC_FLOOR = "async floor: httpx aiter_lines + json.loads"
SYNC_OPENAI = "openai-python OpenAI create(stream=True)"
ASYNC_OPENAI = "openai-python AsyncOpenAI create(stream=True)"
SYNC_DRAIN = "httpx iter_bytes, drain only (no parsing)"
ASYNC_DRAIN = "httpx aiter_bytes, drain only (no parsing)"
DRAINS = (SYNC_DRAIN, ASYNC_DRAIN)


def _sync_modules() -> dict[str, ModuleType]:
    return {
        **{f"{name} iter_chunks": module for name, module in TARGETS.items()},
        **{f"{name} iter_chunks, standard library only": m for name, m in STDLIB_ONLY.items()},
    }


def _async_modules() -> dict[str, ModuleType]:
    return {
        **{f"{name} aiter_chunks": module for name, module in TARGETS.items()},
        **{f"{name} aiter_chunks, standard library only": m for name, m in STDLIB_ONLY.items()},
    }


def _accumulating() -> dict[str, ModuleType]:
    """Reading a stream and adding every chunk to a `ChunkAccumulator`: the most common
    use, the final message."""
    return {f"{name} iter_chunks + ChunkAccumulator.add": m for name, m in TARGETS.items()}


SYNC_READERS = (SYNC_DRAIN, SYNC_FLOOR, SYNC_OPENAI, *_sync_modules(), *_accumulating())
ASYNC_READERS = (ASYNC_DRAIN, ASYNC_FLOOR, ASYNC_OPENAI, *_async_modules())


def sync_readers(
    base_url: str, client: httpx.Client, openai: OpenAI
) -> dict[str, Callable[[], int]]:
    url = base_url + PATH

    def drain() -> int:
        with client.stream("POST", url, json=REQUEST) as response:
            return sum(len(piece) for piece in response.iter_bytes())

    def floor() -> int:
        count = 0
        loads = json.loads
        with client.stream("POST", url, json=REQUEST) as response:
            for line in response.iter_lines():
                if line.startswith("data: ") and line != "data: [DONE]":
                    loads(line[6:])
                    count += 1
        return count

    def openai_python() -> int:
        count = 0
        for _ in openai.chat.completions.create(
            model=REQUEST["model"], messages=REQUEST["messages"], stream=True
        ):
            count += 1
        return count

    def chunks(module: ModuleType) -> Callable[[], int]:
        def read() -> int:
            count = 0
            with client.stream("POST", url, json=REQUEST) as response:
                for _ in module.iter_chunks(response.iter_bytes()):
                    count += 1
            return count

        return read

    def accumulated(module: ModuleType) -> Callable[[], int]:
        def read() -> int:
            accumulator = module.ChunkAccumulator()
            with client.stream("POST", url, json=REQUEST) as response:
                for chunk in module.iter_chunks(response.iter_bytes()):
                    accumulator.add(chunk)
            accumulator.result()
            count: int = accumulator.chunks
            return count

        return read

    readers = {SYNC_DRAIN: drain, SYNC_FLOOR: floor, SYNC_OPENAI: openai_python}
    readers.update({name: chunks(module) for name, module in _sync_modules().items()})
    readers.update({name: accumulated(module) for name, module in _accumulating().items()})
    return readers


def async_readers(
    base_url: str, client: httpx.AsyncClient, openai: AsyncOpenAI
) -> dict[str, Callable[[], Coroutine[Any, Any, int]]]:
    url = base_url + PATH

    async def drain() -> int:
        size = 0
        async with client.stream("POST", url, json=REQUEST) as response:
            async for piece in response.aiter_bytes():
                size += len(piece)
        return size

    async def floor() -> int:
        count = 0
        loads = json.loads
        async with client.stream("POST", url, json=REQUEST) as response:
            async for line in response.aiter_lines():
                if line.startswith("data: ") and line != "data: [DONE]":
                    loads(line[6:])
                    count += 1
        return count

    async def openai_python() -> int:
        count = 0
        stream = await openai.chat.completions.create(
            model=REQUEST["model"], messages=REQUEST["messages"], stream=True
        )
        async for _ in stream:
            count += 1
        return count

    def chunks(module: ModuleType) -> Callable[[], Coroutine[Any, Any, int]]:
        async def read() -> int:
            count = 0
            async with client.stream("POST", url, json=REQUEST) as response:
                async for _ in module.aiter_chunks(response.aiter_bytes()):
                    count += 1
            return count

        return read

    readers = {ASYNC_DRAIN: drain, ASYNC_FLOOR: floor, ASYNC_OPENAI: openai_python}
    readers.update({name: chunks(module) for name, module in _async_modules().items()})
    return readers


def _checked(name: str, read: Callable[[], int], expected: int) -> Callable[[], object]:
    def run() -> None:
        count = read()
        if count != expected:
            raise RuntimeError(f"{name} read {count:,} of {expected:,}")

    return run


def time_rounds(paths: dict[str, Callable[[], object]], repeats: int) -> dict[str, list[float]]:
    """Seconds of each path in each of `repeats` rounds, after a warm-up. Each round times
    every path once, in an order shuffled per round (seeded): this machine speeds up and
    slows down over a run, and a fixed order would favour the paths timed next to the
    floor. Goals are medians of each round's ratio, rates medians of the samples."""
    for run in paths.values():
        run()
    samples: dict[str, list[float]] = {name: [] for name in paths}
    order = list(paths)
    shuffle = random.Random(12).shuffle
    gc.collect()
    for _ in range(repeats):
        shuffle(order)
        for name in order:
            start = time.perf_counter()
            paths[name]()
            samples[name].append(time.perf_counter() - start)
    return samples


def measure_loopback(chunks: int, repeats: int, stream: str) -> dict[str, list[float]]:
    """Seconds per round of every reader, sync and async, over one server's stream."""
    events = stream_events(chunks, stream)
    expected = len(events) - 1
    size = sum(map(len, events))
    loop = asyncio.new_event_loop()

    def blocking(read: Callable[[], Coroutine[Any, Any, int]]) -> Callable[[], int]:
        return lambda: loop.run_until_complete(read())

    try:
        with stream_server(chunks, stream) as base_url, httpx.Client(timeout=60) as client:
            openai = OpenAI(base_url=base_url + "/v1", api_key="x", max_retries=0)
            aclient = httpx.AsyncClient(timeout=60)
            aopenai = AsyncOpenAI(base_url=base_url + "/v1", api_key="x", max_retries=0)
            readers = {
                **sync_readers(base_url, client, openai),
                **{
                    name: blocking(read)
                    for name, read in async_readers(base_url, aclient, aopenai).items()
                },
            }
            try:
                paths = {
                    name: _checked(name, read, size if name in DRAINS else expected)
                    for name, read in readers.items()
                }
                seconds = time_rounds(paths, repeats)
            finally:
                openai.close()
                loop.run_until_complete(aclient.aclose())
                loop.run_until_complete(aopenai.close())
    finally:
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()
    return seconds


# Big events, in memory ------------------------------------------------------------------


def big_event(mib: float) -> list[bytes]:
    """One event whose chunk has a delta content of `mib` MiB of base64 text, then [DONE],
    in PIECE-byte pieces."""
    size = int(mib * 2**20)
    content = base64.b64encode(random.Random(7).randbytes(size * 3 // 4 + 3)).decode()[:size]
    chunk = {
        "id": "chatcmpl-big",
        "object": "chat.completion.chunk",
        "created": 1_764_000_000,
        "model": "gpt-4.1-mini",
        "choices": [{"index": 0, "delta": {"content": content}, "finish_reason": None}],
    }
    data = b"data: " + json.dumps(chunk).encode() + b"\n\n" + b"data: [DONE]\n\n"
    return [data[start : start + PIECE] for start in range(0, len(data), PIECE)]


BIG_READERS = (
    *(f"{name} iter_chunks" for name in TARGETS),
    *(f"{name} aiter_chunks" for name in TARGETS),
)


def measure_big(sizes: tuple[float, float], repeats: int) -> dict[str, dict[float, float]]:
    """Seconds per MiB of content, per reader and size. A sample of the smaller event reads
    it as many times as fit in the larger one, so every sample reads as many bytes."""
    loop = asyncio.new_event_loop()

    def sync_path(module: ModuleType, pieces: list[bytes], rounds: int) -> Callable[[], object]:
        def run() -> None:
            for _ in range(rounds):
                if sum(1 for _ in module.iter_chunks(pieces)) != 1:
                    raise RuntimeError(f"{module.__name__} did not read the big chunk")

        return run

    def async_path(module: ModuleType, pieces: list[bytes], rounds: int) -> Callable[[], object]:
        async def source() -> AsyncIterator[bytes]:
            for piece in pieces:
                yield piece

        async def read() -> None:
            for _ in range(rounds):
                count = 0
                async for _ in module.aiter_chunks(source()):
                    count += 1
                if count != 1:
                    raise RuntimeError(f"{module.__name__} did not read the big chunk")

        return lambda: loop.run_until_complete(read())

    per_mib: dict[str, dict[float, float]] = {name: {} for name in BIG_READERS}
    try:
        for mib in sizes:
            pieces = big_event(mib)
            rounds = max(1, round(max(sizes) / mib))
            paths = {
                **{f"{n} iter_chunks": sync_path(m, pieces, rounds) for n, m in TARGETS.items()},
                **{f"{n} aiter_chunks": async_path(m, pieces, rounds) for n, m in TARGETS.items()},
            }
            for name, seconds in time_paths(paths, repeats).items():
                per_mib[name][mib] = seconds / (mib * rounds)
            del pieces, paths
    finally:
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()
    return per_mib


# Goals and the report -------------------------------------------------------------------


GOALS = (
    *(
        Goal(
            f"{name} iter_chunks vs openai-python",
            "loopback",
            f"{name} iter_chunks",
            SYNC_OPENAI,
            5.0,
        )
        for name in TARGETS
    ),
    *(
        Goal(
            f"{name} aiter_chunks vs AsyncOpenAI",
            "loopback",
            f"{name} aiter_chunks",
            ASYNC_OPENAI,
            5.0,
        )
        for name in TARGETS
    ),
    Goal("msgspec iter_chunks vs the floor", "loopback", "msgspec iter_chunks", SYNC_FLOOR, 0.85),
    *(
        Goal(
            f"{name}: accumulating every chunk vs reading alone",
            "loopback",
            f"{name} iter_chunks + ChunkAccumulator.add",
            f"{name} iter_chunks",
            0.7,
        )
        for name in TARGETS
    ),
    Goal(
        "msgspec aiter_chunks vs the async floor",
        "loopback",
        "msgspec aiter_chunks",
        ASYNC_FLOOR,
        0.85,
    ),
    Goal(
        "dataclasses iter_chunks vs the floor",
        "loopback",
        "dataclasses iter_chunks",
        SYNC_FLOOR,
        0.6,
    ),
    Goal(
        "dataclasses aiter_chunks vs the async floor",
        "loopback",
        "dataclasses aiter_chunks",
        ASYNC_FLOOR,
        0.6,
    ),
    *(
        Goal(f"big event, {reader}: per MiB at 8x vs 1x", "big", reader, at_most=GROWTH_WITHIN)
        for reader in BIG_READERS
    ),
)


@dataclass(frozen=True)
class Run:
    """What one run measured: seconds per round of every reader on each stream, and
    seconds per MiB of every big-event reader at each size."""

    chunks: int
    repeats: int
    rounds: dict[str, dict[str, list[float]]]
    per_mib: dict[str, dict[float, float]]
    sizes: tuple[float, float]
    big_repeats: int

    def rate(self, stream: str, path: str) -> float:
        """Chunks per second of `path`: the median of the rounds."""
        return self.chunks / statistics.median(self.rounds[stream][path])

    def ratio(self, stream: str, path: str, anchor: str) -> float:
        """How many times faster `path` read than `anchor`: the median of the rounds'
        ratios (a round times both in the same stretch of the machine's speed)."""
        pairs = zip(self.rounds[stream][anchor], self.rounds[stream][path], strict=True)
        return statistics.median(anchor_time / path_time for anchor_time, path_time in pairs)

    def growth(self, reader: str) -> float:
        """Time per MiB of the larger big event over the smaller's."""
        small, large = self.sizes
        return self.per_mib[reader][large] / self.per_mib[reader][small]

    def measured(self, goal: Goal) -> list[tuple[str, float]]:
        """The ratio `goal` speaks of, on each stream (big events: once)."""
        if goal.kind == "loopback":
            return [(stream, self.ratio(stream, goal.path, goal.anchor)) for stream in STREAMS]
        small, large = self.sizes
        return [(f"{large:g} vs {small:g} MiB", self.growth(goal.path))]

    def loopback(self, readers: Sequence[str], floor: str, openai: str) -> Section:
        """The readers' rates and ratios on each stream, for the JSON file."""
        rates = {stream: {name: self.rate(stream, name) for name in readers} for stream in STREAMS}
        return section("loopback", "chunks/s", rates, (floor, openai), self.ratio)


def _reader_rows(
    result: Run, stream: str, readers: Sequence[str], floor: str, openai: str
) -> list[list[str]]:
    return [
        [
            name,
            f"{result.rate(stream, name) / 1000:,.1f}k",
            f"{result.ratio(stream, name, floor):.2f}",
            f"{result.ratio(stream, name, openai):.2f}",
        ]
        for name in readers
    ]


def _loopback_lines(result: Run) -> list[str]:
    lines: list[str] = []
    for stream in STREAMS:
        lines += [
            f"## Loopback HTTP, {stream} stream, sync (httpx.Client; ratios to the sync floor "
            "and OpenAI)",
            "",
            *table(
                ["reader", "chunks/s", "vs floor", "vs openai-python"],
                _reader_rows(result, stream, SYNC_READERS, SYNC_FLOOR, SYNC_OPENAI),
            ),
            "",
            f"## Loopback HTTP, {stream} stream, async (httpx.AsyncClient; ratios to the async "
            "floor and AsyncOpenAI)",
            "",
            *table(
                ["reader", "chunks/s", "vs async floor", "vs AsyncOpenAI"],
                _reader_rows(result, stream, ASYNC_READERS, ASYNC_FLOOR, ASYNC_OPENAI),
            ),
            "",
        ]
    return lines


def _big_lines(result: Run) -> list[str]:
    small, large = result.sizes
    rows = [
        [
            name,
            f"{result.per_mib[name][small] * 1000:,.1f}",
            f"{result.per_mib[name][large] * 1000:,.1f}",
            f"{result.growth(name):.2f}",
        ]
        for name in BIG_READERS
    ]
    header = ["reader", f"ms/MiB at {small:g} MiB", f"ms/MiB at {large:g} MiB"]
    return [
        f"## Big events, in memory ({PIECE // 1024} KiB pieces; median of {result.big_repeats})",
        "",
        "One event whose chunk has a delta content of base64 text, then `[DONE]`; ms per MiB",
        f"of content. A sample of the {small:g} MiB event reads it {round(large / small)} times.",
        "",
        *table([*header, f"{large:g} vs {small:g} MiB"], rows),
        "",
    ]


def _goal_rows(result: Run) -> list[list[str]]:
    """A row per goal and stream (big events: one row per goal)."""
    rows: list[list[str]] = []
    for goal in GOALS:
        for on, value in result.measured(goal):
            stream = on if goal.kind == "loopback" else ""
            rows.append(
                [goal.name, stream, goal.target(), f"{value:.2f}", verdict(goal.holds(value))]
            )
    return rows


def report(result: Run) -> str:
    chunks = result.chunks
    lines = [
        "# Stream benchmark results",
        "",
        f"Written by `make bench` (`python -m bench.streams`). Python {PYTHON}.",
        f"Two streams of {chunks:,} chunks each, then `[DONE]`: *mixed*, the {', '.join(CORPORA)}",
        f"corpora of bench/corpus.py ({chunks // len(CORPORA):,} chunks each); *captured*, the",
        "captured streams of tests/fixtures/chat/streams in turn. Each is served over loopback",
        f"HTTP by uvicorn + Starlette in another process, {EVENTS_PER_WRITE} events per write.",
        f"Median of {result.repeats} rounds after a warm-up, each timing every reader once in a",
        "shuffled order; each sample reads the whole stream. Cells: chunks per second",
        "(median), and ratios (the median of each round's ratio) measured in the same run. The",
        "drain-only rows read the bytes and parse nothing: the server is not the limit.",
        "",
        *_loopback_lines(result),
        *_big_lines(result),
        "## Goals",
        "",
        *table(["goal", "stream", "target", "measured", "holds"], _goal_rows(result)),
    ]
    return "\n".join(lines) + "\n"


def results(result: Run) -> dict[str, Any]:
    """The readers' rates and ratios and the goals of a run, for bench/streams.json (and
    bench/charts.py)."""
    return {
        "benchmark": "streams",
        "python": PYTHON,
        "chunks": result.chunks,
        "repeats": result.repeats,
        "targets": list(TARGETS),
        "sync": result.loopback(SYNC_READERS, SYNC_FLOOR, SYNC_OPENAI),
        "async": result.loopback(ASYNC_READERS, ASYNC_FLOOR, ASYNC_OPENAI),
        "big": {
            "sizes_mib": list(result.sizes),
            "repeats": result.big_repeats,
            "rows": [
                {
                    "reader": name,
                    "ms_per_mib": [
                        round(result.per_mib[name][size] * 1000, 3) for size in result.sizes
                    ],
                    "growth": round(result.growth(name), 4),
                }
                for name in BIG_READERS
            ],
        },
        "goals": [goal.record(result.measured(goal)) for goal in GOALS],
    }


def run(chunks: int, repeats: int, sizes: tuple[float, float], big_repeats: int) -> Run:
    rounds = {stream: measure_loopback(chunks, repeats, stream) for stream in STREAMS}
    per_mib = measure_big(sizes, big_repeats)
    return Run(chunks, repeats, rounds, per_mib, sizes, big_repeats)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    add_output_options(parser, RESULTS_JSON)
    parser.add_argument("--serve", type=int, metavar="CHUNKS", help=argparse.SUPPRESS)
    parser.add_argument("--stream", choices=STREAMS, default="mixed", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve is not None:
        run_server(args.serve, args.stream)
        return 0
    if args.quick:
        result = run(chunks=1_000, repeats=3, sizes=(0.125, 1.0), big_repeats=3)
    else:
        result = run(chunks=20_000, repeats=9, sizes=(1.0, 8.0), big_repeats=5)
    text = report(result)
    print(text)
    write_run(args, (RESULTS, text), (RESULTS_JSON, results(result)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
