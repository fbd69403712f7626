"""The other protocols, Anthropic Messages (issue 32) and OpenAI Responses (issue 33), as
ratios measured in one run.

Per target, from memory:

- bridging chat to Messages, bytes in to bytes out, over the captured chat streams of
  tests/fixtures/chat/streams (each as its SSE body: `data: <chunk>` per line, then
  `data: [DONE]`): `write_parts(iter_parts(body), protocol="messages")` against
  martian-linguafranca doing the same job as a user would (`json.loads` of each chunk,
  `convert_response_stream_json` from OPENAI_CHAT_COMPLETIONS to ANTHROPIC_MESSAGES,
  `json.dumps` of each event written as an SSE event). Goals: >= 2x in every target,
  >= 5x with msgspec. Streams linguafranca refuses are counted and left out of both;
- reading Messages events typed, over the event payloads of tests/fixtures/messages:
  the messages module's `loads` against anthropic-sdk-python's own event parsing as its
  stream does it (`construct_type(type_=RawMessageStreamEvent, value=json.loads(data))`).
  Goal >= 3x in every target;
- for the record, bridging the Messages captures to chat, bytes to bytes (ours only);
- bridging chat to Responses, bytes to bytes, over the same chat streams:
  `write_parts(iter_parts(body), protocol="responses")` against linguafranca from
  OPENAI_CHAT_COMPLETIONS to OPEN_RESPONSES, used as for Messages. The same goals;
- reading Responses events typed, over the event payloads of tests/fixtures/responses:
  the responses module's `loads` against openai-python's own event parsing as its
  `Stream` does it (`construct_type(type_=ResponseStreamEvent, value=json.loads(data))`,
  what `client.responses.stream()` gets from it for each event). Goal >= 3x.

Each ratio is the median over rounds of the two paths' CPU times measured back to back
(each the fastest of three); each round goes through every target.

    python -m bench.protocols                   # the full run (make bench): protocols.md, .json
    python -m bench.protocols --quick           # one round, to prove it runs (CI)
    python -m bench.protocols --profile msgspec # cProfile of one target's chat -> Messages bridge
    python -m bench.protocols --profile msgspec --protocol responses  # ... chat -> Responses

bench/charts.py draws protocols.json as protocols.svg.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import importlib
import json
import pstats
import statistics
import warnings
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from importlib.metadata import version
from itertools import permutations
from pathlib import Path
from types import ModuleType
from typing import Any, cast

import linguafranca
from anthropic._models import construct_type
from anthropic._streaming import SSEDecoder
from anthropic.types import RawMessageStreamEvent
from openai._models import construct_type as openai_construct_type
from openai._streaming import SSEDecoder as OpenAISSEDecoder
from openai.types.responses import ResponseStreamEvent

from bench.common import (
    PYTHON,
    Goal,
    GoalRecord,
    Section,
    add_output_options,
    fastest,
    section,
    table,
    verdict,
    write_run,
)
from bench.targets import ROOT, TARGETS

HERE = Path(__file__).resolve().parent
RESULTS, RESULTS_JSON = HERE / "protocols.md", HERE / "protocols.json"
CHAT_CAPTURES = ROOT / "tests" / "fixtures" / "chat" / "streams"
MESSAGES_CAPTURES = ROOT / "tests" / "fixtures" / "messages"
RESPONSES_CAPTURES = ROOT / "tests" / "fixtures" / "responses"
MESSAGES: dict[str, ModuleType] = {
    name: importlib.import_module(f"generated.{name}.messages") for name in TARGETS
}
RESPONSES: dict[str, ModuleType] = {
    name: importlib.import_module(f"generated.{name}.responses") for name in TARGETS
}
VERSIONS = {
    package: version(package)
    for package in ("martian-linguafranca", "anthropic", "openai", "msgspec")
}
ON = "captured streams"
"""The column of both sections: the captures (those both bridges read), from memory."""
ALIKE = "streams both bridge to the same events"
"""The bridge's second column: the chat streams of which linguafranca writes as many
Messages events of each type as we do (elsewhere it drops some of what the chunks say)."""

LINGUAFRANCA = f"linguafranca {VERSIONS['martian-linguafranca']} + json"
"""json.loads of each chunk, convert_response_stream_json, json.dumps of each event."""
BRIDGE_FLOOR = "floor: json.loads + json.dumps per chunk"
"""Each chunk read and written again, no bridging."""
SDK = f"anthropic-sdk-python {VERSIONS['anthropic']} construct_type"
"""construct_type(type_=RawMessageStreamEvent, value=json.loads(data))."""
OPENAI_SDK = f"openai-python {VERSIONS['openai']} construct_type"
"""construct_type(type_=ResponseStreamEvent, value=json.loads(data))."""
TYPED_FLOOR = "floor: json.loads"

PROTOCOLS = ("messages", "responses")
"""What chat is bridged to; each protocol's sections and goals are of its own kinds."""
TARGET_FORMAT = {
    "messages": linguafranca.FormatName.ANTHROPIC_MESSAGES,
    "responses": linguafranca.FormatName.OPEN_RESPONSES,
}
NAME = {"messages": "Messages", "responses": "Responses"}
BRIDGE_KIND = {"messages": "bridge", "responses": "responses bridge"}
TYPED_KIND = {"messages": "typed", "responses": "responses typed"}


