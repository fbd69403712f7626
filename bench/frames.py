"""A server's frame per token (docs/serving.md), as ratios of speed measured in one run.

Per target, for the same tokens of one stream's probe:

- `TokenFrames(probe).frame(token)` against openai-python's `ChatCompletionChunk(...)`
  plus `model_dump_json(exclude_unset=True)` (goal >= 8) and against a dict plus
  `json.dumps` (goal >= 2.5);
- building the chunk with the module's own classes plus `sse_chunk` against
  openai-python (goal >= 1.0).

Each ratio is the median over rounds of the two paths' CPU times measured back to back
(each the fastest of three); each round goes through every target.

    python -m bench.frames            # the full run (make bench)
    python -m bench.frames --quick    # fewer rounds, to prove it runs (CI)
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import time
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

from openai.types.chat import ChatCompletionChunk as OpenAIChunk
from openai.types.chat.chat_completion_chunk import Choice as OpenAIChoice
from openai.types.chat.chat_completion_chunk import ChoiceDelta as OpenAIDelta

from bench.targets import TARGETS

GOALS = {"frame vs openai": 8.0, "frame vs dict": 2.5, "build vs openai": 1.0}
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


def fastest(run: Callable[[], None], repeats: int = 3) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.process_time()
        run()
        best = min(best, time.process_time() - start)
    return best


def ratios(modules: dict[str, ModuleType], rounds: int) -> dict[str, dict[str, float]]:
    runs = {name: paths(module) for name, module in modules.items()}
    gc.collect()
    gc.freeze()
    samples: dict[str, dict[str, list[float]]] = {
        name: {goal: [] for goal in GOALS} for name in runs
    }
    for _ in range(rounds):
        for name, run in runs.items():
            frame, build = fastest(run["frame"]), fastest(run["build"])
            theirs, dicts = fastest(openai_python), fastest(plain_dict)
            samples[name]["frame vs openai"].append(theirs / frame)
            samples[name]["frame vs dict"].append(dicts / frame)
            samples[name]["build vs openai"].append(theirs / build)
    return {
        name: {goal: statistics.median(values) for goal, values in by_goal.items()}
        for name, by_goal in samples.items()
    }


def table(results: dict[str, dict[str, float]]) -> str:
    header = ["target", *GOALS]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for name, by_goal in results.items():
        cells = [
            f"{value:.2f}x ({'held' if value >= GOALS[goal] else 'missed'})"
            for goal, value in by_goal.items()
        ]
        lines.append("| " + " | ".join([name, *cells]) + " |")
    goals = ", ".join(f"{goal} >= {value}x" for goal, value in GOALS.items())
    return "\n".join(lines) + f"\n\nGoals (speed, higher is faster): {goals}."


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds, to prove it runs")
    args = parser.parse_args(argv)
    results = ratios(TARGETS, 1 if args.quick else 7)
    print(f"Token frames: {len(TOKENS)} tokens a run\n")
    print(table(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
