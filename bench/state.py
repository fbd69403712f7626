"""What the gateway's Responses store adds per turn, as ratios in one run.

Three kinds of processes on 127.0.0.1: the echo upstream (tests/helpers/echo_upstream.py,
a chat upstream answering with reasoning, then a call of its tool when the user's message
asks for it, else a text listing everything it was sent); a gateway (`python -m generator
serve --config FILE`, one worker, DeepSeek's dialect) per store: a SQLite file, and a
PostgreSQL 15 server this benchmark starts (tests/helpers/postgres.py); and this process,
the client. A conversation is 20 tool turns, as an agent's: each turn the client sends
the result of the previous call and a new user message, and gets reasoning and a call.

- resend: `store: false`, the whole history as `input` every turn (each turn's input
  and the output items it got back, appended), as Codex does;
- store: the default (`store` true), each turn only its new items and the
  `previous_response_id` of the last turn; the gateway reads the chain back (one
  recursive query) and keeps the new response (one transaction) before the stream ends.

Through each gateway both conversations run in lock-step, turn by turn (which goes first
alternating), on kept-alive connections; the added time of a turn is the store's turn
less the resend's of the same index and round. A last, untimed turn asks for a text:
the echo upstream's answer says what it was sent, and both must have seen the same
history, whole. Times are reported, never asserted.

    python -m bench.state            # the full run: bench/state.md, bench/state.json
    python -m bench.state --quick    # a short run; writes only --json
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Generator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, cast

import psycopg

from bench.common import PYTHON, add_output_options, table, write_run
from bench.gateway import (
    Connection,
    Server,
    encoded,
    free_port,
    gateway_config,
    percentile,
    start_printing_port,
    wait_ready,
)
from tests.helpers.echo_upstream import TOOL, TOOL_TRIGGER
from tests.helpers.postgres import SETTINGS as POSTGRES_SETTINGS
from tests.helpers.postgres import PostgresServer

ROOT = Path(__file__).resolve().parent.parent
HERE = Path(__file__).resolve().parent
RESULTS, RESULTS_JSON = HERE / "state.md", HERE / "state.json"
HOST = "127.0.0.1"
WAIT = 60.0
"""The longest a server may take to start."""

Json = dict[str, Any]

STORES = ("sqlite", "postgresql")
MODES = ("resend", "store")
STREAMED = {True: "streamed", False: "unstreamed"}
PATH = "/v1/responses"
HEADERS = {"authorization": "Bearer sk-chunkspec-bench"}
MODEL = "echo"
TOOLS: list[Json] = [
    {
        "type": "function",
        "name": TOOL,
        "description": "Look a thing up.",
        "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
    }
]
WIDTH = 88
"""The report's prose, wrapped."""
SHOWN_TURNS = (1, 2, 3, 5, 10, 15, 20)
"""The turns the report's per-turn table shows (the JSON has every turn)."""


@dataclass(frozen=True)
class Settings:
    turns: int
    rounds: int  # conversations measured, per gateway, mode and streaming
    warm: int  # conversations before, unmeasured


FULL = Settings(20, 20, 2)
QUICK = Settings(6, 3, 1)


# --- processes ------------------------------------------------------------------------


@contextmanager
def echo_upstream(directory: Path) -> Generator[Server, None, None]:
    """tests/helpers/echo_upstream.py in its own process."""
    command = [sys.executable, "-m", "tests.helpers.echo_upstream", "--port", "0"]
    server = start_printing_port("echo upstream", command, directory / "upstream.log")
    try:
        yield server
    finally:
        server.stop()