def bridge_path(target: str) -> str:
    """write_parts(iter_parts(body), protocol=...) of the chat module."""
    return f"{target} iter_parts + write_parts"


def typed_path(target: str) -> str:
    """loads of the messages (or responses) module."""
    return f"{target} loads"


BRIDGE_GOAL, MSGSPEC_BRIDGE_GOAL, TYPED_GOAL = 2.0, 5.0, 3.0


def _bridge_goal(protocol: str, target: str, at_least: float, name: str = "") -> Goal:
    name = name or f"{target}: chat -> {NAME[protocol]} vs linguafranca"
    return Goal(name, BRIDGE_KIND[protocol], bridge_path(target), LINGUAFRANCA, at_least)


def _goals(protocol: str, sdk: str, sdk_name: str) -> tuple[Goal, ...]:
    what = NAME[protocol]
    return (
        *(_bridge_goal(protocol, target, BRIDGE_GOAL) for target in TARGETS),
        _bridge_goal(
            protocol,
            "msgspec",
            MSGSPEC_BRIDGE_GOAL,
            f"msgspec: chat -> {what} vs linguafranca, the msgspec goal",
        ),
        *(
            Goal(
                f"{t}: {what} events typed vs {sdk_name}",
                TYPED_KIND[protocol],
                typed_path(t),
                sdk,
                TYPED_GOAL,
            )
            for t in TARGETS
        ),
    )


GOALS = (
    *_goals("messages", SDK, "anthropic-sdk-python"),
    *_goals("responses", OPENAI_SDK, "openai-python"),
)


# The inputs -----------------------------------------------------------------------------


@dataclass(frozen=True)
class ChatStream:
    name: str
    chunks: int
    body: bytes


def chat_streams() -> list[ChatStream]:
    """Every captured chat stream as the SSE body a server sent."""
    out = []
    for path in sorted(CHAT_CAPTURES.glob("*.jsonl")):
        lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        body = "".join(f"data: {line}\n\n" for line in lines) + "data: [DONE]\n\n"
        out.append(ChatStream(path.stem, len(lines), body.encode()))
    return out


def messages_bodies() -> list[bytes]:
    return [path.read_bytes() for path in sorted(MESSAGES_CAPTURES.glob("*.sse"))]


def responses_bodies() -> list[bytes]:
    return [path.read_bytes() for path in sorted(RESPONSES_CAPTURES.glob("*.sse"))]


def sdk_payloads(bodies: Sequence[bytes]) -> tuple[list[str], int]:
    """The payloads anthropic-sdk-python's `Stream` turns into events (it skips `ping`
    and events without a name, and raises on `error`), and how many events there are."""
    payloads, events = [], 0
    for body in bodies:
        for sse in SSEDecoder().iter_bytes(iter([body])):
            events += 1
            if sse.event not in (None, "ping", "error") and sse.data:
                payloads.append(sse.data)
    return payloads, events


