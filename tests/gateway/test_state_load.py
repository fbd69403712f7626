"""The gateway's Responses state under load and faults, with real processes: `python -m
generator serve` in front of the echo chat upstream (tests/helpers/echo_upstream.py, which
answers with the history it was sent), its store a SQLite file or a real PostgreSQL
(tests/helpers/postgres.py).

- Load: 1,000 conversations of 5 turns, 50 at a time, ~10 API keys, streamed and
  unstreamed turns mixed, each turn naming the last one's `previous_response_id`: every
  turn sees exactly its own conversation's history (user texts, answers and the replayed
  `reasoning_content`, which proves every earlier turn kept whole), and afterwards each
  conversation's last response is retrievable with its key and missing with another. Once on SQLite with 4 workers of one gateway (all four serve),
  once on PostgreSQL with two gateway processes, each turn on the other one than the turn
  before.
- Faults: the store taken away while conversations run (PostgreSQL stopped; SQLite's write
  lock held by another connection longer than the store's busy timeout): every answer is
  complete or OpenAI's 503 `store_unavailable` (a streamed one ends with an `error` event
  and no `response.completed`), nothing the client did not get whole is kept, everything
  it got whole is, and once the store is back the conversations continue from their last
  completed turn within a bounded time.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import select
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import httpx
import psycopg
import pytest

from bench.gateway import gateway_config
from generator.gateway.store.sqlite import BUSY_SECONDS
from tests.helpers.gateways import free_port, wait_healthy
from tests.helpers.postgres import PostgresServer

Json = dict[str, Any]

ROOT = Path(__file__).resolve().parents[2]
HOST = "127.0.0.1"
MODEL = "echo-reasoner"

CONVERSATIONS, TURNS, AT_ONCE, KEYS = 1000, 5, 50, 10
"""The load: conversations of `TURNS` turns, `AT_ONCE` of them at a time, spread over
`KEYS` API keys."""
TOTAL = CONVERSATIONS * TURNS
CROSSED = 10
"""Conversations that a client of another key tries to continue, after the load."""
FAULT_CONVERSATIONS = {"postgresql": 12, "sqlite": 24}
"""The conversations running while the store is taken away (the first few are the fault
tests' probes). While PostgreSQL is away each store call holds one of a gateway worker's
threads (asyncio.to_thread: 6 threads on 2 cores) for 5 s (the pool's connect timeout)
before it fails: the more calls, the longer the outage lasts (and psycopg's pool, whose
reconnection attempts back off exponentially, may take as long again to reconnect)."""
FAULT_MORE_TURNS = 2
"""How many turns a conversation may complete while the store goes away (every turn's
answer holds the earlier answers, escaped: its size doubles each turn, so conversations
stay short)."""

REQUEST_SECONDS = 30.0
"""The longest one request may take (a store call waits at most 5 s for the database)."""
LOAD_SECONDS = 600.0
"""The longest a whole load (or a fault scenario's phase) may take."""
START_SECONDS = 30.0
"""The longest a process may take to start serving."""
STOP_SECONDS = 10.0
"""How long a process is given to end after SIGTERM, before SIGKILL."""
RECOVERY_SECONDS = 30.0
"""The longest the conversations may take to continue once the store is back."""
RETRY_PAUSE = 0.25
"""The pause of a conversation after a turn that failed, before it tries again."""
PACE = 0.1
"""The pause of a conversation between turns while the store is taken away."""
LOCK_HELD = BUSY_SECONDS + 3.0
"""How long the SQLite fault holds the write lock: longer than a write waits for it."""

UNAVAILABLE_PREFIX = "the gateway's response store is unavailable: "

COMPLETED, UNAVAILABLE, CUT, UNEXPECTED = "completed", "unavailable", "cut", "unexpected"
"""What a client got: the whole answer; a 503 `store_unavailable` in OpenAI's shape; a
stream that ended with an `error` event (`store_unavailable`) instead of its terminal
event; anything else (a failure of the test)."""


# --- processes ---------------------------------------------------------------------------


def spawn(command: list[str], log: Path, stdout: int | None) -> subprocess.Popen[bytes]:
    """`command` in a session (and process group) of its own, its stderr in `log`."""
    with log.open("wb") as err:
        return subprocess.Popen(
            command, cwd=ROOT, stdout=stdout, stderr=err, start_new_session=True
        )


def end(process: subprocess.Popen[bytes]) -> None:
    """End `process` and every process of its group (a gateway's workers): SIGTERM, then
    SIGKILL for what is left after `STOP_SECONDS`."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(STOP_SECONDS)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(STOP_SECONDS)
    if process.stdout is not None:
        process.stdout.close()


def tail(log: Path, lines: int = 40) -> str:
    text = log.read_text(errors="replace") if log.exists() else ""
    return "\n".join(text.splitlines()[-lines:])


def start_echo(stack: contextlib.ExitStack, folder: Path) -> str:
    """The echo chat upstream in its own process; its base URL (before /v1)."""
    log = folder / "echo.log"
    process = spawn(
        [sys.executable, "-m", "tests.helpers.echo_upstream", "--port", "0"],
        log,
        subprocess.PIPE,
    )
    stack.callback(end, process)
    assert process.stdout is not None
    ready, _, _ = select.select([process.stdout], [], [], START_SECONDS)
    line = process.stdout.readline().decode() if ready else ""
    if not line.startswith("port "):
        raise AssertionError(f"the echo upstream did not say its port: {line!r}\n{tail(log)}")
    base = f"http://{HOST}:{int(line.split()[1])}"
    wait_healthy(base, process, lambda: tail(log), START_SECONDS)
    return base


@dataclass
class Gateway:
    """A `python -m generator serve` process this test started."""

    base: str
    process: subprocess.Popen[bytes]
    log: Path
    workers: list[int] = field(default_factory=list[int])
    """The pids of its worker processes (uvicorn's "Started server process [PID]")."""

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def lines(self) -> list[Json]:
        """Its request lines (JSON, one per request)."""
        return [
            cast(Json, json.loads(line))
            for line in self.text().splitlines()
            if line.startswith("{")
        ]


STARTED = re.compile(r"Started server process \[(\d+)\]")


def start_gateway(
    stack: contextlib.ExitStack, folder: Path, name: str, upstream: str, store: str, workers: int
) -> Gateway:
    """`python -m generator serve --config FILE --port N`, as a user runs it, waited on
    until it answers and every worker has started."""
    config = folder / f"{name}.toml"
    config.write_text(gateway_config(upstream, store, "deepseek"), encoding="utf-8")
    port = free_port()
    log = folder / f"{name}.log"
    command = [sys.executable, "-m", "generator", "serve", "--config", str(config)]
    command += ["--port", str(port), "--workers", str(workers)]
    process = spawn(command, log, subprocess.DEVNULL)
    stack.callback(end, process)
    gateway = Gateway(f"http://{HOST}:{port}", process, log)
    wait_healthy(gateway.base, process, lambda: tail(log), START_SECONDS)
    deadline = time.monotonic() + START_SECONDS
    while True:
        text = gateway.text()
        pids = sorted({int(pid) for pid in STARTED.findall(text)})
        if len(pids) == workers and text.count("Application startup complete.") == workers:
            break
        if time.monotonic() > deadline:
            raise AssertionError(f"{name}: {workers} workers did not start:\n{tail(log)}")
        time.sleep(0.05)
    gateway.workers = pids
    return gateway


def parent_of(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def written(pid: int) -> int:
    """The bytes process `pid` has written so far, by any system call (its sockets, its
    files, its log): /proc/PID/io's `wchar`."""
    for line in Path(f"/proc/{pid}/io").read_text().splitlines():
        if line.startswith("wchar:"):
            return int(line.split()[1])
    raise AssertionError(f"/proc/{pid}/io has no wchar")


@pytest.fixture
def folder(tmp_path: Path) -> Iterator[Path]:
    """tmp_path, removed afterwards (the store, the configurations, the logs)."""
    yield tmp_path
    shutil.rmtree(tmp_path, ignore_errors=True)


# --- one turn ----------------------------------------------------------------------------


def key_of(number: int) -> str:
    return f"sk-state-load-{number % KEYS}"


@dataclass
class Conversation:
    """A conversation as its client knows it: the turns that completed, in order."""

    number: int
    key: str
    texts: list[str] = field(default_factory=list[str])
    answers: list[str] = field(default_factory=list[str])
    ids: list[str] = field(default_factory=list[str])
    attempts: int = 0

    def expected(self, text: str) -> Json:
        """What the echo upstream must have been sent for the next turn, `text`: the
        completed turns (nothing else) and `text`."""
        return {
            "users": [*self.texts, text],
            "assistants": list(self.answers),
            "reasoning": [f"thought {n}" for n in range(len(self.ids))],
            "tools": [],
            "system": [],
        }


@dataclass
class Outcome:
    """What the client got for one request."""

    kind: str
    streamed: bool
    status: int
    response: Json | None = None
    """The response object, when complete."""
    response_id: str | None = None
    """The response's id as the client heard it (a complete response's, or the
    `response.created` of a stream that was cut)."""
    message: str = ""
    """The store's error message, for UNAVAILABLE and CUT."""
    detail: str = ""
    started: float = 0.0
    """When it was sent (time.monotonic())."""
    seconds: float = 0.0
    """How long the answer took, to its last byte."""


def events_of(raw: bytes) -> list[tuple[str, str]]:
    """A server-sent event stream as (event name, data) pairs, the data not yet read as
    JSON (only the first and last events are: the stream is read for its ends)."""
    found: list[tuple[str, str]] = []
    for block in raw.decode().split("\n\n"):
        if not block.strip():
            continue
        name, data = "", []
        for line in block.split("\n"):
            if line.startswith("event:"):
                name = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].lstrip(" "))
        found.append((name, "\n".join(data)))
    return found


def store_error(raw: bytes) -> str | None:
    """The message of a 503 body that is exactly OpenAI's `store_unavailable` error,
    else None."""
    try:
        body = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(body, dict) or set(body) != {"error"} or not isinstance(body["error"], dict):
        return None
    error = cast(Json, body["error"])
    message = error.get("message")
    if (
        isinstance(message, str)
        and message.startswith(UNAVAILABLE_PREFIX)
        and error
        == {"message": message, "type": "server_error", "code": "store_unavailable"}
        | {"param": None}
    ):
        return message
    return None


def classify(streamed: bool, status: int, kind: str, raw: bytes) -> Outcome:
    """What the client got, from the status, the content type and the body."""
    said = f"{status} {kind}: {raw[:600]!r}"
    try:
        if status == 503 and kind.startswith("application/json"):
            message = store_error(raw)
            if message is not None:
                return Outcome(UNAVAILABLE, streamed, status, message=message)
        if status == 200 and streamed and kind.startswith("text/event-stream"):
            return streamed_outcome(events_of(raw), said)
        if status == 200 and not streamed and kind.startswith("application/json"):
            response = cast(Json, json.loads(raw))
            if response.get("object") == "response" and response.get("status") == COMPLETED:
                return Outcome(COMPLETED, streamed, status, response, str(response.get("id")))
    except (ValueError, KeyError, AttributeError) as unread:
        return Outcome(UNEXPECTED, streamed, status, detail=f"{unread!r}: {said}")
    return Outcome(UNEXPECTED, streamed, status, detail=said)


def streamed_outcome(events: list[tuple[str, str]], said: str) -> Outcome:
    """A stream that began with `response.created` and ended with its one
    `response.completed` (no `error` before it) is complete; one that ended with an
    `error` event of `store_unavailable` (and no `response.completed`) was cut."""
    names = [name for name, _ in events]
    if not names or names[0] != "response.created":
        return Outcome(UNEXPECTED, True, 200, detail=said)
    created = cast(Json, json.loads(events[0][1]))["response"]["id"]
    last = cast(Json, json.loads(events[-1][1]))
    if names[-1] == "response.completed" and names.count("response.completed") == 1:
        response = cast(Json, last["response"])
        if (
            "error" not in names
            and response.get("status") == COMPLETED
            and response.get("id") == created
        ):
            return Outcome(COMPLETED, True, 200, response, created)
    if names[-1] == "error" and "response.completed" not in names:
        message = last.get("message")
        if (
            last.get("type") == "error"
            and last.get("code") == "store_unavailable"
            and isinstance(message, str)
            and message.startswith(UNAVAILABLE_PREFIX)
        ):
            return Outcome(CUT, True, 200, response_id=created, message=message)
    return Outcome(UNEXPECTED, True, 200, detail=said)


async def send_turn(
    client: httpx.AsyncClient,
    base: str,
    key: str,
    text: str,
    previous: str | None,
    streamed: bool,
) -> Outcome:
    """One turn: `text` as the input, continuing `previous`."""
    body: Json = {"model": MODEL, "input": text, "stream": streamed}
    if previous is not None:
        body["previous_response_id"] = previous
    headers = {"authorization": f"Bearer {key}"}
    url = f"{base}/v1/responses"
    started = time.monotonic()
    try:
        async with client.stream("POST", url, json=body, headers=headers) as answer:
            raw = await answer.aread()
    except httpx.HTTPError as error:
        outcome = Outcome(UNEXPECTED, streamed, 0, detail=f"{text}: {error!r}")
    else:
        kind = answer.headers.get("content-type", "")
        outcome = classify(streamed, answer.status_code, kind, raw)
    outcome.started, outcome.seconds = started, time.monotonic() - started
    return outcome


def said(response: Json) -> tuple[str, str]:
    """A response's reasoning summary and its output text."""
    output = cast(list[Json], response.get("output") or [])
    reasoning = "".join(
        str(part.get("text"))
        for item in output
        if item.get("type") == "reasoning"
        for part in cast(list[Json], item.get("summary") or [])
    )
    text = "".join(
        str(part.get("text"))
        for item in output
        if item.get("type") == "message"
        for part in cast(list[Json], item.get("content") or [])
        if part.get("type") == "output_text"
    )
    return reasoning, text


def took(conversation: Conversation, text: str, outcome: Outcome) -> str | None:
    """Record a completed turn in its conversation; what was wrong with it, if anything:
    it must have seen the conversation's completed turns exactly, and nothing else."""
    assert outcome.response is not None and outcome.response_id is not None
    reasoning, answer = said(outcome.response)
    expected = conversation.expected(text)
    try:
        seen: object = json.loads(answer)
    except ValueError:
        seen = answer
    if seen != expected or reasoning != f"thought {len(conversation.ids)}":
        return (
            f"conversation {conversation.number}, {text!r} ({outcome.response_id}): the "
            f"upstream saw {seen!r} and reasoned {reasoning!r}; expected {expected!r}"
        )
    if outcome.response_id in conversation.ids:
        return f"conversation {conversation.number}: {outcome.response_id} answered twice"
    conversation.texts.append(text)
    conversation.answers.append(answer)
    conversation.ids.append(outcome.response_id)
    return None


def client_for_load() -> httpx.AsyncClient:
    """The client of the loads: a connection per request, not kept alive. The workers of
    one gateway share its listening socket and each new connection goes to whichever
    accepts it first; 50 kept-alive connections, opened at once, are accepted by one or
    two of them (asyncio accepts up to 100 in one go), which then serve nearly all the
    load. A new connection per request spreads it (and spares httpx's pool, which walks
    all its idle connections for every request, half the client's CPU time)."""
    return httpx.AsyncClient(
        timeout=httpx.Timeout(REQUEST_SECONDS),
        limits=httpx.Limits(max_connections=AT_ONCE, max_keepalive_connections=0),
    )


# --- the load ------------------------------------------------------------------------------


@dataclass
class Load:
    conversations: list[Conversation]
    problems: list[str]
    turn_seconds: float
    check_seconds: float


def not_found(response_id: str) -> Json:
    return {
        "error": {
            "message": f"Response with id '{response_id}' not found.",
            "type": "invalid_request_error",
            "param": None,
            "code": None,
        }
    }


async def retrieved(
    client: httpx.AsyncClient, base: str, conversation: Conversation, turn: int
) -> str | None:
    """What is wrong with turn `turn` of `conversation` as GET returns it: with its own
    key, the response its client got; with another key, OpenAI's 404."""
    response_id = conversation.ids[turn]
    url = f"{base}/v1/responses/{response_id}"
    own = await client.get(url, headers={"authorization": f"Bearer {conversation.key}"})
    other_key = key_of(conversation.number + 1)
    other = await client.get(url, headers={"authorization": f"Bearer {other_key}"})
    if own.status_code != 200:
        return f"GET {response_id} with its key: {own.status_code} {own.text[:300]}"
    body = cast(Json, own.json())
    previous = conversation.ids[turn - 1] if turn else None
    if (
        body.get("id") != response_id
        or body.get("previous_response_id") != previous
        or body.get("status") != COMPLETED
        or said(body) != (f"thought {turn}", conversation.answers[turn])
    ):
        return f"GET {response_id} with its key gave another response: {own.text[:600]}"
    if other.status_code != 404 or other.json() != not_found(response_id):
        return f"GET {response_id} with another key: {other.status_code} {other.text[:300]}"
    return None


def previous_not_found(response_id: str) -> Json:
    return {
        "error": {
            "message": f"Previous response with id '{response_id}' not found.",
            "type": "invalid_request_error",
            "param": "previous_response_id",
            "code": "previous_response_not_found",
        }
    }


async def crossed(client: httpx.AsyncClient, base: str, conversation: Conversation) -> str | None:
    """What is wrong with the answer to a client of another key that names the
    conversation's last response as its `previous_response_id` (OpenAI's 404)."""
    response_id = conversation.ids[-1]
    body = {"model": MODEL, "input": "not yours", "previous_response_id": response_id}
    other_key = key_of(conversation.number + 1)
    answer = await client.post(
        f"{base}/v1/responses", json=body, headers={"authorization": f"Bearer {other_key}"}
    )
    if answer.status_code != 404 or answer.json() != previous_not_found(response_id):
        return f"{response_id} continued with another key: {answer.status_code} {answer.text}"
    return None


async def load(bases: list[str]) -> Load:
    """`CONVERSATIONS` conversations of `TURNS` turns, `AT_ONCE` at a time, turn t sent to
    `bases[t % len(bases)]`, streamed on every other turn; then each conversation's last
    response asked back (from the gateway that did not answer it, when there are two: the
    earlier ones were read back whole by the turns after them), and `CROSSED`
    conversations continued with another key (conversation c on `bases[c % len(bases)]`)."""
    conversations = [Conversation(c, key_of(c)) for c in range(CONVERSATIONS)]
    problems: list[str] = []
    at_once = asyncio.Semaphore(AT_ONCE)

    async def converse(conversation: Conversation) -> None:
        async with at_once:
            for turn in range(TURNS):
                text = f"conv {conversation.number} turn {turn}"
                previous = conversation.ids[-1] if conversation.ids else None
                streamed = (conversation.number + turn) % 2 == 0
                base = bases[turn % len(bases)]
                outcome = await send_turn(client, base, conversation.key, text, previous, streamed)
                if outcome.kind != COMPLETED:
                    problems.append(f"{text} ({'' if streamed else 'un'}streamed): {outcome}")
                    return
                problem = took(conversation, text, outcome)
                if problem is not None:
                    problems.append(problem)
                    return

    async def check(conversation: Conversation, turn: int) -> None:
        async with at_once:
            base = bases[(turn + 1) % len(bases)]
            try:
                problem = await retrieved(client, base, conversation, turn)
            except httpx.HTTPError as error:
                problem = f"GET {conversation.ids[turn]}: {error!r}"
            if problem is not None:
                problems.append(problem)

    async with client_for_load() as client:
        started = time.monotonic()
        await asyncio.wait_for(asyncio.gather(*(converse(c) for c in conversations)), LOAD_SECONDS)
        turned = time.monotonic()
        checks = [check(c, len(c.ids) - 1) for c in conversations if c.ids]
        await asyncio.wait_for(asyncio.gather(*checks), LOAD_SECONDS)
        checked = time.monotonic()
        for conversation in conversations[:CROSSED]:
            if conversation.ids:
                base = bases[conversation.number % len(bases)]
                problem = await crossed(client, base, conversation)
                if problem is not None:
                    problems.append(problem)
    return Load(conversations, problems, turned - started, checked - turned)


def assert_whole(result: Load) -> None:
    """Every turn of every conversation completed, saw its history and was kept."""
    assert result.problems == [], f"{len(result.problems)} problems, the first:\n" + "\n".join(
        result.problems[:5]
    )
    assert [len(c.ids) for c in result.conversations] == [TURNS] * CONVERSATIONS
    ids = [i for c in result.conversations for i in c.ids]
    assert len(set(ids)) == TOTAL


def wait_lines(gateways: list[Gateway], count: int) -> list[Json]:
    """The gateways' request lines once there are `count` of them (a streamed request's
    line is written once its stream has gone out)."""
    deadline = time.monotonic() + STOP_SECONDS
    while True:
        lines = [line for gateway in gateways for line in gateway.lines()]
        if len(lines) >= count or time.monotonic() > deadline:
            return lines
        time.sleep(0.05)


def statuses(lines: list[Json], gets: bool) -> dict[int, int]:
    """How many request lines had each status: of the turns (POST /v1/responses), or of
    the GETs (/v1/responses/{id})."""
    found: dict[int, int] = {}
    for line in lines:
        path = str(line.get("path", ""))
        if path.startswith("/v1/responses/") if gets else path == "/v1/responses":
            status = int(line["status"])
            found[status] = found.get(status, 0) + 1
    return found


def assert_no_traceback(gateway: Gateway) -> None:
    text = gateway.text()
    assert "Traceback" not in text and "Exception in ASGI application" not in text, tail(
        gateway.log, 80
    )


def test_sqlite_with_four_workers_keeps_every_conversation_whole_under_load(
    folder: Path,
) -> None:
    with contextlib.ExitStack() as stack:
        upstream = start_echo(stack, folder)
        store = f"sqlite:///{folder / 'store.sqlite3'}"
        gateway = start_gateway(stack, folder, "gateway", upstream, store, workers=4)
        workers = gateway.workers
        assert {parent_of(pid) for pid in workers} == {gateway.process.pid}
        before = {pid: written(pid) for pid in workers}
        result = asyncio.run(load([gateway.base]))
        after = {pid: written(pid) for pid in workers}
        lines = wait_lines([gateway], TOTAL + 2 * CONVERSATIONS + CROSSED)
        print(
            f"\nSQLite, 4 workers: {CONVERSATIONS}x{TURNS} turns in {result.turn_seconds:.1f} s,"
            f" {2 * CONVERSATIONS} GETs in {result.check_seconds:.1f} s; bytes written"
            f" per worker: {[after[pid] - before[pid] for pid in workers]}"
        )
        assert_whole(result)
        # Every request answered and logged once, by some worker.
        assert statuses(lines, gets=False) == {200: TOTAL, 404: CROSSED}
        assert statuses(lines, gets=True) == {200: CONVERSATIONS, 404: CONVERSATIONS}
        # Each worker served: a worker that accepted no request writes nothing (no
        # socket, no log line, no store write); one that served its share of 7,000
        # requests writes megabytes. 64 KiB is a few dozen turns.
        idle = {
            pid: after[pid] - before[pid] for pid in workers if after[pid] - before[pid] < 65536
        }
        assert idle == {}, f"workers that served (almost) nothing: {idle}"
        assert_no_traceback(gateway)


def test_postgresql_shared_by_two_gateways_keeps_every_conversation_whole_under_load(
    folder: Path,
) -> None:
    with contextlib.ExitStack() as stack:
        started = time.monotonic()
        server = stack.enter_context(PostgresServer())
        postgres_seconds = time.monotonic() - started
        upstream = start_echo(stack, folder)
        gateways = [
            start_gateway(stack, folder, f"gateway{n}", upstream, server.url, workers=2)
            for n in range(2)
        ]
        result = asyncio.run(load([g.base for g in gateways]))
        # Turns 0, 2 and 4 went to the first gateway, 1 and 3 to the second; the last
        # turn's two GETs to the other one; the continuations with another key to both.
        even, odd = CONVERSATIONS * ((TURNS + 1) // 2), CONVERSATIONS * (TURNS // 2)
        halves = (CROSSED + 1) // 2, CROSSED // 2
        getter = TURNS % 2  # the gateway that did not answer the last turn
        gets = [2 * CONVERSATIONS if n == getter else 0 for n in range(2)]
        lines = [
            wait_lines([gateways[0]], even + gets[0] + halves[0]),
            wait_lines([gateways[1]], odd + gets[1] + halves[1]),
        ]
        print(
            f"\nPostgreSQL (started in {postgres_seconds:.1f} s), 2 gateways:"
            f" {CONVERSATIONS}x{TURNS} turns in {result.turn_seconds:.1f} s,"
            f" {2 * CONVERSATIONS} GETs in {result.check_seconds:.1f} s"
        )
        assert_whole(result)
        assert [statuses(g, gets=False) for g in lines] == [
            {200: even, 404: halves[0]},
            {200: odd, 404: halves[1]},
        ]
        assert [statuses(g, gets=True) for g in lines] == [
            {200: CONVERSATIONS, 404: CONVERSATIONS} if n == getter else {} for n in range(2)
        ]
        for gateway in gateways:
            assert_no_traceback(gateway)


# --- faults --------------------------------------------------------------------------------


@dataclass
class Attempt:
    """One turn a client sent while the store was taken away (or came back)."""

    conversation: Conversation | None
    """None for a first turn sent as a probe."""
    text: str
    outcome: Outcome


@dataclass
class Faults:
    """The fault scenario's client: conversations that keep talking, and every attempt
    they made."""

    client: httpx.AsyncClient
    base: str
    conversations: list[Conversation] = field(default_factory=list[Conversation])
    attempts: list[Attempt] = field(default_factory=list[Attempt])
    problems: list[str] = field(default_factory=list[str])

    async def turn(self, conversation: Conversation) -> Outcome:
        """The conversation's next turn (streamed on every other attempt), recorded."""
        conversation.attempts += 1
        text = f"conv {conversation.number} attempt {conversation.attempts}"
        previous = conversation.ids[-1] if conversation.ids else None
        streamed = (conversation.number + conversation.attempts) % 2 == 0
        outcome = await send_turn(
            self.client, self.base, conversation.key, text, previous, streamed
        )
        self.attempts.append(Attempt(conversation, text, outcome))
        if outcome.kind == COMPLETED:
            problem = took(conversation, text, outcome)
            if problem is not None:
                self.problems.append(problem)
        return outcome

    async def first_turn(self, number: int, streamed: bool) -> Outcome:
        """A turn that starts a conversation (the store is needed only to keep it)."""
        text = f"probe {number}"
        outcome = await send_turn(self.client, self.base, key_of(number), text, None, streamed)
        self.attempts.append(Attempt(None, text, outcome))
        return outcome

    async def get(self, conversation: Conversation) -> httpx.Response:
        url = f"{self.base}/v1/responses/{conversation.ids[-1]}"
        return await self.client.get(url, headers={"authorization": f"Bearer {conversation.key}"})

    async def warm_up(self, count: int, turns: int) -> None:
        """`count` conversations of `turns` completed turns each."""
        self.conversations = [Conversation(c, key_of(c)) for c in range(count)]

        async def talk(conversation: Conversation) -> None:
            for _ in range(turns):
                outcome = await self.turn(conversation)
                assert outcome.kind == COMPLETED, outcome

        await asyncio.wait_for(asyncio.gather(*(talk(c) for c in self.conversations)), LOAD_SECONDS)

    def keep_talking(self, first: int) -> asyncio.Future[list[None]]:
        """The conversations from number `first` on (the others are the probes') taking a
        turn every `PACE` seconds, until one is not completed (the store is gone: they
        wait for it, `recover`) or `FAULT_MORE_TURNS` more were."""

        async def talk(conversation: Conversation) -> None:
            for _ in range(FAULT_MORE_TURNS):
                if (await self.turn(conversation)).kind != COMPLETED:
                    return
                await asyncio.sleep(PACE)

        return asyncio.gather(*(talk(c) for c in self.conversations[first:]))

    async def completed(self, count: int) -> None:
        """Returns once `count` turns have completed in all (fails after
        `START_SECONDS`)."""
        deadline = time.monotonic() + START_SECONDS
        while sum(a.outcome.kind == COMPLETED for a in self.attempts) < count:
            assert time.monotonic() < deadline, f"fewer than {count} turns completed"
            await asyncio.sleep(0.01)

    async def recover(self) -> float:
        """Each conversation's next turns until one completes; the seconds the last one
        took (fails after `RECOVERY_SECONDS`)."""
        started = time.monotonic()
        deadline = started + RECOVERY_SECONDS

        async def talk(conversation: Conversation) -> float:
            while (outcome := await self.turn(conversation)).kind != COMPLETED:
                assert time.monotonic() < deadline, (
                    f"conversation {conversation.number} did not continue within "
                    f"{RECOVERY_SECONDS} s: {outcome}"
                )
                await asyncio.sleep(RETRY_PAUSE)
            return time.monotonic() - started

        times = await asyncio.wait_for(
            asyncio.gather(*(talk(c) for c in self.conversations)),
            RECOVERY_SECONDS + REQUEST_SECONDS,
        )
        return max(times)

    async def assert_nothing_half_kept(self, stored: set[str]) -> None:
        """Every answer was complete or OpenAI's store error; the store holds exactly the
        responses the clients got whole (`stored`: every id in it), each retrievable with
        its key; a cut stream's response is not there."""
        unexpected = [a for a in self.attempts if a.outcome.kind == UNEXPECTED]
        assert unexpected == [], f"{len(unexpected)} unexpected answers: {unexpected[:3]}"
        assert self.problems == [], "\n".join(self.problems[:5])
        completed = {i for c in self.conversations for i in c.ids}
        got_whole = {a.outcome.response_id for a in self.attempts if a.outcome.kind == COMPLETED}
        assert got_whole == completed
        assert stored == completed, (
            f"kept but not answered whole: {sorted(stored - completed)[:5]}; answered whole"
            f" but not kept: {sorted(completed - stored)[:5]}"
        )
        for conversation in self.conversations:
            answer = await self.get(conversation)
            assert answer.status_code == 200, answer.text
            assert said(cast(Json, answer.json()))[1] == conversation.answers[-1]
        cut = [a for a in self.attempts if a.outcome.kind == CUT]
        for attempt in cut:
            assert attempt.outcome.response_id is not None
            url = f"{self.base}/v1/responses/{attempt.outcome.response_id}"
            key = attempt.conversation.key if attempt.conversation else key_of(0)
            answer = await self.client.get(url, headers={"authorization": f"Bearer {key}"})
            assert answer.status_code == 404, answer.text

    def summary(self) -> str:
        """How many answers of each kind, and how long the failed ones took."""
        counts: dict[str, int] = {}
        for attempt in self.attempts:
            name = f"{attempt.outcome.kind} ({'' if attempt.outcome.streamed else 'un'}streamed)"
            counts[name] = counts.get(name, 0) + 1
        failed = sorted(a.outcome.seconds for a in self.attempts if a.outcome.kind != COMPLETED)
        waits = f"{failed[0]:.1f} to {failed[-1]:.1f} s" if failed else "none"
        return f"{counts}; the failed ones took {waits}"


def fault_client() -> httpx.AsyncClient:
    return httpx.AsyncClient(
        timeout=httpx.Timeout(REQUEST_SECONDS),
        limits=httpx.Limits(max_keepalive_connections=0),
    )


def test_postgresql_stopped_mid_run_answers_store_unavailable_and_recovers(
    folder: Path,
) -> None:
    with contextlib.ExitStack() as stack:
        server = stack.enter_context(PostgresServer())
        upstream = start_echo(stack, folder)
        gateway = start_gateway(stack, folder, "gateway", upstream, server.url, workers=4)

        async def scenario() -> None:
            async with fault_client() as client:
                faults = Faults(client, gateway.base)
                await faults.warm_up(FAULT_CONVERSATIONS["postgresql"], 2)
                warm = len(faults.attempts)
                talking = faults.keep_talking(2)
                # Turns in flight as the server stops: the conversations have each taken
                # about one more turn, and take the next.
                await faults.completed(warm + len(faults.conversations) - 2)
                stopping = time.monotonic()
                await asyncio.to_thread(server.stop)
                stopped = time.monotonic() - stopping
                # With the server down: a first turn is answered by the upstream, then
                # cannot be kept; a continuation cannot be read; nor can a GET.
                first = asyncio.gather(
                    *(faults.first_turn(n, streamed=n % 2 == 0) for n in range(4))
                )
                probes, continued, got = await asyncio.wait_for(
                    asyncio.gather(
                        first,
                        faults.turn(faults.conversations[0]),
                        faults.get(faults.conversations[1]),
                    ),
                    LOAD_SECONDS,
                )
                assert [p.kind for p in probes] == [CUT, UNAVAILABLE, CUT, UNAVAILABLE], probes
                assert all("PostgreSQL" in p.message for p in probes), probes
                assert continued.kind == UNAVAILABLE, continued
                assert got.status_code == 503 and store_error(got.content) is not None, got.text
                await asyncio.wait_for(talking, LOAD_SECONDS)
                outage = time.monotonic() - stopping
                # Turns of the conversations were under way as the server went down.
                in_flight = [
                    a.outcome.kind
                    for a in faults.attempts
                    if a.outcome.started < stopping + stopped
                    and a.outcome.started + a.outcome.seconds > stopping
                ]
                assert in_flight != [], "no turn was under way as the server stopped"
                await asyncio.to_thread(server.start)
                recovered = await faults.recover()
                with psycopg.connect(server.url, connect_timeout=10) as connection:
                    rows = connection.execute("SELECT id FROM responses").fetchall()
                await faults.assert_nothing_half_kept({str(row[0]) for row in rows})
                under_way = {kind: in_flight.count(kind) for kind in set(in_flight)}
                print(
                    f"\nPostgreSQL fault: stop took {stopped:.1f} s, turns under way then:"
                    f" {under_way}, outage {outage:.1f} s, every conversation continued"
                    f" {recovered:.1f} s after the restart; answers: {faults.summary()}"
                )

        asyncio.run(scenario())
        lines = gateway.lines()
        assert {int(line["status"]) for line in lines} <= {200, 404, 503}, lines
        assert_no_traceback(gateway)


def test_sqlite_write_lock_held_past_the_busy_timeout_answers_store_unavailable_and_recovers(
    folder: Path,
) -> None:
    """Root writes through a read-only file mode; it cannot take a lock another connection
    holds: `BEGIN EXCLUSIVE` for longer than the store's busy timeout."""
    with contextlib.ExitStack() as stack:
        path = folder / "store.sqlite3"
        upstream = start_echo(stack, folder)
        gateway = start_gateway(stack, folder, "gateway", upstream, f"sqlite:///{path}", 2)
        locker = sqlite3.connect(path, timeout=10, isolation_level=None, check_same_thread=False)
        stack.callback(locker.close)

        async def scenario() -> None:
            async with fault_client() as client:
                faults = Faults(client, gateway.base)
                await faults.warm_up(FAULT_CONVERSATIONS["sqlite"], 2)
                await asyncio.to_thread(locker.execute, "BEGIN EXCLUSIVE")
                held = time.monotonic()
                try:
                    # WAL: a read does not wait on the writer's lock (asked first, before
                    # the writes waiting on it fill the gateway's threads).
                    got = await faults.get(faults.conversations[1])
                    assert got.status_code == 200, got.text
                    # Each write waits BUSY_SECONDS, then is refused: streamed or not, a
                    # first turn or a continuation (a few, not to fill the worker threads).
                    probes = asyncio.gather(
                        faults.first_turn(0, streamed=True),
                        faults.first_turn(1, streamed=False),
                        faults.turn(faults.conversations[2]),  # unstreamed: (2 + 3) % 2
                        faults.turn(faults.conversations[3]),  # streamed
                    )
                    await asyncio.sleep(0.5)
                    talking = faults.keep_talking(4)
                    answered = await asyncio.wait_for(probes, LOAD_SECONDS)
                    probed = time.monotonic() - held
                    await asyncio.sleep(max(0.0, held + LOCK_HELD - time.monotonic()))
                finally:
                    locker.execute("ROLLBACK")
                released = time.monotonic()
                assert probed < LOCK_HELD, "the probes ended after the lock was let go"
                assert sorted(p.kind for p in answered) == [CUT, CUT, UNAVAILABLE, UNAVAILABLE]
                assert all("database is locked" in p.message for p in answered), answered
                await asyncio.wait_for(talking, LOAD_SECONDS)
                recovered = await faults.recover()
                with contextlib.closing(sqlite3.connect(path, timeout=10)) as reader:
                    rows = reader.execute("SELECT id FROM responses").fetchall()
                await faults.assert_nothing_half_kept({str(row[0]) for row in rows})
                print(
                    f"\nSQLite fault: lock held {released - held:.1f} s, probes refused after"
                    f" {probed:.1f} s, every conversation continued {recovered:.1f} s after"
                    f" the release; answers: {faults.summary()}"
                )

        asyncio.run(scenario())
        lines = gateway.lines()
        assert {int(line["status"]) for line in lines} <= {200, 404, 503}, lines
        assert_no_traceback(gateway)
