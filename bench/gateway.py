"""The gateway (`python -m generator serve`) over loopback, as ratios in one run.

Three processes on 127.0.0.1: a chat upstream (bench/upstream.py, uvicorn) streaming
captured chat streams; the gateway, started as a user starts it (`python -m generator
serve --config FILE`, one worker) in front of it; and this process, the client. With
LiteLLM's proxy installed (`make bench` puts it in .bench-venv from bench/litellm.lock),
its proxy runs beside ours in front of the same upstream (a `custom_openai/` model).

- Time to first byte, warm (connections kept alive, after warm-up requests): the time
  from sending a request to the first byte of the answer's body, through the gateway and
  from the upstream read directly (the chat request the gateway sends it), back to back
  in each round; the added time is each round's difference. Messages from chat, Responses
  from chat and chat passed through, for a small request and an agent-sized one
  (bench/agents.py). Goal: median added <= 5 ms.
- Relay per chunk: a long stream (thousands of chunks) through each gateway, read whole;
  the CPU time of the gateway's process (and its children) per chunk, and the rate the
  client sees. Goal: ours >= 10x LiteLLM's per chunk (CPU), each protocol.
- Memory per open stream: the gateway's RSS with N streams held open half-way (the
  upstream pauses them) less its RSS idle, per stream.
- Load: agent-sized streamed requests, many at a time, one in ten clients leaving
  mid-stream: every finished answer equal to the expected bridged stream (the same
  module's `write_parts(iter_parts(...))` in this process), every early answer a prefix
  of it, no upstream stream left open afterwards, the gateway's RSS before and after.

Times are reported, never asserted; tests/gateway/test_load.py asserts the load's
invariants on a small run.

    python -m bench.gateway                      # the full run (make bench): gateway.md, .json
    python -m bench.gateway --quick              # a short run, ours only (CI)
    python -m bench.gateway --profile messages   # cProfile (CPU time) of the gateway
    python -m bench.gateway --profile chat --stream long --rounds 10   # ... per chunk
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import http.client
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import httpx

from bench import agents, upstream
from bench.common import PYTHON, Goal, GoalRecord, add_output_options, table, verdict, write_run
from generator.gateway.config import Upstream as UpstreamConfig
from generator.gateway.routing import Target
from generator.gateway.translate import translate
from generator.gateway.wire import chat

ROOT = Path(__file__).resolve().parent.parent
HERE = Path(__file__).resolve().parent
RESULTS, RESULTS_JSON = HERE / "gateway.md", HERE / "gateway.json"
BENCH_VENV = ROOT / ".bench-venv"
LITELLM = BENCH_VENV / "bin" / "litellm"
HOST = upstream.HOST
WAIT = 60.0
"""The longest any wait of the benchmark lasts (a server starting, a stream, a release)."""

PROTOCOLS = ("messages", "responses", "chat")
PATHS = {"messages": "/v1/messages", "responses": "/v1/responses", "chat": "/v1/chat/completions"}
WHAT = {
    "messages": "Messages from chat",
    "responses": "Responses from chat",
    "chat": "chat passed through",
}
KEY = "sk-chunkspec-bench"
"""The key clients send: LiteLLM's master key (it starts with none only when told it is
unsafe); ours passes it on to the upstream, which ignores it."""
HEADERS = {
    "messages": {"anthropic-version": "2023-06-01", "x-api-key": KEY},
    "responses": {"authorization": f"Bearer {KEY}"},
    "chat": {"authorization": f"Bearer {KEY}"},
}
TTFB_STREAM = "deepseek__reasoner-reasoning-then-tool-call"
"""The stream of the first-byte rounds: DeepSeek reasoning, then a tool call."""
HELD_STREAM = "deepseek__reasoner-thinking-cache-hit-miss"
"""The stream held open half-way to weigh open streams (211 chunks)."""
SIZES = ("small", "agent")
OURS, LITELLM_NAME = "chunkspec", "LiteLLM"

TTFB_GOAL_MS = 5.0
RELAY_GOAL = 10.0
GOALS = (
    *(
        Goal(
            f"added TTFB, {WHAT[p]}, {size} request",
            "ttfb",
            f"{p}/{size}",
            at_most=TTFB_GOAL_MS,
            unit=" ms",
        )
        for size in SIZES
        for p in PROTOCOLS
    ),
    *(
        Goal(f"relay CPU per chunk vs LiteLLM, {WHAT[p]}", "relay", p, LITELLM_NAME, RELAY_GOAL)
        for p in PROTOCOLS
    ),
)


# --- processes ------------------------------------------------------------------------


@dataclass
class Server:
    """A server process on 127.0.0.1 this benchmark started (and stops)."""

    name: str
    base: str
    process: subprocess.Popen[bytes]
    log: Path

    @property
    def pid(self) -> int:
        return self.process.pid

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)

    def tail(self, lines: int = 20) -> str:
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return "\n".join(text.splitlines()[-lines:])


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        port: int = sock.getsockname()[1]
        return port


def wait_ready(server: Server, path: str) -> None:
    """Wait until `server` answers GET `path` with a 200 (stopped, and raised, after
    `WAIT` seconds or when it exits)."""
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(f"{server.name} stopped while starting:\n{server.tail()}")
        try:
            with urllib.request.urlopen(server.base + path, timeout=2) as answer:
                if answer.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.1)
    server.stop()
    raise TimeoutError(f"{server.name} did not answer {path} within {WAIT} s:\n{server.tail()}")


def start_upstream(directory: Path, long_chunks: int, keep_alive: int = 5) -> Server:
    """bench/upstream.py in its own process."""
    command = [sys.executable, "-m", "bench.upstream", "--port", "0", "--long", str(long_chunks)]
    command += ["--keep-alive", str(keep_alive)]
    return start_printing_port("upstream", command, directory / "upstream.log")


def start_printing_port(name: str, command: list[str], log: Path) -> Server:
    """A server `command` starts, which prints `port N` once it listens (bench/upstream.py,
    tests/helpers/echo_upstream.py), waited on until it answers GET /health."""
    with log.open("wb") as err:
        process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=err)
    assert process.stdout is not None
    line = process.stdout.readline().decode()
    if not line.startswith("port "):
        process.kill()
        process.wait(5)
        raise RuntimeError(f"the {name} did not start: {line!r}")
    server = Server(name, f"http://{HOST}:{int(line.split()[1])}", process, log)
    wait_ready(server, "/health")
    return server


def gateway_config(upstream_base: str, store: str, dialect: str = "openai") -> str:
    """The gateway's TOML: one chat upstream of request `dialect`, every model id passed
    on as it is, its Responses state in `store` (a URL)."""
    return (
        "[gateway]\n"
        'host = "127.0.0.1"\n'
        "workers = 1\n"
        'log_level = "info"\n\n'
        "[upstreams.bench]\n"
        'protocol = "chat"\n'
        f'base_url = "{upstream_base}/v1"\n'
        f'dialect = "{dialect}"\n\n'
        "[models]\n"
        '"*" = "bench/*"\n\n'
        "[store]\n"
        f'url = "{store}"\n'
    )


def start_gateway(
    directory: Path,
    upstream_base: str,
    *,
    workers: int = 1,
    profile: Path | None = None,
    python: str = sys.executable,
) -> Server:
    """`python -m generator serve --config FILE --port N [--workers N]`, as a user runs
    it (its log lines in `directory`)."""
    config = directory / "gateway.toml"
    store = f"sqlite:///{directory / 'store.sqlite3'}"  # the default: a SQLite file
    config.write_text(gateway_config(upstream_base, store), encoding="utf-8")
    port = free_port()
    command = [python]
    if profile is not None:
        command += ["-c", PROFILER, str(profile)]
    command += ["-m", "generator", "serve", "--config", str(config), "--port", str(port)]
    command += ["--workers", str(workers)]
    log = directory / f"gateway-{port}.log"
    with log.open("wb") as err:
        process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=err)
    name = OURS if workers == 1 else f"{OURS}, {workers} workers"
    server = Server(name, f"http://{HOST}:{port}", process, log)
    wait_ready(server, "/health")
    return server


def litellm_version() -> str | None:
    python = BENCH_VENV / "bin" / "python"
    if not LITELLM.exists() or not python.exists():
        return None
    done = subprocess.run(
        [str(python), "-c", "import importlib.metadata as m; print(m.version('litellm'))"],
        capture_output=True,
        text=True,
    )
    return done.stdout.strip() if done.returncode == 0 else None


def litellm_config(upstream_base: str, models: Sequence[str]) -> str:
    """LiteLLM's proxy config: each model a `custom_openai/` model at the upstream."""
    lines = ["model_list:"]
    for model in models:
        lines += [
            f'  - model_name: "{model}"',
            "    litellm_params:",
            f'      model: "custom_openai/{model}"',
            f'      api_base: "{upstream_base}/v1"',
            '      api_key: "bench"',
        ]
    lines += ["litellm_settings:", "  drop_params: true", "  telemetry: false"]
    return "\n".join(lines) + "\n"