def openai_payloads(bodies: Sequence[bytes]) -> tuple[list[str], int]:
    """The payloads openai-python's `Stream` turns into events (it stops at `[DONE]` and
    raises at a payload with an `error`), and how many events there are."""
    payloads, events = [], 0
    for body in bodies:
        read = True
        for sse in OpenAISSEDecoder().iter_bytes(iter([body])):
            events += 1
            if read and sse.data.startswith("[DONE]"):
                read = False
            if read:
                data = json.loads(sse.data)
                if isinstance(data, dict) and cast(dict[str, Any], data).get("error"):
                    read = False
                else:
                    payloads.append(sse.data)
    return payloads, events


# The paths ------------------------------------------------------------------------------

_dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
"""Events written as the wire has them (compact, UTF-8 as it is), as our writers do."""


def _chunks(body: bytes) -> Iterator[Any]:
    """The chunks of an SSE body, each read with `json.loads`: the least a reader does."""
    for line in body.split(b"\n"):
        if line.startswith(b"data: ") and line != b"data: [DONE]":
            yield json.loads(line[6:])


def linguafranca_bridge(body: bytes, protocol: str = "messages") -> bytes:
    """chat -> Messages (or Responses) with linguafranca, as its docstrings show it used."""
    events = linguafranca.convert_response_stream_json(
        _chunks(body),
        source_format=linguafranca.FormatName.OPENAI_CHAT_COMPLETIONS,
        target_format=TARGET_FORMAT[protocol],
    )
    return b"".join(f"event: {e['type']}\ndata: {_dumps(e)}\n\n".encode() for e in events)


def linguafranca_to(protocol: str) -> Callable[[bytes], bytes]:
    def bridge(body: bytes) -> bytes:
        return linguafranca_bridge(body, protocol)

    return bridge


def floor_bridge(body: bytes) -> bytes:
    """Every chunk read and written again as it was: no bridging at all."""
    return b"".join(f"data: {_dumps(chunk)}\n\n".encode() for chunk in _chunks(body))


def our_bridge(module: ModuleType, protocol: str = "messages") -> Callable[[bytes], bytes]:
    def bridge(body: bytes) -> bytes:
        return b"".join(module.write_parts(module.iter_parts(body), protocol=protocol))

    return bridge


def to_chat(module: ModuleType) -> Callable[[bytes], bytes]:
    def bridge(body: bytes) -> bytes:
        parts = module.iter_parts(body, protocol="messages")
        return b"".join(module.write_parts(parts, protocol="chat"))

    return bridge


def refused(streams: Sequence[ChatStream], protocol: str = "messages") -> dict[str, str]:
    """The streams linguafranca refuses, each with the first line of its error."""
    out = {}
    for stream in streams:
        try:
            linguafranca_bridge(stream.body, protocol)
        except linguafranca.ConversionError as error:
            out[stream.name] = f"{type(error).__name__}: {str(error).splitlines()[0]}"
    return out


def over(bridge: Callable[[bytes], bytes], bodies: Sequence[bytes]) -> Callable[[], None]:
    def run() -> None:
        for body in bodies:
            bridge(body)

    return run


def loads_all(loads: Callable[[str], object], payloads: Sequence[str]) -> Callable[[], None]:
    def run() -> None:
        for data in payloads:
            loads(data)

    return run


def sdk_event(data: str) -> object:
    """What `Stream.__stream__` does with an event's data (`_process_response_data`,
    without strict validation: the client's default)."""
    return construct_type(type_=cast(Any, RawMessageStreamEvent), value=json.loads(data))


def openai_event(data: str) -> object:
    """What openai-python's `Stream.__stream__` does with a Responses event's data
    (`_process_response_data` without strict validation, the client's default), the event
    `client.responses.stream()` then hands to its `ResponseStreamState`."""
    return openai_construct_type(type_=cast(Any, ResponseStreamEvent), value=json.loads(data))


def events_in(body: bytes) -> int:
    return body.count(b"\n\n")


def event_types(body: bytes) -> Counter[bytes]:
    """How many events of each type an SSE body holds."""
    return Counter(line[7:] for line in body.split(b"\n") if line.startswith(b"event: "))


