"""The mutation fuzzer: captured chunks broken in every way tests/helpers/mutations.py knows,
read by every target. `loads` returns a chunk or raises `ChunkDecodeError`: never
another exception, never a RecursionError, never a hang. A rejected value is reported
on its own path (or on the key above it); an accepted input comes back as json reads
it (so with two equal keys the last wins), and never holds what is not JSON (NaN,
Infinity, a number past a float's range); and all targets accept and reject the same
inputs at the same paths.

`make test` runs 10,000 inputs, the same each time; `make fuzz` runs 200,000 new ones.
"""

from __future__ import annotations

import json
import math
import os
import random
import signal
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType, ModuleType
from typing import Any

from tests.generated.examples import ROOT_DEFAULTS
from tests.helpers.mutations import Mutation, Mutator, json_path
from tests.helpers.support import FIXTURE_STREAMS, REPORT, TARGETS, load_without, normalised

INPUTS = int(os.environ.get("CHUNKSPEC_FUZZ_INPUTS", "10000"))
_SEED = os.environ.get("CHUNKSPEC_FUZZ_SEED", "20261130")
SEED = random.SystemRandom().randrange(2**32) if _SEED == "random" else int(_SEED)
"""`make test` replays the same inputs; `make fuzz` draws new ones (the report names the
seed, and CHUNKSPEC_FUZZ_SEED=<seed> makes them again)."""
HANG = 20  # seconds: a read this slow is stuck, not slow
GENERATED = Path(__file__).resolve().parents[3] / "generated"
# Every target, and the two that read with orjson when it is installed also without it.
READERS: dict[str, ModuleType] = {
    **TARGETS,
    **{
        f"{name}, standard library only": load_without(GENERATED / name / "chat.py", "orjson")
        for name in ("dataclasses", "typeddicts")
    },
}


class Hang(Exception):
    pass


@contextmanager
def _no_hang() -> Iterator[None]:
    def stop(signum: int, frame: FrameType | None) -> None:
        raise Hang(f"no result after {HANG} s")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.alarm(HANG)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _json_reading(text: str | bytes) -> Any:
    """What json reads from the input, or a reason it reads nothing: RFC 8259 JSON only
    (Python's json also reads NaN, Infinity and 1e400, which are not)."""
    try:
        return json.loads(text, parse_constant=_not_json, parse_float=_finite)
    except (ValueError, RecursionError) as exc:
        return exc


def _not_json(text: str) -> float:
    raise ValueError(f"{text} is not JSON")


def _finite(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise ValueError(f"{text} is past a float's range")
    return number


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON, type for type (1 is not 1.0), NaN equal to NaN: the same canonical
    text. (json's writer, not a recursive comparison: the values may be 500 deep.)"""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def _on_the_line(error_path: str, where: tuple[str | int, ...]) -> bool:
    """The error names the broken place, a place inside it, or the key just above it."""
    here = json_path(where)
    inside = error_path.startswith((here + ".", here + "["))
    return error_path in (here, json_path(where[:-1])) or inside


def _outcome(target: ModuleType, mutation: Mutation, reading: Any) -> str:
    """`accepted`, or `rejected at <path>`; raises AssertionError on anything else."""
    try:
        with _no_hang():
            chunk = target.loads(mutation.text)
            written = target.dumps(chunk)
    except target.ErrorReport:
        return "rejected as an error report"
    except target.ChunkDecodeError as exc:
        if mutation.where is not None:
            where = json_path(mutation.where)
            assert _on_the_line(exc.path, mutation.where), f"error at {exc.path}, broken at {where}"
        return f"rejected at {exc.path}"
    except Exception as exc:  # the point: nothing else may escape
        raise AssertionError(f"{type(exc).__name__}: {exc}") from None
    assert not isinstance(reading, Exception), f"accepted what json cannot read: {reading}"
    expected = normalised(reading, ROOT_DEFAULTS)
    assert _same(json.loads(written), expected), f"accepted but wrote {written[:300]}"
    return "accepted"


def test_loads_returns_a_chunk_or_a_located_error() -> None:
    mutator = Mutator(SEED)
    pick = random.Random(SEED)
    chunks = [text for stream in FIXTURE_STREAMS for _, text in stream.chunks]
    kinds: Counter[str] = Counter()
    outcomes: Counter[str] = Counter()
    for number in range(INPUTS):
        mutation = mutator.mutate(pick.choice(chunks))
        kinds[mutation.kind] += 1
        reading = _json_reading(mutation.text)
        results = {}
        for name, target in READERS.items():
            try:
                results[name] = _outcome(target, mutation, reading)
            except AssertionError as exc:
                shown = repr(mutation.text[:400])
                raise AssertionError(
                    f"seed {SEED}, input {number} ({mutation.kind}), {name}: {exc}\n{shown}"
                ) from None
        if mutation.kind == "lone surrogate in a key":
            # pydantic-core holds the keys of the objects it models as UTF-8, which half a
            # surrogate pair is not: it rejects such an object (README, Errors); inside an
            # `any` value it keeps the key, as the others do.
            rejected = f"rejected at {json_path(mutation.where or ())}"
            assert results.pop("pydantic") in {rejected, *results.values()}, results
        assert len(set(results.values())) == 1, (
            f"seed {SEED}, input {number} ({mutation.kind}): targets disagree: {results}\n"
            f"{mutation.text[:400]!r}"
        )
        outcomes[next(iter(results.values())).split(" at ")[0]] += 1
    REPORT["mutation fuzzer"] = (
        f"{INPUTS} inputs (seed {SEED}) x {len(READERS)} readers ("
        + ", ".join(f"{kind} {count}" for kind, count in sorted(kinds.items()))
        + "): "
        + ", ".join(f"{what} {count}" for what, count in sorted(outcomes.items()))
    )
