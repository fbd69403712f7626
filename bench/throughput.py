"""Parse and serialise throughput of every target beside the paths users have today.

Every path runs over a whole corpus per sample; samples of all paths of a corpus are
interleaved round-robin after a warm-up pass, and the median is kept. Ratios are taken
against json.loads (parsing) and json.dumps of the dicts (serialising) measured in the
same run, so they hold on any machine. Memory is what tracemalloc sees retained while
2,000 parsed chunks are held in a list. The goals of issue 5 are checked as ratios.

    python -m bench.throughput            # full run; writes bench/results.md
    python -m bench.throughput --quick    # a small corpus, to prove it runs (CI)
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import json
import statistics
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from openai._models import construct_type
from openai.types.chat import ChatCompletionChunk as OpenAIChunk

from bench import structs
from bench.corpus import CORPORA, corpus
from bench.targets import TARGETS

RESULTS = Path(__file__).resolve().parent / "results.md"
GENERATED = Path(__file__).resolve().parent.parent / "generated"


def without_orjson(name: str) -> ModuleType:
    """A second copy of a generated module that finds no orjson: the standard library only."""
    saved = sys.modules.get("orjson")
    sys.modules["orjson"] = None  # type: ignore[assignment]  # makes `import orjson` fail
    try:
        spec = importlib.util.spec_from_file_location(f"stdlib_{name}", GENERATED / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        return module
    finally:
        if saved is not None:
            sys.modules["orjson"] = saved


STDLIB_ONLY = {
    "dataclasses": without_orjson("chunk_dataclasses"),
    "typeddicts": without_orjson("chunk_typeddicts"),
}

Parse = Callable[[str], Any]
PARSERS: dict[str, Parse] = {
    "json.loads": json.loads,
    **{f"{name} loads": module.loads for name, module in TARGETS.items()},
    **{f"{name} loads, standard library only": m.loads for name, m in STDLIB_ONLY.items()},
    "openai model_validate_json": OpenAIChunk.model_validate_json,
    "openai stream default (json.loads + construct)": lambda text: construct_type(
        value=json.loads(text), type_=OpenAIChunk
    ),
    "msgspec Struct decode (drops unknown keys)": structs.DECODER.decode,
}
# Each serialiser starts from the objects of the parser named beside it.
SERIALISERS: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "json.dumps(dict)": (
        "json.loads",
        lambda obj: json.dumps(obj, ensure_ascii=False, separators=(",", ":")),
    ),
    **{f"{name} dumps": (f"{name} loads", module.dumps) for name, module in TARGETS.items()},
    "openai model_dump_json(exclude_unset=True)": (
        "openai model_validate_json",
        lambda chunk: chunk.model_dump_json(exclude_unset=True),
    ),
    "msgspec Struct encode": ("msgspec Struct decode (drops unknown keys)", structs.ENCODER.encode),
}


@dataclass(frozen=True)
class Goal:
    name: str
    kind: str  # "parse", "dump" or "memory"
    path: str
    anchor: str
    at_least: float | None = None
    at_most: float | None = None


GOALS = (
    Goal("pydantic loads vs openai", "parse", "pydantic loads", "openai model_validate_json", 1.0),
    Goal(
        "pydantic dumps vs openai",
        "dump",
        "pydantic dumps",
        "openai model_dump_json(exclude_unset=True)",
        1.0,
    ),
    Goal("pydantic memory vs openai", "memory", "pydantic", "openai", at_most=1.0),
    Goal(
        "dataclasses loads, stdlib only, vs json.loads",
        "parse",
        "dataclasses loads, standard library only",
        "json.loads",
        0.6,
    ),
    Goal(
        "dataclasses loads with orjson vs json.loads",
        "parse",
        "dataclasses loads",
        "json.loads",
        1.0,
    ),
    Goal("dataclasses dumps vs json.dumps", "dump", "dataclasses dumps", "json.dumps(dict)", 0.8),
    Goal(
        "typeddicts loads, stdlib only, vs json.loads",
        "parse",
        "typeddicts loads, standard library only",
        "json.loads",
        0.6,
    ),
    Goal("dataclasses memory vs json.loads", "memory", "dataclasses", "json.loads", at_most=0.5),
    Goal("msgspec loads vs json.loads", "parse", "msgspec loads", "json.loads", 2.0),
    Goal("msgspec memory vs json.loads", "memory", "msgspec", "json.loads", at_most=0.5),
)


def time_paths(paths: dict[str, Callable[[], object]], repeats: int) -> dict[str, float]:
    """Median seconds per call of each path, samples interleaved round-robin."""
    for run in paths.values():
        run()  # warm-up
    samples: dict[str, list[float]] = {name: [] for name in paths}
    gc.collect()
    for _ in range(repeats):
        for name, run in paths.items():
            start = time.perf_counter()
            run()
            samples[name].append(time.perf_counter() - start)
    return {name: statistics.median(times) for name, times in samples.items()}


def measure_corpus(lines: list[str], repeats: int) -> tuple[dict[str, float], dict[str, float]]:
    """Chunks per second of every parser and serialiser on one corpus."""
    parsed = {name: [parse(line) for line in lines] for name, parse in PARSERS.items()}

    def parse_all(parse: Parse) -> Callable[[], object]:
        return lambda: [parse(line) for line in lines]

    def dump_all(dump: Callable[[Any], Any], objects: list[Any]) -> Callable[[], object]:
        return lambda: [dump(obj) for obj in objects]

    # The objects held for the serialisers must not be walked by every collection the
    # timed paths trigger, or whichever path happens to trigger them pays for it.
    gc.collect()
    gc.freeze()
    try:
        parse_times = time_paths({n: parse_all(p) for n, p in PARSERS.items()}, repeats)
        dump_paths = {n: dump_all(d, parsed[source]) for n, (source, d) in SERIALISERS.items()}
        dump_times = time_paths(dump_paths, repeats)
    finally:
        gc.unfreeze()
    rate = len(lines)
    return (
        {name: rate / seconds for name, seconds in parse_times.items()},
        {name: rate / seconds for name, seconds in dump_times.items()},
    )


MEMORY_PATHS: dict[str, Parse] = {
    "json.loads": json.loads,
    **{name: module.loads for name, module in TARGETS.items()},
    "openai": OpenAIChunk.model_validate_json,
    "msgspec Struct (drops unknown keys)": structs.DECODER.decode,
}


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


def generate_seconds() -> float:
    """Wall time of a cold `python -m generator check`: the whole pipeline, in memory."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "generator", "check"], check=True, capture_output=True)
    return time.perf_counter() - start