# Measuring ------------------------------------------------------------------------------


@dataclass
class Paired:
    """CPU seconds of each path per round, and the ratio (anchor time / path time) of each
    pair measured back to back, per round."""

    seconds: dict[str, list[float]]
    ratios: dict[tuple[str, str], list[float]]

    def time(self, path: str) -> float:
        return statistics.median(self.seconds[path])

    def ratio(self, path: str, anchor: str) -> float:
        """How many times faster `path` ran than `anchor`: the median of the rounds."""
        if path == anchor:
            return 1.0
        if (path, anchor) in self.ratios:
            return statistics.median(self.ratios[(path, anchor)])
        return 1 / statistics.median(self.ratios[(anchor, path)])


def paired(
    ours: dict[str, Callable[[], None]],
    anchors: dict[str, Callable[[], None]],
    rounds: int,
) -> Paired:
    """Each of `ours` then every anchor, back to back, `rounds` times; each time the
    fastest of three runs."""
    for run in [*ours.values(), *anchors.values()]:
        run()  # warm-up
    gc.collect()
    result = Paired({name: [] for name in [*ours, *anchors]}, {})
    for _ in range(rounds):
        for name, run in ours.items():
            mine = fastest(run, 3)
            theirs = {anchor: fastest(call, 3) for anchor, call in anchors.items()}
            result.seconds[name].append(mine)
            for anchor, seconds in theirs.items():
                result.seconds[anchor].append(seconds)
                result.ratios.setdefault((name, anchor), []).append(seconds / mine)
            for a, b in permutations(theirs, 2):
                result.ratios.setdefault((a, b), []).append(theirs[b] / theirs[a])
    return result


@dataclass(frozen=True)
class Bridged:
    """chat -> one protocol: the streams of each column, what linguafranca refuses, the
    events each bridge wrote, and the paired times by column."""

    streams: dict[str, list[ChatStream]]  # the chat streams of each column of the bridge
    refused: dict[str, str]  # the streams linguafranca refuses, and why
    written: dict[str, int]  # events each bridge wrote over the streams both read
    bridge: dict[str, Paired]  # by column

    def chunks(self, on: str = ON) -> int:
        return sum(stream.chunks for stream in self.streams[on])


@dataclass(frozen=True)
class Typed:
    """One protocol's events read typed."""

    payloads: int
    typed: Paired
    captures: int
    events: int  # every event of the captures, whether the SDK builds one of it or not


@dataclass(frozen=True)
class Run:
    rounds: int
    bridged: dict[str, Bridged]  # by protocol
    read: dict[str, Typed]  # by protocol
    chat_seconds: dict[str, float]  # Messages -> chat, per target: the median of the rounds

    def measured(self, goal: Goal) -> list[tuple[str, float]]:
        """The goals speak of the streams both bridges read (ON)."""
        for protocol in PROTOCOLS:
            if goal.kind == BRIDGE_KIND[protocol]:
                paths = self.bridged[protocol].bridge[ON]
            elif goal.kind == TYPED_KIND[protocol]:
                paths = self.read[protocol].typed
            else:
                continue
            return [(ON, paths.ratio(goal.path, goal.anchor))]
        raise ValueError(goal.kind)


def bridges(bodies: Sequence[bytes], rounds: int, protocol: str = "messages") -> Paired:
    """chat -> `protocol` over `bodies`: every target, linguafranca and the floor."""
    ours = {bridge_path(n): over(our_bridge(m, protocol), bodies) for n, m in TARGETS.items()}
    theirs = {LINGUAFRANCA: over(linguafranca_to(protocol), bodies)}
    theirs[BRIDGE_FLOOR] = over(floor_bridge, bodies)
    return paired(ours, theirs, rounds)


