"""Parse and serialise throughput of every target beside the paths users have today.

Every path runs over a whole corpus per sample; samples of all paths of a corpus are
interleaved round-robin after a warm-up pass, and the median is kept. Ratios are taken
against json.loads (parsing) and json.dumps of the dicts (serialising), and against
openai-python, measured in the same run, so they hold on any machine. Memory is what
tracemalloc sees retained while 2,000 parsed chunks are held in a list. The goals of
issue 15 are checked as ratios, on every corpus.

    python -m bench.throughput            # full run; writes bench/results.md and .json
    python -m bench.throughput --quick    # a small corpus, to prove it runs (CI)
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openai._models import construct_type
from openai.types.chat import ChatCompletionChunk as OpenAIChunk

from bench import structs
from bench.ceiling import PaddedChunk
from bench.common import (
    PYTHON,
    Goal,
    add_output_options,
    section,
    table,
    time_paths,
    verdict,
    write_run,
)
from bench.corpus import CORPORA, corpus
from bench.targets import STDLIB_ONLY, TARGETS, vendorless

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results.md"
RESULTS_JSON = HERE / "results.json"

NONE = ", --vendors none"
PYDANTIC_NONE = vendorless("pydantic")
"""The pydantic target with no vendor's fields: the core chunk only, as openai-python has."""

PARSE_FLOOR = "json.loads"
DUMP_FLOOR = "json.dumps(dict)"
OPENAI_LOADS = "openai model_validate_json"
OPENAI_DUMPS = "openai model_dump_json(exclude_unset=True)"
CEILING = ", padded to all-vendor fields (ceiling)"
"""openai-python's models with as many fields as the all-vendor ones: bench/ceiling.py."""
MEMORY_FLOOR = "json.loads"
MEMORY_OPENAI = "openai"

Parse = Callable[[str], Any]
PARSERS: dict[str, Parse] = {
    PARSE_FLOOR: json.loads,
    **{f"{name} loads": module.loads for name, module in TARGETS.items()},
    f"pydantic loads{NONE}": PYDANTIC_NONE.loads,
    **{f"{name} loads, standard library only": m.loads for name, m in STDLIB_ONLY.items()},
    OPENAI_LOADS: OpenAIChunk.model_validate_json,
    f"{OPENAI_LOADS}{CEILING}": PaddedChunk.model_validate_json,
    "openai stream default (json.loads + construct)": lambda text: construct_type(
        value=json.loads(text), type_=OpenAIChunk
    ),
    "msgspec Struct decode (drops unknown keys)": structs.DECODER.decode,
}
# Each serialiser starts from the objects of the parser named beside it.
SERIALISERS: dict[str, tuple[str, Callable[[Any], Any]]] = {
    DUMP_FLOOR: (
        PARSE_FLOOR,
        lambda obj: json.dumps(obj, ensure_ascii=False, separators=(",", ":")),
    ),
    **{f"{name} dumps": (f"{name} loads", module.dumps) for name, module in TARGETS.items()},
    f"pydantic dumps{NONE}": (f"pydantic loads{NONE}", PYDANTIC_NONE.dumps),
    OPENAI_DUMPS: (OPENAI_LOADS, lambda chunk: chunk.model_dump_json(exclude_unset=True)),
    f"{OPENAI_DUMPS}{CEILING}": (
        f"{OPENAI_LOADS}{CEILING}",
        lambda chunk: chunk.model_dump_json(exclude_unset=True),
    ),
    "msgspec Struct encode": ("msgspec Struct decode (drops unknown keys)", structs.ENCODER.encode),
}
MEMORY_PATHS: dict[str, Parse] = {
    MEMORY_FLOOR: json.loads,
    **{name: module.loads for name, module in TARGETS.items()},
    f"pydantic{NONE}": PYDANTIC_NONE.loads,
    MEMORY_OPENAI: OpenAIChunk.model_validate_json,
    f"{MEMORY_OPENAI}{CEILING}": PaddedChunk.model_validate_json,
    "msgspec Struct (drops unknown keys)": structs.DECODER.decode,
}