@contextmanager
def gateway(
    directory: Path, name: str, upstream_base: str, store: str
) -> Generator[Server, None, None]:
    """`python -m generator serve --config FILE --port N`, its state in `store`."""
    config = directory / f"gateway-{name}.toml"
    config.write_text(gateway_config(upstream_base, store, "deepseek"), encoding="utf-8")
    port = free_port()
    command = [sys.executable, "-m", "generator", "serve", "--config", str(config)]
    command += ["--port", str(port)]
    log = directory / f"gateway-{name}.log"
    with log.open("wb") as err:
        process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=err)
    server = Server(f"gateway ({name})", f"http://{HOST}:{port}", process, log)
    try:
        wait_ready(server, "/health")
        yield server
    finally:
        server.stop()


def postgres_version(url: str) -> str:
    with psycopg.connect(url, connect_timeout=10) as connection:
        row = connection.execute("SHOW server_version").fetchone()
    return str(row[0]) if row else "?"


def fsync_ms(directory: Path, times: int = 50) -> float:
    """The median milliseconds of writing 8 KiB to a file of `directory` and fsync-ing it:
    what a commit that waits for the disk would add, on this machine."""
    samples: list[float] = []
    path = directory / "fsync.probe"
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        for _ in range(times):
            start = time.perf_counter()
            os.write(descriptor, b"x" * 8192)
            os.fsync(descriptor)
            samples.append((time.perf_counter() - start) * 1000)
    finally:
        os.close(descriptor)
        path.unlink()
    return statistics.median(samples)


# --- conversations --------------------------------------------------------------------


def user_message(text: str) -> Json:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


def final_response(body: bytes, streamed: bool) -> Json:
    """The response object of an answer: the body (unstreamed), or the `response` of the
    stream's `response.completed` event; fails on anything else."""
    if not streamed:
        return cast(Json, json.loads(body))
    for event in body.split(b"\n\n"):
        data = b"\n".join(line[5:].strip() for line in event.split(b"\n") if line[:5] == b"data:")
        if not data:
            continue
        parsed = cast(Json, json.loads(data))
        if parsed.get("type") == "error":
            raise RuntimeError(f"the stream ended with an error: {parsed}")
        if parsed.get("type") == "response.completed":
            return cast(Json, parsed["response"])
    raise RuntimeError(f"a stream without response.completed: {body[-300:]!r}")


@dataclass
class Conversation:
    """One client's conversation through a gateway, in `mode` (resend or store)."""

    mode: str
    streamed: bool
    connection: Connection
    history: list[Json] = field(default_factory=list[Json])  # resend: everything so far
    previous_id: str | None = None  # store: the last response
    call_id: str | None = None  # the call the next turn answers

    def body(self, text: str) -> bytes:
        new: list[Json] = []
        if self.call_id is not None:
            output = f"result of {self.call_id}"
            new.append({"type": "function_call_output", "call_id": self.call_id, "output": output})
        new.append(user_message(text))
        request: Json = {"model": MODEL, "tools": TOOLS, "stream": self.streamed}
        if self.mode == "resend":
            request |= {"input": [*self.history, *new], "store": False}
            self.history += new
        else:
            request["input"] = new
            if self.previous_id is not None:
                request["previous_response_id"] = self.previous_id
        return encoded(request)

    def turn(self, text: str) -> tuple[float, int, Json]:
        """Milliseconds of one turn (from sending the request to the answer's last byte),
        the request's size, and the response."""
        body = self.body(text)
        _, seconds, answer = self.connection.post(PATH, body, HEADERS)
        response = final_response(answer, self.streamed)
        output = cast(list[Json], response.get("output") or [])
        if self.mode == "resend":
            self.history += output
        else:
            self.previous_id = str(response["id"])
        calls = [item for item in output if item.get("type") == "function_call"]
        self.call_id = str(calls[-1]["call_id"]) if calls else None
        return seconds * 1000, len(body), response