def bridged(streams: Sequence[ChatStream], protocol: str) -> Bridged:
    """The columns of chat -> `protocol` and the events written, not yet measured."""
    refusals = refused(streams, protocol)
    both = [stream for stream in streams if stream.name not in refusals]
    theirs = {s.name: linguafranca_bridge(s.body, protocol) for s in both}
    ours = {n: {s.name: our_bridge(m, protocol)(s.body) for s in both} for n, m in TARGETS.items()}
    written = {LINGUAFRANCA: sum(map(events_in, theirs.values()))}
    written |= {bridge_path(n): sum(map(events_in, out.values())) for n, out in ours.items()}
    alike = [
        s
        for s in both
        if all(event_types(theirs[s.name]) == event_types(o[s.name]) for o in ours.values())
    ]
    return Bridged({ON: both, ALIKE: alike}, refusals, written, {})


def run(rounds: int) -> Run:
    streams = chat_streams()
    inputs = {
        "messages": (MESSAGES, SDK, sdk_event, messages_bodies(), sdk_payloads),
        "responses": (RESPONSES, OPENAI_SDK, openai_event, responses_bodies(), openai_payloads),
    }
    out: dict[str, Bridged] = {}
    read: dict[str, Typed] = {}
    with warnings.catch_warnings():
        # What Messages or Responses cannot hold is said in a warning per stream.
        warnings.simplefilter("ignore")
        columns = {protocol: bridged(streams, protocol) for protocol in PROTOCOLS}
        gc.collect()
        gc.freeze()  # the inputs are not the collector's to walk, sample by sample
        for protocol, (modules, sdk, parse, captures, payloads_of) in inputs.items():
            before = columns[protocol]
            measured = {
                on: bridges([s.body for s in chosen], rounds, protocol)
                for on, chosen in before.streams.items()
            }
            out[protocol] = Bridged(before.streams, before.refused, before.written, measured)
            payloads, events = payloads_of(captures)
            typed = paired(
                {typed_path(n): loads_all(m.loads, payloads) for n, m in modules.items()},
                {sdk: loads_all(parse, payloads), TYPED_FLOOR: loads_all(json.loads, payloads)},
                rounds,
            )
            read[protocol] = Typed(len(payloads), typed, len(captures), events)
        captures = messages_bodies()
        back = paired({n: over(to_chat(m), captures) for n, m in TARGETS.items()}, {}, rounds)
    return Run(
        rounds=rounds,
        bridged=out,
        read=read,
        chat_seconds={name: back.time(name) for name in TARGETS},
    )


# The report -----------------------------------------------------------------------------


def bridge_section(result: Run, protocol: str = "messages") -> Section:
    paths = [BRIDGE_FLOOR, LINGUAFRANCA, *(bridge_path(t) for t in TARGETS)]
    done = result.bridged[protocol]
    rates = {
        on: {p: done.chunks(on) / measured.time(p) for p in paths}
        for on, measured in done.bridge.items()
    }

    def ratio(on: str, path: str, anchor: str) -> float:
        return done.bridge[on].ratio(path, anchor)

    kind = BRIDGE_KIND[protocol]
    return section(kind, "chunks/s", rates, (BRIDGE_FLOOR, LINGUAFRANCA), ratio)


def typed_section(result: Run, protocol: str = "messages") -> Section:
    sdk = SDK if protocol == "messages" else OPENAI_SDK
    paths = [TYPED_FLOOR, sdk, *(typed_path(t) for t in TARGETS)]
    done = result.read[protocol]
    rates = {ON: {p: done.payloads / done.typed.time(p) for p in paths}}
    kind = TYPED_KIND[protocol]
    return section(kind, "events/s", rates, (TYPED_FLOOR, sdk), _ratio(done.typed))


def _ratio(measured: Paired) -> Callable[[str, str, str], float]:
    def ratio(_on: str, path: str, anchor: str) -> float:
        return measured.ratio(path, anchor)

    return ratio


def _rows(data: Section, on: str = ON) -> list[list[str]]:
    return [
        [
            row["path"],
            f"{row['value'][on] / 1000:,.1f}k",
            f"{1e6 / row['value'][on]:.2f}",
            f"{row['vs_floor'][on]:.2f}",
            f"{row['vs_openai'][on]:.2f}",
        ]
        for row in data["rows"]
    ]


def _goal_rows(result: Run) -> list[list[str]]:
    rows = []
    for goal in GOALS:
        for _, value in result.measured(goal):
            rows.append([goal.name, goal.target(), f"{value:.2f}", verdict(goal.holds(value))])
    return rows


