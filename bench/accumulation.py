"""Accumulation cost per delta as a stream grows: it must stay flat (linear total cost).

Each target accumulates synthetic streams of 1,000, 10,000 and 100,000 deltas that rotate
through the three growing texts (content, reasoning_content, tool-call arguments). The
chunks are decoded first, so only `add` and the final `result` are timed; each size is
timed several times, interleaved across targets, and the fastest run is kept.

    python -m bench.accumulation            # the full run (make bench)
    python -m bench.accumulation --quick    # small sizes, to prove it runs (CI)
"""

from __future__ import annotations

import argparse
import gc
import json
import time
from collections.abc import Sequence
from types import ModuleType
from typing import Any

from bench.targets import TARGETS

FLAT_WITHIN = 1.5
"""The goal: time per delta at the largest size within this factor of the smallest."""


def stream(deltas: int) -> list[str]:
    """A stream of `deltas` chunks, as JSON text, then a usage chunk."""
    head = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    texts = []
    for n in range(deltas):
        piece = f"w{n % 97} "
        delta: dict[str, Any]
        if n % 3 == 0:
            delta = {"content": piece}
        elif n % 3 == 1:
            delta = {"reasoning_content": piece}
        else:
            call: dict[str, Any] = {"index": 0, "function": {"arguments": piece}}
            if n == 2:
                call.update(id="call_1", type="function")
                call["function"]["name"] = "f"
            delta = {"tool_calls": [call]}
        texts.append(json.dumps({**head, "choices": [{"index": 0, "delta": delta}]}))
    usage = {"prompt_tokens": 1, "completion_tokens": deltas, "total_tokens": deltas + 1}
    texts.append(json.dumps({**head, "choices": [], "usage": usage}))
    return texts


def time_accumulation(module: ModuleType, chunks: Sequence[Any]) -> float:
    """Seconds to add every chunk and read the result once."""
    gc.collect()
    start = time.perf_counter()
    accumulator = module.ChunkAccumulator()
    for chunk in chunks:
        accumulator.add(chunk)
    accumulator.result()
    return time.perf_counter() - start


def measure(sizes: Sequence[int], repeats: int) -> dict[str, dict[int, float]]:
    """Fastest microseconds per delta, per target and size."""
    best: dict[str, dict[int, float]] = {name: {} for name in TARGETS}
    for size in sizes:
        texts = stream(size)
        decoded = {name: [m.loads(t) for t in texts] for name, m in TARGETS.items()}
        for _ in range(repeats):
            for name, module in TARGETS.items():  # interleaved, so drift hits all alike
                seconds = time_accumulation(module, decoded[name])
                micros = seconds / size * 1e6
                best[name][size] = min(best[name].get(size, micros), micros)
        del decoded
    return best


def table(best: dict[str, dict[int, float]], sizes: Sequence[int]) -> str:
    header = ["target", *(f"µs/delta at {s:,}" for s in sizes), f"{sizes[-1]:,} vs {sizes[0]:,}"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for name, per_size in best.items():
        ratio = per_size[sizes[-1]] / per_size[sizes[0]]
        verdict = "flat" if ratio <= FLAT_WITHIN else f"NOT flat (goal ≤ {FLAT_WITHIN}x)"
        cells = [name, *(f"{per_size[s]:.2f}" for s in sizes), f"{ratio:.2f}x {verdict}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, to prove it runs")
    args = parser.parse_args(argv)
    sizes = (100, 1_000) if args.quick else (1_000, 10_000, 100_000)
    best = measure(sizes, repeats=2 if args.quick else 5)
    print("Accumulation: time per delta (add every chunk, then result once)\n")
    print(table(best, sizes))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
