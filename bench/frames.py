"""A server's frame per token (docs/serving.md), as ratios of speed measured in one run.

Per target, for the same tokens of one stream's probe:

- `TokenFrames(probe).frame(token)` against openai-python's `ChatCompletionChunk(...)`
  plus `model_dump_json(exclude_unset=True)` (goal >= 8) and against a dict plus
  `json.dumps` (goal >= 2.5);
- building the chunk with the module's own classes plus `sse_chunk` against
  openai-python (goal >= 1.0).

Beside them, openai-python's models padded to the all-vendor field counts
(bench/ceiling.py), built and written: the most a pydantic model that declares every
vendor's fields reaches on the last path.

Each ratio is the median over rounds of the two paths' CPU times measured back to back
(each the fastest of three); each round goes through every target.

    python -m bench.frames            # the full run (make bench): frames.md, frames.json
    python -m bench.frames --quick    # fewer rounds, to prove it runs (CI)

bench/charts.py draws frames.json as frames.svg.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from openai.types.chat import ChatCompletionChunk as OpenAIChunk
from openai.types.chat.chat_completion_chunk import Choice as OpenAIChoice
from openai.types.chat.chat_completion_chunk import ChoiceDelta as OpenAIDelta

from bench.ceiling import PaddedChoice, PaddedChunk, PaddedDelta
from bench.common import (
    PYTHON,
    Goal,
    GoalRecord,
    Section,
    add_output_options,
    fastest,
    section,
    write_run,
)
from bench.targets import TARGETS

HERE = Path(__file__).resolve().parent
RESULTS, RESULTS_JSON = HERE / "frames.md", HERE / "frames.json"
GOALS = {"frame vs openai": 8.0, "frame vs dict": 2.5, "build vs openai": 1.0}
OPENAI, DICT = "openai-python model + dump", "dict + json.dumps"
"""The anchors: the paths every ratio is taken against."""
CEILING = "openai-python padded to every vendor's fields + dump"
"""The ceiling of a pydantic model with every vendor's fields (bench/ceiling.py)."""
TOKENS = ["Hello", ",", " world", " the", " answer", " is", ' "42"', ".\n", " é", " 😀"] * 50
HEAD: dict[str, Any] = {
    "id": "chatcmpl-0123456789abcdef",
    "object": "chat.completion.chunk",
    "created": 1700000000,
    "model": "qwen3-32b",
    "system_fingerprint": "fp_0123456789",
}


def openai_python() -> None:
    for token in TOKENS:
        choice = OpenAIChoice(index=0, delta=OpenAIDelta(content=token), finish_reason=None)
        chunk = OpenAIChunk(**HEAD, choices=[choice])
        b"data: " + chunk.model_dump_json(exclude_unset=True).encode() + b"\n\n"


def openai_padded() -> None:
    for token in TOKENS:
        choice = PaddedChoice(index=0, delta=PaddedDelta(content=token), finish_reason=None)
        chunk = PaddedChunk(**HEAD, choices=[choice])
        b"data: " + chunk.model_dump_json(exclude_unset=True).encode() + b"\n\n"


def plain_dict() -> None:
    for token in TOKENS:
        chunk = {**HEAD, "choices": [{"index": 0, "delta": {"content": token}}]}
        b"data: " + json.dumps(chunk).encode() + b"\n\n"


def paths(module: ModuleType) -> dict[str, Callable[[], None]]:
    """The module's two paths: frames of a probe, and chunks built and written."""

    def chunk(token: str) -> Any:
        delta = module.ChoiceDelta(content=token)
        choice = module.Choice(index=0, delta=delta, finish_reason=None)
        return module.ChatCompletionChunk(**HEAD, choices=[choice])

    frames = module.TokenFrames(chunk(""))

    def framed() -> None:
        for token in TOKENS:
            frames.frame(token)

    def built() -> None:
        for token in TOKENS:
            module.sse_chunk(chunk(token))

    return {"frame": framed, "build": built}


Results = dict[str, dict[str, float]]
"""Per target: each ratio and time, the median of the rounds."""
Ceiling = dict[str, float]
"""The ceiling's ratios to the anchors and its time, the median of the rounds."""