def _bridge_lines(result: Run, protocol: str, about: Sequence[str]) -> list[str]:
    """The two tables of chat -> `protocol`: the streams both read, those bridged alike."""
    done, data, name = result.bridged[protocol], bridge_section(result, protocol), NAME[protocol]
    refusals = [f"- `{stream}`: {why}" for stream, why in done.refused.items()]
    written = ", ".join(f"{path.split()[0]} {count:,}" for path, count in done.written.items())
    header = ["path", "chunks/s", "µs/chunk", "vs floor", "vs linguafranca"]
    return [
        f"## chat -> {name}, bytes to bytes ({len(done.streams[ON])} captured chat "
        f"streams, {done.chunks():,} chunks)",
        "",
        *about,
        "Streams linguafranca refuses, left out of every row:",
        "",
        *refusals,
        "",
        f"{name} events written over these streams: {written}.",
        "",
        *table(header, _rows(data)),
        "",
        f"### Of these, the {len(done.streams[ALIKE])} streams both bridge to the same "
        f"events ({done.chunks(ALIKE):,} chunks)",
        "",
        f"As many {name} events of each type from linguafranca as from every target; on the",
        "other streams it writes fewer: it drops reasoning sent as `reasoning`, the arguments",
        "of a call sent whole in its first chunk, and a call whose chunks carry no name.",
        "",
        *table(header, _rows(data, ALIKE)),
    ]


def report(result: Run) -> str:
    typed, responses_typed = typed_section(result), typed_section(result, "responses")
    messages, responses = result.read["messages"], result.read["responses"]
    back = [
        [
            name,
            f"{messages.events / seconds / 1000:,.1f}k",
            f"{seconds / messages.events * 1e6:.2f}",
        ]
        for name, seconds in result.chat_seconds.items()
    ]
    versions = ", ".join(f"{package} {v}" for package, v in VERSIONS.items())
    lines = [
        "# Protocol benchmark results",
        "",
        f"Written by `make bench` (`python -m bench.protocols`). Python {PYTHON}; {versions}.",
        "Inputs read whole from memory. Each ratio is the median over "
        f"{result.rounds} rounds of the",
        "two paths' CPU times measured back to back, each the fastest of three runs; rates are",
        "the medians of the samples. Warnings of what Messages or Responses cannot hold are",
        "ignored.",
        "",
        *_bridge_lines(
            result,
            "messages",
            [
                "Each stream's SSE body in, the Messages SSE body out. Ours: the chat module's",
                "`b''.join(write_parts(iter_parts(body), protocol='messages'))`. linguafranca:",
                "each `data:` line read with `json.loads`, `convert_response_stream_json` from",
                "OPENAI_CHAT_COMPLETIONS to ANTHROPIC_MESSAGES, each event it yields written",
                "with `json.dumps` (compact, UTF-8) as `event: <type>` and `data: <json>`. The",
                "floor reads each chunk with `json.loads` and writes it again with `json.dumps`,",
                "bridging nothing.",
            ],
        ),
        "",
        f"## Messages events read typed ({messages.captures} captures, "
        f"{messages.payloads:,} events)",
        "",
        "Ours: `loads(data)` of generated/messages_<target>.py. anthropic-sdk-python:",
        "`construct_type(type_=RawMessageStreamEvent, value=json.loads(data))`, what its",
        "`Stream` does with each event (`_process_response_data`; strict validation is off by",
        "default). The payloads are those its `Stream` builds events of (it skips `ping` and",
        "raises on `error`), the same for every row.",
        "",
        *table(
            ["path", "events/s", "µs/event", "vs json.loads", "vs anthropic-sdk-python"],
            _rows(typed),
        ),
        "",
        f"## Messages -> chat, bytes to bytes ({messages.captures} captures, "
        f"{messages.events:,} events; ours only)",
        "",
        "`write_parts(iter_parts(body, protocol='messages'), protocol='chat')`, for the record.",
        "",
        *table(["target", "events/s", "µs/event"], back),
        "",
        *_bridge_lines(
            result,
            "responses",
            [
                "Each stream's SSE body in, the Responses SSE body out. Ours: the chat module's",
                "`b''.join(write_parts(iter_parts(body), protocol='responses'))`. linguafranca:",
                "as above, `convert_response_stream_json` from OPENAI_CHAT_COMPLETIONS to",
                "OPEN_RESPONSES, each event written as `event: <type>` and `data: <json>`. The",
                "floor is the same as above.",
            ],
        ),
        "",
        f"## Responses events read typed ({responses.captures} captures, "
        f"{responses.payloads:,} events)",
        "",
        "Ours: `loads(data)` of generated/responses_<target>.py. openai-python:",
        "`construct_type(type_=ResponseStreamEvent, value=json.loads(data))`, what its",
        "`Stream` does with each event (`_process_response_data`; strict validation is off by",
        "default) before `client.responses.stream()` accumulates it. The payloads are those",
        "its `Stream` builds events of (it stops at `[DONE]` and raises at a payload with an",
        f"`error`; {responses.events:,} events in all), the same for every row.",
        "",
        *table(
            ["path", "events/s", "µs/event", "vs json.loads", "vs openai-python"],
            _rows(responses_typed),
        ),
        "",
        "## Goals",
        "",
        *table(["goal", "target", "measured", "holds"], _goal_rows(result)),
    ]
    return "\n".join(lines) + "\n"