@dataclass
class Series:
    """One gateway's turns, for one streaming: ms and request bytes by mode, then by turn
    index, one value per measured conversation."""

    ms: dict[str, list[list[float]]]
    size: dict[str, list[list[int]]]
    checked: int = 0  # conversations whose last turn showed both modes the same history
    conversations: int = 0

    @classmethod
    def empty(cls, turns: int) -> Series:
        return cls(
            {m: [[] for _ in range(turns)] for m in MODES},
            {m: [[] for _ in range(turns)] for m in MODES},
        )

    def added(self, index: int) -> list[float]:
        """The store's turn less the resend's, per conversation, at turn `index`."""
        pairs = zip(self.ms["store"][index], self.ms["resend"][index], strict=True)
        return [s - r for s, r in pairs]

    def all_added(self) -> list[float]:
        return [value for index in range(len(self.ms["store"])) for value in self.added(index)]

    def all_ms(self, mode: str) -> list[float]:
        return [value for turn in self.ms[mode] for value in turn]

    def ratios(self) -> list[float]:
        """Per conversation: the store's time over all its turns / the resend's."""
        count = len(self.ms["store"][0])
        store = [sum(turn[c] for turn in self.ms["store"]) for c in range(count)]
        resend = [sum(turn[c] for turn in self.ms["resend"]) for c in range(count)]
        return [s / r for s, r in zip(store, resend, strict=True)]


def seen(response: Json) -> Json:
    """What the echo upstream says it was sent, from a text answer."""
    texts = [
        part.get("text", "")
        for item in cast(list[Json], response.get("output") or [])
        if item.get("type") == "message"
        for part in cast(list[Json], item.get("content") or [])
    ]
    return cast(Json, json.loads("".join(texts)))


def conversation_pair(
    connections: dict[str, Connection], streamed: bool, turns: int, first: int
) -> tuple[dict[str, list[float]], dict[str, list[int]], bool]:
    """A resend and a store conversation in lock-step: per mode, each turn's ms and
    request bytes, and whether the last (untimed) turn showed both the same, whole
    history. `first` says which mode goes first on even turns."""
    pair = {mode: Conversation(mode, streamed, connections[mode]) for mode in MODES}
    ms: dict[str, list[float]] = {mode: [] for mode in MODES}
    size: dict[str, list[int]] = {mode: [] for mode in MODES}
    for index in range(turns):
        order = MODES if (index + first) % 2 == 0 else MODES[::-1]
        for mode in order:
            took, sent, _ = pair[mode].turn(f"{TOOL_TRIGGER}, turn {index + 1}")
            ms[mode].append(took)
            size[mode].append(sent)
    said = {mode: seen(pair[mode].turn("what did you see?")[2]) for mode in MODES}
    whole = (
        said["resend"] == said["store"]
        and len(said["store"]["users"]) == turns + 1
        and len(said["store"]["tools"]) == turns
        and said["store"]["reasoning"] == [f"thought {n}" for n in range(turns)]
    )
    return ms, size, whole


# --- the run --------------------------------------------------------------------------


@dataclass
class Run:
    settings: Settings
    series: dict[str, dict[bool, Series]]  # store -> streamed -> series
    versions: dict[str, str]
    loadavg: tuple[tuple[float, float, float], tuple[float, float, float]]
    fsync_ms: float
    seconds: float
    nice: int  # the niceness the processes ran at