def start_litellm(directory: Path, upstream_base: str, models: Sequence[str]) -> Server:
    """LiteLLM's proxy (`litellm --config FILE`, one worker), from .bench-venv."""
    config = directory / "litellm.yaml"
    config.write_text(litellm_config(upstream_base, models), encoding="utf-8")
    port = free_port()
    environ = {
        **os.environ,
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",  # no fetch of the price list at import
        "LITELLM_TELEMETRY": "False",
        "LITELLM_LOG": "ERROR",
        "DISABLE_SCHEMA_UPDATE": "True",
        "LITELLM_MASTER_KEY": KEY,
    }
    environ.pop("DATABASE_URL", None)
    command = [str(LITELLM), "--config", str(config), "--host", HOST, "--port", str(port)]
    command += ["--num_workers", "1"]
    log = directory / "litellm.log"
    with log.open("wb") as err:
        process = subprocess.Popen(
            command, cwd=directory, env=environ, stdout=err, stderr=subprocess.STDOUT
        )
    server = Server(LITELLM_NAME, f"http://{HOST}:{port}", process, log)
    wait_ready(server, "/health/liveliness")
    return server


# --- what /proc says of a process -----------------------------------------------------


def rss_kib(pid: int) -> int:
    """The resident set of `pid` and its children, in KiB."""
    total = 0
    for each in [pid, *children(pid)]:
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/{each}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
    return total


def schedstat(pid: int) -> tuple[int, int]:
    """Nanoseconds `pid` and its children have run, and waited for a core while ready to
    run, so far: the sum over their threads of /proc/PID/task/TID/schedstat (unlike
    /proc/PID/stat's ticks of 10 ms, to the nanosecond)."""
    ran = waited = 0
    for each in [pid, *children(pid)]:
        with contextlib.suppress(OSError):
            for task in Path(f"/proc/{each}/task").iterdir():
                with contextlib.suppress(OSError, ValueError):
                    fields = (task / "schedstat").read_text().split()
                    ran += int(fields[0])
                    waited += int(fields[1])
    return ran, waited


def cpu_seconds(pid: int) -> float:
    """CPU seconds `pid` and its children have run so far."""
    return schedstat(pid)[0] / 1e9


def children(pid: int) -> list[int]:
    """Every descendant of `pid` alive now."""
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                parents.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


# --- requests -------------------------------------------------------------------------


def encoded(body: dict[str, Any]) -> bytes:
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()