def results(result: Run) -> dict[str, Any]:
    """The run as bench/charts.py reads it: four sections (each with a floor and its
    third-party anchor in the place of openai-python's) and the goals."""
    goals: list[GoalRecord] = [goal.record(result.measured(goal)) for goal in GOALS]
    messages, responses = result.bridged["messages"], result.bridged["responses"]
    read = result.read["responses"]
    return {
        "benchmark": "protocols",
        "python": PYTHON,
        "versions": VERSIONS,
        "rounds": result.rounds,
        "targets": list(TARGETS),
        "chunks": {on: messages.chunks(on) for on in messages.streams},
        "streams": {on: [s.name for s in streams] for on, streams in messages.streams.items()},
        "refused": messages.refused,
        "written": messages.written,
        "payloads": result.read["messages"].payloads,
        "bridge": bridge_section(result),
        "typed": typed_section(result),
        "to_chat": {
            "events": result.read["messages"].events,
            "events_per_s": {
                name: round(result.read["messages"].events / seconds, 1)
                for name, seconds in result.chat_seconds.items()
            },
        },
        "responses": {
            "chunks": {on: responses.chunks(on) for on in responses.streams},
            "streams": {on: [s.name for s in streams] for on, streams in responses.streams.items()},
            "refused": responses.refused,
            "written": responses.written,
            "captures": read.captures,
            "events": read.events,
            "payloads": read.payloads,
        },
        "responses_bridge": bridge_section(result, "responses"),
        "responses_typed": typed_section(result, "responses"),
        "goals": goals,
    }


def profile(target: str, top: int, protocol: str = "messages") -> None:
    """cProfile of `target`'s chat -> `protocol` bridge over the streams both bridges read,
    the `top` functions by their own time."""
    streams = chat_streams()
    refusals = refused(streams, protocol)
    bodies = [stream.body for stream in streams if stream.name not in refusals]
    run = over(our_bridge(TARGETS[target], protocol), bodies)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run()
        profiler = cProfile.Profile()
        profiler.enable()
        for _ in range(5):
            run()
        profiler.disable()
    pstats.Stats(profiler).sort_stats("tottime").print_stats(top)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    add_output_options(parser, RESULTS_JSON)
    parser.add_argument("--profile", choices=list(TARGETS), help="profile a target's bridge")
    parser.add_argument("--protocol", choices=PROTOCOLS, default="messages", help="of --profile")
    parser.add_argument("--top", type=int, default=30, help="rows of the profile")
    args = parser.parse_args(argv)
    if args.profile:
        profile(args.profile, args.top, args.protocol)
        return 0
    result = run(rounds=1 if args.quick else 7)
    text = report(result)
    print(text)
    write_run(args, (RESULTS, text), (RESULTS_JSON, results(result)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