def run(chunks: int, repeats: int) -> str:
    corpora = {name: corpus(name, chunks) for name in CORPORA}
    parse: dict[str, dict[str, float]] = {}
    dump: dict[str, dict[str, float]] = {}
    memory: dict[str, dict[str, int]] = {}
    for name, lines in corpora.items():
        parse[name], dump[name] = measure_corpus(lines, repeats)
        memory[name] = {path: held_bytes(p, lines) for path, p in MEMORY_PATHS.items()}
    return report(chunks, repeats, parse, dump, memory, generate_seconds())


def _table(header: Sequence[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(row) + " |" for row in rows]


def report(
    chunks: int,
    repeats: int,
    parse: dict[str, dict[str, float]],
    dump: dict[str, dict[str, float]],
    memory: dict[str, dict[str, int]],
    generate: float,
) -> str:
    def rows(rates: dict[str, dict[str, float]], floor: str) -> list[list[str]]:
        out = []
        for path in next(iter(rates.values())):
            cells = [
                f"{rates[c][path] / 1000:,.1f}k ({rates[c][path] / rates[c][floor]:.2f})"
                for c in CORPORA
            ]
            out.append([path, *cells])
        return out

    lines = [
        "# Benchmark results",
        "",
        f"Written by `make bench` (`python -m bench.throughput`): {chunks:,} chunks per corpus,",
        f"median of {repeats} interleaved samples after a warm-up. Python {sys.version.split()[0]}.",
        "Cells: chunks per second (ratio to the floor of the table, measured in the same run).",
        "",
        "## Parse (ratio to json.loads)",
        "",
        *_table(["path", *CORPORA], rows(parse, "json.loads")),
        "",
        "## Serialise (ratio to json.dumps of the json.loads dicts)",
        "",
        *_table(["path", *CORPORA], rows(dump, "json.dumps(dict)")),
        "",
        "## Memory to hold the parsed chunks (tracemalloc; ratio to json.loads dicts)",
        "",
    ]
    mem_rows = []
    for path in MEMORY_PATHS:
        cells = [
            f"{memory[c][path] / chunks:,.0f} B/chunk ({memory[c][path] / memory[c]['json.loads']:.2f})"
            for c in CORPORA
        ]
        mem_rows.append([path, *cells])
    lines += _table(["held as", *CORPORA], mem_rows)
    lines += ["", "## Goals (issue 5), on every corpus", ""]
    goal_rows = []
    for goal in GOALS:
        table = {"parse": parse, "dump": dump}.get(goal.kind)
        ratios = []
        for c in CORPORA:
            if table is not None:
                ratios.append(table[c][goal.path] / table[c][goal.anchor])
            else:
                ratios.append(memory[c][goal.path] / memory[c][goal.anchor])
        if goal.at_least is not None:
            target, holds = f">= {goal.at_least}x", all(r >= goal.at_least for r in ratios)
        else:
            assert goal.at_most is not None
            target, holds = f"<= {goal.at_most}x", all(r <= goal.at_most for r in ratios)
        cells = [f"{r:.2f}" for r in ratios]
        goal_rows.append([goal.name, target, *cells, "yes" if holds else "**no**"])
    goal_rows.append(
        [
            "make generate, cold (s)",
            "<= 2 s",
            f"{generate:.2f}",
            "",
            "",
            "",
            "yes" if generate <= 2 else "**no**",
        ]
    )
    lines += _table(["goal", "target", *CORPORA, "holds"], goal_rows)
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small corpus; writes nothing")
    args = parser.parse_args(argv)
    text = run(chunks=200, repeats=3) if args.quick else run(chunks=2_000, repeats=9)
    print(text)
    if not args.quick:
        write_results(RESULTS, text)
    return 0


def write_results(path: Path, text: str) -> None:
    """Write a full run's report beside the benchmark, and say where."""
    path.write_text(text)
    print(f"wrote {path.relative_to(Path.cwd()) if path.is_relative_to(Path.cwd()) else path}")


if __name__ == "__main__":
    raise SystemExit(main())