def ratios(modules: dict[str, ModuleType], rounds: int) -> tuple[Results, Ceiling]:
    runs = {name: paths(module) for name, module in modules.items()}
    gc.collect()
    gc.freeze()
    samples: dict[str, dict[str, list[float]]] = {name: {} for name in [*runs, CEILING]}

    def add(name: str, values: dict[str, float]) -> None:
        for key, value in values.items():
            samples[name].setdefault(key, []).append(value)

    def per_token(seconds: float) -> float:
        return seconds / len(TOKENS) * 1e6  # µs

    for _ in range(rounds):
        for name, run in runs.items():
            frame, build = fastest(run["frame"], 3), fastest(run["build"], 3)
            theirs, dicts = fastest(openai_python, 3), fastest(plain_dict, 3)
            add(name, {"frame vs openai": theirs / frame, "frame vs dict": dicts / frame,
                       "build vs openai": theirs / build, "µs frame": per_token(frame),
                       "µs build": per_token(build), "µs openai": per_token(theirs),
                       "µs dict": per_token(dicts)})  # fmt: skip
        padded = fastest(openai_padded, 3)
        theirs, dicts = fastest(openai_python, 3), fastest(plain_dict, 3)
        add(CEILING, {"vs openai": theirs / padded, "vs dict": dicts / padded,
                      "µs": per_token(padded)})  # fmt: skip
    medians = {
        name: {key: statistics.median(values) for key, values in by_key.items()}
        for name, by_key in samples.items()
    }
    ceiling = medians.pop(CEILING)
    return medians, ceiling


def table(results: Results, ceiling: Ceiling) -> str:
    header = ["target", *GOALS]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for name, by_goal in results.items():
        cells = [
            f"{by_goal[goal]:.2f}x ({'held' if by_goal[goal] >= bound else 'missed'})"
            for goal, bound in GOALS.items()
        ]
        lines.append("| " + " | ".join([name, *cells]) + " |")
    goals = ", ".join(f"{goal} >= {value}x" for goal, value in GOALS.items())
    bound = (
        f"The ceiling of build vs openai for a pydantic model with every vendor's fields"
        f" ({CEILING}): {ceiling['vs openai']:.2f}x."
    )
    return "\n".join(lines) + f"\n\nGoals (speed, higher is faster): {goals}.\n{bound}"


def as_json(results: Results, ceiling: Ceiling) -> dict[str, object]:
    """The run as bench/charts.py reads it: a section of every path's ratios to a dict
    plus `json.dumps` (the floor) and to openai-python, and the goals."""
    on = f"{len(TOKENS)} tokens"
    # Ratios as measured (paired); the anchors' own, from the frame's two ratios.
    paired: dict[tuple[str, str], float] = {}
    for name, r in results.items():
        paired[(f"{name} frame", OPENAI)] = r["frame vs openai"]
        paired[(f"{name} frame", DICT)] = r["frame vs dict"]
        paired[(f"{name} classes + sse_chunk", OPENAI)] = r["build vs openai"]
        paired[(f"{name} classes + sse_chunk", DICT)] = (
            r["build vs openai"] * r["frame vs dict"] / r["frame vs openai"]
        )
    first = next(iter(results.values()))
    paired[(DICT, OPENAI)] = first["frame vs openai"] / first["frame vs dict"]
    paired[(OPENAI, DICT)] = 1 / paired[(DICT, OPENAI)]
    paired[(CEILING, OPENAI)] = ceiling["vs openai"]
    paired[(CEILING, DICT)] = ceiling["vs dict"]

    def ratio(_on: str, path: str, anchor: str) -> float:
        return 1.0 if path == anchor else paired[(path, anchor)]

    times = {OPENAI: first["µs openai"], DICT: first["µs dict"]}
    for name, r in results.items():
        times[f"{name} frame"] = r["µs frame"]
        times[f"{name} classes + sse_chunk"] = r["µs build"]
    times[CEILING] = ceiling["µs"]
    frames: Section = section("frames", "µs a frame (CPU)", {on: times}, (DICT, OPENAI), ratio)
    goals: list[GoalRecord] = []
    for name, r in results.items():
        for goal, (path, anchor) in {
            "frame vs openai": (f"{name} frame", OPENAI),
            "frame vs dict": (f"{name} frame", DICT),
            "build vs openai": (f"{name} classes + sse_chunk", OPENAI),
        }.items():
            record = Goal(f"{name}: {goal}", "frames", path, anchor, at_least=GOALS[goal])
            goals.append(record.record([(on, r[goal])]))
    return {"python": PYTHON, "tokens": len(TOKENS), "frames": frames, "goals": goals}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    add_output_options(parser, RESULTS_JSON)
    args = parser.parse_args(argv)
    results, ceiling = ratios(TARGETS, 1 if args.quick else 7)
    text = f"Token frames: {len(TOKENS)} tokens a run\n\n{table(results, ceiling)}"
    print(text)
    write_run(args, (RESULTS, text + "\n"), (RESULTS_JSON, as_json(results, ceiling)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