def upstream_request(protocol: str, body: dict[str, Any]) -> dict[str, Any]:
    """The chat request the gateway sends its upstream for `body` (the same translation)."""
    target = Target(UpstreamConfig("bench", "chat", "http://upstream/v1"), str(body["model"]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return translate(protocol, target, body, "drop").body


def expected(protocol: str, stream: Sequence[bytes]) -> bytes:
    """What the gateway answers a `protocol` client for an upstream's chat `stream`."""
    sent = b"".join(stream)
    if protocol == "chat":
        return sent
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return b"".join(chat.write_parts(chat.iter_parts(sent), protocol=protocol))


class Connection:
    """One kept-alive HTTP/1.1 connection (http.client: the least a client adds)."""

    def __init__(self, base: str) -> None:
        host, port = base.removeprefix("http://").split(":")
        self.connection = http.client.HTTPConnection(host, int(port), timeout=WAIT)

    def post(
        self,
        path: str,
        body: bytes,
        headers: dict[str, str],
        first: Callable[[], None] | None = None,
    ) -> tuple[float, float, bytes]:
        """Seconds to the answer's first body byte, seconds to its end, and the body;
        `first` is called once the first body byte is in."""
        if self.connection.sock is None:
            self.connection.connect()
            sock: socket.socket | None = self.connection.sock
            assert sock is not None
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sent = {"content-type": "application/json", **headers}
        start = time.perf_counter()
        self.connection.request("POST", path, body, sent)
        answer = self.connection.getresponse()
        data = [answer.read1(1 << 16)]
        ttfb = time.perf_counter() - start
        if first is not None:
            first()
        while piece := answer.read1(1 << 16):
            data.append(piece)
        # read1 leaves a body of known length open once read whole (it closes a chunked
        # one): read() ends it, so that the connection takes the next request.
        data.append(answer.read())
        total = time.perf_counter() - start
        if answer.status != 200:
            raise RuntimeError(f"POST {path}: {answer.status} {b''.join(data)[:500]!r}")
        return ttfb, total, b"".join(data)

    def close(self) -> None:
        self.connection.close()


# --- time to first byte ---------------------------------------------------------------


@dataclass
class Ttfb:
    """First-byte times of one path and request size, in ms, by round."""

    direct: list[float] = field(default_factory=list[float])
    through: list[float] = field(default_factory=list[float])
    cpu: list[float] = field(default_factory=list[float])  # the server's, to the first byte
    waited: list[float] = field(default_factory=list[float])  # for a core, to the first byte

    @property
    def added(self) -> list[float]:
        return [t - d for d, t in zip(self.direct, self.through, strict=True)]


def percentile(values: Sequence[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def bodies(protocol: str, size: str, model: str) -> dict[str, Any]:
    if size == "small":
        return agents.small(protocol, model)
    return agents.AGENTS[protocol](7, model)


def first_bytes(
    gateway: Server,
    upstream_base: str,
    rounds: int,
    warm: int,
    sizes: Sequence[str] = SIZES,
    model: str = f"{TTFB_STREAM}@pause2",
) -> dict[str, Ttfb]:
    """`rounds` rounds (after `warm` unmeasured ones) of every path and size, each the
    upstream read directly then through `gateway` (or the other way round, every other
    round), on kept-alive connections."""
    direct, through = Connection(upstream_base), Connection(gateway.base)
    cases: dict[str, tuple[str, bytes, bytes]] = {}
    for size in sizes:
        for protocol in PROTOCOLS:
            request = bodies(protocol, size, model)
            sent = encoded(upstream_request(protocol, request))
            cases[f"{protocol}/{size}"] = (protocol, encoded(request), sent)
    out = {case: Ttfb() for case in cases}
    try:
        for index in range(warm + rounds):
            for case, (protocol, body, sent) in cases.items():
                if index % 2:
                    t, cpu, waited = _through(gateway, through, protocol, body)
                    d = direct.post(PATHS["chat"], sent, {})[0]
                else:
                    d = direct.post(PATHS["chat"], sent, {})[0]
                    t, cpu, waited = _through(gateway, through, protocol, body)
                if index >= warm:
                    measured = out[case]
                    measured.direct.append(d * 1000)
                    measured.through.append(t * 1000)
                    measured.cpu.append(cpu)
                    measured.waited.append(waited)
    finally:
        direct.close()
        through.close()
    return out


def _through(
    gateway: Server, connection: Connection, protocol: str, body: bytes
) -> tuple[float, float, float]:
    """Seconds to the first byte through `gateway`, and the milliseconds its process ran
    and waited for a core until then (the upstream pauses after its first event: the
    server has done its part for the first byte when the client reads /proc)."""
    before = schedstat(gateway.pid)
    at_first: list[tuple[int, int]] = []
    seconds = connection.post(
        PATHS[protocol], body, HEADERS[protocol], lambda: at_first.append(schedstat(gateway.pid))
    )[0]
    after = at_first[0]
    return seconds, (after[0] - before[0]) / 1e6, (after[1] - before[1]) / 1e6


# --- relay per chunk ------------------------------------------------------------------


@dataclass
class Relay:
    """A long stream read whole through one server, `runs` times."""

    chunks: int
    seconds: list[float] = field(default_factory=list[float])  # wall, client-observed
    cpu: list[float] = field(default_factory=list[float])  # the server's CPU seconds
    events: int = 0
    size: int = 0

    @property
    def cpu_us_per_chunk(self) -> float:
        return statistics.median(self.cpu) / self.chunks * 1e6

    @property
    def chunks_per_s(self) -> float:
        return self.chunks / statistics.median(self.seconds)


def relay(
    server: Server | None, base: str, protocol: str, settings: Settings, runs: int = 0
) -> Relay:
    """The long stream through `server` (None: the upstream read directly) for a
    `protocol` client: wall time and the server's CPU time per run, after one warm run."""
    connection = Connection(base)
    body = agents.small(protocol, upstream.LONG)
    path, headers = PATHS[protocol], HEADERS[protocol]
    if server is None:
        body, path, headers = upstream_request(protocol, body), PATHS["chat"], {}
    data = encoded(body)
    out = Relay(settings.long_chunks)
    try:
        connection.post(path, data, headers)  # warm
        for _ in range(runs or settings.relay_runs):
            before = cpu_seconds(server.pid) if server else 0.0
            _, seconds, answer = connection.post(path, data, headers)
            after = cpu_seconds(server.pid) if server else 0.0
            out.seconds.append(seconds)
            out.cpu.append(after - before)
            out.events, out.size = answer.count(b"\n\n"), len(answer)
    finally:
        connection.close()
    return out


# --- memory per open stream -----------------------------------------------------------


@dataclass
class Memory:
    streams: int
    idle_kib: int
    held_kib: int
    after_kib: int
    identical: int  # answers equal to the expected stream, once released

    @property
    def per_stream_kib(self) -> float:
        return (self.held_kib - self.idle_kib) / self.streams


async def _held(
    server: Server, upstream_base: str, protocol: str, streams: int, body: bytes, want: bytes
) -> Memory:
    limits = httpx.Limits(max_connections=streams + 4, max_keepalive_connections=streams + 4)
    timeout = httpx.Timeout(WAIT)
    url = server.base + PATHS[protocol]
    headers = {"content-type": "application/json", **HEADERS[protocol]}
    async with httpx.AsyncClient(limits=limits, timeout=timeout) as client:
        idle = rss_kib(server.pid)
        started = [asyncio.Event() for _ in range(streams)]

        async def one(index: int) -> bytes:
            got = bytearray()
            async with client.stream("POST", url, content=body, headers=headers) as answer:
                async for piece in answer.aiter_raw():
                    got += piece
                    started[index].set()
            started[index].set()
            return bytes(got)

        tasks = [asyncio.create_task(one(i)) for i in range(streams)]
        await asyncio.wait_for(asyncio.gather(*(e.wait() for e in started)), WAIT)
        await wait_until(client, upstream_base, lambda counts: counts["open"] >= streams)
        await asyncio.sleep(0.2)  # every write of the first half has reached the client
        held = rss_kib(server.pid)
        await client.post(upstream_base + "/release")
        answers = await asyncio.wait_for(asyncio.gather(*tasks), WAIT)
        await wait_until(client, upstream_base, lambda counts: counts["open"] == 0)
        return Memory(streams, idle, held, rss_kib(server.pid), sum(a == want for a in answers))


async def wait_until(
    client: httpx.AsyncClient,
    base: str,
    done: Callable[[dict[str, int]], bool],
    timeout: float = WAIT,
) -> dict[str, int]:
    """The upstream's counts (bench/upstream.py's /stats) once `done` says so, or once
    `timeout` seconds have passed."""
    deadline = time.monotonic() + timeout
    while True:
        counts: dict[str, int] = (await client.get(base + "/stats")).json()
        if done(counts) or time.monotonic() > deadline:
            return counts
        await asyncio.sleep(0.02)


def memory(start: Callable[[], Server], upstream_base: str, protocol: str, streams: int) -> Memory:
    """RSS of a server `start`ed for this alone, idle once it has answered a few requests,
    then with `streams` agent-sized `protocol` requests held open half-way by the
    upstream, then once they have ended."""
    held = encoded(agents.AGENTS[protocol](11, f"{HELD_STREAM}@hold"))
    unheld = encoded(agents.AGENTS[protocol](11, HELD_STREAM))
    pieces = upstream.sse(upstream.captured(HELD_STREAM))
    server = start()
    try:
        connection = Connection(server.base)
        for _ in range(5):
            connection.post(PATHS[protocol], unheld, HEADERS[protocol])
        connection.close()
        return asyncio.run(
            _held(server, upstream_base, protocol, streams, held, expected(protocol, pieces))
        )
    finally:
        server.stop()


# --- load -----------------------------------------------------------------------------


@dataclass
class Load:
    requests: int
    concurrency: int
    left_early: int
    finished: int
    identical: int  # finished answers equal to the expected stream
    prefixes: int  # early answers that are a beginning of the expected stream
    statuses: dict[int, int]
    rss_before_kib: int
    rss_peak_kib: int
    rss_after_kib: int
    upstream_open: int  # streams the upstream still had open afterwards
    upstream_started: int
    upstream_closed: int  # streams whose client (the gateway) went away before the end
    seconds: float
    body_kib: tuple[float, float]  # the smallest and largest request body
    mismatches: list[str] = field(default_factory=list[str])


LOAD_STREAMS = (
    "deepseek__reasoner-reasoning-then-tool-call",
    "openai__py-sdk-parallel-tool-calls",
    "openrouter__reasoning-details",
    "groq__gpt-oss-reasoning-channel-tool-call",
    "qwen-dashscope__qwen3-max-reasoning",
    "openai__py-sdk-plain-text-usage",
    "vllm__named-tool-choice-finish-stop-reasoning-field",
    "mistral__tool-call-no-index-no-type",
    "deepseek__reasoner-thinking-cache-hit-miss",
)
"""The streams the load's requests cycle through (reasoning, tool calls, text)."""


def load_plan(requests: int, pool: int = 24) -> list[tuple[str, str, bytes, bool]]:
    """Per request: its protocol, its stream, its body and whether it leaves early (one in
    ten). Bodies come from a pool of `pool` per protocol (30-50 KB each)."""
    bodies_of = {
        (p, i): encoded(agents.AGENTS[p](100 + i, "MODEL")) for p in PROTOCOLS for i in range(pool)
    }
    plan = []
    for index in range(requests):
        protocol = PROTOCOLS[index % 3]
        stream = LOAD_STREAMS[index % len(LOAD_STREAMS)]
        body = bodies_of[(protocol, index % pool)].replace(
            b'"MODEL"', json.dumps(f"{stream}@paced").encode(), 1
        )
        plan.append((protocol, stream, body, index % 10 == 9))
    return plan


async def _load(server: Server, upstream_base: str, requests: int, concurrency: int) -> Load:
    plan = load_plan(requests)
    streams = upstream.all_streams(10)
    want = {(p, s): expected(p, streams[s]) for p in PROTOCOLS for s in LOAD_STREAMS}
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    statuses: dict[int, int] = {}
    mismatches: list[str] = []
    counts = {"finished": 0, "identical": 0, "prefixes": 0, "early": 0}
    gate = asyncio.Semaphore(concurrency)
    peak = 0
    async with httpx.AsyncClient(limits=limits, timeout=httpx.Timeout(WAIT)) as client:
        before_counts = (await client.get(upstream_base + "/stats")).json()
        before = rss_kib(server.pid)

        async def one(protocol: str, stream: str, body: bytes, early: bool) -> None:
            url = server.base + PATHS[protocol]
            headers = {"content-type": "application/json", **HEADERS[protocol]}
            expect = want[(protocol, stream)]
            got = bytearray()
            async with gate, client.stream("POST", url, content=body, headers=headers) as answer:
                statuses[answer.status_code] = statuses.get(answer.status_code, 0) + 1
                async for piece in answer.aiter_raw():
                    got += piece
                    if early and len(got) >= len(expect) // 3:
                        break
            if early:
                counts["early"] += 1
                counts["prefixes"] += expect.startswith(bytes(got))
            else:
                counts["finished"] += 1
                if bytes(got) == expect:
                    counts["identical"] += 1
                elif len(mismatches) < 5:
                    said = bytes(got[:300]).decode(errors="replace")
                    mismatches.append(
                        f"{protocol} {stream}: {len(got)} bytes, {len(expect)} expected: {said}"
                    )

        async def sample() -> None:
            nonlocal peak
            while True:
                peak = max(peak, rss_kib(server.pid))
                await asyncio.sleep(0.05)

        sampler = asyncio.create_task(sample())
        start = time.perf_counter()
        await asyncio.wait_for(asyncio.gather(*(one(*request) for request in plan)), WAIT * 5)
        seconds = time.perf_counter() - start
        sampler.cancel()
        after_counts = await wait_until(client, upstream_base, lambda c: c["open"] == 0)
        await asyncio.sleep(0.5)
        after = rss_kib(server.pid)
    sizes = [len(body) / 1024 for _, _, body, _ in plan]
    return Load(
        requests=requests,
        concurrency=concurrency,
        left_early=counts["early"],
        finished=counts["finished"],
        identical=counts["identical"],
        prefixes=counts["prefixes"],
        statuses=statuses,
        rss_before_kib=before,
        rss_peak_kib=max(peak, after),
        rss_after_kib=after,
        upstream_open=after_counts["open"],
        upstream_started=after_counts["started"] - before_counts["started"],
        upstream_closed=after_counts["closed"] - before_counts["closed"],
        seconds=seconds,
        body_kib=(min(sizes), max(sizes)),
        mismatches=mismatches,
    )


def load(server: Server, upstream_base: str, requests: int, concurrency: int) -> Load:
    """`requests` agent-sized streamed requests through `server`, `concurrency` at a time."""
    return asyncio.run(_load(server, upstream_base, requests, concurrency))


# --- the run --------------------------------------------------------------------------


@dataclass(frozen=True)
class Settings:
    rounds: int
    warm: int
    workers_rounds: int  # first-byte rounds of the gateway with two workers
    pause_rounds: int  # first-byte rounds with the upstream pausing after its first chunk
    long_chunks: int
    relay_runs: int
    held: int
    requests: int
    concurrency: int
    litellm: bool
    litellm_rounds: int


FULL = Settings(200, 20, 60, 40, 4000, 5, 100, 1000, 50, True, 40)
QUICK = Settings(12, 4, 0, 6, 400, 1, 5, 60, 20, False, 0)


@dataclass
class Run:
    settings: Settings
    ttfb: dict[str, Ttfb]
    workers_ttfb: dict[str, Ttfb]
    paused_ttfb: dict[str, Ttfb]  # the upstream pausing after its first chunk
    litellm_ttfb: dict[str, Ttfb]
    relays: dict[str, dict[str, Relay]]  # server (or DIRECT) -> protocol -> relay
    memory: dict[str, dict[str, Memory]]  # server -> protocol -> memory
    load: Load
    litellm: str | None  # its version, when it ran
    litellm_missing: str  # why it did not run
    loadavg: tuple[tuple[float, float, float], tuple[float, float, float]]  # before, after
    nice: int  # the niceness the processes ran at

    def measured(self, goal: Goal) -> list[tuple[str, float]]:
        if goal.kind == "ttfb":
            return [("median", statistics.median(self.ttfb[goal.path].added))]
        if goal.kind == "relay" and LITELLM_NAME in self.relays:
            ours = self.relays[OURS][goal.path].cpu_us_per_chunk
            theirs = self.relays[LITELLM_NAME][goal.path].cpu_us_per_chunk
            return [("CPU per chunk", theirs / ours)]
        return []


DIRECT = "upstream read directly"


@contextlib.contextmanager
def processes(
    directory: Path, long_chunks: int, keep_alive: int = 5
) -> Iterator[tuple[Server, Server]]:
    """The upstream and our gateway in front of it, stopped on exit."""
    up = start_upstream(directory, long_chunks, keep_alive)
    try:
        ours = start_gateway(directory, up.base)
        try:
            yield up, ours
        finally:
            ours.stop()
    finally:
        up.stop()


def run(settings: Settings, progress: IO[str]) -> Run:
    def say(text: str) -> None:
        print(text, file=progress, flush=True)

    loadavg = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="chunkspec-bench-gateway-") as tmp:
        directory = Path(tmp)
        with processes(directory, settings.long_chunks) as (up, ours):
            say("first bytes ...")
            ttfb = first_bytes(ours, up.base, settings.rounds, settings.warm)
            paused = f"{TTFB_STREAM}@pause1"
            paused_ttfb = first_bytes(
                ours, up.base, settings.pause_rounds, 4, sizes=("small",), model=paused
            )
            workers_ttfb: dict[str, Ttfb] = {}
            if settings.workers_rounds:
                say("first bytes, two workers ...")
                two = start_gateway(directory, up.base, workers=2)
                try:
                    workers_ttfb = first_bytes(
                        two, up.base, settings.workers_rounds, 5, sizes=("small",)
                    )
                finally:
                    two.stop()
            say("relay ...")
            relays: dict[str, dict[str, Relay]] = {
                DIRECT: {"chat": relay(None, up.base, "chat", settings)},
                OURS: {p: relay(ours, ours.base, p, settings) for p in PROTOCOLS},
            }
            say("memory ...")
            held = {
                OURS: {
                    p: memory(lambda: start_gateway(directory, up.base), up.base, p, settings.held)
                    for p in PROTOCOLS
                }
            }
            litellm_ttfb: dict[str, Ttfb] = {}
            version, missing = None, ""
            if not settings.litellm:
                missing = "not run (--quick)"
            elif (version := litellm_version()) is None:
                missing = f"not installed in {BENCH_VENV.name}/ (`make bench` installs it)"
            else:
                say(f"LiteLLM {version} ...")
                models = [upstream.LONG, HELD_STREAM, f"{HELD_STREAM}@hold"]
                models += [f"{TTFB_STREAM}@pause1", f"{TTFB_STREAM}@pause2"]
                theirs = start_litellm(directory, up.base, models)
                try:
                    relays[LITELLM_NAME] = {
                        p: relay(theirs, theirs.base, p, settings, runs=2) for p in PROTOCOLS
                    }
                    litellm_ttfb = first_bytes(theirs, up.base, settings.litellm_rounds, 3)
                finally:
                    theirs.stop()
                held[LITELLM_NAME] = {
                    p: memory(
                        lambda: start_litellm(directory, up.base, models), up.base, p, settings.held
                    )
                    for p in PROTOCOLS
                }
            say("load ...")
            loaded = load(ours, up.base, settings.requests, settings.concurrency)
    return Run(
        settings,
        ttfb,
        workers_ttfb,
        paused_ttfb,
        litellm_ttfb,
        relays,
        held,
        loaded,
        version,
        missing,
        (loadavg, os.getloadavg()),
        os.nice(0),
    )


# --- the report -----------------------------------------------------------------------


def _ms(value: float) -> str:
    return f"{value:.2f}"


TTFB_HEADER = [
    "path",
    "request",
    "direct median ms",
    "through median ms",
    "added median ms",
    "added p90 ms",
    "through p90 ms",
    "server CPU to 1st byte ms",
    "server waited for a core to 1st byte ms",
]


def ttfb_rows(measured: dict[str, Ttfb]) -> list[list[str]]:
    rows = []
    for case, t in measured.items():
        protocol, size = case.split("/")
        added = t.added
        rows.append(
            [
                WHAT[protocol],
                size,
                _ms(statistics.median(t.direct)),
                _ms(statistics.median(t.through)),
                _ms(statistics.median(added)),
                _ms(percentile(added, 0.9)),
                _ms(percentile(t.through, 0.9)),
                _ms(statistics.median(t.cpu)),
                _ms(statistics.median(t.waited)),
            ]
        )
    return rows


def _loadavg(values: tuple[float, float, float]) -> str:
    return " ".join(f"{v:.2f}" for v in values)


def report(result: Run) -> str:
    s = result.settings
    load_ = result.load
    versions = f"Python {PYTHON}; httpx {httpx.__version__}"
    if result.litellm:
        versions += f"; LiteLLM {result.litellm} (its proxy, `custom_openai/` models)"
    relay_rows = []
    for server, by_protocol in result.relays.items():
        for protocol, r in by_protocol.items():
            ours = result.relays[OURS][protocol].cpu_us_per_chunk
            relay_rows.append(
                [
                    server,
                    "chat" if server == DIRECT else WHAT[protocol],
                    f"{r.chunks_per_s:,.0f}",
                    "-" if server == DIRECT else f"{r.cpu_us_per_chunk:.1f}",
                    "-" if server == DIRECT else f"{r.cpu_us_per_chunk / ours:.2f}",
                    f"{r.events:,}",
                    f"{r.size / 1024:,.0f}",
                ]
            )
    memory_rows = [
        [
            server,
            WHAT[protocol],
            f"{m.idle_kib / 1024:.1f}",
            f"{m.held_kib / 1024:.1f}",
            f"{m.per_stream_kib:.1f}",
            f"{m.after_kib / 1024:.1f}",
            f"{m.identical}/{m.streams}",
        ]
        for server, held in result.memory.items()
        for protocol, m in held.items()
    ]
    goal_rows = [
        [goal.name, goal.target(), f"{value:.2f}", verdict(goal.holds(value))]
        for goal in GOALS
        for _, value in result.measured(goal)
    ]
    missing = [] if result.litellm else [f"LiteLLM: {result.litellm_missing}.", ""]
    before, after = result.loadavg
    lines = [
        "# Gateway benchmark results",
        "",
        f"Written by `make bench` (`python -m bench.gateway`). {versions}.",
        "Over loopback on one machine: the upstream (bench/upstream.py, uvicorn), the gateway",
        "(`python -m generator serve --config FILE`, one worker unless said) and the client,",
        "each in its own process. Times are wall times seen by the client; CPU times are the",
        "server process's (and its children's), from /proc/PID/task/*/schedstat. Load average",
        f"of the machine before the run {_loadavg(before)}, after {_loadavg(after)} (on "
        f"{os.cpu_count()} cores: above",
        f"{os.cpu_count()}, wall times count waits for a core; the CPU times do not).",
        f"The processes ran at niceness {result.nice}"
        + (
            " (`--nice`: ahead of the machine's other work)."
            if result.nice < 0
            else " (`--nice -15` runs them ahead of the machine's other work)."
        ),
        "",
        *missing,
        f"## Time to first byte, warm ({s.rounds} rounds after {s.warm} unmeasured)",
        "",
        "Each round sends the upstream the chat request the gateway would send it, then the",
        "client's request to the gateway (every other round the other way round), each on its",
        "own kept-alive connection, and takes the time to the answer's first body byte; the",
        f"added time is the round's difference. Stream: `{TTFB_STREAM}`",
        "(52 chunks; the upstream waits 20 ms after the second, in both reads). Requests: `small`",
        "is one user message; `agent` an agent-sized one (bench/agents.py: Claude Code's for",
        "Messages, Codex's for Responses, an OpenAI-style agent's for chat; 30-50 KB). The",
        "server's CPU time and its wait for a core are from the request to its first byte:",
        "what the server spent on it, and what the machine's other work cost it.",
        "",
        *table(TTFB_HEADER, ttfb_rows(result.ttfb)),
        "",
    ]
    lines += [
        "When the upstream pauses 20 ms after its first chunk (the role, an empty reasoning",
        "delta: what a server sends before the model's first token), "
        f"{s.pause_rounds} rounds. A row whose",
        "added time holds the pause is a client's first byte that waited for the upstream's",
        "second chunk:",
        "",
        *table(TTFB_HEADER, ttfb_rows(result.paused_ttfb)),
        "",
    ]
    if result.workers_ttfb:
        lines += [
            f"The gateway with `--workers 2`, {s.workers_rounds} rounds:",
            "",
            *table(TTFB_HEADER, ttfb_rows(result.workers_ttfb)),
            "",
        ]
    if result.litellm_ttfb:
        lines += [
            f"LiteLLM's proxy, the same rounds ({s.litellm_rounds} of them), for the record:",
            "",
            *table(TTFB_HEADER, ttfb_rows(result.litellm_ttfb)),
            "",
        ]
    lines += [
        f"## Relay per chunk ({s.long_chunks:,} chunks, median of runs)",
        "",
        "The upstream's long stream (DeepSeek reasoning then text, a word a chunk) read whole",
        "through each server, after one unmeasured run: chunks/s as the client sees them (the",
        "rate is bounded by the slowest of three processes on two cores), CPU µs per upstream",
        "chunk in the server's process, and that as a ratio to ours for the same protocol.",
        f"{s.relay_runs} runs through ours, 2 through LiteLLM's.",
        "",
        *table(
            ["server", "path", "chunks/s", "CPU µs/chunk", "vs chunkspec", "events", "KiB out"],
            relay_rows,
        ),
        "",
        f"## Memory per open stream ({s.held} streams held half-way)",
        "",
        "Each row a server process of its own, idle after five requests like those measured;",
        "then agent-sized requests whose streams the upstream holds after half their events",
        f"(`{HELD_STREAM}`) until released. RSS idle, with every stream open,",
        "per stream, and once they have all ended; the answers, once released, compared",
        "with the expected stream (LiteLLM's answers are its own: 0 is no fault of theirs).",
        "",
        *table(
            ["server", "path", "idle MiB", "held MiB", "KiB/stream", "after MiB", "identical"],
            memory_rows,
        ),
        "",
        f"## Load ({load_.requests:,} agent-sized streamed requests, {load_.concurrency} at a "
        "time)",
        "",
        f"Bodies of {load_.body_kib[0]:.0f}-{load_.body_kib[1]:.0f} KiB, the three protocols "
        f"in turn, over {len(LOAD_STREAMS)} captured streams",
        f"paced at {upstream.PACE * 1000:.0f} ms a chunk; every tenth client leaves after a "
        "third of its answer.",
        "",
        *table(["measure", "value"], load_rows(load_)),
        "",
        *(f"- not as expected: {m}" for m in load_.mismatches),
        *([""] if load_.mismatches else []),
        "## Goals",
        "",
        *table(["goal", "target", "measured", "holds"], goal_rows),
    ]
    return "\n".join(lines) + "\n"


def load_rows(load_: Load) -> list[list[str]]:
    statuses = ", ".join(f"{k}: {v}" for k, v in sorted(load_.statuses.items()))
    return [
        ["wall time", f"{load_.seconds:.1f} s"],
        ["statuses", statuses],
        ["finished, identical to the expected stream", f"{load_.identical}/{load_.finished}"],
        ["left early, a beginning of the expected stream", f"{load_.prefixes}/{load_.left_early}"],
        ["upstream streams started", f"{load_.upstream_started}"],
        ["upstream streams cut by the gateway (its client gone)", f"{load_.upstream_closed}"],
        ["upstream streams open afterwards", f"{load_.upstream_open}"],
        ["gateway RSS before", f"{load_.rss_before_kib / 1024:.1f} MiB"],
        ["gateway RSS peak (sampled every 50 ms)", f"{load_.rss_peak_kib / 1024:.1f} MiB"],
        ["gateway RSS after", f"{load_.rss_after_kib / 1024:.1f} MiB"],
    ]


def _ttfb_json(measured: dict[str, Ttfb]) -> dict[str, Any]:
    return {
        case: {
            "direct_median_ms": round(statistics.median(t.direct), 3),
            "through_median_ms": round(statistics.median(t.through), 3),
            "added_median_ms": round(statistics.median(t.added), 3),
            "added_p90_ms": round(percentile(t.added, 0.9), 3),
            "through_p90_ms": round(percentile(t.through, 0.9), 3),
            "cpu_ms_to_first_byte": round(statistics.median(t.cpu), 3),
            "waited_ms_to_first_byte": round(statistics.median(t.waited), 3),
            "rounds": len(t.added),
        }
        for case, t in measured.items()
    }


def results(result: Run) -> dict[str, Any]:
    goals: list[GoalRecord] = [g.record(result.measured(g)) for g in GOALS if result.measured(g)]
    load_ = result.load
    return {
        "benchmark": "gateway",
        "python": PYTHON,
        "litellm": result.litellm,
        "settings": vars(result.settings),
        "loadavg": {"before": list(result.loadavg[0]), "after": list(result.loadavg[1])},
        "nice": result.nice,
        "ttfb": _ttfb_json(result.ttfb),
        "workers_ttfb": _ttfb_json(result.workers_ttfb),
        "paused_ttfb": _ttfb_json(result.paused_ttfb),
        "litellm_ttfb": _ttfb_json(result.litellm_ttfb),
        "relay": {
            server: {
                p: {
                    "chunks": r.chunks,
                    "chunks_per_s": round(r.chunks_per_s, 1),
                    "cpu_us_per_chunk": round(r.cpu_us_per_chunk, 2),
                    "events": r.events,
                    "bytes": r.size,
                }
                for p, r in by_protocol.items()
            }
            for server, by_protocol in result.relays.items()
        },
        "memory": {
            server: {
                p: {
                    "streams": m.streams,
                    "idle_kib": m.idle_kib,
                    "held_kib": m.held_kib,
                    "after_kib": m.after_kib,
                    "per_stream_kib": round(m.per_stream_kib, 1),
                    "identical": m.identical,
                }
                for p, m in held.items()
            }
            for server, held in result.memory.items()
        },
        "load": {
            "requests": load_.requests,
            "concurrency": load_.concurrency,
            "finished": load_.finished,
            "identical": load_.identical,
            "left_early": load_.left_early,
            "prefixes": load_.prefixes,
            "statuses": {str(k): v for k, v in sorted(load_.statuses.items())},
            "upstream_open": load_.upstream_open,
            "upstream_started": load_.upstream_started,
            "upstream_closed": load_.upstream_closed,
            "rss_before_kib": load_.rss_before_kib,
            "rss_peak_kib": load_.rss_peak_kib,
            "rss_after_kib": load_.rss_after_kib,
            "seconds": round(load_.seconds, 2),
        },
        "goals": goals,
    }


PROFILER = """
import cProfile, runpy, sys, time
out, sys.argv = sys.argv[1], ["generator", *sys.argv[4:]]  # after "-m generator"
profiler = cProfile.Profile(time.process_time)
try:
    profiler.enable()
    runpy.run_module("generator", run_name="__main__")
except SystemExit:
    pass
finally:
    profiler.disable()
    profiler.dump_stats(out)
"""
"""The gateway under cProfile counting CPU time (`time.process_time`): waits for the
network and for a core, which a wall-clock profile blames on `send` and `poll`, are
left out."""


def profile(protocol: str, rounds: int, top: int, stream: str, size: str) -> None:
    """cProfile (CPU time) of the gateway process over `rounds` requests of `protocol` for
    `stream`, each `size`d (its startup is profiled too: the import machinery's rows are
    left out of the print); the `top` functions by their own time and by cumulative
    time."""
    import pstats

    with tempfile.TemporaryDirectory(prefix="chunkspec-bench-gateway-") as tmp:
        directory = Path(tmp)
        up = start_upstream(directory, 4000)
        out = directory / "gateway.prof"
        try:
            ours = start_gateway(directory, up.base, profile=out)
            try:
                connection = Connection(ours.base)
                body = encoded(bodies(protocol, size, stream))
                for _ in range(rounds):
                    connection.post(PATHS[protocol], body, HEADERS[protocol])
                connection.close()
            finally:
                ours.stop()
        finally:
            up.stop()
        stats = pstats.Stats(str(out))
        print(f"{rounds} requests of {protocol} ({size}) for the stream {stream}")
        stats.sort_stats("tottime").print_stats(r"^(?!.*(importlib|<frozen))", top)
        stats.sort_stats("cumulative").print_stats(r"^(?!.*(importlib|<frozen))", top)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    add_output_options(parser, RESULTS_JSON)
    parser.add_argument("--profile", choices=PROTOCOLS, help="profile the gateway for a client")
    parser.add_argument("--top", type=int, default=30, help="rows of the profile")
    parser.add_argument(
        "--stream", default=TTFB_STREAM, help=f"of --profile: a capture's name, or {upstream.LONG}"
    )
    parser.add_argument("--size", choices=SIZES, default="small", help="of --profile's requests")
    parser.add_argument("--rounds", type=int, default=300, help="of --profile: requests")
    parser.add_argument(
        "--nice",
        type=int,
        default=0,
        help="run the client, the upstream and the servers at this niceness (-15: ahead of "
        "whatever else the machine runs; needs root)",
    )
    args = parser.parse_args(argv)
    if args.nice:
        os.nice(args.nice)
    if args.profile:
        profile(args.profile, args.rounds, args.top, args.stream, args.size)
        return 0
    result = run(QUICK if args.quick else FULL, sys.stderr)
    text = report(result)
    print(text)
    write_run(args, (RESULTS, text), (RESULTS_JSON, results(result)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