GOALS = (
    Goal(
        "pydantic dumps vs openai `model_dump_json` (all vendors)",
        "dump",
        "pydantic dumps",
        OPENAI_DUMPS,
        1.0,
    ),
    Goal(
        "pydantic loads vs openai `model_validate_json`, `--vendors none`",
        "parse",
        f"pydantic loads{NONE}",
        OPENAI_LOADS,
        1.0,
    ),
    Goal("pydantic loads vs openai, all vendors", "parse", "pydantic loads", OPENAI_LOADS, 1.0),
    Goal(
        "pydantic memory per held chunk vs openai",
        "memory",
        "pydantic",
        MEMORY_OPENAI,
        at_most=1.0,
    ),
    Goal(
        "dataclasses loads vs json.loads, standard library only",
        "parse",
        "dataclasses loads, standard library only",
        PARSE_FLOOR,
        0.5,
    ),
    Goal(
        "typeddicts loads vs json.loads, standard library only",
        "parse",
        "typeddicts loads, standard library only",
        PARSE_FLOOR,
        0.5,
    ),
    Goal("msgspec loads vs json.loads", "parse", "msgspec loads", PARSE_FLOOR, 2.5),
    Goal(
        "make generate, cold (s)",
        "seconds",
        "python -m generator check",
        at_most=2.0,
        unit=" s",
    ),
)


# Measuring ------------------------------------------------------------------------------


def measure_corpus(lines: list[str], repeats: int) -> tuple[dict[str, float], dict[str, float]]:
    """Chunks per second of every parser and serialiser on one corpus."""
    parsed = {name: [parse(line) for line in lines] for name, parse in PARSERS.items()}

    def parse_all(parse: Parse) -> Callable[[], object]:
        return lambda: [parse(line) for line in lines]

    def dump_all(dump: Callable[[Any], Any], objects: list[Any]) -> Callable[[], object]:
        return lambda: [dump(obj) for obj in objects]

    # The objects held for the serialisers must not be walked by every collection the
    # timed paths trigger, or whichever path happens to trigger them pays for it (`run`
    # thaws them at its end; reference counting frees them meanwhile).
    gc.collect()
    gc.freeze()
    parse_times = time_paths({n: parse_all(p) for n, p in PARSERS.items()}, repeats)
    dump_paths = {n: dump_all(d, parsed[source]) for n, (source, d) in SERIALISERS.items()}
    dump_times = time_paths(dump_paths, repeats)
    rate = len(lines)
    return (
        {name: rate / seconds for name, seconds in parse_times.items()},
        {name: rate / seconds for name, seconds in dump_times.items()},
    )


def held_bytes(parse: Parse, lines: list[str]) -> int:
    """Bytes tracemalloc sees retained by the parsed chunks (and their list)."""
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    held = [parse(line) for line in lines]
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    del held
    return after - before


