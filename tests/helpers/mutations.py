"""Mutated chunks for the fuzzer: each captured chunk broken in one way, with the place
that was broken. Deterministic for a seed, so a failure names an input that can be
made again.

Kinds: truncated text; a value of another JSON kind at any path; a number, string or
list far bigger than any stream sends; nesting deeper than any parser's stack; NaN and
Infinity; a key given twice; bytes that are not UTF-8; half of a surrogate pair, in a
value or a key; a payload that is not an object.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

Path = tuple[str | int, ...]

_SENTINEL = "\x00mutated\x00"
_SPELLED_SENTINEL = json.dumps(_SENTINEL)
_OTHER_KINDS: list[Any] = [None, True, 0, -1, 2**70, 1.5, "", "x", [], [1, "a"], {}, {"k": 1}]
_NOT_OBJECTS = ["[]", '"chunk"', "1", "null", "true", "", " ", "[{}]", "{}x"]


@dataclass(frozen=True)
class Mutation:
    kind: str
    text: str | bytes
    where: Path | None
    """The broken place, for the kinds that break one value; None for the others."""


def json_path(path: Path) -> str:
    """A path as ChunkDecodeError spells it: `$.choices[0]["x-y"]`."""
    out = "$"
    for step in path:
        if isinstance(step, int):
            out += f"[{step}]"
        elif step.isidentifier() and step.isascii():
            out += "." + step
        else:
            out += "[" + json.dumps(step, ensure_ascii=False) + "]"
    return out


def paths(value: Any, prefix: Path = ()) -> Iterator[Path]:
    """Every place in a JSON value, the root first."""
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from paths(item, (*prefix, index))


def _replaced(value: Any, path: Path, new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {k: (_replaced(v, rest, new) if k == head else v) for k, v in value.items()}
    return [(_replaced(v, rest, new) if i == head else v) for i, v in enumerate(value)]


def _at(value: Any, path: Path) -> Any:
    for step in path:
        value = value[step]
    return value


def _kind(value: Any) -> str:
    return "bool" if isinstance(value, bool) else type(value).__name__


def _spliced(payload: Any, path: Path, raw: str) -> str:
    """The payload's JSON text with the value at `path` spelled as `raw`."""
    return json.dumps(_replaced(payload, path, _SENTINEL)).replace(_SPELLED_SENTINEL, raw, 1)


class Mutator:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def mutate(self, text: str) -> Mutation:
        payload = json.loads(text)
        kind = self.rng.choices(list(_KINDS), weights=[w for w, _ in _KINDS.values()])[0]
        return _KINDS[kind][1](self, kind, text, payload)

    def _path(self, payload: Any, inner: bool = True) -> Path:
        every = list(paths(payload))[1:] if inner else list(paths(payload))
        return self.rng.choice(every) if every else ()

    def truncated(self, kind: str, text: str, payload: Any) -> Mutation:
        return Mutation(kind, text[: self.rng.randrange(len(text))], None)

    def wrong_type(self, kind: str, text: str, payload: Any) -> Mutation:
        path = self._path(payload)
        old = _kind(_at(payload, path))
        new = self.rng.choice([v for v in _OTHER_KINDS if _kind(v) != old])
        return Mutation(kind, json.dumps(_replaced(payload, path, new)), path)

    def huge(self, kind: str, text: str, payload: Any) -> Mutation:
        path = self._path(payload)
        raw = self.rng.choice(
            [
                "9" * 4000,
                "-" + "1" * 400,
                '"' + "é" * 300_000 + '"',
                "[" + "7," * 50_000 + "7]",
                "1e400",
            ]
        )
        return Mutation(kind, _spliced(payload, path, raw), path)

    def too_big(self, kind: str, text: str, payload: Any) -> Mutation:
        # More digits than Python turns into an int (sys.get_int_max_str_digits).
        return Mutation(kind, _spliced(payload, self._path(payload), "9" * 5000), None)

    def deep(self, kind: str, text: str, payload: Any) -> Mutation:
        depth = self.rng.choice([500, 100_000])
        opener, closer = self.rng.choice([("[", "]"), ('{"a":', "}")])
        raw = opener * depth + "1" + closer * depth
        return Mutation(kind, _spliced(payload, self._path(payload), raw), None)

    def not_a_number(self, kind: str, text: str, payload: Any) -> Mutation:
        path = self._path(payload)
        raw = self.rng.choice(["NaN", "Infinity", "-Infinity"])
        return Mutation(kind, _spliced(payload, path, raw), path)

    def duplicate_key(self, kind: str, text: str, payload: Any) -> Mutation:
        objects = [
            p for p in paths(payload) if isinstance(_at(payload, p), dict) and _at(payload, p)
        ]
        path = self.rng.choice(objects)
        obj = _at(payload, path)
        key = self.rng.choice(list(obj))
        new = self.rng.choice([v for v in _OTHER_KINDS if v != obj[key]])
        raw = json.dumps(obj)[:-1] + f", {json.dumps(key)}: {json.dumps(new)}}}"
        return Mutation(kind, _spliced(payload, path, raw), (*path, key))

    def not_utf8(self, kind: str, text: str, payload: Any) -> Mutation:
        data = bytearray(text.encode("utf-8"))
        at = self.rng.randrange(len(data))
        data[at : at + 1] = self.rng.choice([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xe2\x82"])
        return Mutation(kind, bytes(data), None)

    def lone_surrogate(self, kind: str, text: str, payload: Any) -> Mutation:
        strings = [p for p in paths(payload) if isinstance(_at(payload, p), str)]
        if not strings:
            return self.lone_surrogate_key("lone surrogate in a key", text, payload)
        path = self.rng.choice(strings)
        return Mutation(kind, _spliced(payload, path, f'"{self._half()}x"'), path)

    def lone_surrogate_key(self, kind: str, text: str, payload: Any) -> Mutation:
        objects = [p for p in paths(payload) if isinstance(_at(payload, p), dict)]
        path = self.rng.choice(objects)
        raw = json.dumps(_at(payload, path))[:-1]
        raw += ("," if raw != "{" else "") + f'"{self._half()}": 1}}'
        return Mutation(kind, _spliced(payload, path, raw), path)

    def _half(self) -> str:
        return self.rng.choice(["\\ud83d", "\\ude00"])

    def not_an_object(self, kind: str, text: str, payload: Any) -> Mutation:
        return Mutation(kind, self.rng.choice(_NOT_OBJECTS), None)


_KINDS = {
    "truncated": (10, Mutator.truncated),
    "wrong type": (50, Mutator.wrong_type),
    "huge": (2, Mutator.huge),
    "too big": (2, Mutator.too_big),
    "deep": (2, Mutator.deep),
    "NaN or Infinity": (8, Mutator.not_a_number),
    "duplicate key": (10, Mutator.duplicate_key),
    "not UTF-8": (6, Mutator.not_utf8),
    "lone surrogate": (5, Mutator.lone_surrogate),
    "lone surrogate in a key": (2, Mutator.lone_surrogate_key),
    "not an object": (4, Mutator.not_an_object),
}