def run(settings: Settings, progress: IO[str]) -> Run:
    def say(text: str) -> None:
        print(text, file=progress, flush=True)

    started = time.perf_counter()
    loadavg = os.getloadavg()
    series = {s: {st: Series.empty(settings.turns) for st in STREAMED} for s in STORES}
    with ExitStack() as stack:
        directory = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="chunkspec-")))
        say("PostgreSQL ...")
        postgres = stack.enter_context(PostgresServer())
        versions = {
            "python": PYTHON,
            "sqlite": sqlite3.sqlite_version,
            "postgresql": postgres_version(postgres.url),
        }
        up = stack.enter_context(echo_upstream(directory))
        urls = {"sqlite": f"sqlite:///{directory / 'store.sqlite3'}", "postgresql": postgres.url}
        gateways = {s: stack.enter_context(gateway(directory, s, up.base, urls[s])) for s in STORES}
        connections = {s: {m: Connection(gateways[s].base) for m in MODES} for s in STORES}
        for by_mode in connections.values():
            for connection in by_mode.values():
                stack.callback(connection.close)
        say(f"{settings.warm} + {settings.rounds} conversations of {settings.turns} turns ...")
        for round_ in range(settings.warm + settings.rounds):
            for streamed in STREAMED:
                for store in STORES:
                    ms, size, whole = conversation_pair(
                        connections[store], streamed, settings.turns, round_ % 2
                    )
                    if round_ < settings.warm:
                        continue
                    measured = series[store][streamed]
                    for mode in MODES:
                        for index in range(settings.turns):
                            measured.ms[mode][index].append(ms[mode][index])
                            measured.size[mode][index].append(size[mode][index])
                    measured.checked += whole
                    measured.conversations += 1
        fsync = fsync_ms(directory)
    return Run(
        settings,
        series,
        versions,
        (loadavg, os.getloadavg()),
        fsync,
        time.perf_counter() - started,
        os.nice(0),
    )


# --- the report -----------------------------------------------------------------------


def _ms(value: float) -> str:
    return f"{value:.2f}"


def growth(series: Series) -> float:
    """Microseconds the store's added time grows by per earlier turn: the slope of the
    median added time over the turns that continue one (2 to the last)."""
    turns = list(range(2, len(series.ms["store"]) + 1))
    if len(turns) < 2:
        return 0.0
    added = [statistics.median(series.added(t - 1)) for t in turns]
    return statistics.linear_regression(turns, added).slope * 1000


@dataclass(frozen=True)
class Summary:
    resend_ms: float
    store_ms: float
    added_ms: float
    added_p90_ms: float
    ratio: float
    first_added_ms: float  # turn 1: kept, nothing read
    second_added_ms: float  # turn 2: one response read back
    last_added_ms: float
    growth_us: float
    last_added_early_ms: float  # the last turn, in the first quarter of the conversations
    last_added_late_ms: float  # ... in the last quarter (the store's tables larger)
    checked: int
    conversations: int


