"""What the benchmarks share: timing, goals, tables, and the files a full run writes.

The JSON files (bench/results.json, bench/streams.json) have the shapes of the TypedDicts
below; bench/charts.py draws them.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

PYTHON = sys.version.split()[0]


def time_paths(paths: dict[str, Callable[[], object]], repeats: int) -> dict[str, float]:
    """Median CPU seconds per call of each path, samples interleaved round-robin.

    CPU time of this thread, not wall time: the paths run in this thread alone, and on a
    shared (virtual) machine wall time also counts whatever else ran meanwhile, which
    moved single ratios by 10-20 % between runs."""
    for run in paths.values():
        run()  # warm-up
    samples: dict[str, list[float]] = {name: [] for name in paths}
    gc.collect()
    for _ in range(repeats):
        for name, run in paths.items():
            start = time.thread_time()
            run()
            samples[name].append(time.thread_time() - start)
    return {name: statistics.median(times) for name, times in samples.items()}


def fastest(run: Callable[[], object], repeats: int) -> float:
    """The fewest CPU seconds of `repeats` runs of `run`."""
    best = float("inf")
    for _ in range(repeats):
        start = time.process_time()
        run()
        best = min(best, time.process_time() - start)
    return best


# The JSON files ---------------------------------------------------------------------------


class Row(TypedDict):
    """One path (parser, serialiser, reader...) measured on each corpus or stream."""

    path: str
    value: dict[str, float]  # in the section's unit, by corpus or stream
    vs_floor: dict[str, float]
    vs_openai: dict[str, float]


class Section(TypedDict):
    """A table of rows and the two anchors their ratios are taken against."""

    kind: str  # the kind of the goals that speak of it: "parse", "dump", "memory"...
    unit: str
    on: list[str]  # the corpora or streams, in order (the files sort their keys)
    floor: str
    openai: str
    rows: list[Row]


class Measure(TypedDict):
    on: str
    value: float
    held: bool


class GoalRecord(TypedDict):
    goal: str
    kind: str
    path: str
    anchor: str
    at_least: float | None
    at_most: float | None
    target: str
    measured: list[Measure]
    held: bool


Ratio = Callable[[str, str, str], float]
"""How many times `path` is `anchor` on a corpus or stream: (on, path, anchor) -> ratio."""


def section(
    kind: str,
    unit: str,
    values: Mapping[str, Mapping[str, float]],
    anchors: tuple[str, str],
    ratio: Ratio | None = None,
) -> Section:
    """The rows of `values` (by corpus or stream, then path) with their ratios to the floor
    and to openai-python (`anchors`); the ratio is the values' quotient unless given."""

    def quotient(on: str, path: str, anchor: str) -> float:
        return values[on][path] / values[on][anchor]

    divide = ratio or quotient
    floor, openai = anchors
    on = list(values)
    return {
        "kind": kind,
        "unit": unit,
        "on": on,
        "floor": floor,
        "openai": openai,
        "rows": [
            {
                "path": path,
                "value": {o: round(values[o][path], 1) for o in on},
                "vs_floor": {o: round(divide(o, path, floor), 4) for o in on},
                "vs_openai": {o: round(divide(o, path, openai), 4) for o in on},
            }
            for path in values[on[0]]
        ],
    }


# Goals ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Goal:
    """A ratio (or a time) a benchmark is meant to reach: at least or at most a bound."""

    name: str
    kind: str
    path: str
    anchor: str = ""  # the path `path` is divided by, if any
    at_least: float | None = None
    at_most: float | None = None
    unit: str = "x"

    def target(self) -> str:
        if self.at_least is not None:
            return f">= {self.at_least}{self.unit}"
        assert self.at_most is not None
        return f"<= {self.at_most}{self.unit}"

    def holds(self, value: float) -> bool:
        if self.at_least is not None:
            return value >= self.at_least
        assert self.at_most is not None
        return value <= self.at_most

    def record(self, measured: Sequence[tuple[str, float]]) -> GoalRecord:
        """The goal and what a run measured, for a JSON file."""
        measures: list[Measure] = [
            {"on": on, "value": round(value, 4), "held": self.holds(value)}
            for on, value in measured
        ]
        return {
            "goal": self.name,
            "kind": self.kind,
            "path": self.path,
            "anchor": self.anchor,
            "at_least": self.at_least,
            "at_most": self.at_most,
            "target": self.target(),
            "measured": measures,
            "held": all(m["held"] for m in measures),
        }


def verdict(held: bool) -> str:
    return "held" if held else "**missed**"


# Writing ----------------------------------------------------------------------------------


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """The lines of a markdown table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(row) + " |" for row in rows]


def add_output_options(parser: argparse.ArgumentParser, default_json: Path) -> None:
    """--quick, and --json: where the results go as JSON. A quick run writes nothing unless
    given --json (the tests draw charts from one); a full run writes `default_json`."""
    parser.add_argument("--quick", action="store_true", help="a short run; writes only --json")
    parser.add_argument(
        "--json",
        type=Path,
        metavar="PATH",
        help=f"write the results as JSON to PATH (a full run: to {shown(default_json)})",
    )


def write_run(
    args: argparse.Namespace,
    report: tuple[Path, str],
    results: tuple[Path, Mapping[str, Any]],
) -> None:
    """Write a full run's markdown report and JSON results to their paths (the JSON to
    --json if given); a quick run writes only the JSON, and only to --json."""
    if not args.quick:
        write_results(*report)
    json_path: Path | None = args.json or (None if args.quick else results[0])
    if json_path is not None:
        write_json(json_path, results[1])


def write_results(path: Path, text: str) -> None:
    """Write a run's results beside the benchmark (or where asked), and say where."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    print(f"wrote {shown(path)}")


def write_json(path: Path, data: Mapping[str, Any]) -> None:
    """Write results as JSON that diffs well: sorted keys, indent 2, a trailing newline."""
    write_results(path, json.dumps(data, indent=2, sort_keys=True) + "\n")


def shown(path: Path) -> Path:
    """`path` relative to the working directory when it is inside it."""
    return path.relative_to(Path.cwd()) if path.is_relative_to(Path.cwd()) else path
