"""Reading and writing meanings, as ratios measured in one run (docs/meanings.md).

Over the captured streams of tests/fixtures/chat/streams, read whole from memory, per target:

- `iter_parts` against `iter_chunks` on the same body (speed, goal >= 0.85);
- `summary()` at the end of a stream against accumulating it (time, goal <= 0.10);
- `iter_sse(..., dialect="reasoning_content")` against plain `iter_sse` (speed, goal
  >= 0.8).

Each ratio is the median over rounds of the two paths' CPU times measured back to back
(each the fastest of three); each round goes through every target.

    python -m bench.meanings            # the full run (make bench)
    python -m bench.meanings --quick    # fewer repeats, to prove it runs (CI)
"""

from __future__ import annotations

import argparse
import gc
import statistics
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from bench.common import fastest
from bench.targets import TARGETS

STREAMS = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "chat" / "streams"
GOALS = {"parts": 0.85, "summary": 0.10, "dialect": 0.8}


def bodies() -> list[bytes]:
    out = []
    for path in sorted(STREAMS.glob("*.jsonl")):
        lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        out.append(("".join(f"data: {line}\n\n" for line in lines) + "data: [DONE]\n\n").encode())
    return out


def paths(module: ModuleType, data: list[bytes]) -> dict[str, Callable[[], None]]:
    """The paths measured for one target, in the order they run (a summary reads the
    accumulators the run before it made)."""
    decoded = [list(module.iter_chunks([body])) for body in data]
    accumulators: list[Any] = []

    def chunks() -> None:
        for body in data:
            for _ in module.iter_chunks([body]):
                pass

    def parts() -> None:
        for body in data:
            for _ in module.iter_parts([body]):
                pass

    def accumulate() -> None:
        accumulators.clear()
        for stream in decoded:
            accumulator = module.ChunkAccumulator()
            for chunk in stream:
                accumulator.add(chunk)
            accumulators.append(accumulator)

    def summaries() -> None:
        for accumulator in accumulators:
            accumulator.summary()

    def plain() -> None:
        for stream in decoded:
            for _ in module.iter_sse(stream):
                pass

    def dialect() -> None:
        for stream in decoded:
            for _ in module.iter_sse(stream, dialect="reasoning_content"):
                pass

    return {"chunks": chunks, "parts": parts, "acc": accumulate, "sum": summaries,
            "plain": plain, "dia": dialect}  # fmt: skip


PAIRS = {"parts": ("chunks", "parts"), "summary": ("sum", "acc"), "dialect": ("plain", "dia")}
"""Each ratio: (numerator, denominator) of the times of two paths."""


def ratios(
    modules: dict[str, ModuleType], data: list[bytes], repeats: int
) -> dict[str, dict[str, float]]:
    """Each target's ratios: the median, over `repeats` rounds, of the ratio of the two
    paths measured back to back. The rounds go through every target in turn, so a slow
    spell of the machine hits one round of each rather than every sample of one."""
    runs = {name: paths(module, data) for name, module in modules.items()}
    gc.collect()
    gc.freeze()  # the decoded streams are not the collector's to walk, sample by sample
    samples: dict[str, dict[str, list[float]]] = {
        name: {ratio: [] for ratio in PAIRS} for name in runs
    }
    for _ in range(repeats):
        for name, run in runs.items():
            times = {path: fastest(call, 3) for path, call in run.items()}
            for ratio, (top, bottom) in PAIRS.items():
                samples[name][ratio].append(times[top] / times[bottom])
    return {
        name: {ratio: statistics.median(values) for ratio, values in by_ratio.items()}
        for name, by_ratio in samples.items()
    }


def table(results: dict[str, dict[str, float]]) -> str:
    header = ["target", "iter_parts vs iter_chunks", "summary vs accumulate", "dialect vs plain"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for name, r in results.items():
        cells = [
            name,
            f"{r['parts']:.2f} ({'held' if r['parts'] >= GOALS['parts'] else 'missed'})",
            f"{r['summary']:.3f} ({'held' if r['summary'] <= GOALS['summary'] else 'missed'})",
            f"{r['dialect']:.2f} ({'held' if r['dialect'] >= GOALS['dialect'] else 'missed'})",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    goals = (
        f"Goals: iter_parts >= {GOALS['parts']}x the speed of iter_chunks, summary() <="
        f" {GOALS['summary']:.0%} of accumulating, dialect writing >= {GOALS['dialect']}x"
        " the speed of plain writing."
    )
    return "\n".join(lines) + "\n\n" + goals


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats, to prove it runs")
    args = parser.parse_args(argv)
    data = bodies()
    repeats = 1 if args.quick else 7
    results = ratios(TARGETS, data, repeats)
    print("Meanings: ratios over the captured streams\n")
    print(table(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