def summary(series: Series) -> Summary:
    added = series.all_added()
    last = len(series.ms["store"]) - 1
    quarter = max(1, series.conversations // 4)
    return Summary(
        statistics.median(series.all_ms("resend")),
        statistics.median(series.all_ms("store")),
        statistics.median(added),
        percentile(added, 0.9),
        statistics.median(series.ratios()),
        statistics.median(series.added(0)),
        statistics.median(series.added(min(1, last))),
        statistics.median(series.added(last)),
        growth(series),
        statistics.median(series.added(last)[:quarter]),
        statistics.median(series.added(last)[-quarter:]),
        series.checked,
        series.conversations,
    )


def _loadavg(values: tuple[float, float, float]) -> str:
    return " ".join(f"{v:.2f}" for v in values)


def _cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def report(result: Run) -> str:
    s = result.settings
    v = result.versions
    before, after = result.loadavg
    cores = os.cpu_count()
    summary_rows: list[list[str]] = []
    for streamed, what in STREAMED.items():
        for store in STORES:
            m = summary(result.series[store][streamed])
            summary_rows.append(
                [
                    what,
                    store,
                    _ms(m.resend_ms),
                    _ms(m.store_ms),
                    _ms(m.added_ms),
                    _ms(m.added_p90_ms),
                    f"{m.ratio:.2f}",
                    f"{m.checked}/{m.conversations}",
                ]
            )
    growth_rows: list[list[str]] = []
    for streamed, what in STREAMED.items():
        for store in STORES:
            m = summary(result.series[store][streamed])
            growth_rows.append(
                [
                    what,
                    store,
                    _ms(m.first_added_ms),
                    _ms(m.second_added_ms),
                    _ms(m.last_added_ms),
                    f"{m.growth_us:.1f}",
                    _ms(m.last_added_early_ms),
                    _ms(m.last_added_late_ms),
                ]
            )
    turn_rows: list[list[str]] = []
    streamed_series = {store: result.series[store][True] for store in STORES}
    for turn in (t for t in SHOWN_TURNS if t <= s.turns):
        index = turn - 1
        first = streamed_series[STORES[0]]
        row = [
            str(turn),
            f"{statistics.median(first.size['resend'][index]) / 1024:.1f}",
            f"{statistics.median(first.size['store'][index]) / 1024:.1f}",
        ]
        for store in STORES:
            measured = streamed_series[store]
            row += [
                _ms(statistics.median(measured.ms["resend"][index])),
                _ms(statistics.median(measured.ms["store"][index])),
                _ms(statistics.median(measured.added(index))),
            ]
        turn_rows.append(row)
    turn_header = ["turn", "resend request KiB", "store request KiB"]
    for store in STORES:
        turn_header += [f"{store}: resend ms", f"{store}: store ms", f"{store}: added ms"]
    durability = ", ".join(
        f"`{k}={POSTGRES_SETTINGS[k]}`"
        for k in ("fsync", "synchronous_commit")
        if k in POSTGRES_SETTINGS
    )
    quarter = max(1, s.rounds // 4)
    intro = (
        f"Written by `make bench` (`python -m bench.state`) in {result.seconds:.0f} s. Python "
        f"{v['python']}; SQLite {v['sqlite']}; PostgreSQL {v['postgresql']}. On one machine "
        f"({cores} cores, {_cpu()}), over loopback: the echo upstream "
        "(tests/helpers/echo_upstream.py), a gateway per store (`python -m generator serve "
        "--config FILE`, one worker, DeepSeek's dialect) and the client, each in its own "
        f"process. Load average of the machine before the run {_loadavg(before)}, after "
        f"{_loadavg(after)} (on {cores} cores: above {cores}, times count waits for a core). "
        f"The processes ran at niceness {result.nice}"
        + (
            " (`--nice`: ahead of the machine's other work)."
            if result.nice < 0
            else " (`--nice -15` runs them ahead of the machine's other work)."
        )
    )
    what = (
        f"A conversation is {s.turns} tool turns, as an agent's: each turn the result of the "
        "previous call and a new user message in, reasoning and a call out. **resend**: "
        "`store: false` and the whole history as `input` every turn (the output items it got "
        "back appended, as Codex does); **store**: each turn only its new items and "
        "`previous_response_id` (the gateway reads the chain back in one recursive query, and "
        "keeps the response before the answer ends). Through each gateway a resend and a store "
        "conversation run in lock-step, turn by turn, on kept-alive connections; a turn's time "
        "is from sending the request to the answer's last byte, as the client sees it, and the "
        "**added** time is the store's turn less the resend's of the same index and "
        f"conversation. {s.rounds} conversations of each kind after {s.warm} unmeasured, each "
        "on a store that holds the earlier ones."
    )
    stores = (
        "SQLite: one file in WAL mode, `synchronous=NORMAL` (the gateway's setting: no flush "
        "per commit). PostgreSQL: a local server started by the benchmark with the tests' "
        f"settings ({durability}): no flush per commit either; a server that flushes on commit "
        "adds one per kept response (a write and fsync of 8 KiB took "
        f"{result.fsync_ms:.2f} ms on this machine's disk, median)."
    )
    lines = [
        "# Responses state benchmark results",
        "",
        *textwrap.wrap(intro, WIDTH),
        "",
        *textwrap.wrap(what, WIDTH),
        "",
        *textwrap.wrap(stores, WIDTH),
        "",
        f"## Per turn, over every turn of {s.rounds} conversations",
        "",
        *textwrap.wrap(
            "store / resend: per conversation, the store's time over all its turns over the "
            "resend's (median). History whole: conversations whose last, untimed turn (a text "
            "from the echo upstream listing what it was sent) showed the store's and the "
            "resend's the same, whole history.",
            WIDTH,
        ),
        "",
        *table(
            [
                "answer",
                "store",
                "resend ms/turn",
                "store ms/turn",
                "added ms/turn",
                "added p90 ms",
                "store / resend",
                "history whole",
            ],
            summary_rows,
        ),
        "",
        "## With the conversation's length",
        "",
        *textwrap.wrap(
            "Median added ms at turn 1 (the response kept, nothing to read), turn 2 (one "
            f"earlier response read back) and turn {s.turns} ({s.turns - 1} read back); the "
            f"slope of the median added time over turns 2 to {s.turns}, in µs per earlier turn; "
            f"and turn {s.turns}'s added time in the first {quarter} conversations and in the "
            f"last {quarter} (the store's table then larger).",
            WIDTH,
        ),
        "",
        *table(
            [
                "answer",
                "store",
                "turn 1 added ms",
                "turn 2 added ms",
                f"turn {s.turns} added ms",
                "growth µs per turn",
                f"turn {s.turns} added ms, first {quarter} conversations",
                f"turn {s.turns} added ms, last {quarter}",
            ],
            growth_rows,
        ),
        "",
        "Streamed, by turn (medians; the request sizes of the SQLite gateway's conversations):",
        "",
        *table(turn_header, turn_rows),
        "",
    ]
    return "\n".join(lines)


def results(result: Run) -> dict[str, Any]:
    s = result.settings
    out: dict[str, Any] = {
        "settings": {"turns": s.turns, "rounds": s.rounds, "warm": s.warm},
        "versions": result.versions,
        "loadavg": {"before": list(result.loadavg[0]), "after": list(result.loadavg[1])},
        "cores": os.cpu_count(),
        "fsync_ms": round(result.fsync_ms, 3),
        "postgres_settings": {
            k: POSTGRES_SETTINGS[k]
            for k in ("fsync", "synchronous_commit")
            if k in POSTGRES_SETTINGS
        },
        "seconds": round(result.seconds, 1),
        "nice": result.nice,
        "stores": {},
    }
    for store in STORES:
        out["stores"][store] = {}
        for streamed, what in STREAMED.items():
            series = result.series[store][streamed]
            m = summary(series)
            out["stores"][store][what] = {
                "resend_ms_per_turn": round(m.resend_ms, 3),
                "store_ms_per_turn": round(m.store_ms, 3),
                "added_ms_per_turn": round(m.added_ms, 3),
                "added_p90_ms": round(m.added_p90_ms, 3),
                "store_vs_resend": round(m.ratio, 4),
                "growth_us_per_turn": round(m.growth_us, 2),
                "last_turn_added_ms_first_quarter": round(m.last_added_early_ms, 3),
                "last_turn_added_ms_last_quarter": round(m.last_added_late_ms, 3),
                "history_whole": m.checked,
                "conversations": m.conversations,
                "by_turn": [
                    {
                        "turn": index + 1,
                        "resend_ms": round(statistics.median(series.ms["resend"][index]), 3),
                        "store_ms": round(statistics.median(series.ms["store"][index]), 3),
                        "added_ms": round(statistics.median(series.added(index)), 3),
                        "resend_request_bytes": int(
                            statistics.median(series.size["resend"][index])
                        ),
                        "store_request_bytes": int(statistics.median(series.size["store"][index])),
                    }
                    for index in range(s.turns)
                ],
            }
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    add_output_options(parser, RESULTS_JSON)
    parser.add_argument(
        "--rounds", type=int, metavar="N", help="conversations measured of each kind (20)"
    )
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
    settings = QUICK if args.quick else FULL
    if args.rounds:
        settings = dataclasses.replace(settings, rounds=args.rounds)
    result = run(settings, sys.stderr)
    text = report(result)
    print(text)
    write_run(args, (RESULTS, text), (RESULTS_JSON, results(result)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