def generate_seconds(runs: int) -> tuple[float, ...]:
    """Wall times of cold `python -m generator check` runs (the whole pipeline of `make
    generate`, in memory), each in a fresh process. `run` times them before it builds a
    corpus, so that nothing of the benchmark itself loads the machine meanwhile."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        command = [sys.executable, "-m", "generator", "check"]
        subprocess.run(command, check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return tuple(times)


@dataclass(frozen=True)
class Run:
    """What one run measured, by corpus and then path."""

    chunks: int
    repeats: int
    parse: dict[str, dict[str, float]]  # chunks per second
    dump: dict[str, dict[str, float]]  # chunks per second
    memory: dict[str, dict[str, float]]  # bytes held per chunk
    generate_runs: tuple[float, ...]  # seconds of each cold run

    @property
    def generate(self) -> float:
        """The median of the cold runs."""
        return statistics.median(self.generate_runs)

    def measured(self, goal: Goal) -> list[tuple[str, float]]:
        """The ratio `goal` speaks of on each corpus (the seconds, for the generator's)."""
        if goal.kind == "seconds":
            runs = len(self.generate_runs)
            return [(f"median of {runs} cold runs" if runs > 1 else "cold run", self.generate)]
        values = {"parse": self.parse, "dump": self.dump, "memory": self.memory}[goal.kind]
        return [(c, values[c][goal.path] / values[c][goal.anchor]) for c in CORPORA]


def run(chunks: int, repeats: int, generate_runs: int) -> Run:
    generate = generate_seconds(generate_runs)
    corpora = {name: corpus(name, chunks) for name in CORPORA}
    parse: dict[str, dict[str, float]] = {}
    dump: dict[str, dict[str, float]] = {}
    memory: dict[str, dict[str, float]] = {}
    # What the process holds from here on (its modules, the corpora) is frozen: each of
    # the collections below walks only what was made since, not every module again.
    gc.collect()
    gc.freeze()
    try:
        for name, lines in corpora.items():
            parse[name], dump[name] = measure_corpus(lines, repeats)
            memory[name] = {path: held_bytes(p, lines) / chunks for path, p in MEMORY_PATHS.items()}
    finally:
        gc.unfreeze()
    return Run(chunks, repeats, parse, dump, memory, generate)


# Reporting ------------------------------------------------------------------------------


Cell = Callable[[float, float], str]


def _rate(value: float, ratio: float) -> str:
    return f"{value / 1000:,.1f}k ({ratio:.2f})"


def _bytes(value: float, ratio: float) -> str:
    return f"{value:,.0f} B/chunk ({ratio:.2f})"


def _rows(values: dict[str, dict[str, float]], floor: str, cell: Cell) -> list[list[str]]:
    """A row per path: its value on each corpus and the ratio to `floor`."""
    return [
        [path, *(cell(values[c][path], values[c][path] / values[c][floor]) for c in CORPORA)]
        for path in values[CORPORA[0]]
    ]


def _goal_rows(result: Run) -> list[list[str]]:
    rows: list[list[str]] = []
    for goal in GOALS:
        measured = result.measured(goal)
        cells = [f"{value:.2f}" for _, value in measured]
        cells += [""] * (len(CORPORA) - len(cells))
        held = all(goal.holds(value) for _, value in measured)
        rows.append([goal.name, goal.target(), *cells, verdict(held)])
    return rows


def report(result: Run) -> str:
    lines = [
        "# Benchmark results",
        "",
        f"Written by `make bench` (`python -m bench.throughput`): {result.chunks:,} chunks per",
        f"corpus, median of {result.repeats} interleaved samples after a warm-up. Python {PYTHON}.",
        "Cells: chunks per second (ratio to the floor of the table, measured in the same run).",
        f"The `{NONE[2:]}` rows are the pydantic target generated with no vendor's fields.",
        "",
        "## Parse (ratio to json.loads)",
        "",
        *table(["path", *CORPORA], _rows(result.parse, PARSE_FLOOR, _rate)),
        "",
        "## Serialise (ratio to json.dumps of the json.loads dicts)",
        "",
        *table(["path", *CORPORA], _rows(result.dump, DUMP_FLOOR, _rate)),
        "",
        "## Memory to hold the parsed chunks (tracemalloc; ratio to json.loads dicts)",
        "",
        *table(["held as", *CORPORA], _rows(result.memory, MEMORY_FLOOR, _bytes)),
        "",
        "## Goals (issue 15), on every corpus",
        "",
        *table(["goal", "target", *CORPORA, "holds"], _goal_rows(result)),
    ]
    return "\n".join(lines) + "\n"


def results(result: Run) -> dict[str, Any]:
    """The rates, ratios and goals of a run, for bench/results.json (and bench/charts.py)."""
    return {
        "benchmark": "throughput",
        "python": PYTHON,
        "chunks": result.chunks,
        "repeats": result.repeats,
        "targets": list(TARGETS),
        "parse": section("parse", "chunks/s", result.parse, (PARSE_FLOOR, OPENAI_LOADS)),
        "dump": section("dump", "chunks/s", result.dump, (DUMP_FLOOR, OPENAI_DUMPS)),
        "memory": section("memory", "B/chunk", result.memory, (MEMORY_FLOOR, MEMORY_OPENAI)),
        "generate_seconds": round(result.generate, 3),
        "generate_runs": [round(seconds, 3) for seconds in result.generate_runs],
        "goals": [goal.record(result.measured(goal)) for goal in GOALS],
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    add_output_options(parser, RESULTS_JSON)
    args = parser.parse_args(argv)
    if args.quick:  # a test's run: `make generate` timed once
        result = run(chunks=200, repeats=3, generate_runs=1)
    else:
        result = run(chunks=2_000, repeats=9, generate_runs=3)
    text = report(result)
    print(text)
    write_run(args, (RESULTS, text), (RESULTS_JSON, results(result)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
